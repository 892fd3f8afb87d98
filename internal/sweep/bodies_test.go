package sweep

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/openload/openload/internal/loadtest"
	"github.com/openload/openload/result"
	"github.com/openload/openload/schedule"
	"github.com/openload/openload/verify"
)

// span is a run's first body and how many request indexes it took.
type bodySpan struct{ off, n uint64 }

// countingRun schedules ⌊rate × D⌋ requests (a throughput probe its
// count, a closed loop 7; a shard of two, half), passes below 100/s, and
// keeps each run's body offset and count.
func countingRun(spans *[]bodySpan) RunFunc {
	return func(_ context.Context, o loadtest.Options) (loadtest.Outcome, error) {
		n := schedule.ConstantCount(o.Schedule.Rate, o.Schedule.Duration)
		switch {
		case o.Closed:
			n = 7
		case o.Schedule.IsAtOnce():
			n = o.Schedule.Count
		}
		if o.Shard.Enabled() {
			n /= 2
		}
		*spans = append(*spans, bodySpan{o.BodyOffset, uint64(n)})
		p99 := 10.0
		if o.Schedule.Rate >= 100 {
			p99 = 500
		}
		res := &result.Result{Elapsed: 1, Counts: result.Counts{Scheduled: n, Completed: n}, Response: result.Percentiles{P99: p99}}
		return loadtest.Outcome{Result: res, Outcome: verify.Outcome{Objectives: verify.Evaluate(res, verify.WithDefault(o.Objectives))}}, nil
	}
}

// TestBodiesFollowOn: every run of a sweep, a search, repeats and a
// profile sweep starts its bodies where the run before stopped, so none
// re-sends another's; a shard steps by the whole schedule's bound.
func TestBodiesFollowOn(t *testing.T) {
	base := loadtest.Options{Schedule: schedule.Spec{Kind: schedule.Constant, Duration: time.Second}}
	base.Connections, base.Timeout, base.BodyOffset = 4, time.Second, 1000 // the caller's own offset is kept
	contiguous := func(name string, spans []bodySpan, want int) {
		t.Helper()
		if len(spans) != want {
			t.Fatalf("%s: %d runs, want %d", name, len(spans), want)
		}
		next := uint64(1000)
		for i, s := range spans {
			if s.off != next || s.n == 0 {
				t.Errorf("%s: run %d takes bodies from %d (%d of them), want from %d: %v", name, i+1, s.off, s.n, next, spans)
			}
			next = s.off + s.n
		}
	}
	ctx := context.Background()
	var spans []bodySpan
	if _, err := Run(ctx, Options{Base: base, Rates: []float64{30, 10, 20}, Run: countingRun(&spans)}); err != nil {
		t.Fatal(err)
	}
	contiguous("sweep", spans, 3)
	if spans[0].n != 10 || spans[2].n != 30 {
		t.Errorf("sweep: runs of %v, want 10, 20 and 30 lowest first", spans)
	}

	spans = nil
	rep := base
	rep.Schedule.Rate = 20
	if _, err := Repeat(ctx, Options{Base: rep, Run: countingRun(&spans)}, 3); err != nil {
		t.Fatal(err)
	}
	contiguous("repeats", spans, 3)

	spans = nil
	so := SearchOptions{Options: Options{Base: base, Run: countingRun(&spans)}, From: 20, To: 400, Precision: 0.1, Repeats: 2}
	so.Base.Objectives = []verify.Objective{obj(t, "response.p99<=100ms")}
	s, err := RunSearch(ctx, so)
	if err != nil || s.Verdict != Found {
		t.Fatalf("search: %v, %+v", err, s)
	}
	runs := 0
	for _, p := range s.Probes {
		runs += len(p.Points)
	}
	contiguous("search", spans, runs)

	spans = nil
	if _, err := RunProfile(ctx, ProfileOptions{Options: Options{Base: base, Run: countingRun(&spans)}, Points: 2, Requests: 50}); err != nil {
		t.Fatal(err)
	}
	contiguous("profile", spans, 4)

	// A shard's own count is half the whole: it steps by the whole
	// Poisson schedule's bound, as every other shard does.
	spans = nil
	sh := base
	sh.Schedule.Kind, sh.Schedule.Seed, sh.Shard = schedule.Poisson, 1, schedule.Shard{Index: 1, Of: 2}
	if _, err := Run(ctx, Options{Base: sh, Rates: []float64{10, 20}, Run: countingRun(&spans)}); err != nil {
		t.Fatal(err)
	}
	sh.Schedule.Rate = 10
	if bound := uint64(math.Ceil(sh.Schedule.MaxCount())); len(spans) != 2 || spans[1].off != 1000+bound || bound <= 10 {
		t.Errorf("shard: runs %v, want the second from %d (the bound of the first's whole count)", spans, 1000+bound)
	}
}
