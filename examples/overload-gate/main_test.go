package main

import (
	"bytes"
	"context"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/openload/openload/servers/stub"
)

// TestCellAndTable runs one cell of the matrix briefly (2× capacity for
// 2 s) and checks the experiment's plumbing: every request is accounted
// for, the class headers were counted, and the table prints the row. The
// model share at 2× capacity is capacity ÷ offered = 50 % in the long run;
// it is logged, not bounded: it held to 30–75 % before, which measures how
// fast the machine ran the model and the client. What the gate must do is
// held to counts and to the stub's own measures instead, on any machine:
// it keeps the model busy (a gate that turns nearly everything away
// leaves it idle), and it lets no more wait than its rule admits (a gate
// that lets in more than the model serves within budget grows a queue).
func TestCellAndTable(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a 2 s load")
	}
	const d = 2 * time.Second
	c, err := RunCell(context.Background(), Rows[0], 160, d)
	if err != nil {
		t.Fatal(err)
	}
	n := c.Result.Counts
	if n.Scheduled != 320 || !n.Balanced() {
		t.Fatalf("counts %+v", n)
	}
	var fallbacks int64
	for _, v := range c.Fallback {
		fallbacks += v
	}
	if c.Model+fallbacks != n.Completed {
		t.Errorf("model %d + fallbacks %d ≠ completed %d", c.Model, fallbacks, n.Completed)
	}
	cfg := stub.DefaultConfig()
	Rows[0].Set(&cfg)
	// Busy: the model's calls, as the stub timed them (Server-Timing
	// model;dur, 0 for a fallback), add up to at least half of what its
	// workers could do in the run's 2 s. A slow machine lengthens the
	// calls and so only adds to the sum; the workers idle only when the
	// queue is empty, which at 2× capacity is the gate's doing.
	var busy float64 // ms
	for _, m := range c.Result.ServerTiming {
		if m.Name == "model" {
			busy = m.Percentiles.Mean * float64(m.Percentiles.Count)
		}
	}
	if can := float64(cfg.Workers) * float64(d.Milliseconds()); busy < can/2 {
		t.Errorf("the model's calls add up to %.0f ms, less than half of %d workers × %v (%.0f ms): the gate left it idle", busy, cfg.Workers, d, can)
	}
	// Queue: the gate admits a request finding q waiting only if
	// q ÷ rate ≤ budget; the rate is the believed workers ÷ latency, or
	// completions ÷ the window's time, and as no call returns before
	// 50 ms, MinSamples completions take at least (MinSamples ÷ workers
	// − 1) × latency, so the rate is at most workers ÷ latency + workers
	// ÷ that time (100/s here): at most budget × 100/s + 1 = 11 wait.
	minCovered := time.Duration(cfg.MinSamples/cfg.Workers-1) * cfg.Latency
	fastest := float64(cfg.Workers)/cfg.Latency.Seconds() + float64(cfg.Workers)/minCovered.Seconds()
	if limit := int(math.Floor(cfg.WaitBudget.Seconds()*fastest+1e-9)) + 1; c.Stats.MaxQueueLen > limit {
		t.Errorf("the queue reached %d waiting, more than the gate admits (%d)", c.Stats.MaxQueueLen, limit)
	}
	t.Logf("model share %.2f at 2× capacity (50 %% in the long run), the model busy %.0f ms of %d workers × %v, at most %d waiting",
		c.ModelShare(), busy, cfg.Workers, d, c.Stats.MaxQueueLen)
	var b bytes.Buffer
	if err := Table(&b, []Cell{c}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), Rows[0].Name) || !strings.Contains(b.String(), "model share") {
		t.Errorf("table:\n%s", b.String())
	}
}
