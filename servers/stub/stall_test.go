package stub

import (
	"testing"
	"time"
)

func TestStallPlan(t *testing.T) {
	const ms = time.Millisecond
	type probe struct {
		at      time.Duration
		stalled bool
		end     time.Duration
		begun   int64
	}
	cases := []struct {
		name   string
		plan   stallPlan
		probes []probe
	}{
		{"no stall", stallPlan{at: 0, dur: 0}, []probe{{0, false, 0, 0}, {time.Hour, false, 0, 0}}},
		{"once at 0", stallPlan{at: 0, dur: 300 * ms}, []probe{
			{0, true, 300 * ms, 1}, {299 * ms, true, 300 * ms, 1},
			{300 * ms, false, 0, 1}, // the end instant is not stalled
			{time.Hour, false, 0, 1},
		}},
		{"once later", stallPlan{at: 100 * ms, dur: 50 * ms}, []probe{
			{99 * ms, false, 0, 0}, {100 * ms, true, 150 * ms, 1}, {150 * ms, false, 0, 1},
		}},
		{"repeating", stallPlan{at: 100 * ms, dur: 50 * ms, every: time.Second}, []probe{
			{0, false, 0, 0}, {120 * ms, true, 150 * ms, 1}, {500 * ms, false, 0, 1},
			{1099 * ms, false, 0, 1}, {1100 * ms, true, 1150 * ms, 2}, {1149 * ms, true, 1150 * ms, 2},
			{1150 * ms, false, 0, 2}, {3120 * ms, true, 3150 * ms, 4},
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for _, p := range tc.probes {
				end, stalled := tc.plan.within(p.at)
				if stalled != p.stalled || end != p.end {
					t.Errorf("within(%v) = (%v, %v), want (%v, %v)", p.at, end, stalled, p.end, p.stalled)
				}
				if got := tc.plan.begun(p.at); got != p.begun {
					t.Errorf("begun(%v) = %d, want %d", p.at, got, p.begun)
				}
			}
		})
	}
}
