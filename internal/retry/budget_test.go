package retry

import (
	"math"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"
	"time"
)

// budgetEvent is one call made on a budget in a property test.
type budgetEvent struct {
	t       time.Duration
	first   bool // First; otherwise Retry
	granted bool // for a Retry
}

// windowExcess returns, for the events, max over a of
// retries(a, a+w] − ratio·firsts(a, a+w], checking every a at which the
// counts change: a window's counts change only when its start passes an
// event (a = e, the event leaves) or its end reaches one (a = e − w, the
// event enters), so these a cover every window.
func windowExcess(evs []budgetEvent, ratio float64, w time.Duration) (excess float64, at time.Duration) {
	var firsts, grants []time.Duration
	for _, e := range evs {
		if e.first {
			firsts = append(firsts, e.t)
		} else if e.granted {
			grants = append(grants, e.t)
		}
	}
	// count of xs in (a, b]; xs sorted
	count := func(xs []time.Duration, a, b time.Duration) int {
		lo := sort.Search(len(xs), func(i int) bool { return xs[i] > a })
		hi := sort.Search(len(xs), func(i int) bool { return xs[i] > b })
		return hi - lo
	}
	excess = math.Inf(-1)
	for _, e := range evs {
		for _, a := range []time.Duration{e.t, e.t - w} {
			x := float64(count(grants, a, a+w)) - ratio*float64(count(firsts, a, a+w))
			if x > excess {
				excess, at = x, a
			}
		}
	}
	return excess, at
}

// refusalExcess is max over a ∈ [t−w, t) of 1 + retries(a, t] −
// ratio·firsts(a, t], counting the events so far (all at or before t):
// what the windows that hold t would carry with one more retry at t. The
// counts change only where a passes an event, so it walks back over the
// distinct event times above t−w.
func refusalExcess(evs []budgetEvent, t time.Duration, ratio float64, w time.Duration) float64 {
	var firsts, grants int
	j := len(evs)
	take := func(at time.Duration) {
		for j > 0 && evs[j-1].t == at {
			j--
			if evs[j].first {
				firsts++
			} else if evs[j].granted {
				grants++
			}
		}
	}
	take(t) // events at t are in every window (a, t] with a < t
	best := 1 + float64(grants) - ratio*float64(firsts)
	for j > 0 && evs[j-1].t > t-w {
		take(evs[j-1].t) // a just below this time, and still ≥ t−w
		best = max(best, 1+float64(grants)-ratio*float64(firsts))
	}
	return best
}

// TestBudgetProperty drives budgets on a fake clock with random traffic:
// first attempts and retry requests, many at the same instant, in bursts,
// with quiet gaps longer than the window. Over every window (a, a+W] the
// retries granted never exceed ratio × first attempts + minPerSec × W, and
// over longer spans T the tiled bound ratio × firsts + minPerSec × W ×
// ⌈T/W⌉ holds. The budget is also exact: every refused retry would have
// broken the bound in some window that holds it, given the calls made
// before it. (The comparisons allow 1e-9 for floating-point rounding; the
// counts are integers and the ratios simple, so a real breach is ≥ 0.01.)
func TestBudgetProperty(t *testing.T) {
	for seed := range uint64(40) {
		rng := rand.New(rand.NewPCG(seed, 7))
		ratio := []float64{0, 0.05, 0.1, 0.5, 1}[rng.IntN(5)]
		w := []time.Duration{time.Second, 10 * time.Second, 250 * time.Millisecond}[rng.IntN(3)]
		// minPerSec × W between 1 and 20 retries.
		minPerSec := (1 + 19*rng.Float64()) / w.Seconds()
		var now time.Duration
		b, err := NewBudget(ratio, minPerSec, w, func() time.Duration { return now })
		if err != nil {
			t.Fatal(err)
		}
		var evs []budgetEvent
		pFirst := 0.8
		for i := range 3000 {
			switch r := rng.Float64(); {
			case r < 0.3: // same instant
			case r < 0.95:
				now += time.Duration(rng.ExpFloat64() * float64(w) / 40)
			case r < 0.99:
				now += time.Duration(rng.Float64() * float64(w))
			default:
				now += w + time.Duration(rng.Float64()*float64(2*w)) // a quiet gap
			}
			if i%500 == 0 { // change regime: mostly firsts, or a retry storm
				pFirst = []float64{0.9, 0.5, 0.1, 0}[rng.IntN(4)]
			}
			if rng.Float64() < pFirst {
				b.First()
				evs = append(evs, budgetEvent{t: now, first: true})
				continue
			}
			granted := b.Retry()
			if !granted {
				// Exactness: some window holding now would break the bound
				// with one more retry, counting the calls made so far.
				if ex := refusalExcess(evs, now, ratio, w); ex <= minPerSec*w.Seconds()+1e-9 {
					t.Fatalf("seed %d: retry %d at %v refused, yet granting it keeps every window within the bound (excess %.3f ≤ %.3f)",
						seed, i, now, ex, minPerSec*w.Seconds())
				}
			}
			evs = append(evs, budgetEvent{t: now, granted: granted})
		}
		slack := minPerSec * w.Seconds()
		if ex, at := windowExcess(evs, ratio, w); ex > slack+1e-9 {
			t.Fatalf("seed %d (ratio %v, %v/s, W %v): window (%v, %v] has retries − ratio·firsts = %.3f > minPerSec·W = %.3f",
				seed, ratio, minPerSec, w, at, at+w, ex, slack)
		}
		for _, k := range []int{2, 3, 7} {
			if ex, at := windowExcess(evs, ratio, time.Duration(k)*w-w/3); ex > float64(k)*slack+1e-9 {
				t.Fatalf("seed %d: span (%v, %v] of %d windows: excess %.3f > %d·minPerSec·W", seed, at, at+time.Duration(k)*w-w/3, k, ex, k)
			}
		}
		firsts, grants := b.Counts()
		var nf, ng int64
		for _, e := range evs {
			if e.first {
				nf++
			} else if e.granted {
				ng++
			}
		}
		if firsts != nf || grants != ng {
			t.Errorf("seed %d: Counts %d, %d; the test counted %d, %d", seed, firsts, grants, nf, ng)
		}
		if ng == 0 {
			t.Errorf("seed %d: no retry granted at all; the test exercises nothing", seed)
		}
	}
}

// TestBudgetSteadyState: first attempts at 100/s and retries asked for at
// 50/s, evenly, for 100 s, budget 10% + 10/s over 10 s. No window of 10 s
// may grant more than 0.1 × 1000 + 100 = 200, so at most 2000 over the ten
// disjoint windows of the run; and an exact budget grants all it may once
// the demand exceeds it, so the count is close to that bound: it falls
// short only at the start, where the first windows have not yet seen 10 s
// of first attempts (at most one window's 200).
func TestBudgetSteadyState(t *testing.T) {
	var now time.Duration
	b, err := NewBudget(0.1, 10, 10*time.Second, func() time.Duration { return now })
	if err != nil {
		t.Fatal(err)
	}
	granted := 0
	for i := range 10000 { // 100 s in steps of 10 ms
		now = time.Duration(i) * 10 * time.Millisecond
		b.First()
		if i%2 == 0 && b.Retry() {
			granted++
		}
	}
	if granted > 2000 || granted < 1800 {
		t.Errorf("granted %d retries in 100 s, want within [1800, 2000]", granted)
	}
}

// TestBudgetBlip: a blip with no first attempts lets through exactly the
// minimum, minPerSec × W, however many retries are asked for, and the
// budget recovers once the window has passed.
func TestBudgetBlip(t *testing.T) {
	var now time.Duration
	b, err := NewBudget(0.1, 5, 2*time.Second, func() time.Duration { return now })
	if err != nil {
		t.Fatal(err)
	}
	granted := 0
	for i := range 1000 {
		now = time.Duration(i) * time.Millisecond
		if b.Retry() {
			granted++
		}
	}
	if granted != 10 {
		t.Errorf("granted %d retries in a storm without first attempts, want minPerSec×W = 10", granted)
	}
	now = 2*time.Second + time.Millisecond // past the window of the first grants
	if !b.Retry() {
		t.Error("no retry granted a window after the storm began")
	}
}

func TestNewBudgetErrors(t *testing.T) {
	clock := func() time.Duration { return 0 }
	for _, tc := range []struct {
		ratio, min float64
		w          time.Duration
		want       string
	}{
		{-0.1, 10, time.Second, "between 0 and 1"},
		{1.5, 10, time.Second, "between 0 and 1"},
		{math.NaN(), 10, time.Second, "between 0 and 1"},
		{0.1, -1, time.Second, "≥ 0"},
		{0.1, 10, 0, "window must be > 0"},
		{0.1, 0.5, time.Second, "must be ≥ 1"},
	} {
		if _, err := NewBudget(tc.ratio, tc.min, tc.w, clock); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("NewBudget(%v, %v, %v): %v, want %q", tc.ratio, tc.min, tc.w, err, tc.want)
		}
	}
}
