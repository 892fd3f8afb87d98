package retry

import (
	"errors"
	"fmt"
	"math"
	"sync"
	"time"
)

// Budget bounds retries by the first attempts around them, so that a client
// cannot turn a blip into a retry storm: over every window of length W,
//
//	retries granted ≤ Ratio × first attempts + MinPerSec × W
//
// where a window is any interval (a, a+W] of the budget's clock, not only
// one aligned to a grid, and both counts are of the calls made in it
// (First for a first attempt, a Retry that returned true for a retry). Over
// any interval of length T it follows, by tiling, that
//
//	retries ≤ Ratio × first attempts + MinPerSec × W × ⌈T / W⌉.
//
// MinPerSec × W is also the largest burst of retries the budget grants
// without first attempts in between: a retry must fit every window that
// holds it, including the ones that begin just before it, whose first
// attempts are still to come. So the budget requires MinPerSec × W ≥ 1.
//
// # How a retry is decided
//
// With F(t) and R(t) the first attempts and retries counted up to and
// including t, let G(t) = R(t) − Ratio·F(t). A retry at t fits every window
// (a, a+W] that holds t, given the events so far (first attempts still to
// come can only help), if and only if
//
//	R(t) + 1 − R(a) ≤ Ratio·(F(t) − F(a)) + MinPerSec·W   for all a ∈ [t−W, t),
//
// that is G(t) + 1 − MinPerSec·W ≤ min over a ∈ [t−W, t) of G(a). G is a
// step function; the budget keeps its steps of the last W in a deque of
// increasing G (the classic sliding-window minimum), so a call costs O(1)
// amortised and the memory is bounded by the steps within W. Retry grants
// exactly when the condition holds, which is what makes the bound above a
// guarantee rather than an average.
//
// A Budget is safe for concurrent use; its clock is injected, so tests run
// it on a fake one.
type Budget struct {
	ratio, minPerSec float64
	window           time.Duration
	now              func() time.Duration
	slack            float64 // MinPerSec × W, in retries

	mu             sync.Mutex
	firsts, grants int64
	cur            step   // the step in force now, not yet in steps
	steps          []step // earlier steps with increasing g; steps[head:] live
	head           int
}

// step is G's value g on [start, end).
type step struct {
	start, end time.Duration
	g          float64
}

// NewBudget returns a budget of ratio (in [0, 1]) retries per first attempt
// plus minPerSec retries per second, over sliding windows of length window,
// on the clock now (an offset that never decreases). It requires
// minPerSec × window ≥ 1; see Budget.
func NewBudget(ratio, minPerSec float64, window time.Duration, now func() time.Duration) (*Budget, error) {
	switch {
	case math.IsNaN(ratio) || ratio < 0 || ratio > 1:
		return nil, fmt.Errorf("retry budget must be between 0 and 1, got %v", ratio)
	case math.IsNaN(minPerSec) || math.IsInf(minPerSec, 0) || minPerSec < 0:
		return nil, fmt.Errorf("retry minimum per second must be a finite number ≥ 0, got %v", minPerSec)
	case window <= 0:
		return nil, fmt.Errorf("retry budget window must be > 0, got %v", window)
	case minPerSec*window.Seconds() < 1:
		return nil, fmt.Errorf("retry minimum per second × budget window must be ≥ 1 (the burst a budget allows), got %v/s × %v", minPerSec, window)
	case now == nil:
		return nil, errors.New("retry budget needs a clock")
	}
	return newBudget(ratio, minPerSec, window, now), nil
}

// newBudget is NewBudget without the checks, for arguments already checked
// (Policy.Validate checks the same).
func newBudget(ratio, minPerSec float64, window time.Duration, now func() time.Duration) *Budget {
	return &Budget{
		ratio: ratio, minPerSec: minPerSec, window: window, now: now,
		slack: minPerSec * window.Seconds(),
		cur:   step{start: math.MinInt64},
	}
}

// g is G after the events counted so far.
func (b *Budget) g() float64 { return float64(b.grants) - b.ratio*float64(b.firsts) }

// advance makes t the start of the step in force: the step before it is
// moved into the deque. Events at the same instant share one step.
func (b *Budget) advance(t time.Duration) {
	if t <= b.cur.start {
		return
	}
	c := b.cur
	c.end = t
	for len(b.steps) > b.head && b.steps[len(b.steps)-1].g >= c.g {
		b.steps = b.steps[:len(b.steps)-1]
	}
	b.steps = append(b.steps, c)
	b.cur = step{start: t}
	// Reclaim the expired front now and then.
	if b.head > 64 && b.head > len(b.steps)/2 {
		b.steps = append(b.steps[:0], b.steps[b.head:]...)
		b.head = 0
	}
}

// First counts a first attempt now.
func (b *Budget) First() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.advance(b.now())
	b.firsts++
	b.cur.g = b.g()
}

// Retry asks for one retry now. It returns true, and counts the retry, when
// the retry fits every window that holds it; false otherwise, and then the
// refusal counts nothing.
func (b *Budget) Retry() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	t := b.now()
	from := t - b.window // a ranges over [from, t)
	for b.head < len(b.steps) && b.steps[b.head].end <= from {
		b.head++
	}
	// The minimum over a ∈ [from, t) of G(a) is the front of the deque.
	// When the step in force began before t, its value G(t) is in that
	// range too, but the condition holds for it whenever slack ≥ 1, which
	// NewBudget requires; so it is left out, and so is the case of an
	// empty deque (no call before this one), where it is the only step.
	floor := math.Inf(1)
	if b.head < len(b.steps) {
		floor = b.steps[b.head].g
	}
	if b.g()+1-b.slack > floor {
		return false
	}
	b.advance(t)
	b.grants++
	b.cur.g = b.g()
	return true
}

// Counts returns the first attempts and the retries granted so far.
func (b *Budget) Counts() (firsts, retries int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.firsts, b.grants
}
