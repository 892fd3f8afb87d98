package sweep

import (
	"context"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/openload/openload/internal/loadtest"
	"github.com/openload/openload/result"
	"github.com/openload/openload/schedule"
	"github.com/openload/openload/verify"
)

// fakeProfileRun completes, in a second, sync requests for the
// synchronous point, max for the throughput probe, and its rate for an
// open point, with response p99 p99(rate): what RunProfile reads of a run.
func fakeProfileRun(t *testing.T, sync, max float64, p99 func(float64) float64, seen *[]loadtest.Options) RunFunc {
	return func(_ context.Context, o loadtest.Options) (loadtest.Outcome, error) {
		*seen = append(*seen, o)
		done := o.Schedule.Rate
		switch {
		case o.Closed:
			done = sync
		case o.Schedule.IsAtOnce():
			done = max
		}
		n := int64(done)
		res := &result.Result{Elapsed: 1, Counts: result.Counts{Scheduled: n, Completed: n}, Response: result.Percentiles{P99: p99(o.Schedule.Rate)}}
		return loadtest.Outcome{Result: res}, nil
	}
}

// TestRunProfile: the synchronous point runs first (1 user, closed,
// unpaced), the probe second (all at once, its count what -c synchronous
// users complete in D), then the open rates between; the points come back
// by rate, and the knee is named among the open points (the probe's
// queue never names it).
func TestRunProfile(t *testing.T) {
	var seen []loadtest.Options
	p99 := func(r float64) float64 {
		if r > 120 || math.IsInf(r, 1) {
			return 1000 // past capacity, and the probe's queue
		}
		return 20
	}
	base := loadtest.Options{Schedule: schedule.Spec{Kind: schedule.Poisson, Duration: 2 * time.Second, Seed: 1}, Warmup: 500 * time.Millisecond}
	base.Connections, base.Timeout = 8, time.Second
	var probeN int64
	var found []float64
	sw, err := RunProfile(context.Background(), ProfileOptions{
		Options: Options{Base: base, Run: fakeProfileRun(t, 50, 200, p99, &seen)},
		Points:  5,
		OnProbe: func(n int64, _ float64) { probeN = n },
		OnRates: func(_, _ float64, rates []float64) { found = rates },
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(seen) != 7 {
		t.Fatalf("%d runs, want 7", len(seen))
	}
	if s := seen[0]; !s.Closed || s.Connections != 1 || s.Schedule.Rate != 0 || s.Schedule.Kind != schedule.Constant {
		t.Errorf("synchronous point: closed %v, %d users, rate %v, %q", s.Closed, s.Connections, s.Schedule.Rate, s.Schedule.Kind)
	}
	if p := seen[1]; !p.Schedule.IsAtOnce() || p.Schedule.Count != 800 || probeN != 800 || p.Connections != 8 || p.Schedule.Duration != 0 || p.Warmup != 0 {
		t.Errorf("probe: rate %v, count %d (told %d), -c %d, duration %v, warm-up %v; want inf, ⌈50 × 2⌉ × 8 = 800, 8, 0, 0",
			p.Schedule.Rate, p.Schedule.Count, probeN, p.Connections, p.Schedule.Duration, p.Warmup)
	}
	want := []float64{75, 100, 125, 150, 175} // 50 + k × 150/6
	if !slices.Equal(found, want) {
		t.Errorf("rates %v, want %v", found, want)
	}
	for i, o := range seen[2:] {
		if o.Closed || o.Schedule.Rate != want[i] || o.Schedule.Kind != schedule.Poisson || o.Schedule.Duration != 2*time.Second || o.Warmup != base.Warmup {
			t.Errorf("open point %d: %+v, want the base run at %v/s", i+1, o.Schedule, want[i])
		}
	}
	var kinds []string
	for _, p := range sw.Points {
		kinds = append(kinds, p.Kind)
	}
	if !slices.Equal(kinds, []string{result.PointSynchronous, "", "", "", "", "", result.PointThroughput}) {
		t.Errorf("kinds by rate %q", kinds)
	}
	if sw.Knee != 3 || sw.Points[sw.Knee].Rate != 125 {
		t.Errorf("knee %d (%s), want point 4, 125/s", sw.Knee, sw.KneeWhy)
	}
	f := SweepFile(sw)
	if last := f.Points[6]; last.Rate != 0 || last.Kind != result.PointThroughput || f.Knee.Point != 4 {
		t.Errorf("file: throughput point %+v, knee %+v", last, f.Knee)
	}
	if oc := sw.Outcome(false); oc.Class != verify.ClassValid {
		t.Errorf("outcome %+v", oc)
	}
}

// TestRunProfileNoRoom: a throughput probe no faster than the synchronous
// point leaves no rate between: the sweep holds both probes, and says so.
func TestRunProfileNoRoom(t *testing.T) {
	var seen []loadtest.Options
	base := loadtest.Options{Schedule: schedule.Spec{Duration: time.Second}}
	base.Connections, base.Timeout = 1, time.Second
	sw, err := RunProfile(context.Background(), ProfileOptions{
		Options:  Options{Base: base, Run: fakeProfileRun(t, 50, 50, func(float64) float64 { return 20 }, &seen)},
		Points:   3,
		Requests: 10,
	})
	if err == nil || !strings.Contains(err.Error(), "no rates between them") || sw == nil || len(sw.Points) != 2 {
		t.Fatalf("err %v, sweep %+v", err, sw)
	}
	if seen[1].Schedule.Count != 10 || sw.Points[1].Kind != result.PointThroughput {
		t.Errorf("probe count %d, points %+v", seen[1].Schedule.Count, sw.Points)
	}
}

// TestProfileRefuses: the profile's own options, and what a probe cannot
// take, are refused before anything runs.
func TestProfileRefuses(t *testing.T) {
	run := func(context.Context, loadtest.Options) (loadtest.Outcome, error) {
		t.Fatal("ran")
		return loadtest.Outcome{}, nil
	}
	base := loadtest.Options{Schedule: schedule.Spec{Duration: time.Second}}
	base.Connections, base.Timeout = 4, time.Second
	sharded := base
	sharded.Shard = schedule.Shard{Index: 0, Of: 2}
	for _, tc := range []struct {
		o    ProfileOptions
		want string
	}{
		{ProfileOptions{Options: Options{Base: base, Rates: []float64{10}}, Points: 2}, "finds its own rates"},
		{ProfileOptions{Options: Options{Base: base}}, "points 0"},
		{ProfileOptions{Options: Options{Base: base}, Points: 2, Requests: -1}, "requests -1"},
		{ProfileOptions{Options: Options{Base: loadtest.Options{}}, Points: 2}, "duration 0s"},
		{ProfileOptions{Options: Options{Base: sharded}, Points: 2}, "the synchronous point: Closed runs no schedule to split"},
	} {
		tc.o.Run = run
		if _, err := RunProfile(context.Background(), tc.o); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v, want %q", err, tc.want)
		}
	}
}

func TestProfileRates(t *testing.T) {
	if r, err := ProfileRates(50, 200, 2); err != nil || !slices.Equal(r, []float64{100, 150}) {
		t.Errorf("50..200, 2: %v %v", r, err)
	}
	if n := ProbeCount(47.3, 2*time.Second, 8); n != 95*8 {
		t.Errorf("ProbeCount(47.3/s, 2 s, 8) = %d, want ⌈94.6⌉ × 8", n)
	}
	for _, c := range [][2]float64{{0, 10}, {10, 10}, {10, 5}, {10, math.Inf(1)}} {
		if _, err := ProfileRates(c[0], c[1], 2); err == nil {
			t.Errorf("%v..%v: no error", c[0], c[1])
		}
	}
}
