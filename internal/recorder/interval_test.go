package recorder

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/openload/openload/result"
)

// TestIntervalLogRoundTrip writes a run's interval log, reads it back and
// checks that each tag's merged intervals equal the run's histogram, and
// that each second's p99 went into the timeline.
func TestIntervalLogRoundTrip(t *testing.T) {
	var log bytes.Buffer
	r := New(nil)
	r.SetIntervalLog(&log)
	r.Begin(time.Unix(1_800_000_000, 0))
	for i := 0; i < 300; i++ {
		sched := time.Duration(i) * 10 * time.Millisecond
		svc := time.Duration(1+i%7) * time.Millisecond
		if i >= 100 && i < 110 { // a slow patch in second 1
			svc = 500 * time.Millisecond
		}
		rec := Record{Seq: uint64(i), Scheduled: sched, Sent: sched + 100*time.Microsecond, Done: sched + 100*time.Microsecond + svc,
			WasSent: true, Outcome: Completed, Status: 200}
		r.Add(&rec)
	}
	unsent := Record{Seq: 300, Scheduled: 2990 * time.Millisecond, Done: 3500 * time.Millisecond, Outcome: Unfinished, Kind: KindUnfinished}
	r.Add(&unsent)
	res := &result.Result{}
	if err := r.Fill(res); err != nil {
		t.Fatal(err)
	}
	if err := r.IntervalLogErr(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(log.String(), "Tag=response,") || !strings.Contains(log.String(), "#[StartTime: 1800000000") {
		t.Fatalf("log:\n%s", log.String())
	}
	il, err := result.ReadIntervalLog(&log, "run.hlog")
	if err != nil {
		t.Fatal(err)
	}
	for tag, h := range map[string]interface{ TotalCount() int64 }{"response": r.Response, "service": r.Service, "send_delay": r.SendDelay} {
		got := il.Total[tag]
		if got == nil || got.TotalCount() != h.TotalCount() {
			t.Fatalf("%s: merged intervals hold %v values, want %d", tag, got, h.TotalCount())
		}
	}
	if !il.Total["response"].Equals(r.Response) || !il.Total["service"].Equals(r.Service) || !il.Total["send_delay"].Equals(r.SendDelay) {
		t.Error("merged interval histograms differ from the run's")
	}
	if n := len(il.Intervals["response"]); n != 4 {
		t.Errorf("%d response intervals, want 4 (seconds 0-3)", n)
	}
	if p := res.Timeline[1].ResponseP99; p < 400 {
		t.Errorf("second 1 p99 %.3f ms, want the 500 ms patch", p)
	}
	if p := res.Timeline[2].ResponseP99; p > 10 {
		t.Errorf("second 2 p99 %.3f ms, want ≈ 7 ms", p)
	}
}

func TestReadIntervalLogErrors(t *testing.T) {
	if _, err := result.ReadIntervalLog(strings.NewReader("#[Histogram log format version 1.3]\n"), "x.hlog"); err == nil || !strings.Contains(err.Error(), "x.hlog: no interval histograms") {
		t.Errorf("empty log: %v", err)
	}
	if _, err := result.ReadIntervalLog(strings.NewReader("Tag=response,0.0,1.0,0.1,HISTFAAAnotbase64!!\n"), "x.hlog"); err == nil || !strings.Contains(err.Error(), "x.hlog: interval 1") {
		t.Errorf("garbled log: %v", err)
	}
}
