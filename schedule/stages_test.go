package schedule

import (
	"math"
	"strings"
	"testing"
	"time"
)

func mustStages(t *testing.T, s string) []Stage {
	t.Helper()
	st, err := ParseStages(s)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// TestStagesCount: a constant schedule's count is ⌊∫λ dt⌋, worked out by
// hand for each shape (trapezoids: (a+b)/2 · T per stage).
func TestStagesCount(t *testing.T) {
	tests := []struct {
		start  float64
		stages string
		total  float64 // ∫λ dt by hand
		count  int64
	}{
		{0, "30s:100,1m:100,30s:0", 1500 + 6000 + 1500, 9000},
		{0, "10s:10", 50, 50},
		{10, "10s:10", 100, 100},
		{0, "1s:3", 1.5, 1},
		{5, "2s:0", 5, 5},
		{0, "10s:0,10s:20,5s:20,10s:0", 0 + 100 + 100 + 100, 300},
		{0, "3s:1,4s:1", 1.5 + 4, 5},
		{100, "1s:50,1s:150", 75 + 100, 175},
		{0, "100ms:7", 0.35, 0},
		{33.3, "3s:33.3", 99.9, 99},
		// A 0s stage jumps: k6's {0s, 0} first, or a step up mid-way.
		{0, "0s:0,2s:10", 10, 10},
		{0, "0s:10,2s:10", 20, 20},
		{0, "1s:0,0s:10,1s:10,0s:0,1s:0", 10, 10},
	}
	for _, tc := range tests {
		st := mustStages(t, tc.stages)
		s := NewConstantStages(tc.start, st)
		if got := s.Expected(); math.Abs(got-tc.total) > 1e-9 {
			t.Errorf("%v from %v: Expected %v, want ∫λ dt = %v", tc.stages, tc.start, got, tc.total)
		}
		offs := drain(t, s)
		if int64(len(offs)) != tc.count || s.Count() != tc.count || !s.Exact() {
			t.Errorf("%v from %v: %d arrivals (Count %d), want ⌊%v⌋ = %d", tc.stages, tc.start, len(offs), s.Count(), tc.total, tc.count)
		}
		d := StagesDuration(st)
		for i, off := range offs {
			if off < 0 || off >= d {
				t.Errorf("%v: arrival %d at %v outside [0, %v)", tc.stages, i, off, d)
			}
			// Λ at the offset is i, to within a nanosecond's worth of
			// requests at the highest rate in play (≤ 200/s here).
			if got := s.Profile().Cumulative(off); math.Abs(got-float64(i)) > 1e-6 {
				t.Errorf("%v: Λ(t_%d = %v) = %v, want %d", tc.stages, i, off, got, i)
			}
		}
	}
}

// TestStagesRampOffsets: a ramp from 0 to r over T has Λ(t) = r t²/(2T),
// so request i is due at √(2iT/r).
func TestStagesRampOffsets(t *testing.T) {
	s := NewConstantStages(0, []Stage{{10 * time.Second, 20}})
	offs := drain(t, s)
	if len(offs) != 100 {
		t.Fatalf("%d arrivals, want 100", len(offs))
	}
	for i, off := range offs {
		want := time.Duration(math.Round(math.Sqrt(2*float64(i)*10/20) * 1e9))
		if d := off - want; d < -1 || d > 1 {
			t.Errorf("arrival %d at %v, want %v", i, off, want)
		}
	}
}

// TestStagesMatchConstant: one stage at one rate is NewConstant, offset
// for offset.
func TestStagesMatchConstant(t *testing.T) {
	for _, tc := range []struct {
		rate float64
		d    time.Duration
	}{{160, 10 * time.Second}, {3, 1500 * time.Millisecond}, {33.3, 3 * time.Second}, {1e5, time.Second}} {
		a := drain(t, NewConstant(tc.rate, tc.d))
		b := drain(t, NewConstantStages(tc.rate, []Stage{{tc.d, tc.rate}}))
		if len(a) != len(b) {
			t.Fatalf("%v/s for %v: %d vs %d arrivals", tc.rate, tc.d, len(a), len(b))
		}
		for i := range a {
			if d := a[i] - b[i]; d < -1 || d > 1 {
				t.Fatalf("%v/s: arrival %d at %v vs %v", tc.rate, i, a[i], b[i])
			}
		}
	}
}

// TestStagesPause: requests due where Λ is flat (rate 0) wait for the
// rate to come back: none is placed inside the pause.
func TestStagesPause(t *testing.T) {
	s := NewConstantStages(0, mustStages(t, "10s:0,10s:10"))
	offs := drain(t, s)
	if len(offs) != 50 || offs[0] != 10*time.Second {
		t.Fatalf("%d arrivals, first at %v; want 50 from 10s", len(offs), offs[0])
	}
}

// TestStagesPoissonRescaled: over a ramp, the Poisson draw's count per
// stretch follows ∫λ: over many seeds, the mean count of each half of a
// ramp 0→100/s over 10 s is 125 and 375 (Λ(5 s) = 125), within 5 standard
// errors.
func TestStagesPoissonRescaled(t *testing.T) {
	const seeds = 200
	var first, second float64
	for seed := range uint64(seeds) {
		s := NewStages(Poisson, 0, []Stage{{10 * time.Second, 100}}, seed, 0)
		if _, counted := s.(interface{ Count() int64 }); s.Exact() || counted {
			t.Fatal("a Poisson schedule is not exact and has no Count")
		}
		for _, off := range drain(t, s) {
			if off < 5*time.Second {
				first++
			} else {
				second++
			}
		}
	}
	first, second = first/seeds, second/seeds
	// A Poisson count's variance is its mean; the mean of 200 has
	// standard error √(μ/200).
	for _, c := range []struct{ got, want float64 }{{first, 125}, {second, 375}} {
		if se := math.Sqrt(c.want / seeds); math.Abs(c.got-c.want) > 5*se {
			t.Errorf("mean count %.1f, want %v ± %.1f", c.got, c.want, 5*se)
		}
	}
}

// TestGammaGaps: gamma gaps have mean 1/λ whatever k, and their squared
// coefficient of variation is 1/k; the count of a run has variance about
// Λ/k. Bounds are 6 standard errors wide for the sample sizes drawn.
func TestGammaGaps(t *testing.T) {
	for _, k := range []float64{0.25, 1, 4} {
		s := NewGamma(100, 1000*time.Second, 7, k)
		offs := drain(t, s)
		n := float64(len(offs) - 1)
		var sum, sq float64
		for i := 1; i < len(offs); i++ {
			g := (offs[i] - offs[i-1]).Seconds()
			sum += g
			sq += g * g
		}
		mean := sum / n
		cv2 := (sq/n - mean*mean) / (mean * mean)
		// The mean of n gaps has relative standard error √(1/(k n)).
		if se := 0.01 * math.Sqrt(1/(k*n)); math.Abs(mean-0.01) > 6*se {
			t.Errorf("k=%v: mean gap %v, want 0.01 ± %v", k, mean, 6*se)
		}
		// Relative error of a sample variance of gamma variates is about
		// √((2 + 6/k)/n).
		if re := math.Sqrt((2 + 6/k) / n); math.Abs(cv2*k-1) > 6*re {
			t.Errorf("k=%v: squared CV %v, want 1/k = %v", k, cv2, 1/k)
		}
	}
	// Seeded: the same seed draws the same schedule.
	a, b := drain(t, NewGamma(50, 2*time.Second, 3, 0.5)), drain(t, NewGamma(50, 2*time.Second, 3, 0.5))
	if len(a) != len(b) || a[len(a)-1] != b[len(b)-1] {
		t.Fatal("the same seed drew different schedules")
	}
}

func TestStagesSpec(t *testing.T) {
	st := "30s:100,1m:100,30s:0"
	spec := Spec{Kind: Constant, Stages: st, Duration: 2 * time.Minute}
	s, err := New(spec)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := s.Name(), "constant stages 30s:100,1m0s:100,30s:0 from 0/s, 2m0s"; got != want {
		t.Errorf("Name %q, want %q", got, want)
	}
	g, err := New(Spec{Kind: Gamma, Rate: 10, Duration: time.Second, Seed: 2, Burstiness: 0.5})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := g.Name(), "gamma k=0.5 10/s for 1s (seed 2)"; got != want {
		t.Errorf("Name %q, want %q", got, want)
	}
	bad := []struct {
		spec  Spec
		field string
		msg   string
	}{
		{Spec{Kind: Constant, Stages: st, Duration: time.Minute}, "Duration", "not the sum"},
		{Spec{Kind: Constant, Stages: "0s:1", Duration: 0}, "Stages", "they last 0s"},
		{Spec{Kind: Constant, Stages: "-1s:1,2s:1", Duration: time.Second}, "Stages", "must be ≥ 0"},
		{Spec{Kind: Constant, Stages: "1s:-1", Duration: time.Second}, "Stages", "≥ 0"},
		{Spec{Kind: Constant, Stages: "1s:0", Duration: time.Second}, "Stages", "every rate is 0"},
		{Spec{Kind: Constant, Stages: "1s:1", Duration: time.Second}, "Stages", "holds no request"},
		{Spec{Kind: Constant, Rate: -1, Stages: st, Duration: 2 * time.Minute}, "Rate", "≥ 0"},
		{Spec{Kind: Constant, Stages: "1s", Duration: time.Second}, "Stages", "want DURATION:RATE"},
		{Spec{Kind: Gamma, Rate: 1, Duration: time.Second}, "Burstiness", "> 0"},
		{Spec{Kind: Poisson, Rate: 1, Duration: time.Second, Burstiness: 2}, "Burstiness", "gamma only"},
	}
	for _, b := range bad {
		err := b.spec.Validate()
		fe, ok := err.(*FieldError)
		if !ok || fe.Field != b.field || !strings.Contains(err.Error(), b.msg) {
			t.Errorf("%+v: error %v, want field %s with %q", b.spec, err, b.field, b.msg)
		}
	}
}

func TestParseStages(t *testing.T) {
	st, err := ParseStages("30s:100, 1m:0.5,2s:0")
	if err != nil || len(st) != 3 || st[1] != (Stage{time.Minute, 0.5}) {
		t.Fatalf("%v, %v", st, err)
	}
	if got := FormatStages(st); got != "30s:100,1m0s:0.5,2s:0" {
		t.Errorf("FormatStages %q", got)
	}
	for _, s := range []string{"", "30s", "x:1", "30s:y", "30s:1,"} {
		if _, err := ParseStages(s); err == nil {
			t.Errorf("%q: no error", s)
		}
	}
}
