package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
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
	ps, qs := pool.Stream, queue.Stream
	// Every answer has its 36 tokens, from the usage chunk.
	if ps.OutputTokens != 60*36 || qs.OutputTokens != 60*36 {
		t.Errorf("output tokens %d and %d, want %d", ps.OutputTokens, qs.OutputTokens, 60*36)
	}
	// Pool: TTFT from the send is the prefill (50 ms) plus loopback and
	// scheduling; 4× the prefill is far below any wait the backlog makes.
	if ps.TTFTService.P99 < 50 || ps.TTFTService.P99 > 200 {
		t.Errorf("pool: TTFT from the send p99 %.1f ms, want the 50 ms prefill", ps.TTFTService.P99)
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
	// Queue: the wait is after the send, so both TTFTs show it alike.
	if d := qs.TTFTResponse.P99 - qs.TTFTService.P99; d < 0 || d > 50 {
		t.Errorf("queue: TTFT p99 %.0f from the schedule, %.0f from the send: want them equal", qs.TTFTResponse.P99, qs.TTFTService.P99)
	}
	if qs.TTFTService.P99 < 0.97*hand.P99 {
		t.Errorf("queue: TTFT from the send p99 %.0f ms, below the hand value %.0f", qs.TTFTService.P99, hand.P99)
	}
	// Goodput against ttft ≤ 500 ms: the first 3 groups of 4 by hand;
	// overhead can only push the third group out.
	if g := ps.Goodput; g == nil || g.Met < 8 || g.Met > hand.Met {
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
