package main

import (
	"bytes"
	"context"
	"math"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/openload/openload/result"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestShortExperiment runs the -short scenario (20/s for 3 s against 4
// batch slots of 400 ms each) with 4 and with 64 connections and asserts
// the relations README.md works out. Bounds are wide enough for a busy
// 2-core machine under the race detector; each says why.
func TestShortExperiment(t *testing.T) {
	sc := Short
	ctx := context.Background()
	pool, err := sc.Run(ctx, sc.Slots)
	if err != nil {
		t.Fatal(err)
	}
	queue, err := sc.Run(ctx, 64)
	if err != nil {
		t.Fatal(err)
	}
	for name, res := range map[string]int64{"pool": pool.Counts.Completed, "queue": queue.Counts.Completed} {
		if res != 60 {
			t.Errorf("%s: %d completed, want all 60", name, res)
		}
	}
	hand := sc.handFor(sc.hold())
	// Each answer holds its connection for S = 400 ms: service time (done
	// − sent) is that hold plus loopback and scheduling, never less, and
	// 100 ms over it is far more overhead than a busy machine adds. A
	// client that ends a stream at its head reads about the 50 ms
	// prefill here (issue 50), and every record then fails the stamp
	// check.
	if s, hold := pool.Service.P50, float64(sc.hold())/1e6; s < 0.99*hold || s > hold+100 {
		t.Errorf("pool: service time p50 %.1f ms, want the %.0f ms hold", s, hold)
	}
	for name, res := range map[string]*result.Result{"pool": pool, "queue": queue} {
		if c, ok := res.Check("stamps"); !ok || c.Severity != "pass" {
			t.Errorf("%s: stamps check %+v", name, c)
		}
	}
	ps, qs := pool.Stream, queue.Stream
	// Every answer has its 36 tokens, from the usage chunk.
	if ps.OutputTokens != 60*36 || qs.OutputTokens != 60*36 {
		t.Errorf("output tokens %d and %d, want %d", ps.OutputTokens, qs.OutputTokens, 60*36)
	}
	// Pool: TTFT from the send is the prefill (50 ms) plus loopback and
	// scheduling: the backlog's wait is before the send. A wait after the
	// send (the defect: more connections than slots) shows the backlog,
	// 2,850 ms at p99 by hand; a quarter of that is the bound. (It was
	// 200 ms, 4× the prefill: 284 ms was read with -race beside a CPU hog
	// and a load average of 9 on 2 cores.)
	if ps.TTFTService.P99 < 50 || ps.TTFTService.P99 > hand.P99/4 {
		t.Errorf("pool: TTFT from the send p99 %.1f ms, want the 50 ms prefill, far below the backlog's %.0f ms", ps.TTFTService.P99, hand.P99)
	}
	// From the schedule it shows the wait: at least the hand value with
	// S = 400 ms (overhead only lengthens a hold), and within ×1.5 of it
	// (an overhead of 100 ms per 400 ms hold, far above the few ms seen).
	for _, c := range []struct {
		name      string
		got, hand float64
	}{{"p50", ps.TTFTResponse.P50, hand.P50}, {"p99", ps.TTFTResponse.P99, hand.P99}} {
		if c.got < 0.97*c.hand || c.got > 1.5*c.hand {
			t.Errorf("pool: TTFT from the schedule %s %.0f ms, by hand %.0f", c.name, c.got, c.hand)
		}
	}
	// Queue: the wait is after the send, so both TTFTs show it alike: they
	// differ by the generator's own lateness, which the run measures as
	// send delay. Each answer's TTFT from the schedule is its send delay
	// plus its TTFT from the send, so the p99s differ by no more than the
	// largest send delay, and never by less than 0 (up to the histograms'
	// 3 significant digits, 0.1 % each). A wait before the send (a client
	// that held requests for a connection) fails the next check, TTFT
	// from the send below the hand value. (This held to 50 ms, which a
	// busy machine's send delay passed: 215 ms with -race and a CPU hog.)
	if d, sd, slop := qs.TTFTResponse.P99-qs.TTFTService.P99, queue.SendDelay.Max, 0.002*qs.TTFTResponse.P99; d < -slop || d > sd+slop {
		t.Errorf("queue: TTFT p99 %.0f from the schedule, %.0f from the send: want them apart by at most the largest send delay, %.1f ms", qs.TTFTResponse.P99, qs.TTFTService.P99, sd)
	}
	if qs.TTFTService.P99 < 0.97*hand.P99 {
		t.Errorf("queue: TTFT from the send p99 %.0f ms, below the hand value %.0f", qs.TTFTService.P99, hand.P99)
	}
	// Goodput against ttft ≤ 500 ms: the first 3 groups of 4 by hand,
	// and overhead only pushes groups out; the first group takes the 4
	// slots at once, with a TTFT of the 50 ms prefill, so at least 4.
	// (It asked 8, the first two groups: 7 were read with -race beside a
	// CPU hog and a load average of 9 on 2 cores.)
	if g := ps.Goodput; g == nil || g.Met < 4 || g.Met > hand.Met {
		t.Errorf("pool goodput %+v, by hand %d met", g, hand.Met)
	}
	var out bytes.Buffer
	if err := Print(&out, sc, pool, queue); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"TTFT from schedule", "DIVERGE", "by hand, S = 400ms", "measured, -c 4"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q", want)
		}
	}
}

func TestHandByFormula(t *testing.T) {
	// README.md's full table: N = 200, L = 200 ms, P = 50 ms.
	h := Full.handFor(400 * time.Millisecond)
	if h.N != 200 || h.P50 != 4850 || h.P90 != 8850 || h.P99 != 9850 || h.Mean != 4950 || h.Met != 12 {
		t.Errorf("full: %+v", h)
	}
	h = Short.handFor(400 * time.Millisecond)
	if h.N != 60 || h.P50 != 1450 || h.P90 != 2650 || h.P99 != 2850 || h.Mean != 1450 || h.Met != 12 {
		t.Errorf("short: %+v", h)
	}
}

// TestShortSweep runs experiment 2's -short sweep (6 to 42/s for 2 s each
// against 16 slots; knee at 30.2/s by hand) and asserts what README.md
// works out, with bounds wide enough for a busy 2-core machine under the
// race detector; each says why.
func TestShortSweep(t *testing.T) {
	b := ShortSweep
	sw, err := b.Sweep(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(sw.Points) != len(b.Rates) {
		t.Fatalf("%d points, want %d", len(sw.Points), len(b.Rates))
	}
	at := map[float64]int{}
	for i, p := range sw.Points {
		at[p.Rate] = i
		r := p.Result
		want := int64(p.Rate * b.Duration.Seconds())
		if r.Counts.Completed != want || r.Stream == nil || r.Stream.OutputTokens != want*int64(b.Tokens) {
			t.Fatalf("%g/s: %d completed, want %d, each with %d tokens (stream %+v)", p.Rate, r.Counts.Completed, want, b.Tokens, r.Stream)
		}
		s := r.Stream
		t.Logf("%g/s: ITL p50 %.1f ms, TPOT p50 %.1f ms, TTFT p99 %.1f ms (from the send %.1f ms), send delay p99 %.1f ms, goodput %.1f/s",
			p.Rate, s.ITL.P50, s.TPOT.P50, s.TTFTResponse.P99, s.TTFTService.P99, r.SendDelay.P99, s.Goodput.PerS)
	}
	itl := func(rate float64) float64 { return sw.Points[at[rate]].Result.Stream.ITL.P50 }
	ttft := func(rate float64) float64 { return sw.Points[at[rate]].Result.Stream.TTFTResponse.P99 }
	good := func(rate float64) float64 { return sw.Points[at[rate]].Result.Stream.Goodput.PerS }

	// ITL grows with occupancy up to the knee. By hand 10.4, 14.9, 18.7,
	// 24.8 ms: each step is ≥ 3.8 ms, so a 1 ms tolerance cannot hide a
	// fall. (The first hold of a run starts from an empty batch, which
	// only lowers a point's figure a little.)
	for _, pair := range [][2]float64{{6, 18}, {18, 24}, {24, 30}} {
		if itl(pair[1]) < itl(pair[0])+1 {
			t.Errorf("ITL p50 %.1f ms at %g/s, not above %.1f ms at %g/s", itl(pair[1]), pair[1], itl(pair[0]), pair[0])
		}
	}
	// Past the knee the slots cap the occupancy: ITL saturates at
	// 10 + 1 × 15 = 25 ms. A token is due at an absolute time, so timer
	// lateness does not add up along a stream: 2 ms covers it.
	if v := itl(42); v < 23 || v > 27 {
		t.Errorf("ITL p50 at 42/s %.1f ms, want the 25 ms of 16 full slots", v)
	}
	// TTFT below the knee is the 30 ms prefill: no request waits for a
	// slot. It is read from the send: from the schedule it also holds the
	// generator's own lateness, which the run reports apart as send delay
	// (206 ms at p99 at 6/s with -race and a CPU hog), and the two may
	// differ by no more than the largest send delay. From the send, 200 ms
	// over the prefill covers loopback and the stub's and the loop's
	// timers on a busy machine (146 ms read at 6/s, 12 requests, with a
	// load average of 9 on 2 cores); a wait for a slot, the defect, is a
	// backlog that grows by a hold (30 ms + 20 tokens × 10–19 ms) with
	// each request it holds back. With half the slots it read 219 ms at
	// 24/s, which this bound no longer catches: the ITL checks above and
	// below do. Past the knee the queue grows: by hand
	// 805 ms at 42/s from the schedule; 300 ms is ten times the prefill.
	ttftSend := func(rate float64) float64 { return sw.Points[at[rate]].Result.Stream.TTFTService.P99 }
	for _, r := range []float64{6, 18, 24} {
		if v := ttftSend(r); v < 30 || v > 230 {
			t.Errorf("TTFT from the send p99 at %g/s %.1f ms, want the 30 ms prefill", r, v)
		}
		if d, sd := ttft(r)-ttftSend(r), sw.Points[at[r]].Result.SendDelay.Max; d < -0.002*ttft(r) || d > sd+0.002*ttft(r) {
			t.Errorf("TTFT p99 at %g/s: %.1f ms from the schedule, %.1f ms from the send, apart by more than the largest send delay %.1f ms", r, ttft(r), ttftSend(r), sd)
		}
	}
	if v := ttft(42); v < 300 {
		t.Errorf("TTFT p99 at 42/s %.1f ms, want the queue's growing wait (805 ms by hand)", v)
	}
	// Goodput (ttft ≤ 500 ms, tpot ≤ 20 ms) peaks below the knee, where
	// TPOT (18.7 ms by hand at 24/s) still meets its bound, and falls past
	// it: by hand 0 at 30/s and 42/s; only the answers that began in a
	// batch still filling meet it, far below half the peak.
	peak, peakRate := 0.0, 0.0
	for _, p := range sw.Points {
		if g := p.Result.Stream.Goodput.PerS; g > peak {
			peak, peakRate = g, p.Rate
		}
	}
	if peakRate != 18 && peakRate != 24 {
		t.Errorf("goodput peaks at %g/s (%.1f/s), want 24/s (or 18/s if TPOT crept over 20 ms)", peakRate, peak)
	}
	if g := good(42); g > peak/2 {
		t.Errorf("goodput at 42/s %.1f/s, want far below its peak %.1f/s", g, peak)
	}
	// The sweep's knee: response p99 doubles at 30/s by hand (525 against
	// 239 ms), and at 42/s the queue adds to it.
	if sw.Knee < 0 || (sw.Points[sw.Knee].Rate != 30 && sw.Points[sw.Knee].Rate != 42) {
		t.Errorf("knee %d (%s), want 30/s or 42/s", sw.Knee, sw.KneeWhy)
	}
	var out bytes.Buffer
	if err := PrintSweep(&out, b, sw); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"knee at 30.2/s", "ITL p50", "goodput/s", "← knee"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q", want)
		}
	}
}

// TestHandSweep checks README.md's experiment-2 table.
func TestHandSweep(t *testing.T) {
	b := FullSweep
	if k := b.Knee(); math.Abs(k-16/0.53) > 1e-9 {
		t.Errorf("knee %v, want 16/0.53", k)
	}
	near := func(got, want float64) bool { return math.Abs(got-want) < 0.01 }
	h := b.Hand(24) // n = 24 × 0.21 / (1 − 24 × 0.02) = 5.04 / 0.52
	if !near(h.Occupancy, 5.04/0.52) || !near(h.ITL, 10+5.04/0.52-1) || h.Goodput != 24 || h.TTFTp99 != 30 {
		t.Errorf("24/s: %+v", h)
	}
	h = b.Hand(30) // n = 6.3 / 0.4 = 15.75: TPOT 24.75 ms breaks 20 ms
	if !near(h.Occupancy, 15.75) || !near(h.ITL, 24.75) || h.Goodput != 0 {
		t.Errorf("30/s: %+v", h)
	}
	h = b.Hand(42) // full: μ = 16 / 0.53; wait (42 − μ)/μ × 9.9 s
	mu := 16 / 0.53
	if h.Occupancy != 16 || !near(h.ITL, 25) || !near(h.Completed, mu) || !near(h.TTFTp99, 30+1e3*(42-mu)/mu*9.9) || h.Goodput != 0 {
		t.Errorf("42/s: %+v", h)
	}
}
