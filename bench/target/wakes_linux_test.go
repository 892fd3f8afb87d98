package main

import (
	"testing"
	"time"
)

// TestWakes: n sleeps of every take at least n × every, and their wakes
// cost some CPU (the thread's run time is counted exactly, not by ticks).
func TestWakes(t *testing.T) {
	const every, n = 200 * time.Microsecond, 50
	perWake, took, err := measureWakes(every, n)
	if err != nil {
		t.Fatal(err)
	}
	if took < n*every || perWake <= 0 {
		t.Errorf("%d wakes every %v took %v at %v of CPU each", n, every, took, perWake)
	}
	t.Logf("%v of CPU per wake, %d in %v", perWake, n, took)
}
