package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/openload/openload/servers/stub"
)

// TestBorrowSlowBothModes runs the borrow-slow row briefly (2 s of Poisson
// 120/s, the fault from 0.5 s for 1 s) in both fence modes and checks
// the experiment's plumbing and the fence's promise.
//
// Why the assertions hold, and not by luck:
//
//   - Consistent: openload's X-Stub-Shadow counts equal the fence's
//     counters because each answer carries the decision the fence made on
//     arrival; per-plane the primary budget spent by borrowed is 0 by
//     construction (the borrowed plane has its own budget).
//   - per-plane sheds: about 60 intents arrive in the 1 s window while
//     the 10 borrowed workers hold attempts for 1 s each: the depth
//     reaches its limit of 16 after ≈ 10 admissions, so most of the rest
//     are shed (depth or budget); Poisson at 60/s leaves fewer than 7
//     intents in 1 s with probability below 1e−18.
//   - shared spends the primary budget: the slow attempts begun at
//     0.5–0.6 s fail at 1.5–1.6 s, inside the run, and their retries ask
//     the one budget, whose window [1 s, 2 s) starts with 10 tokens; the
//     primary's own failures (5 % of ≈ 40 attempts by then) leave some.
func TestBorrowSlowBothModes(t *testing.T) {
	if testing.Short() {
		t.Skip("runs 2 × 2 s of load")
	}
	const d = 2 * time.Second
	runs := make([]Outcome, len(stub.FenceModes))
	t.Run("runs", func(t *testing.T) {
		for i, m := range stub.FenceModes {
			t.Run(string(m), func(t *testing.T) {
				t.Parallel()
				o, err := Run(context.Background(), stub.FaultBorrowSlow, m, d)
				if err != nil {
					t.Fatal(err)
				}
				runs[i] = o
			})
		}
	})
	if t.Failed() {
		t.FailNow()
	}
	outs := make(map[stub.FenceMode]Outcome)
	for _, o := range runs {
		outs[o.Mode] = o
		if err := Consistent(o); err != nil {
			t.Error(err)
		}
		if f := o.Stats.Fence; f.Faults[stub.FaultBorrowSlow] != 1 || f.Intents == 0 {
			t.Errorf("%s: faults begun %v, intents %d", o.Mode, f.Faults, f.Intents)
		}
	}
	per, sh := outs[stub.FencePerPlane].Stats.Fence, outs[stub.FenceShared].Stats.Fence
	if per.Shed.Depth+per.Shed.Budget == 0 || per.Borrowed.DepthMax > BorrowDepth {
		t.Errorf("per-plane: shed %+v, depth max %d; want sheds and depth ≤ %d", per.Shed, per.Borrowed.DepthMax, BorrowDepth)
	}
	if sh.Shed.Total != 0 || sh.PrimaryBudgetSpentByBorrowed == 0 {
		t.Errorf("shared: shed %+v, primary budget spent by borrowed %d; want no sheds and some spent", sh.Shed, sh.PrimaryBudgetSpentByBorrowed)
	}
	var b bytes.Buffer
	if err := Table(&b, []Outcome{outs[stub.FenceShared], outs[stub.FencePerPlane]}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "borrow-slow") || !strings.Contains(b.String(), "primary spent by borrowed") {
		t.Errorf("table:\n%s", b.String())
	}
	for _, l := range strings.Split(b.String(), "\n") { // 183 columns as one table
		if n := utf8.RuneCountInString(l); n > 100 {
			t.Errorf("a line of %d columns: %q", n, l)
		}
	}
}

func TestFaultSpec(t *testing.T) {
	for k, want := range map[stub.PlaneFaultKind]string{
		"": "", stub.FaultRevision: "revision@5s", stub.FaultLateScore: "late-score@2.5s+5s",
	} {
		if got := FaultSpec(k, 10*time.Second); got != want {
			t.Errorf("FaultSpec(%q) = %q, want %q", k, got, want)
		}
		if err := Config(k, stub.FencePerPlane, 10*time.Second).Validate(); err != nil {
			t.Errorf("%q: %v", k, err)
		}
	}
}
