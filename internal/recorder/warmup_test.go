package recorder

import (
	"testing"
	"time"

	"github.com/openload/openload/result"
)

// TestWarmup: requests scheduled in the warm-up are counted (the
// accounting holds) but kept out of the headline histograms and class
// shares; the result reports them apart, and Headline subtracts them.
func TestWarmup(t *testing.T) {
	r := New(nil)
	r.TrackClasses([]string{"X-Stub-Source"})
	r.SetWarmup(time.Second)
	add := func(sched, took time.Duration, out Outcome, class string) {
		rec := &Record{Scheduled: sched, Sent: sched, Done: sched + took, WasSent: true, Outcome: out, Status: 200}
		if out != Completed {
			rec.Status = 0
		}
		rec.Class[0] = class
		if err := r.Add(rec); err != nil {
			t.Fatal(err)
		}
	}
	// Warm-up: 3 slow requests, one failed.
	add(0, 900*time.Millisecond, Completed, "fallback")
	add(300*time.Millisecond, 800*time.Millisecond, Completed, "fallback")
	add(600*time.Millisecond, 10*time.Millisecond, Failed, "")
	// After it: 2 fast ones.
	add(time.Second, 50*time.Millisecond, Completed, "model")
	add(1500*time.Millisecond, 60*time.Millisecond, Completed, "model")
	res := &result.Result{}
	if err := r.Fill(res); err != nil {
		t.Fatal(err)
	}
	c := res.Counts
	if c.Scheduled != 5 || c.Completed != 4 || c.Errors != 1 || c.Sent != 5 {
		t.Errorf("counts %+v, want all 5 requests", c)
	}
	if res.Response.Count != 2 || res.Response.Max > 61 || res.Service.Count != 2 {
		t.Errorf("headline response %+v, want the 2 after the warm-up", res.Response)
	}
	w := res.Warmup
	if w == nil || w.Until != "1s" || w.Scheduled != 3 || w.Completed != 2 || w.Errors != 1 || w.Response.Count != 3 || w.Response.Max < 899 {
		t.Fatalf("warmup %+v", w)
	}
	if h := res.Headline(); h.Scheduled != 2 || h.Errors != 0 {
		t.Errorf("headline counts %+v", h)
	}
	if v := res.Classes[0].Values; len(v) != 1 || v[0].Value != "model" || v[0].Share != 1 {
		t.Errorf("class shares %+v, want model 100 %% of the 2", v)
	}
	var sched int64
	for _, s := range res.Timeline {
		sched += s.Scheduled
	}
	if sched != 5 {
		t.Errorf("timeline holds %d scheduled, want 5", sched)
	}
}
