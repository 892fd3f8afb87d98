package stub

import (
	"math"
	"testing"
	"time"
)

type fakeClock struct{ t time.Time }

func newFakeClock() *fakeClock               { return &fakeClock{t: time.Unix(1_000_000, 0)} }
func (c *fakeClock) now() time.Time          { return c.t }
func (c *fakeClock) advance(d time.Duration) { c.t = c.t.Add(d) }
func (c *fakeClock) addN(w *rateWindow, n int) {
	for range n {
		w.add()
	}
}

func TestRateWindowRotation(t *testing.T) {
	clk := newFakeClock()
	w := newRateWindow(time.Second, 100*time.Millisecond, clk.now) // 10 buckets
	clk.addN(w, 10)                                                // bucket 0
	clk.advance(550 * time.Millisecond)
	clk.addN(w, 5) // bucket 5
	if n, _ := w.snapshot(); n != 15 {
		t.Fatalf("count = %d, want 15", n)
	}
	clk.advance(449 * time.Millisecond) // t = 999ms, still bucket 9: nothing expired
	if n, _ := w.snapshot(); n != 15 {
		t.Fatalf("at 999ms count = %d, want 15", n)
	}
	clk.advance(time.Millisecond) // t = 1s: bucket 10 reuses bucket 0's slot
	if n, _ := w.snapshot(); n != 5 {
		t.Fatalf("at 1s count = %d, want 5 (bucket 0 expired)", n)
	}
	clk.addN(w, 2) // into bucket 10
	clk.advance(500 * time.Millisecond)
	if n, _ := w.snapshot(); n != 2 {
		t.Fatalf("at 1.5s count = %d, want 2 (bucket 5 expired)", n)
	}
	clk.advance(10 * time.Second) // a long gap clears everything
	if n, _ := w.snapshot(); n != 0 {
		t.Fatalf("after gap count = %d, want 0", n)
	}
	clk.addN(w, 3)
	if n, _ := w.snapshot(); n != 3 {
		t.Fatalf("after gap and 3 adds count = %d, want 3", n)
	}
}

func TestRateWindowCovered(t *testing.T) {
	clk := newFakeClock()
	w := newRateWindow(2*time.Second, 100*time.Millisecond, clk.now) // 20 buckets
	cases := []struct {
		at, covered time.Duration
	}{
		{0, 0},
		// Younger than the window: covered = time since origin.
		{500 * time.Millisecond, 500 * time.Millisecond},
		{1999 * time.Millisecond, 1999 * time.Millisecond},
		// Bucket 20 opened at 2s and bucket 0 left: covered runs from 100ms.
		{2000 * time.Millisecond, 1900 * time.Millisecond},
		{2050 * time.Millisecond, 1950 * time.Millisecond},
		{2099 * time.Millisecond, 1999 * time.Millisecond},
		{2100 * time.Millisecond, 1900 * time.Millisecond},
		{10*time.Second + 30*time.Millisecond, 1930 * time.Millisecond},
	}
	start := clk.t
	for _, tc := range cases {
		clk.t = start.Add(tc.at)
		if _, got := w.snapshot(); got != tc.covered {
			t.Errorf("at %v covered = %v, want %v", tc.at, got, tc.covered)
		}
	}
}

func TestRateWindowUnevenWindowRoundsUp(t *testing.T) {
	clk := newFakeClock()
	w := newRateWindow(250*time.Millisecond, 100*time.Millisecond, clk.now)
	if len(w.counts) != 3 {
		t.Fatalf("buckets = %d, want ceil(250/100) = 3", len(w.counts))
	}
}

func completionsConfig(minSamples int) Config {
	return testConfig(func(c *Config) {
		c.Workers = 4
		c.Latency = 50 * time.Millisecond
		c.BelievedLatency = 50 * time.Millisecond
		c.Estimator = EstimatorCompletions
		c.Window = time.Second
		c.Bucket = 100 * time.Millisecond
		c.MinSamples = minSamples
	})
}

func TestEstimatorMinSamplesFallsBackToBelieved(t *testing.T) {
	clk := newFakeClock()
	e := newEstimator(completionsConfig(5), clk.now)
	clk.advance(200 * time.Millisecond)
	for i := range 4 {
		wait, st := e.wait(8)
		if !st.usingBelieved {
			t.Fatalf("after %d completions: not using believed", i)
		}
		if want := 8 * 50 * time.Millisecond / 4; wait != want { // 100ms
			t.Fatalf("believed wait = %v, want %v", wait, want)
		}
		if st.perSec != 80 { // 4 workers / 50ms
			t.Fatalf("believed throughput = %v, want 80", st.perSec)
		}
		e.completed()
	}
	e.completed() // 5th completion: the rate takes over
	wait, st := e.wait(8)
	if st.usingBelieved {
		t.Fatal("5 completions, MinSamples 5: still using believed")
	}
	// 5 completions over the 200ms covered = 25/s; 8 waiting → 320ms.
	if st.perSec != 25 || wait != 320*time.Millisecond {
		t.Fatalf("rate = %v/s wait = %v, want 25/s and 320ms", st.perSec, wait)
	}
	// Once the completions leave the window, back to believed.
	clk.advance(2 * time.Second)
	if _, st := e.wait(8); !st.usingBelieved || st.samples != 0 {
		t.Fatalf("after window passed: usingBelieved=%v samples=%d", st.usingBelieved, st.samples)
	}
}

func TestEstimatorMinSamplesZeroNeedsOneCompletion(t *testing.T) {
	clk := newFakeClock()
	e := newEstimator(completionsConfig(0), clk.now)
	clk.advance(100 * time.Millisecond)
	if _, st := e.wait(3); !st.usingBelieved {
		t.Fatal("no completions yet: want believed (a zero rate would make every wait infinite)")
	}
	e.completed()
	if wait, st := e.wait(3); st.usingBelieved || wait != 300*time.Millisecond {
		t.Fatalf("one completion in 100ms: believed=%v wait=%v, want rate 10/s and 300ms", st.usingBelieved, wait)
	}
}

// A steady completion stream: the rate is count ÷ covered time, in the young
// window and in the full one.
func TestEstimatorRate(t *testing.T) {
	clk := newFakeClock()
	e := newEstimator(completionsConfig(20), clk.now)
	// 100 completions per second, one every 10ms, for 1.5s.
	for range 150 {
		e.completed()
		clk.advance(10 * time.Millisecond)
	}
	// t = 1.5s: the window holds buckets 6..15, i.e. [0.6s, 1.5s): 90 completions over 0.9s.
	wait, st := e.wait(10)
	if st.usingBelieved {
		t.Fatal("using believed with 90 samples")
	}
	if st.samples != 90 || st.covered != 900*time.Millisecond {
		t.Fatalf("samples=%d covered=%v, want 90 and 900ms", st.samples, st.covered)
	}
	if math.Abs(st.perSec-100) > 1e-9 {
		t.Fatalf("rate = %v, want 100/s", st.perSec)
	}
	if wait != 100*time.Millisecond {
		t.Fatalf("wait(10) = %v, want 100ms", wait)
	}
	if w, _ := e.wait(0); w != 0 {
		t.Fatalf("wait(0) = %v, want 0", w)
	}
}

// The completions estimator must not depend on call durations. Simulate a
// saturated model (4 workers, 50ms calls → 80 completions/s) with a standing
// queue of 40, so every request spends ~500ms queueing plus 50ms in the
// model. The estimate for a request finding 40 waiting must be 40 ÷ 80/s =
// 500ms. An estimator fed average request durations (550ms) would say
// 40 × 550ms ÷ 4 = 5.5s and reject nearly everything. The estimator has no
// way to be told a duration: only completion instants go in.
func TestEstimatorUsesRateNotDurations(t *testing.T) {
	clk := newFakeClock()
	cfg := completionsConfig(20)
	cfg.BelievedLatency = time.Second // believed is way off; the rate must win
	e := newEstimator(cfg, clk.now)
	clk.advance(25 * time.Millisecond)
	for range 200 { // 10s of a saturated model: 4 completions every 50ms
		for range 4 {
			e.completed()
		}
		clk.advance(50 * time.Millisecond)
	}
	wait, st := e.wait(40)
	if st.usingBelieved {
		t.Fatal("using believed")
	}
	// Completions are points in time, so a window edge can cut off one
	// 50ms batch either way: allow ±5% (the duration-based figure is 11×).
	if math.Abs(st.perSec-80) > 4 {
		t.Fatalf("rate = %v/s, want 80/s ±5%%", st.perSec)
	}
	if d := wait - 500*time.Millisecond; d < -25*time.Millisecond || d > 25*time.Millisecond {
		t.Fatalf("wait(40) = %v, want 500ms ±5%%", wait)
	}
}

func TestBelievedEstimator(t *testing.T) {
	clk := newFakeClock()
	cfg := completionsConfig(0)
	cfg.Estimator = EstimatorBelieved
	cfg.BelievedLatency = 30 * time.Millisecond
	e := newEstimator(cfg, clk.now)
	for range 100 {
		e.completed() // ignored by the believed estimator
	}
	cases := []struct {
		queue int
		want  time.Duration
	}{{0, 0}, {1, 7500 * time.Microsecond}, {4, 30 * time.Millisecond}, {10, 75 * time.Millisecond}}
	for _, tc := range cases {
		wait, st := e.wait(tc.queue)
		if !st.usingBelieved || wait != tc.want {
			t.Errorf("wait(%d) = %v (believed=%v), want %v", tc.queue, wait, st.usingBelieved, tc.want)
		}
	}
	cfg.BelievedLatency = 0
	e = newEstimator(cfg, clk.now)
	if wait, st := e.wait(10); wait != 0 || st.perSec != 0 {
		t.Errorf("believed latency 0: wait=%v perSec=%v, want 0 and 0 (unbounded)", wait, st.perSec)
	}
}
