package stub

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"
)

// planeConfig is a fast stub with every request asking for a shadow score:
// 4 workers × 20 ms, no gate refusals to speak of at the test's pace,
// health every 50 ms (max age 150 ms), budgets refilled every second.
func planeConfig(mode FenceMode, faults string, change func(*Config)) Config {
	return testConfig(func(c *Config) {
		c.Latency = 20 * time.Millisecond
		c.Policy = PolicyNone
		c.MaxQueueWait = 5 * time.Second
		c.ShadowShare = 1
		c.Fence = mode
		c.HealthEvery = 50 * time.Millisecond
		c.HealthMaxAge = 150 * time.Millisecond
		c.PlaneFaults = faults
		if change != nil {
			change(c)
		}
	})
}

// drive sends n requests, one every 10 ms, each in its own goroutine (the
// pace does not wait for answers), and returns the X-Stub-Shadow and
// X-Stub-Reason values counted, and the stats once every answer is in and
// every borrow has ended.
func drive(t *testing.T, cfg Config, n int) (shadows, reasons map[string]int, st Stats) {
	t.Helper()
	s := startServer(t, cfg, nil)
	c := newClient(t)
	var mu sync.Mutex
	shadows, reasons = map[string]int{}, map[string]int{}
	var wg sync.WaitGroup
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := do(context.Background(), c, http.MethodPost, s.URL+"/predict")
			if r.err != nil {
				t.Error(r.err)
				return
			}
			mu.Lock()
			shadows[r.header.Get("X-Stub-Shadow")]++
			reasons[r.reason]++
			mu.Unlock()
		}()
		<-tick.C
	}
	wg.Wait()
	st = waitFor(t, s, "every borrow to end", func(st Stats) bool { return st.Fence.Borrowed.Depth == 0 })
	checkAccounting(t, st)
	checkFence(t, st, shadows)
	return shadows, reasons, st
}

// checkFence asserts what holds in every run: intents are shed or
// admitted, the answers' X-Stub-Shadow values agree with the counters,
// the budgets are accounted for, and per-plane nothing of the borrowed
// plane touched the primary budget.
func checkFence(t *testing.T, st Stats, shadows map[string]int) {
	t.Helper()
	f := st.Fence
	for v := range shadows {
		switch Shadow(v) {
		case ShadowNone, ShadowScored, ShadowShedStale, ShadowShedDepth, ShadowShedBudget, ShadowLateRejected:
		default:
			t.Errorf("X-Stub-Shadow %q is not a known value", v)
		}
	}
	if f.Intents != f.Shed.Total+f.Borrowed.Admitted {
		t.Errorf("intents %d != shed %d + admitted %d", f.Intents, f.Shed.Total, f.Borrowed.Admitted)
	}
	if int64(shadows["shed-stale"]) != f.Shed.StaleHealth || int64(shadows["shed-depth"]) != f.Shed.Depth || int64(shadows["shed-budget"]) != f.Shed.Budget {
		t.Errorf("headers %v, shed counts %+v", shadows, f.Shed)
	}
	if got := int64(shadows["scored"] + shadows["late-rejected"]); got != f.Borrowed.Admitted {
		t.Errorf("headers scored+late-rejected %d, admitted %d", got, f.Borrowed.Admitted)
	}
	if int64(shadows["late-rejected"]) > f.LateRejected {
		t.Errorf("%d answers say late-rejected, the fence rejected %d", shadows["late-rejected"], f.LateRejected)
	}
	if int64(shadows["none"]) != st.Total-f.Intents {
		t.Errorf("%d answers say none, %d requests without an intent", shadows["none"], st.Total-f.Intents)
	}
	if ended := f.Scored + f.Dropped + f.LateRejected + f.LateReplayed; ended != f.Borrowed.Admitted {
		t.Errorf("borrows ended: scored %d + dropped %d + late %d/%d != admitted %d", f.Scored, f.Dropped, f.LateRejected, f.LateReplayed, f.Borrowed.Admitted)
	}
	var sum FenceSecond
	for i, s := range f.Timeline {
		if s.Second != i {
			t.Errorf("timeline entry %d is second %d", i, s.Second)
		}
		sum.Intents += s.Intents
		sum.ShedStale += s.ShedStale
		sum.ShedDepth += s.ShedDepth
		sum.ShedBudget += s.ShedBudget
		sum.LateRejected += s.LateRejected
		sum.LateReplayed += s.LateReplayed
		sum.PrimarySpentByBorrowed += s.PrimarySpentByBorrowed
		sum.PrimaryCompensations += s.PrimaryCompensations
		sum.PrimaryRefused += s.PrimaryRefused
	}
	if want := (FenceSecond{Intents: f.Intents, ShedStale: f.Shed.StaleHealth, ShedDepth: f.Shed.Depth, ShedBudget: f.Shed.Budget,
		LateRejected: f.LateRejected, LateReplayed: f.LateReplayed, PrimarySpentByBorrowed: f.PrimaryBudgetSpentByBorrowed,
		PrimaryCompensations: f.Primary.Compensations, PrimaryRefused: f.Primary.CompensationsRefused}); !reflect.DeepEqual(sum, want) {
		t.Errorf("the timeline sums to %+v, the totals are %+v", sum, want)
	}
	if f.Primary.RetriesSpent != f.Primary.Compensations+f.PrimaryBudgetSpentByBorrowed {
		t.Errorf("primary retries spent %d != primary compensations %d + spent by borrowed %d",
			f.Primary.RetriesSpent, f.Primary.Compensations, f.PrimaryBudgetSpentByBorrowed)
	}
	// A worker-failed answer is a refused compensation or a retry that
	// failed again (the tests cancel nothing and stall nothing).
	if wf, p := st.Reasons.WorkerFailed, f.Primary; wf < p.CompensationsRefused || wf > p.CompensationsRefused+p.Compensations {
		t.Errorf("worker-failed %d, primary compensations refused %d, compensations %d", wf, p.CompensationsRefused, p.Compensations)
	}
	if f.Mode == FencePerPlane {
		if f.PrimaryBudgetSpentByBorrowed != 0 || f.LateReplayed != 0 {
			t.Errorf("per-plane: primary budget spent by borrowed %d, late scores replayed %d; want 0",
				f.PrimaryBudgetSpentByBorrowed, f.LateReplayed)
		}
	} else {
		if f.Shed.Total != 0 || f.Borrowed.RetriesSpent != 0 || f.LateRejected != 0 {
			t.Errorf("shared: shed %d, borrowed retries spent %d, late rejected %d; want 0", f.Shed.Total, f.Borrowed.RetriesSpent, f.LateRejected)
		}
	}
}

func dump(t *testing.T, st Stats) {
	b, _ := json.Marshal(st.Fence)
	t.Logf("fence: %s", b)
}

// Without faults the fence admits every intent, scores them all, and the
// primary plane's compensations draw only on its own budget.
func TestPlaneNoFault(t *testing.T) {
	for _, mode := range FenceModes {
		t.Run(string(mode), func(t *testing.T) {
			shadows, _, st := drive(t, planeConfig(mode, "", nil), 40)
			f := st.Fence
			if f.Intents != 40 || f.Borrowed.Admitted != 40 || f.Scored != 40 || shadows["scored"] != 40 {
				dump(t, st)
				t.Errorf("intents %d, admitted %d, scored %d, headers %v; want 40 each", f.Intents, f.Borrowed.Admitted, f.Scored, shadows)
			}
		})
	}
}

// stale-health from 100 ms for 600 ms: the sample taken at 50 ms is the
// last; from 200 ms on it is older than 150 ms, until the sample at
// 700 ms. Requests arrive every 10 ms throughout, so per-plane sheds some
// 50 borrows as stale; shared takes the stale sample for capacity and
// admits them all.
func TestPlaneStaleHealth(t *testing.T) {
	_, _, per := drive(t, planeConfig(FencePerPlane, "stale-health@100ms+600ms", nil), 100)
	if f := per.Fence; f.Shed.StaleHealth == 0 || f.Shed.StaleHealth >= f.Intents || f.ShedPer100 <= 0 {
		dump(t, per)
		t.Errorf("per-plane: shed stale %d of %d intents; want some, not all", f.Shed.StaleHealth, f.Intents)
	}
	// The run lasts about 1 s: the window [100 ms, 700 ms) is in second 0
	// and no other.
	if tl := per.Fence.Timeline; len(tl) == 0 || !slices.Equal(tl[0].Faults, []PlaneFaultKind{FaultStaleHealth}) ||
		(len(tl) > 1 && tl[1].Faults != nil) {
		t.Errorf("per-plane: timeline %+v: want stale-health in second 0 only", tl)
	}
	_, _, sh := drive(t, planeConfig(FenceShared, "stale-health@100ms+600ms", nil), 100)
	if f := sh.Fence; f.Shed.StaleHealth != 0 || f.Borrowed.Admitted != f.Intents {
		dump(t, sh)
		t.Errorf("shared: shed stale %d, admitted %d of %d", f.Shed.StaleHealth, f.Borrowed.Admitted, f.Intents)
	}
}

// borrow-slow from 100 ms for 500 ms: borrowed attempts take 20 × 5 ms
// and fail, 2 at a time, while a borrow arrives every 10 ms. Per-plane
// the depth reaches its limit of 4 and the retries spend the borrowed
// budget (3 a second), then borrows are shed; the primary budget is the
// primary's alone. Shared admits them all and their retries spend the
// one budget, the primary's.
func TestPlaneBorrowSlow(t *testing.T) {
	slow := func(c *Config) {
		c.BorrowLatency, c.SlowFactor, c.BorrowDepth, c.BorrowBudget, c.PrimaryBudget = 5*time.Millisecond, 20, 4, 3, 50
	}
	_, _, per := drive(t, planeConfig(FencePerPlane, "borrow-slow@100ms+500ms", slow), 80)
	f := per.Fence
	if f.Shed.Depth == 0 || f.Borrowed.RetriesSpent == 0 || f.Borrowed.DepthMax > 4 || f.Borrowed.RetriesSpent > 3*2 {
		dump(t, per)
		t.Errorf("per-plane: shed depth %d, borrowed retries %d (≤ 3 a window, 2 windows), depth max %d (≤ 4)",
			f.Shed.Depth, f.Borrowed.RetriesSpent, f.Borrowed.DepthMax)
	}
	_, _, sh := drive(t, planeConfig(FenceShared, "borrow-slow@100ms+500ms", slow), 80)
	f = sh.Fence
	if f.PrimaryBudgetSpentByBorrowed == 0 || f.Borrowed.Compensations != f.PrimaryBudgetSpentByBorrowed || f.Borrowed.DepthMax <= 4 {
		dump(t, sh)
		t.Errorf("shared: primary budget spent by borrowed %d, borrowed compensations %d, depth max %d; want > 0, equal, > 4",
			f.PrimaryBudgetSpentByBorrowed, f.Borrowed.Compensations, f.Borrowed.DepthMax)
	}
}

// primary-saturate from 100 ms for 300 ms: every primary attempt fails,
// and no request asks for a shadow score. The primary budget (3 a
// second) compensates 3, the rest are refused and answered worker-failed;
// in both modes the borrowed plane spent nothing of it.
func TestPlanePrimarySaturate(t *testing.T) {
	for _, mode := range FenceModes {
		t.Run(string(mode), func(t *testing.T) {
			_, reasons, st := drive(t, planeConfig(mode, "primary-saturate@100ms+300ms", func(c *Config) { c.PrimaryBudget = 3 }), 60)
			f := st.Fence
			if f.Primary.CompensationsRefused == 0 || f.Primary.Compensations == 0 || f.Primary.Compensations > 3 ||
				f.PrimaryBudgetSpentByBorrowed != 0 || f.Intents >= st.Total || int64(reasons["worker-failed"]) != st.Reasons.WorkerFailed ||
				st.Reasons.WorkerFailed < f.Primary.CompensationsRefused {
				dump(t, st)
				t.Errorf("compensations %d (1..3), refused %d (> 0), spent by borrowed %d, intents %d of %d, worker-failed %d (headers %d)",
					f.Primary.Compensations, f.Primary.CompensationsRefused, f.PrimaryBudgetSpentByBorrowed, f.Intents, st.Total,
					st.Reasons.WorkerFailed, reasons["worker-failed"])
			}
		})
	}
}

// late-score for the whole run: every score arrives after the fence gave
// up on its borrow. Per-plane rejects them all; the borrowed plane takes
// 1 ms and the model 20 ms, so most answers already say late-rejected.
// Shared replays them on the one budget (10 a second), the primary's.
func TestPlaneLateScore(t *testing.T) {
	shadows, _, per := drive(t, planeConfig(FencePerPlane, "late-score@0s+1m", func(c *Config) { c.BorrowLatency = time.Millisecond }), 30)
	if f := per.Fence; f.LateRejected != 30 || f.Scored != 0 || shadows["late-rejected"] == 0 {
		dump(t, per)
		t.Errorf("per-plane: late rejected %d (want 30), scored %d, headers %v", f.LateRejected, f.Scored, shadows)
	}
	_, _, sh := drive(t, planeConfig(FenceShared, "late-score@0s+1m", func(c *Config) { c.BorrowLatency = time.Millisecond }), 30)
	if f := sh.Fence; f.LateReplayed != 30 || f.PrimaryBudgetSpentByBorrowed == 0 || f.PrimaryBudgetSpentByBorrowed+f.Borrowed.CompensationsRefused != 30 {
		dump(t, sh)
		t.Errorf("shared: late replayed %d (want 30), spent by borrowed %d + refused %d (want 30)",
			f.LateReplayed, f.PrimaryBudgetSpentByBorrowed, f.Borrowed.CompensationsRefused)
	}
}

// revision at 200 ms: borrows take 30 ms and one arrives every 10 ms, so
// some admitted under R1 are scored under R2. Per-plane rejects those
// scores, shared replays them on the primary budget.
func TestPlaneRevision(t *testing.T) {
	rev := func(c *Config) { c.BorrowLatency, c.BorrowWorkers = 30*time.Millisecond, 8 }
	_, _, per := drive(t, planeConfig(FencePerPlane, "revision@200ms", rev), 40)
	if f := per.Fence; f.Revision != 2 || f.LateRejected == 0 || f.Scored == 0 {
		dump(t, per)
		t.Errorf("per-plane: revision %d, late rejected %d, scored %d; want 2, > 0, > 0", f.Revision, f.LateRejected, f.Scored)
	}
	_, _, sh := drive(t, planeConfig(FenceShared, "revision@200ms", rev), 40)
	if f := sh.Fence; f.Revision != 2 || f.LateReplayed == 0 || f.PrimaryBudgetSpentByBorrowed == 0 {
		dump(t, sh)
		t.Errorf("shared: revision %d, late replayed %d, spent by borrowed %d; want 2, > 0, > 0", f.Revision, f.LateReplayed, f.PrimaryBudgetSpentByBorrowed)
	}
}

// The fault list is read as documented; bad entries are refused by
// Validate naming PlaneFaults.
func TestParsePlaneFaults(t *testing.T) {
	got, err := parsePlaneFaults("stale-health@5s+3s, borrow-slow@10s+5s,primary-saturate@20s+5s,late-score@1s+2s,revision@25s")
	if err != nil {
		t.Fatal(err)
	}
	want := []planeFault{{FaultStaleHealth, 5 * time.Second, 3 * time.Second}, {FaultBorrowSlow, 10 * time.Second, 5 * time.Second},
		{FaultPrimarySaturate, 20 * time.Second, 5 * time.Second}, {FaultLateScore, time.Second, 2 * time.Second}, {FaultRevision, 25 * time.Second, 0}}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("fault %d: %+v, want %+v", i, got[i], want[i])
		}
	}
	if !faultActive(got, FaultStaleHealth, 5*time.Second) || faultActive(got, FaultStaleHealth, 8*time.Second) {
		t.Error("stale-health window is not [5s, 8s)")
	}
	for _, bad := range []string{"x", "stale-health@5s", "revision@1s+1s", "meteor@1s+1s", "borrow-slow@-1s+1s", "late-score@1s+0s"} {
		err := testConfig(func(c *Config) { c.PlaneFaults = bad }).Validate()
		var fe *FieldError
		if err == nil || !errors.As(err, &fe) || fe.Field != "PlaneFaults" {
			t.Errorf("%q: Validate() = %v, want a FieldError for PlaneFaults", bad, err)
		}
	}
}
