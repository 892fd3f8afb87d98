package main

import (
	"bytes"
	"math"
	"testing"
	"time"
)

func TestLatenessOnSchedule(t *testing.T) {
	counts := make([]int64, 1000)
	for i := range counts {
		counts[i] = 1
	}
	late, largest, err := lateness(counts, 1000, 99, 99.9)
	if err != nil {
		t.Fatal(err)
	}
	if late[0] != 0 || late[1] != 0 || largest != 0 {
		t.Errorf("one arrival a millisecond at 1,000/s: p99 %v p99.9 %v max %v ms late, want 0", late[0], late[1], largest)
	}
}

// Ten milliseconds with no arrival, then the ten missed ones with the due
// one: they came 10, 9, …, 1 ms late and all the others on time.
func TestLatenessHole(t *testing.T) {
	counts := make([]int64, 2000)
	for i := range counts {
		counts[i] = 1
	}
	for i := 1000; i < 1010; i++ {
		counts[i] = 0
	}
	counts[1010] = 11
	late, largest, err := lateness(counts, 1000, 99, 99.9)
	if err != nil {
		t.Fatal(err)
	}
	// 2,000 arrivals, 1,990 on time: p99 is on time, p99.9 (the
	// 1,998th) 8 ms late; the histogram keeps 3 digits.
	near := func(got, want float64) bool { return math.Abs(got-want) < 0.01 }
	if !near(late[0], 0) || !near(late[1], 8) || !near(largest, 10) {
		t.Errorf("p99 %v p99.9 %v max %v ms late, want 0, 8 and 10", late[0], late[1], largest)
	}
}

func TestLatenessBadInput(t *testing.T) {
	if _, _, err := lateness([]int64{1}, 0); err == nil {
		t.Error("rate 0: no error")
	}
	if _, _, err := lateness([]int64{0, 0}, 100); err == nil {
		t.Error("no arrivals: no error")
	}
}

func TestArrivalsRoundTrip(t *testing.T) {
	a := new(arrivals)
	t0 := time.Now()
	a.note(t0) // before the first reset: not counted
	a.reset(t0)
	for _, d := range []time.Duration{0, 300 * time.Microsecond, 2 * time.Millisecond, 2500 * time.Microsecond, arrivalBins * time.Millisecond} {
		a.note(t0.Add(d))
	}
	var buf bytes.Buffer
	if err := a.write(&buf); err != nil {
		t.Fatal(err)
	}
	counts, past, err := parseArrivals(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if len(counts) != 3 || counts[0] != 2 || counts[1] != 0 || counts[2] != 2 || past != 1 {
		t.Errorf("counts %v past %d, want [2 0 2] and 1", counts, past)
	}
	if _, _, err := parseArrivals(bytes.NewBufferString("12\n")); err == nil {
		t.Error("a line with one field: no error")
	}
}
