package stub

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// fenceEvent is one step of a random sequence driving the fence. ref picks
// a borrow from those the sequence's admits returned (modulo their
// number; with none, a borrow the fence never saw).
type fenceEvent struct {
	kind  string
	at    time.Duration
	ref   int
	depth int  // health
	late  bool // score
}

func (e fenceEvent) String() string {
	s := fmt.Sprintf("%s@%v", e.kind, e.at)
	switch e.kind {
	case "health":
		s += fmt.Sprintf("(depth %d)", e.depth)
	case "borrow-failed", "drop":
		s += fmt.Sprintf("(#%d)", e.ref)
	case "score":
		s += fmt.Sprintf("(#%d, late %v)", e.ref, e.late)
	}
	return s
}

// borrowedEvents are the events of the borrowed plane: none may change
// the primary budget per-plane.
var borrowedEvents = map[string]bool{"health": true, "admit": true, "borrow-failed": true, "score": true, "drop": true}

var eventKinds = []string{"health", "admit", "borrow-failed", "score", "drop", "revise", "primary-start", "primary-end", "primary-failed"}

// testFenceParams are small limits, so short sequences reach them: 2
// tokens per budget per 1 s window, depth 2, health max age 300 ms.
func testFenceParams(mode FenceMode) fenceParams {
	return fenceParams{mode: mode, primaryBudget: 2, borrowedBudget: 2, window: time.Second, depthLimit: 2, maxAge: 300 * time.Millisecond}
}

// checkInvariant runs evs on a fresh fence and returns the index of the
// first borrowed-plane event that changed the primary budget (the tokens
// left in the window, compared after the window's refill, which belongs
// to no plane), or -1.
func checkInvariant(mode FenceMode, evs []fenceEvent) int {
	f := newFence(testFenceParams(mode))
	var borrows []*borrow
	// An event about a borrow refers to an intent admitted earlier in the
	// sequence; with none yet it does not happen, so that a shrunk
	// counterexample is a sequence a server could produce.
	pick := func(ref int) *borrow {
		if len(borrows) == 0 {
			return nil
		}
		return borrows[ref%len(borrows)]
	}
	for i, e := range evs {
		f.advance(e.at)
		before, spent, borrowedBefore := f.primaryTokens, f.st.PrimaryBudgetSpentByBorrowed, f.borrowedTokens
		switch e.kind {
		case "health":
			f.health(e.at, e.depth)
		case "admit":
			b := f.admit(e.at)
			borrows = append(borrows, &b)
			// A shed borrow changes no budget at all (in shared mode
			// nothing is shed).
			if !b.admitted() && f.borrowedTokens != borrowedBefore {
				return i
			}
		case "borrow-failed":
			if b := pick(e.ref); b != nil {
				f.borrowFailed(e.at, b)
			}
		case "score":
			if b := pick(e.ref); b != nil {
				f.score(e.at, b, e.late)
			}
		case "drop":
			if b := pick(e.ref); b != nil {
				f.drop(e.at, b)
			}
		case "revise":
			f.revise(e.at)
		case "primary-start":
			f.primaryStart(e.at, false)
		case "primary-end":
			if f.primaryDepth > 0 {
				f.primaryEnd(e.at)
			}
		case "primary-failed":
			f.primaryFailed(e.at)
		}
		if borrowedEvents[e.kind] && (f.primaryTokens != before || f.st.PrimaryBudgetSpentByBorrowed != spent) {
			return i
		}
	}
	return -1
}

// randomEvents draws n events at nondecreasing instants, 0–400 ms apart.
func randomEvents(rng *rand.Rand, n int) []fenceEvent {
	evs := make([]fenceEvent, n)
	var at time.Duration
	for i := range evs {
		at += time.Duration(rng.IntN(5)) * 100 * time.Millisecond
		evs[i] = fenceEvent{kind: eventKinds[rng.IntN(len(eventKinds))], at: at, ref: rng.IntN(4), depth: rng.IntN(4), late: rng.IntN(2) == 0}
	}
	return evs
}

// shrink removes events one at a time while the sequence still breaks
// the invariant in mode, until no single removal does; then it moves each
// event back to its predecessor's instant (the first to 0) while the
// sequence still breaks, so that what remains shows only what matters.
func shrink(mode FenceMode, evs []fenceEvent) []fenceEvent {
	for again := true; again; {
		again = false
		for i := range evs {
			cand := append(append([]fenceEvent(nil), evs[:i]...), evs[i+1:]...)
			if checkInvariant(mode, cand) >= 0 {
				evs, again = cand, true
				break
			}
		}
	}
	for i := range evs {
		var prev time.Duration
		if i > 0 {
			prev = evs[i-1].at
		}
		cand := append([]fenceEvent(nil), evs...)
		cand[i].at, cand[i].ref = prev, 0
		if checkInvariant(mode, cand) >= 0 {
			evs = cand
		}
	}
	return evs
}

const propertySeeds = 500

// TestFencePerPlaneInvariant: over 500 seeded random sequences of 40
// events (admissions, health samples of any age, depth changes, retries
// on both planes, revision changes, late scores), no borrowed-plane event
// changes the primary budget per-plane, and the fence's own count of
// primary tokens spent by the borrowed plane stays 0.
func TestFencePerPlaneInvariant(t *testing.T) {
	sheds := 0
	for seed := range uint64(propertySeeds) {
		evs := randomEvents(rand.New(rand.NewPCG(seed, 20)), 40)
		if i := checkInvariant(FencePerPlane, evs); i >= 0 {
			t.Fatalf("seed %d: event %d (%v) changed the primary budget: %v", seed, i, evs[i], evs[:i+1])
		}
		sheds += int(replay(FencePerPlane, evs).Shed.Total)
	}
	// The sequences must reach the fence's refusals, or the property says
	// little: with depth 2, max age 300 ms and 2 tokens, 40 events shed.
	if sheds == 0 {
		t.Fatal("no sequence made the fence shed a borrow")
	}
}

// replay runs evs and returns the fence's stats at the end.
func replay(mode FenceMode, evs []fenceEvent) FenceStats {
	f := newFence(testFenceParams(mode))
	var borrows []*borrow
	for _, e := range evs {
		switch e.kind {
		case "health":
			f.health(e.at, e.depth)
		case "admit":
			b := f.admit(e.at)
			borrows = append(borrows, &b)
		case "borrow-failed":
			if len(borrows) > 0 {
				f.borrowFailed(e.at, borrows[e.ref%len(borrows)])
			}
		case "score":
			if len(borrows) > 0 {
				f.score(e.at, borrows[e.ref%len(borrows)], e.late)
			}
		}
	}
	var last time.Duration
	if len(evs) > 0 {
		last = evs[len(evs)-1].at
	}
	return f.stats(last)
}

// sharedLeak is the shortest sequence the seeded search below found that
// breaks the invariant in shared mode (TestFenceSharedBreaks prints it,
// with -v): a borrow admitted (shared mode admits every one), then its
// score arrives late and shared mode replays it, spending a token of the
// one budget, which is the primary's. Per-plane rejects it.
var sharedLeak = []fenceEvent{
	{kind: "admit", at: 0},
	{kind: "score", at: 0, ref: 0, late: true},
}

// sharedRetryLeak is the other way shared mode leaks, the one the
// borrow-slow fault shows end to end: a borrow admitted, its attempt
// fails, and its retry takes a token of the one budget. Per-plane it
// takes a token of the borrowed budget instead.
var sharedRetryLeak = []fenceEvent{
	{kind: "admit", at: 0},
	{kind: "borrow-failed", at: 0, ref: 0},
}

// TestFenceSharedBreaks searches the same seeded sequences in shared mode,
// shrinks every one that breaks the invariant, and checks that the
// shortest found is as short as the regression case kept in sharedLeak.
func TestFenceSharedBreaks(t *testing.T) {
	var shortest []fenceEvent
	found := 0
	for seed := range uint64(propertySeeds) {
		evs := randomEvents(rand.New(rand.NewPCG(seed, 20)), 40)
		if checkInvariant(FenceShared, evs) < 0 {
			continue
		}
		found++
		if s := shrink(FenceShared, evs); shortest == nil || len(s) < len(shortest) {
			shortest = s
			t.Logf("seed %d: shrunk from %d to %d events: %s", seed, len(evs), len(s), eventsString(s))
		}
	}
	if shortest == nil {
		t.Fatal("shared mode: no sequence broke the invariant")
	}
	t.Logf("shared mode: %d of %d sequences break the invariant; shortest: %s", found, propertySeeds, eventsString(shortest))
	if len(shortest) < len(sharedLeak) {
		t.Errorf("the search found a shorter breaking sequence than sharedLeak: %s", eventsString(shortest))
	}
}

// TestFenceRegression keeps the counterexample: it breaks shared mode at
// its last event, and holds per-plane.
func TestFenceRegression(t *testing.T) {
	for name, evs := range map[string][]fenceEvent{"sharedLeak": sharedLeak, "sharedRetryLeak": sharedRetryLeak} {
		if i := checkInvariant(FenceShared, evs); i != len(evs)-1 {
			t.Errorf("shared: %s breaks at event %d, want %d", name, i, len(evs)-1)
		}
		if i := checkInvariant(FencePerPlane, evs); i >= 0 {
			t.Errorf("per-plane: %s breaks at event %d", name, i)
		}
	}
}

func eventsString(evs []fenceEvent) string {
	s := make([]string, len(evs))
	for i, e := range evs {
		s[i] = e.String()
	}
	return strings.Join(s, ", ")
}
