package verify

import (
	"strings"
	"testing"

	"github.com/openload/openload/result"
)

// TestGRPCObjectives: grpc.CODE reads result.GRPC as status.CODE reads
// result.Status: a share of the scheduled requests, or a count.
func TestGRPCObjectives(t *testing.T) {
	res := &result.Result{Counts: result.Counts{Scheduled: 200}, GRPC: map[string]int64{"ok": 196, "unavailable": 3, "resource_exhausted": 1}}
	for _, tc := range []struct {
		expr, metric string
		pass         bool
		measured     float64
	}{
		{"grpc.unavailable<=1%", "grpc.unavailable", false, 0.015},
		{"grpc.UNAVAILABLE<=2%", "grpc.unavailable", true, 0.015},
		{"grpc.ok>=98%", "grpc.ok", true, 0.98},
		{"grpc.ok.share>=99%", "grpc.ok", false, 0.98},
		{"grpc.resource_exhausted.count<=1", "grpc.resource_exhausted", true, 1},
		{"grpc.internal<=0", "grpc.internal", true, 0},
	} {
		o, err := ParseObjective(tc.expr)
		if err != nil {
			t.Fatal(err)
		}
		r := Evaluate(res, []Objective{o})[0]
		if o.Metric != tc.metric || r.Pass != tc.pass || r.Measured != tc.measured {
			t.Errorf("%s: metric %q pass %v measured %v; want %q %v %v", tc.expr, o.Metric, r.Pass, r.Measured, tc.metric, tc.pass, tc.measured)
		}
	}
	if _, err := ParseObjective("grpc.5xx<=1%"); err == nil || !strings.Contains(err.Error(), `grpc status "5xx" is not a gRPC code's name`) {
		t.Errorf("grpc.5xx: %v", err)
	}
	o, _ := ParseObjective("grpc.ok>=99%")
	if r := Evaluate(&result.Result{Counts: result.Counts{Scheduled: 5}, Status: map[string]int64{"200": 5}}, []Objective{o})[0]; r.Pass || !r.NoData {
		t.Errorf("grpc.ok on a run of HTTP requests: %+v, want no data", r)
	}
}

// TestGRPCRefusalsFailTarget: a run of UNIMPLEMENTED calls fails the
// default client_errors objective as a run of 404s does; one of
// RESOURCE_EXHAUSTED does not, as 429 does not.
func TestGRPCRefusalsFailTarget(t *testing.T) {
	for key, fails := range map[string]bool{"unimplemented": true, "unauthenticated": true, "resource_exhausted": false, "unavailable": false} {
		res := &result.Result{Counts: result.Counts{Scheduled: 10, Completed: 10}, Status: map[string]int64{"200": 10}, GRPC: map[string]int64{key: 10}}
		r := Evaluate(res, []Objective{DefaultClientErrorsObjective()})[0]
		if r.Pass == fails {
			t.Errorf("all %s: client_errors pass %v, want %v", key, r.Pass, !fails)
		}
	}
}
