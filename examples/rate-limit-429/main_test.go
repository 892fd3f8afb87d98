package main

import (
	"bytes"
	"context"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/openload/openload/limitmath"
	"github.com/openload/openload/result"
)

// TestRowsPlumbing runs every row for 2 s (at once, as the example does)
// and checks what must hold exactly, whatever the luck of 2 s of Poisson
// traffic: every row sends the shared schedule (Realized × 2 s); every
// request is accounted for; every 429 the stub decided reached the client
// (server count = client count, every attempt); with one retry and a budget
// that never binds, every first attempt answered 429 was retried, so
// 429 answers = retries sent + requests that got 429 twice. It checks no
// rate: 2 s hold too few windows for that (the full run is the experiment).
//
// Seven rows at once are about 950 requests a second: a machine busy
// with other work (the race detector, other tests) did not answer them
// all within the example's drain (5 s), and up to 187 of a row's 271 were
// unfinished. Each request still in flight at the end holds at most one
// attempt whose answer was not read, and at most one retry not yet sent,
// so the relations hold within Timeouts + Unfinished, and exactly when
// every request was answered (as on a machine that is not overloaded).
func TestRowsPlumbing(t *testing.T) {
	if testing.Short() {
		t.Skip("runs 2 s of load")
	}
	cells, err := RunAll(context.Background(), Rows, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cells {
		n, r := c.Result.Counts, c.Result.Retries
		name := c.Row.Name + ", retry " + c.Row.RetryLabel()
		open := n.Timeouts + n.Unfinished // requests whose last answer was not read
		if open > 0 {
			t.Logf("%s: %d timed out and %d unfinished of %d: the relations below hold within %d", name, n.Timeouts, n.Unfinished, n.Scheduled, open)
		}
		if float64(n.Scheduled) != c.Realized*2 || !n.Balanced() || n.Errors != 0 || n.Completed+open != n.Scheduled {
			t.Errorf("%s: counts %+v, the schedule holds %v", name, n, c.Realized*2)
		}
		if got := c.Result.AttemptStatus(429); got > c.Server.Rejected || c.Server.Rejected > got+open {
			t.Errorf("%s: client saw %d answers 429, the stub rejected %d (%d requests open at the end)", name, got, c.Server.Rejected, open)
		}
		if o := c.Observed * 2; o > float64(c.Server.Rejected) || o < float64(c.Server.Rejected-open) {
			t.Errorf("%s: observed %v/s from %d rejections in 2 s (%d requests open at the end)", name, c.Observed, c.Server.Rejected, open)
		}
		if (r != nil) != (c.Row.Retries > 0) {
			t.Fatalf("%s: retry counts %+v", name, r)
		}
		if r == nil {
			continue
		}
		if d := r.AttemptStatus["429"] - r.RetriesSent - r.Exhausted; r.RefusedByBudget != 0 || d < -open || d > open || c.Result.Status["429"] != r.Exhausted {
			t.Errorf("%s: retries %+v, final statuses %v (%d requests open at the end)", name, r, c.Result.Status, open)
		}
	}
	var b bytes.Buffer
	if err := Table(&b, cells); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"6 shards, round-robin", "1, after 1s–2s", "1, at once", "outside model", "predicted 429/s"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, b.String())
		}
	}
}

// poissonExcessMoments sums E[(N − L)+] and E[((N − L)+)²] for N ~
// Poisson(mu) with the recurrence P(k) = P(k−1)·mu/k from e^(−mu), a
// method independent of excessVariance's (lgamma, from L up).
func poissonExcessMoments(mu float64, L int) (e1, e2 float64) {
	p := math.Exp(-mu)
	for k := 0; k < L+int(20*math.Sqrt(mu))+100; k++ {
		if k > 0 {
			p *= mu / float64(k)
		}
		if k > L {
			x := float64(k - L)
			e1, e2 = e1+x*p, e2+x*x*p
		}
	}
	return e1, e2
}

// ModelSE against a direct sum; the 429 rate's mean from the same sum must
// be the model's prediction, which ties the variance to the same counts.
func TestModelSE(t *testing.T) {
	const d = 300 * time.Second
	for _, row := range Rows[:3] {
		in := row.Input()
		pred, err := limitmath.Predict(in)
		if err != nil {
			t.Fatal(err)
		}
		mu, L, n := Rate, pred.PerShardAllowance*row.Shards, 1.0
		if row.Routing != "round-robin" && row.Shards > 1 {
			mu, L, n = Rate/float64(row.Shards), pred.PerShardAllowance, float64(row.Shards)
		}
		e1, e2 := poissonExcessMoments(mu, L)
		if math.Abs(n*e1-pred.RejectPerSec) > 1e-9*pred.RejectPerSec {
			t.Errorf("%s: direct sum %v rejections a window, model %v/s", row.Name, n*e1, pred.RejectPerSec)
		}
		want := math.Sqrt(n * (e2 - e1*e1) / d.Seconds())
		if got := ModelSE(in, pred.PerShardAllowance, d); math.Abs(got-want) > 1e-9*want {
			t.Errorf("%s: ModelSE %v, direct sum %v", row.Name, got, want)
		}
	}
}

// BatchSE on timelines whose answer is known: constant counts have none;
// 5 s batches alternating 0 and 2 answers a second have the hand-computed
// SE below; a run shorter than two batches has none.
func TestBatchSE(t *testing.T) {
	tl := make([]result.Second, 40)
	for i := range tl {
		tl[i].RateLimited = 3
	}
	if se := BatchSE(tl, 40*time.Second, 5*time.Second); se != 0 {
		t.Errorf("constant timeline: SE %v", se)
	}
	for i := range tl {
		tl[i].RateLimited = int64(2 * (i / 5 % 2)) // batches: 0, 2, 0, 2, … (8 batches)
	}
	// Batch rates 0,2,0,2,0,2,0,2: mean 1, sample variance 8/7, SE = √(8/7)/√8.
	if se, want := BatchSE(tl, 40*time.Second, 5*time.Second), math.Sqrt(8.0/7)/math.Sqrt(8); math.Abs(se-want) > 1e-12 {
		t.Errorf("alternating batches: SE %v, want %v", se, want)
	}
	if se := BatchSE(tl, 8*time.Second, 5*time.Second); !math.IsNaN(se) {
		t.Errorf("one batch: SE %v, want NaN", se)
	}
	if b := batchLength(300 * time.Second); b != 10*time.Second {
		t.Errorf("batch of a 300 s run: %v", b)
	}
	if b := batchLength(30 * time.Second); b != 5*time.Second {
		t.Errorf("batch of a 30 s run: %v", b)
	}
}
