package report

import (
	"strings"
	"testing"

	"github.com/openload/openload/result"
)

// TestGRPCRefused: a run of UNIMPLEMENTED calls (HTTP status 200) is
// refused as a run of 404s is, in the verdict's words and the report's
// grpc line, quoting the kept grpc-message.
func TestGRPCRefused(t *testing.T) {
	res := &result.Result{
		Counts:  result.Counts{Scheduled: 10, Sent: 10, Completed: 10},
		Status:  map[string]int64{"200": 10},
		GRPC:    map[string]int64{"unimplemented": 10},
		Refusal: &result.Refusal{Seq: 0, Status: 200, Body: "unknown service openload.Echo"},
	}
	got := refused(res, result.SLO{Expr: "client_errors<=1%"})
	if want := "target refused the requests: 10 of 10 answered a client error: 10 answered grpc-status UNIMPLEMENTED; the first said: unknown service openload.Echo"; got != want {
		t.Errorf("verdict:\n got %s\nwant %s", got, want)
	}
	var b strings.Builder
	if err := Text(&b, res); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"grpc     unimplemented ×10\n", "the first gRPC refusal said: unknown service openload.Echo\n"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, b.String())
		}
	}
}
