package main

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/openload/openload/schedule"
	"github.com/openload/openload/servers/stub"
)

// TestGatePosition runs the position demonstration briefly: T = 100 ms,
// 1 s of Poisson 160/s (about 160 requests) with one 250 ms stall from
// 300 ms (StallEvery is 1 s, so the next would start at 1.3 s, after the
// last arrival; the drain still sees it). Then it replays the first run's
// log at speed 2 against the same gate.
//
// Why the assertions hold, and not by luck:
//
//   - gate last: zero violations is structural. The stub checks the dwell
//     and reports it in Server-Timing at the same instant, just before the
//     write, so no answer leaves with a reported dwell above T; the stub's
//     max_dwell_sent_ms ≤ T for the same reason. Drops > 0: everything
//     ready during the stall is held to its end at 550 ms; what arrived
//     before 450 ms then has a dwell above 100 ms. Poisson at 160/s leaves
//     the 150 ms from 300 to 450 ms empty with probability e^−24.
//   - gate before the stall: violations > 0. The gate passes answers as
//     they become ready (a fallback at once, with a dwell near 0) and the
//     stall then holds them to 550 ms: any answer ready in 300–450 ms
//     leaves with a dwell above 100 ms. The same e^−24 bounds the chance
//     that none was, and the admission gate answers arrivals that find the
//     queue full of stalled calls with a fallback at once.
//   - replay: the count is the file's exactly; violations 0 as above.
func TestGatePosition(t *testing.T) {
	if testing.Short() {
		t.Skip("runs about 2 s of load")
	}
	ctx := context.Background()
	dir := t.TempDir()
	spec := Spec(time.Second)
	var last, early Outcome
	// What the position shows needs answers that left within T of their
	// scheduled time: the gate measures dwell from openload's stamp, so
	// a generator late by T or more for every request (a machine that
	// stalled it) leaves nothing to check, and nothing to violate before
	// the stall. With -race beside a CPU hog that happened in 2 of about
	// 12 runs (169 of 169 dropped, 0 checked). Such a pair of runs is
	// inconclusive, not failed: it is run again, up to 3 times. What must
	// hold on every machine is checked on every pair (pairOK).
	for attempt := 1; ; attempt++ {
		last, early = gatePair(t, ctx, dir, spec, attempt)
		if t.Failed() {
			t.FailNow()
		}
		pairOK(t, last, early)
		if last.Checked() > 0 && early.Violations() > 0 {
			break
		}
		if attempt == 3 {
			t.Errorf("gate last: %d answers checked; gate before the stall: %d violations of %d checked, max dwell %.3f ms (stub %.3f); want answers checked, and violations, in one of 3 pairs of runs (send delay p99 %.1f and %.1f ms)",
				last.Checked(), early.Violations(), early.Checked(), early.Result.DwellBound.Dwell.Max, early.Stats.Deadline.MaxDwellSentMs,
				last.Result.SendDelay.P99, early.Result.SendDelay.P99)
			return
		}
		t.Logf("pair %d inconclusive: gate last checked %d answers, gate before the stall had %d violations (send delay p99 %.1f and %.1f ms): again",
			attempt, last.Checked(), early.Violations(), last.Result.SendDelay.P99, early.Result.SendDelay.P99)
	}
	if early.StubBoundHeld() || early.Result.DwellBound.Dwell.Max <= 100 {
		t.Errorf("gate before the stall: %d violations of %d checked, max dwell %.3f ms (stub %.3f); want violations > 0 and max > 100",
			early.Violations(), early.Checked(), early.Result.DwellBound.Dwell.Max, early.Stats.Deadline.MaxDwellSentMs)
	}
	if f := findCheck(early, "dwell bound"); f == "" || !strings.HasPrefix(f, "warn: ") {
		t.Errorf("misplaced gate: dwell bound check %q, want a warning", f)
	}

	replay, err := schedule.OpenReplay(last.Log, schedule.ReplayOptions{Speed: 2})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Run(ctx, "replay", Gate{Deadline: StallT}, spec, replay, filepath.Join(dir, "replay.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if err := Consistent(rep); err != nil {
		t.Error(err)
	}
	c := rep.Result.Counts
	if c.Scheduled != last.Result.Counts.Scheduled || c.Expected != float64(c.Scheduled) || rep.Result.Config.Arrival != schedule.Replay {
		t.Errorf("replay: counts %+v, arrival %q; the log holds %d", c, rep.Result.Config.Arrival, last.Result.Counts.Scheduled)
	}
	if rep.Violations() != 0 || !rep.StubBoundHeld() || !strings.HasPrefix(findCheck(rep, "schedule"), "pass: ") {
		t.Errorf("replay: %d violations, stub max dwell %.3f, schedule check %q", rep.Violations(), rep.Stats.Deadline.MaxDwellSentMs, findCheck(rep, "schedule"))
	}

	var b bytes.Buffer
	if err := Table(&b, []Outcome{last, early, rep}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "before-stall, stalls 250ms every 1s") || !strings.Contains(b.String(), "violations") {
		t.Errorf("table:\n%s", b.String())
	}
}

// gatePair runs the gate last and the gate before the stall at once.
func gatePair(t *testing.T, ctx context.Context, dir string, spec schedule.Spec, attempt int) (last, early Outcome) {
	t.Run("runs", func(t *testing.T) {
		t.Run("last", func(t *testing.T) {
			t.Parallel()
			o, err := Run(ctx, "last", Gate{Deadline: StallT, Stall: true}, spec, nil, filepath.Join(dir, fmt.Sprintf("last%d.csv", attempt)))
			if err != nil {
				t.Fatal(err)
			}
			last = o
		})
		t.Run("before-stall", func(t *testing.T) {
			t.Parallel()
			o, err := Run(ctx, "before-stall", Gate{Deadline: StallT, Position: stub.PositionBeforeStall, Stall: true}, spec, nil, filepath.Join(dir, fmt.Sprintf("early%d.csv", attempt)))
			if err != nil {
				t.Fatal(err)
			}
			early = o
		})
	})
	return last, early
}

// pairOK checks what a pair of runs must show on any machine: every
// request accounted for, a stall, and with the gate last no answer sent
// past T while the stall made drops.
func pairOK(t *testing.T, last, early Outcome) {
	t.Helper()
	for _, o := range []Outcome{last, early} {
		if err := Consistent(o); err != nil {
			t.Error(err)
		}
		if o.Stats.Stalls < 1 {
			t.Errorf("%s: %d stalls began, want at least 1", o.Label, o.Stats.Stalls)
		}
	}
	if last.Violations() != 0 || !last.StubBoundHeld() || last.Dropped == 0 {
		t.Errorf("gate last: %d violations of %d checked, stub max dwell %.3f ms, %d dropped; want 0 violations, max ≤ 100, drops > 0",
			last.Violations(), last.Checked(), last.Stats.Deadline.MaxDwellSentMs, last.Dropped)
	}
}

func findCheck(o Outcome, name string) string { return checkMessage(o.Result, name) }
