package stub

import (
	"slices"
	"time"
)

// FenceMode names how shadow intents are admitted to the borrowed plane
// and whose retry budget their retries spend (see the package
// documentation, "The borrowed plane").
type FenceMode string

// The known fence modes.
const (
	// FenceShared is the naive design: one retry budget for both planes,
	// no depth limit on the borrowed plane, a missing or stale health
	// sample taken as capacity, a late score replayed on the budget.
	FenceShared FenceMode = "shared"
	// FencePerPlane is the fence: each plane its own budget; a borrow is
	// refused on stale or missing health, at the depth limit or with the
	// borrowed budget empty; a late score is rejected.
	FencePerPlane FenceMode = "per-plane"
)

// FenceModes lists the known modes.
var FenceModes = []FenceMode{FenceShared, FencePerPlane}

// Shadow is what became of a request's shadow intent, as sent in
// X-Stub-Shadow.
type Shadow string

// The X-Stub-Shadow values.
const (
	ShadowNone         Shadow = "none"          // the request carried no shadow intent
	ShadowScored       Shadow = "scored"        // admitted to the borrowed plane (its score may still be on its way)
	ShadowShedStale    Shadow = "shed-stale"    // refused: the health sample was missing or too old
	ShadowShedDepth    Shadow = "shed-depth"    // refused: the borrowed plane was at its depth limit
	ShadowShedBudget   Shadow = "shed-budget"   // refused: the borrowed retry budget was empty
	ShadowLateRejected Shadow = "late-rejected" // admitted, but its score came back late and was rejected
)

// fenceParams are the fence's limits, from Config.
type fenceParams struct {
	mode           FenceMode
	primaryBudget  int           // primary (or shared) retry tokens per window
	borrowedBudget int           // borrowed retry tokens per window (per-plane only)
	window         time.Duration // budget refill window, > 0
	depthLimit     int           // borrowed depth at which per-plane refuses
	maxAge         time.Duration // oldest health sample per-plane accepts
}

// borrow is one shadow intent as the fence decided it: the ticket its
// later events refer to.
type borrow struct {
	decision Shadow // ShadowScored (admitted) or a shed reason
	revision int    // the model revision it was admitted under
	open     bool   // admitted and not yet scored
}

func (b *borrow) admitted() bool {
	return b.decision == ShadowScored || b.decision == ShadowLateRejected
}

// fence is the admission fence between the primary and the borrowed plane,
// as a state machine free of clocks: every event carries its instant, an
// offset from a common origin (the stub's first request). The server
// feeds it under one lock, reading the clock just before, so an instant
// can be a little older than the last one seen: a window never refills
// twice and a sample that looks younger than zero counts as fresh. The
// property test feeds it random event sequences. Budgets refill to their
// size at each window boundary (windows aligned to the origin).
type fence struct {
	p fenceParams

	windowIdx                 int64
	primaryTokens             int // the shared budget in shared mode
	borrowedTokens            int // unused in shared mode
	hasHealth                 bool
	healthAt                  time.Duration // when the last sample was taken
	healthDepth               int
	revision                  int
	primaryDepth, borrowDepth int

	st       FenceStats
	timeline []FenceSecond // by second from the origin, the first maxTimeline
}

// maxTimeline bounds the per-second timeline: its first hour.
const maxTimeline = 3600

// sec is the timeline's entry for the second holding now, or a scratch
// entry past the first hour.
func (f *fence) sec(now time.Duration) *FenceSecond {
	i := int(max(now, 0) / time.Second)
	if i >= maxTimeline {
		return new(FenceSecond)
	}
	for len(f.timeline) <= i {
		f.timeline = append(f.timeline, FenceSecond{Second: len(f.timeline)})
	}
	return &f.timeline[i]
}

func newFence(p fenceParams) *fence {
	f := &fence{p: p, primaryTokens: p.primaryBudget, borrowedTokens: p.borrowedBudget, revision: 1}
	f.st.Mode = p.mode
	return f
}

// advance refills the budgets when now is in a later window than the last
// event. Every event calls it first; it changes nothing within a window.
func (f *fence) advance(now time.Duration) {
	if idx := int64(now / f.p.window); idx > f.windowIdx {
		f.windowIdx = idx
		f.primaryTokens = f.p.primaryBudget
		f.borrowedTokens = f.p.borrowedBudget
	}
}

// health publishes a sample of the borrowed plane taken at now.
func (f *fence) health(now time.Duration, depth int) {
	f.advance(now)
	f.hasHealth, f.healthAt, f.healthDepth = true, now, depth
}

// revise moves the model to its next revision.
func (f *fence) revise(now time.Duration) {
	f.advance(now)
	f.revision++
	f.st.Revision = f.revision
}

// admit decides a shadow intent arriving at now. Per-plane refuses, in
// this order, on a missing or stale health sample, at the depth limit and
// on an empty borrowed budget (before a retry could be needed); shared
// admits every intent.
func (f *fence) admit(now time.Duration) borrow {
	f.advance(now)
	f.st.Intents++
	f.sec(now).Intents++
	b := borrow{revision: f.revision}
	if f.p.mode == FencePerPlane {
		switch {
		case !f.hasHealth || now-f.healthAt > f.p.maxAge:
			b.decision = ShadowShedStale
			f.st.Shed.StaleHealth++
			f.sec(now).ShedStale++
		case f.borrowDepth >= f.p.depthLimit:
			b.decision = ShadowShedDepth
			f.st.Shed.Depth++
			f.sec(now).ShedDepth++
		case f.borrowedTokens <= 0:
			b.decision = ShadowShedBudget
			f.st.Shed.Budget++
			f.sec(now).ShedBudget++
		}
		if b.decision != "" {
			return b
		}
	}
	b.decision, b.open = ShadowScored, true
	f.borrowDepth++
	f.st.Borrowed.Admitted++
	f.st.Borrowed.DepthMax = max(f.st.Borrowed.DepthMax, f.borrowDepth)
	return b
}

// spendForBorrowed takes a token for the borrowed plane: from its own
// budget per-plane, from the shared one otherwise. It reports whether
// there was one.
func (f *fence) spendForBorrowed(now time.Duration) bool {
	if f.p.mode == FencePerPlane {
		if f.borrowedTokens <= 0 {
			return false
		}
		f.borrowedTokens--
		f.st.Borrowed.RetriesSpent++
		return true
	}
	if f.primaryTokens <= 0 {
		return false
	}
	f.primaryTokens--
	f.st.Primary.RetriesSpent++
	f.st.PrimaryBudgetSpentByBorrowed++
	f.sec(now).PrimarySpentByBorrowed++
	return true
}

// borrowFailed asks to compensate (retry once) a borrowed attempt that
// failed or was too slow. Only an attempt the fence admitted and that is
// still open may be compensated.
func (f *fence) borrowFailed(now time.Duration, b *borrow) bool {
	f.advance(now)
	if !b.open {
		f.st.Borrowed.CompensationsRefused++
		return false
	}
	if !f.spendForBorrowed(now) {
		f.st.Borrowed.CompensationsRefused++
		return false
	}
	f.st.Borrowed.Compensations++
	return true
}

// score delivers the score of b at now; late says the borrowed plane
// answered after the fence had given up on it. A score for another
// revision than b's, or late, or for a borrow that is not open (shed, or
// scored already) is a late score: per-plane rejects it, shared replays
// it, which spends a token of the shared budget. It closes b and returns
// its final decision.
func (f *fence) score(now time.Duration, b *borrow, late bool) Shadow {
	f.advance(now)
	late = late || !b.open || b.revision != f.revision
	if b.open {
		b.open = false
		f.borrowDepth--
	}
	if !late {
		f.st.Scored++
		return b.decision
	}
	if f.p.mode == FencePerPlane {
		f.st.LateRejected++
		f.sec(now).LateRejected++
		if b.admitted() {
			b.decision = ShadowLateRejected
		}
		return b.decision
	}
	f.st.LateReplayed++
	f.sec(now).LateReplayed++
	if f.spendForBorrowed(now) {
		f.st.Borrowed.Compensations++
	} else {
		f.st.Borrowed.CompensationsRefused++
	}
	return b.decision
}

// drop closes b without a score: its attempt failed and was not (or could
// not be again) compensated.
func (f *fence) drop(now time.Duration, b *borrow) {
	f.advance(now)
	if b.open {
		b.open = false
		f.borrowDepth--
		f.st.Dropped++
	}
}

// primaryStart and primaryEnd bracket a primary attempt (for its depth);
// retry says it is a compensation's retry.
func (f *fence) primaryStart(now time.Duration, retry bool) {
	f.advance(now)
	f.primaryDepth++
	if !retry {
		f.st.Primary.Admitted++
	}
	f.st.Primary.DepthMax = max(f.st.Primary.DepthMax, f.primaryDepth)
}

func (f *fence) primaryEnd(now time.Duration) {
	f.advance(now)
	f.primaryDepth--
}

// primaryFailed asks to compensate a failed primary attempt from the
// primary (shared) budget.
func (f *fence) primaryFailed(now time.Duration) bool {
	f.advance(now)
	if f.primaryTokens <= 0 {
		f.st.Primary.CompensationsRefused++
		f.sec(now).PrimaryRefused++
		return false
	}
	f.primaryTokens--
	f.st.Primary.RetriesSpent++
	f.st.Primary.Compensations++
	f.sec(now).PrimaryCompensations++
	return true
}

// stats returns the counters, with the health sample's age at now.
func (f *fence) stats(now time.Duration) FenceStats {
	st := f.st
	st.Revision = f.revision
	st.Borrowed.Depth, st.Primary.Depth = f.borrowDepth, f.primaryDepth
	st.PrimaryTokens, st.BorrowedTokens = f.primaryTokens, f.borrowedTokens
	if f.p.mode == FenceShared {
		st.BorrowedTokens = 0
	}
	st.HealthAgeMs = -1
	if f.hasHealth {
		st.HealthAgeMs = durMs(now - f.healthAt)
		st.HealthDepth = f.healthDepth
	}
	st.Timeline = slices.Clone(f.timeline)
	st.Shed.Total = st.Shed.StaleHealth + st.Shed.Depth + st.Shed.Budget
	if st.Intents > 0 {
		st.ShedPer100 = 100 * float64(st.Shed.Total) / float64(st.Intents)
	}
	return st
}

// FenceStats is the fence object of GET /stats. With no shadow share, no
// primary failures and no plane faults the planes are off and its counts
// stay 0.
//
// Accounting: Intents = Shed.Total + Borrowed.Admitted. A plane's
// RetriesSpent counts the tokens taken from that plane's budget, whoever
// took them; Compensations and CompensationsRefused count that plane's
// failed attempts (and, for the borrowed plane, its late scores replayed
// in shared mode) that got a retry or found no token. In shared mode the
// one budget is the primary's: Borrowed.RetriesSpent stays 0 and
// PrimaryBudgetSpentByBorrowed counts what the borrowed plane took from
// it. Per-plane, PrimaryBudgetSpentByBorrowed is 0 by construction.
type FenceStats struct {
	Mode    FenceMode  `json:"mode"`
	Intents int64      `json:"intents"` // requests that asked for a shadow score
	Shed    ShedCounts `json:"shed"`
	// ShedPer100 is Shed.Total per 100 intents.
	ShedPer100 float64 `json:"shed_per_100"`
	// Scored counts scores accepted; LateRejected late scores rejected
	// (per-plane); LateReplayed late scores replayed (shared).
	Scored       int64 `json:"scored"`
	LateRejected int64 `json:"late_rejected"`
	LateReplayed int64 `json:"late_replayed"`
	// Dropped counts admitted borrows that ended without a score (failed,
	// not compensated).
	Dropped                      int64 `json:"dropped"`
	PrimaryBudgetSpentByBorrowed int64 `json:"primary_budget_spent_by_borrowed"`

	Primary  PlaneStats `json:"primary"`
	Borrowed PlaneStats `json:"borrowed"`

	// The state now: tokens left in each budget's window (BorrowedTokens
	// is 0 in shared mode, which has one budget), the model revision, and
	// the borrowed plane's health sample (HealthAgeMs −1: none yet).
	PrimaryTokens  int     `json:"primary_tokens"`
	BorrowedTokens int     `json:"borrowed_tokens"`
	Revision       int     `json:"revision"`
	HealthAgeMs    float64 `json:"health_age_ms"`
	HealthDepth    int     `json:"health_depth"`
	// Faults lists the injected plane faults begun so far, by kind.
	Faults map[PlaneFaultKind]int `json:"faults_begun,omitempty"`
	// Timeline has the decisions per second from the first request (its
	// first hour), each second with the faults active in it.
	Timeline []FenceSecond `json:"timeline,omitempty"`
}

// FenceSecond counts the fence's decisions in one second.
type FenceSecond struct {
	Second                 int              `json:"s"` // from the first request
	Faults                 []PlaneFaultKind `json:"faults,omitempty"`
	Intents                int64            `json:"intents"`
	ShedStale              int64            `json:"shed_stale"`
	ShedDepth              int64            `json:"shed_depth"`
	ShedBudget             int64            `json:"shed_budget"`
	LateRejected           int64            `json:"late_rejected"`
	LateReplayed           int64            `json:"late_replayed"`
	PrimarySpentByBorrowed int64            `json:"primary_spent_by_borrowed"`
	PrimaryCompensations   int64            `json:"primary_compensations"`
	PrimaryRefused         int64            `json:"primary_refused"`
}

// ShedCounts counts borrows the fence refused, by reason.
type ShedCounts struct {
	StaleHealth int64 `json:"stale_health"`
	Depth       int64 `json:"depth"`
	Budget      int64 `json:"budget"`
	Total       int64 `json:"total"`
}

// PlaneStats counts one plane's attempts and retries.
type PlaneStats struct {
	Admitted             int64 `json:"admitted"`  // attempts admitted (first attempts, not retries)
	Depth                int   `json:"depth"`     // attempts in flight now
	DepthMax             int   `json:"depth_max"` // largest Depth seen
	RetriesSpent         int64 `json:"retries_spent"`
	Compensations        int64 `json:"compensations"`
	CompensationsRefused int64 `json:"compensations_refused"`
}
