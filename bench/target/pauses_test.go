package main

import (
	"testing"
	"time"
)

// measurePauses' accounting holds on any machine, busy or not: the pauses
// are part of the time spun, the longest is one of them and over least.
func TestMeasurePauses(t *testing.T) {
	least := 20 * time.Microsecond
	p := measurePauses(2, 30*time.Millisecond, least)
	if p.threads != 2 || p.spun < 60*time.Millisecond {
		t.Fatalf("threads %d spun %v, want 2 threads and ≥ 60 ms", p.threads, p.spun)
	}
	if p.lost > p.spun || p.lostShare() < 0 || p.lostShare() > 1 {
		t.Errorf("lost %v of %v (share %v)", p.lost, p.spun, p.lostShare())
	}
	if (p.count == 0) != (p.longest == 0) || (p.count > 0 && (p.longest <= least || p.longest > p.lost)) {
		t.Errorf("%d pauses, longest %v, lost %v", p.count, p.longest, p.lost)
	}
	if p.overMS > p.count {
		t.Errorf("%d pauses over 1 ms of %d", p.overMS, p.count)
	}
}
