package metrics

import (
	"math"
	"testing"
	"time"

	"github.com/openload/openload/result"
)

// TestBuckets: each value is counted under every bound at or above it
// (exactly below 2.048 ms, and here above too: no value lies within an
// HdrHistogram bin of a bound), and at the top every value is counted.
func TestBuckets(t *testing.T) {
	h := result.NewHistogram()
	values := []int64{10, 50, 51, 100, 1000, 1001, 2500, 12_000, 120_000_000}
	for _, us := range values {
		if err := h.RecordValue(us); err != nil {
			t.Fatal(err)
		}
	}
	b := buckets(h)
	for i, le := range LatencyBounds {
		var want uint64
		for _, us := range values {
			if float64(us) <= le*1e6 {
				want++
			}
		}
		if b.Cumulative[i] != want {
			t.Errorf("le %g: %d, want %d", le, b.Cumulative[i], want)
		}
	}
	if b.Count != uint64(len(values)) {
		t.Errorf("count %d, want %d", b.Count, len(values))
	}
	// The sum is within HdrHistogram's 0.1 % of the values' own.
	var s float64
	for _, us := range values {
		s += float64(us)
	}
	if b.Sum < s*0.999/1e6 || b.Sum > s*1.001/1e6 {
		t.Errorf("sum %g s, want about %g", b.Sum, s/1e6)
	}
	if e := buckets(result.NewHistogram()); e.Count != 0 || e.Cumulative[len(e.Cumulative)-1] != 0 {
		t.Errorf("empty: %+v", e)
	}
}

// TestLatencyBounds: from 100 µs to past an hour, each bucket at most
// 10.6 % wider than the last (10^(1/24), rounded to 3 digits), the
// decades on bounds; Bounds stops at the first at or above its top.
func TestLatencyBounds(t *testing.T) {
	if LatencyBounds[0] != 100e-6 || LatencyBounds[len(LatencyBounds)-1] < 3600 {
		t.Errorf("bounds from %g to %g s, want 100 µs to an hour or more", LatencyBounds[0], LatencyBounds[len(LatencyBounds)-1])
	}
	for i := 1; i < len(LatencyBounds); i++ {
		if r := LatencyBounds[i] / LatencyBounds[i-1]; r <= 1 || r > 1.106 {
			t.Errorf("%g after %g: ratio %.4f", LatencyBounds[i], LatencyBounds[i-1], r)
		}
	}
	for _, d := range []float64{1e-3, 1e-2, 0.1, 1, 10, 100, 1000} {
		found := false
		for _, b := range LatencyBounds {
			found = found || math.Abs(b-d) < d*1e-9
		}
		if !found {
			t.Errorf("no bound at %g s", d)
		}
	}
	for _, c := range []struct {
		max  time.Duration
		last float64
	}{{30 * time.Second, 31.6}, {time.Second, 1}, {300 * time.Millisecond, 0.316}, {0, LatencyBounds[len(LatencyBounds)-1]}, {100 * time.Hour, LatencyBounds[len(LatencyBounds)-1]}} {
		b := Bounds(c.max)
		if b[len(b)-1] != c.last {
			t.Errorf("Bounds(%v) ends at %g, want %g", c.max, b[len(b)-1], c.last)
		}
	}
	t.Logf("%d bounds; %d up to 30 s", len(LatencyBounds), len(Bounds(30*time.Second)))
}
