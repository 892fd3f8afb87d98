package main

import (
	"testing"
	"time"
)

// TestWakes: n sleeps of every take at least n × every, their wakes cost
// some CPU (the thread's run time is counted exactly, not by ticks), and
// none comes early (a timer never fires before its time), so neither
// lateness is negative and the p99 is at least the p50.
func TestWakes(t *testing.T) {
	const every, n = 200 * time.Microsecond, 50
	w, err := measureWakes(every, n)
	if err != nil {
		t.Fatal(err)
	}
	if w.took < n*every || w.cpu <= 0 || w.lateP50 < 0 || w.lateP99 < w.lateP50 {
		t.Errorf("%d wakes every %v took %v at %v of CPU each, late by p50 %v, p99 %v", n, every, w.took, w.cpu, w.lateP50, w.lateP99)
	}
	t.Logf("%+v", w)
}
