package schedule

import (
	"math"
	"strings"
	"testing"
	"time"
)

// The throughput probe: N arrivals, every one at offset 0, its count
// exact and the one asked for.
func TestAtOnce(t *testing.T) {
	spec := Spec{Kind: Constant, Rate: math.Inf(1), Count: 160}
	s, err := New(spec)
	if err != nil {
		t.Fatal(err)
	}
	offs := drain(t, s)
	if len(offs) != 160 {
		t.Fatalf("%d arrivals, want 160", len(offs))
	}
	for i, o := range offs {
		if o != 0 {
			t.Fatalf("arrival %d at %v, want 0", i, o)
		}
	}
	if !s.Exact() || s.Expected() != 160 || spec.Expected() != 160 || spec.MaxCount() != 160 {
		t.Errorf("exact %v, expected %v, spec expected %v, max count %v: want exact, 160", s.Exact(), s.Expected(), spec.Expected(), spec.MaxCount())
	}
	if got, want := s.Name(), "all 160 at once (rate inf)"; got != want {
		t.Errorf("name %q, want %q", got, want)
	}
	// An empty Kind is the constant default.
	if _, err := New(Spec{Rate: math.Inf(1), Count: 1}); err != nil {
		t.Errorf("Kind empty: %v", err)
	}
}

func TestAtOnceRefused(t *testing.T) {
	inf := math.Inf(1)
	for _, c := range []struct {
		spec Spec
		want string
	}{
		{Spec{Kind: Constant, Rate: inf, Duration: time.Second}, "Rate must be a finite number, got +Inf; for the throughput probe, every request at once, add Count N"},
		{Spec{Kind: Constant, Rate: inf}, "add Count N"},
		{Spec{Kind: Constant, Rate: inf, Count: -1}, "add Count N"},
		{Spec{Kind: Constant, Rate: inf, Count: 16, Duration: time.Second}, "Duration does not apply"},
		{Spec{Kind: Poisson, Rate: inf, Count: 16}, "Kind poisson has no gaps to draw"},
		{Spec{Kind: Constant, Rate: inf, Count: 16, Stages: "1s:10"}, "Stages do not apply"},
		{Spec{Kind: Constant, Rate: inf, Count: MaxArrivals + 1}, "Count"},
		{Spec{Kind: Constant, Rate: 10, Duration: time.Second, Count: 16}, "Count applies to Rate inf only"},
		{Spec{Kind: Constant, Rate: math.Inf(-1), Count: 16, Duration: time.Second}, "finite"},
	} {
		err := c.spec.Validate()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.spec, err, c.want)
		}
	}
}
