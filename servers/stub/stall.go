package stub

import "time"

// stallPlan is the stall schedule, in offsets from the first model request.
// Stall k occupies [at + k·every, at + k·every + dur); with every == 0 there
// is only stall 0. The end instant is not stalled.
type stallPlan struct {
	at, dur, every time.Duration
}

func newStallPlan(cfg Config) stallPlan {
	return stallPlan{at: cfg.StallAt, dur: cfg.StallFor, every: cfg.StallEvery}
}

// within reports whether offset d lies inside a stall, and if so the offset
// at which that stall ends.
func (p stallPlan) within(d time.Duration) (end time.Duration, stalled bool) {
	if p.dur <= 0 || d < p.at {
		return 0, false
	}
	start := p.at
	if p.every > 0 {
		start += (d - p.at) / p.every * p.every
	}
	end = start + p.dur
	if d < end {
		return end, true
	}
	return 0, false
}

// begun counts the stalls that have started by offset d.
func (p stallPlan) begun(d time.Duration) int64 {
	if p.dur <= 0 || d < p.at {
		return 0
	}
	if p.every <= 0 {
		return 1
	}
	return int64((d-p.at)/p.every) + 1
}
