package recorder

import (
	"fmt"
	"testing"
	"time"

	"github.com/openload/openload/result"
)

// TestGRPCTally: completed gRPC calls are counted by grpc-status, by
// name in the result and by code for live metrics; a failed call and an
// HTTP answer are not.
func TestGRPCTally(t *testing.T) {
	r := New(nil)
	for i, rec := range []Record{
		{Outcome: Completed, Status: 200, GRPC: true, GRPCStatus: 0},
		{Outcome: Completed, Status: 200, GRPC: true, GRPCStatus: 14},
		{Outcome: Completed, Status: 200, GRPC: true, GRPCStatus: 14},
		{Outcome: Completed, Status: 200, GRPC: true, GRPCStatus: 99},
		{Outcome: Failed, Kind: KindGRPCStatus, Status: 200},
		{Outcome: Completed, Status: 503},
	} {
		rec.Seq, rec.Scheduled, rec.Done = uint64(i), time.Duration(i)*time.Millisecond, time.Duration(i+1)*time.Millisecond
		if err := r.Add(&rec); err != nil {
			t.Fatal(err)
		}
	}
	var res result.Result
	if err := r.Fill(&res); err != nil {
		t.Fatal(err)
	}
	if got, want := fmt.Sprint(res.GRPC), "map[ok:1 other:1 unavailable:2]"; got != want {
		t.Errorf("result grpc %s, want %s", got, want)
	}
	if n := res.ErrorKinds["grpc_no_status"]; n != 1 {
		t.Errorf("error kinds %v, want grpc_no_status 1", res.ErrorKinds)
	}
	var seen []string
	r.EachGRPC(func(code int, n int64) { seen = append(seen, fmt.Sprintf("%d:%d", code, n)) })
	if got, want := fmt.Sprint(seen), "[0:1 14:2 -1:1]"; got != want {
		t.Errorf("EachGRPC %s, want %s", got, want)
	}
	if r2 := New(nil); r2.grpc.counts() != nil {
		t.Error("a run of no gRPC call has grpc counts")
	}
}
