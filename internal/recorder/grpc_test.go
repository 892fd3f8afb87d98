package recorder

import (
	"fmt"
	"strings"
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

// TestGRPCLog: a gRPC run's log has the grpc_status column, before the
// target's: each completed call's status by name (a number outside the
// spec's table, "other" for one not a number), empty for a call that
// failed; the reader reads it back, logs without it as before, and
// writing a line allocates nothing.
func TestGRPCLog(t *testing.T) {
	for _, c := range []struct {
		name   string
		stream bool
		target bool
		header string
	}{
		{"plain", false, false, LogHeader + ",grpc_status"},
		{"stream", true, false, LogHeader + "," + StreamLogColumns + ",grpc_status"},
		{"target", false, true, LogHeader + ",grpc_status,target"},
	} {
		var buf strings.Builder
		lw := NewLogWriter(&buf)
		if c.stream {
			lw = NewStreamLogWriter(&buf)
		}
		r := New(lw)
		r.TrackGRPC()
		if c.target {
			r.TrackTargets([]string{"a", "b"})
		}
		recs := []Record{
			{Outcome: Completed, Status: 200, GRPC: true, GRPCStatus: 0},
			{Outcome: Completed, Status: 200, GRPC: true, GRPCStatus: 8, Target: 1},
			{Outcome: Completed, Status: 200, GRPC: true, GRPCStatus: 99},
			{Outcome: Completed, Status: 200, GRPC: true, GRPCStatus: -1},
			{Outcome: Failed, Kind: KindGRPCStatus, Status: 200},
			{Outcome: Completed, Status: 503},
		}
		for i := range recs {
			rec := &recs[i]
			rec.Seq, rec.Scheduled, rec.Sent, rec.WasSent, rec.Attempts = uint64(i), time.Duration(i)*time.Millisecond, time.Duration(i)*time.Millisecond, true, 1
			rec.Done = rec.Sent + time.Millisecond
			if err := r.Add(rec); err != nil {
				t.Fatal(err)
			}
		}
		if err := r.FlushLog(); err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(buf.String(), "\n")
		if lines[0] != c.header {
			t.Errorf("%s: header %q, want %q", c.name, lines[0], c.header)
		}
		var col []string
		lr := NewLogReader(strings.NewReader(buf.String()), "run.csv")
		for lr.Scan() {
			e := lr.Entry()
			col = append(col, fmt.Sprintf("%v/%d", e.GRPC, e.GRPCStatus))
			if c.target && e.Target != int(recs[e.Seq].Target) {
				t.Errorf("%s: seq %d target %d", c.name, e.Seq, e.Target)
			}
		}
		if lr.Err() != nil {
			t.Fatalf("%s: %v\n%s", c.name, lr.Err(), buf.String())
		}
		if got, want := strings.Join(col, " "), "true/0 true/8 true/99 true/-1 false/0 false/0"; got != want {
			t.Errorf("%s: read %s, want %s", c.name, got, want)
		}
		if c.name == "plain" {
			want := []string{"ok", "resource_exhausted", "99", "other", "", ""}
			for i, w := range want {
				if f := strings.Split(lines[i+1], ","); f[len(f)-1] != w {
					t.Errorf("line %d: %q, want grpc_status %q", i+1, lines[i+1], w)
				}
			}
			if n := testing.AllocsPerRun(100, func() { _ = lw.Write(&recs[1]) }); n != 0 {
				t.Errorf("Write allocates %v times a line", n)
			}
		}
	}
	for _, c := range []struct{ in, want string }{
		{LogHeader + ",grpc_status\n0,0.000,0.000,1.000,1.000,1.000,0.000,200,,1,nope\n", `run.csv:2: bad grpc_status "nope"`},
		{LogHeader + ",grpc_status\n0,0.000,0.000,1.000,1.000,1.000,0.000,200,,1,3\n", `run.csv:2: bad grpc_status "3"`},
		{LogHeader + ",grpc_status\n0,0.000,,1.000,,1.000,,,unfinished,0\n", "run.csv:2: 10 fields, want 11, 15 or 17 (the last grpc_status)"},
		{LogHeader + ",grpc_status,target\n0,0.000,,1.000,,1.000,,,unfinished,0,0\n", "run.csv:2: 11 fields, want 12, 16 or 18 (the last grpc_status and the target)"},
	} {
		lr := NewLogReader(strings.NewReader(c.in), "run.csv")
		for lr.Scan() {
		}
		if lr.Err() == nil || !strings.Contains(lr.Err().Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.in, lr.Err(), c.want)
		}
	}
	lr := NewLogReader(strings.NewReader(LogHeader+"\n0,0.000,0.000,1.000,1.000,1.000,0.000,200,,1\n"), "old.csv")
	if !lr.Scan() || lr.Entry().GRPC {
		t.Errorf("a log without the column: %+v, %v", lr.Entry(), lr.Err())
	}
}
