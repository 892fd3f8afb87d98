package main

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/openload/openload/schedule"
)

// TestIdealDD4: the ideal queue fed constant arrivals is D/D/4. Below
// capacity every request takes exactly S; above it the request due at t
// waits (λ/μ − 1)·t, to within one call (the servers free in steps of S).
func TestIdealDD4(t *testing.T) {
	for _, rate := range []float64{20, 60, 80} {
		offs, err := Offsets(schedule.Spec{Kind: schedule.Constant, Rate: rate, Duration: 10 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		for i, r := range Ideal(offs, Workers, Service) {
			if r != Service {
				t.Fatalf("%v/s: request %d took %v, want %v", rate, i, r, Service)
			}
		}
	}
	offs, _ := Offsets(schedule.Spec{Kind: schedule.Constant, Rate: 100, Duration: 10 * time.Second})
	resp := Ideal(offs, Workers, Service)
	for i := 0; i < len(offs); i += 97 {
		want := Service + time.Duration((100/Capacity-1)*float64(offs[i]))
		if d := resp[i] - want; d < -Service || d > Service {
			t.Errorf("100/s: request %d at %v took %v, want %v ± %v", i, offs[i], resp[i], want, Service)
		}
	}
	// The closed form's p99 agrees with the ideal queue's, within a call.
	if got, want := Quantiles(resp, 99)[0], DDcP99(100, 10*time.Second); math.Abs(got-want) > 50 {
		t.Errorf("p99 ideal %v ms, formula %v ms", got, want)
	}
}

// TestErlangC against the value worked by hand in the README: C(4, 2) =
// (16/24 · 4/2) ÷ (1 + 2 + 2 + 4/3 + 16/24 · 4/2) = 4/23.
func TestErlangC(t *testing.T) {
	if got := ErlangC(4, 2); math.Abs(got-4.0/23) > 1e-12 {
		t.Errorf("C(4, 2) = %v, want 4/23", got)
	}
	if !math.IsInf(MDcP99(80), 1) || MDcP99(20) < 50 {
		t.Errorf("MDcP99(80) %v, MDcP99(20) %v", MDcP99(80), MDcP99(20))
	}
}

// TestSweepBesideIdeal runs two points briefly (1 s each) and checks the
// plumbing: every request accounted for, the ideal queue fed the same
// count as the run scheduled, and measured response times never below the
// ideal queue's (a real server cannot beat exactly 50 ms per call), to
// within a millisecond of timer slack.
func TestSweepBesideIdeal(t *testing.T) {
	if testing.Short() {
		t.Skip("runs 2 × 1 s")
	}
	rows, err := Sweep(context.Background(), schedule.Poisson, []float64{40, 100}, time.Second, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 {
		t.Fatalf("%d rows", len(rows))
	}
	for _, r := range rows {
		res := r.Point.Result
		if !res.Counts.Balanced() {
			t.Errorf("%v/s: counts %+v", r.Point.Rate, res.Counts)
		}
		if res.Response.P50 < r.Ideal[0]-1 {
			t.Errorf("%v/s: measured p50 %v ms below the ideal queue's %v ms", r.Point.Rate, res.Response.P50, r.Ideal[0])
		}
	}
}
