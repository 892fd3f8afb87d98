package verify

import "math"

// Figures judged apart from a result: a search's median over its repeats
// and an early stop's bound mid-run are held to an objective by the same
// comparison Evaluate makes (meets), here, so that an objective's sense
// is read in one place.

// upper reports whether o bounds its figure from above (<=, <).
func (o Objective) upper() bool { return o.Op == "<=" || o.Op == "<" }

// BreachedFrom reports whether every figure of at least lo breaches o:
// what an early stop, which knows only a lower bound of a figure while
// the run goes on, may conclude. A figure known only to be more than v
// is at least math.Nextafter(v, math.Inf(1)). A lower bound never breaches
// an objective that bounds its figure from below (>=, >).
func (o Objective) BreachedFrom(lo float64) bool {
	return o.upper() && !meets(o, lo)
}

// Past is a figure beyond any bound of o: what a run without a figure
// (stopped early, no data) counts as, so that it never passes.
func (o Objective) Past() float64 {
	if o.upper() {
		return math.Inf(1)
	}
	return math.Inf(-1)
}

// Nearness is how near v is to o's bound, as a ratio of it: 1 at the
// bound, above 1 past it (+Inf when v is not a number).
func (o Objective) Nearness(v float64) float64 {
	near := v / o.Threshold
	if !o.upper() {
		near = o.Threshold / v
	}
	if math.IsNaN(near) {
		return math.Inf(1)
	}
	return near
}

// Format writes a figure of o as Evaluate's messages do: "12.500 ms",
// "0.5 %".
func (o Objective) Format(v float64) string { return o.format(v) }
