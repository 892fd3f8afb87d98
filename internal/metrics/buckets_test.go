package metrics

import (
	"testing"

	"github.com/openload/openload/result"
)

// TestBuckets: values fall under the first bound at or above them, exactly
// below 2.048 ms, and at the top every value is counted.
func TestBuckets(t *testing.T) {
	h := result.NewHistogram()
	for _, us := range []int64{10, 50, 51, 100, 1000, 1001, 2500, 120_000_000} {
		if err := h.RecordValue(us); err != nil {
			t.Fatal(err)
		}
	}
	b := buckets(h)
	want := map[float64]uint64{50e-6: 2, 100e-6: 4, 1e-3: 5, 2.5e-3: 6, 5e-3: 7, 60: 7}
	for i, le := range LatencyBounds {
		if n, ok := want[le]; ok && b.Cumulative[i] != n {
			t.Errorf("le %g: %d, want %d", le, b.Cumulative[i], n)
		}
		if i > 0 && b.Cumulative[i] < b.Cumulative[i-1] {
			t.Errorf("le %g: %d below the previous bound's %d", le, b.Cumulative[i], b.Cumulative[i-1])
		}
	}
	if b.Count != 8 {
		t.Errorf("count %d, want 8", b.Count)
	}
	// The sum is within HdrHistogram's 0.1 % of the values' own.
	if s := 10 + 50 + 51 + 100 + 1000 + 1001 + 2500 + 120_000_000.0; b.Sum < s*0.999/1e6 || b.Sum > s*1.001/1e6 {
		t.Errorf("sum %g s, want about %g", b.Sum, s/1e6)
	}
	if e := buckets(result.NewHistogram()); e.Count != 0 || e.Cumulative[len(e.Cumulative)-1] != 0 {
		t.Errorf("empty: %+v", e)
	}
}
