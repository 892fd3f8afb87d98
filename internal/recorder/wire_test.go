package recorder

import (
	"bytes"
	"strings"
	"testing"

	"github.com/openload/openload/result"
)

// A response whose head came but whose body failed counts once, as an
// error; its status is kept apart, so that statuses and errors add up to
// the requests. Attempts and re-sends add up over the run.
func TestStatusBelongsToCompleted(t *testing.T) {
	var buf bytes.Buffer
	lw := NewLogWriter(&buf)
	r := New(lw)
	recs := []Record{
		{Seq: 0, Sent: ms(1), Done: ms(2), WasSent: true, Outcome: Completed, Status: 200, Attempts: 1},
		// The head said 200, the body was cut.
		{Seq: 1, Sent: ms(1), Done: ms(3), WasSent: true, Outcome: Failed, Kind: KindReset, Status: 200, Attempts: 1},
		// The head said 200, the body stalled past the timeout.
		{Seq: 2, Sent: ms(1), Done: ms(9), WasSent: true, Outcome: TimedOut, Kind: KindTimeout, Status: 200, Attempts: 1},
		// Re-sent once on a new connection after the kept-alive one failed.
		{Seq: 3, Sent: ms(1), LastSent: ms(4), Done: ms(5), WasSent: true, Outcome: Completed, Status: 200, Attempts: 2, Resends: 1},
		// Refused: nothing written.
		{Seq: 4, Sent: ms(1), Done: ms(1), WasSent: true, Outcome: Failed, Kind: KindRefused},
	}
	for i := range recs {
		if err := r.Add(&recs[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := lw.Flush(); err != nil {
		t.Fatal(err)
	}
	var res result.Result
	if err := r.Fill(&res); err != nil {
		t.Fatal(err)
	}
	var statuses, kinds int64
	for _, n := range res.Status {
		statuses += n
	}
	for _, n := range res.ErrorKinds {
		kinds += n
	}
	if res.Status["200"] != 2 || statuses+kinds != res.Counts.Scheduled {
		t.Errorf("status %v + error kinds %v ≠ scheduled %d", res.Status, res.ErrorKinds, res.Counts.Scheduled)
	}
	if len(res.FailedStatus) != 1 || res.FailedStatus["200"] != 2 {
		t.Errorf("failed status %v, want 200 ×2", res.FailedStatus)
	}
	if w := res.Wire; w == nil || w.Attempts != 5 || w.Resends != 1 || w.Resent != 1 {
		t.Errorf("wire %+v, want 5 attempts, 1 re-send of 1 request", res.Wire)
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	for i, want := range []string{
		"0,0.000,1.000,2.000,1.000,2.000,1.000,200,,1",
		"1,0.000,1.000,3.000,2.000,3.000,1.000,,reset,1",
		"2,0.000,1.000,9.000,8.000,9.000,1.000,,timeout,1",
		"3,0.000,1.000,5.000,1.000,5.000,1.000,200,,2",
		"4,0.000,1.000,1.000,0.000,1.000,1.000,,refused,0",
	} {
		if lines[i+1] != want {
			t.Errorf("log line %d: %s, want %s", i+2, lines[i+1], want)
		}
	}
	// Merging adds them.
	if m := mergedShards(t, r, r); m.Wire == nil || m.Wire.Attempts != 10 || m.Wire.Resends != 2 || m.FailedStatus["200"] != 4 {
		t.Errorf("merged wire %+v, failed status %v", m.Wire, m.FailedStatus)
	}
}
