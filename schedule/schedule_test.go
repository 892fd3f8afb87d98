package schedule

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"
)

func drain(t *testing.T, s Schedule) []time.Duration {
	t.Helper()
	var out []time.Duration
	for {
		off, ok := s.Next()
		if !ok {
			return out
		}
		if n := len(out); n > 0 && off < out[n-1] {
			t.Fatalf("offset %d (%v) before previous %v", n, off, out[n-1])
		}
		out = append(out, off)
	}
}

func TestConstantCountAndSpacing(t *testing.T) {
	tests := []struct {
		rate  float64
		d     time.Duration
		count int
		step  time.Duration
	}{
		{160, 10 * time.Second, 1600, 6250 * time.Microsecond},
		{160, 40 * time.Second, 6400, 6250 * time.Microsecond},
		{1, time.Second, 1, time.Second},
		{3, 1500 * time.Millisecond, 4, 333333333}, // 4.5 rounds down
		{0.5, 3 * time.Second, 1, 2 * time.Second}, // 1.5 rounds down
		{0.1, 9 * time.Second, 0, 10 * time.Second},
		{1e5, time.Second, 100000, 10 * time.Microsecond},
		{33.3, 3 * time.Second, 99, 30030030},
	}
	for _, tc := range tests {
		s := NewConstant(tc.rate, tc.d)
		offs := drain(t, s)
		if len(offs) != tc.count || s.Count() != int64(tc.count) {
			t.Errorf("rate %v for %v: %d arrivals (Count %d), want %d", tc.rate, tc.d, len(offs), s.Count(), tc.count)
			continue
		}
		for i, off := range offs {
			if off >= tc.d {
				t.Errorf("rate %v: arrival %d at %v is not before the end %v", tc.rate, i, off, tc.d)
			}
			// i/λ, to the nanosecond.
			want := time.Duration(math.Round(float64(i) * 1e9 / tc.rate))
			if off != want {
				t.Errorf("rate %v: arrival %d at %v, want %v", tc.rate, i, off, want)
			}
			if i > 0 {
				gap := off - offs[i-1]
				if d := gap - tc.step; d < -1 || d > 1 {
					t.Errorf("rate %v: gap %d is %v, want %v ±1ns", tc.rate, i, gap, tc.step)
				}
			}
		}
		if len(offs) > 0 && offs[0] != 0 {
			t.Errorf("rate %v: first arrival at %v, want 0", tc.rate, offs[0])
		}
	}
}

func TestConstantExpected(t *testing.T) {
	s := NewConstant(160, 10*time.Second)
	if s.Expected() != 1600 || !s.Exact() {
		t.Fatalf("Expected %v Exact %v", s.Expected(), s.Exact())
	}
	if got := s.Name(); got != "constant 160/s for 10s" {
		t.Fatalf("Name %q", got)
	}
}

func TestPoissonDeterministic(t *testing.T) {
	a := drain(t, NewPoisson(200, 5*time.Second, 42))
	b := drain(t, NewPoisson(200, 5*time.Second, 42))
	c := drain(t, NewPoisson(200, 5*time.Second, 43))
	if len(a) != len(b) {
		t.Fatalf("same seed, different counts %d %d", len(a), len(b))
	}
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("same seed differs at %d: %v %v", i, a[i], b[i])
		}
	}
	same := len(a) == len(c)
	for i := 0; same && i < len(a); i++ {
		same = a[i] == c[i]
	}
	if same {
		t.Fatal("different seeds gave identical schedules")
	}
}

// TestPoissonStatistics checks the count's mean and dispersion over many
// seeds. With λ·D = 500 and 400 seeds, the mean of the counts has standard
// error √(500/400) ≈ 1.1, so ±6 (over 5 standard errors) is stable. The
// sample variance of 400 Poisson counts has a relative standard error of
// about √(2/399) ≈ 7 %, so the index of dispersion (variance/mean, 1 for
// Poisson) is checked within [0.7, 1.3], over 4 standard errors. The gaps'
// coefficient of variation (1 for an exponential) is checked within 5 %.
func TestPoissonStatistics(t *testing.T) {
	const rate, seeds = 100.0, 400
	d := 5 * time.Second
	var sum, sumSq float64
	var gapSum, gapSq, gaps float64
	for seed := uint64(1); seed <= seeds; seed++ {
		s := NewPoisson(rate, d, seed)
		offs := drain(t, s)
		n := float64(len(offs))
		sum += n
		sumSq += n * n
		for i, off := range offs {
			if off < 0 || off >= d {
				t.Fatalf("seed %d: offset %v outside [0, %v)", seed, off, d)
			}
			if i > 0 {
				g := (off - offs[i-1]).Seconds()
				gapSum += g
				gapSq += g * g
				gaps++
			}
		}
	}
	mean := sum / seeds
	variance := (sumSq - sum*sum/seeds) / (seeds - 1)
	if math.Abs(mean-500) > 6 {
		t.Errorf("mean count %.2f, want 500 ± 6", mean)
	}
	if disp := variance / mean; disp < 0.7 || disp > 1.3 {
		t.Errorf("index of dispersion %.3f, want within [0.7, 1.3]", disp)
	}
	gm := gapSum / gaps
	gsd := math.Sqrt(gapSq/gaps - gm*gm)
	if math.Abs(gm-0.01)/0.01 > 0.05 {
		t.Errorf("mean gap %.5fs, want 0.01 ± 5%%", gm)
	}
	if cv := gsd / gm; math.Abs(cv-1) > 0.05 {
		t.Errorf("gap coefficient of variation %.3f, want 1 ± 0.05", cv)
	}
}

func TestSpecValidate(t *testing.T) {
	tests := []struct {
		spec Spec
		want string // substring of the error, "" for valid
	}{
		{Spec{Kind: Constant, Rate: 160, Duration: time.Second}, ""},
		{Spec{Kind: Poisson, Rate: 0.5, Duration: time.Minute}, ""},
		{Spec{Kind: Constant, Rate: 0, Duration: time.Second}, "Rate must be > 0"},
		{Spec{Kind: Constant, Rate: -5, Duration: time.Second}, "Rate must be > 0, got -5"},
		{Spec{Kind: Constant, Rate: math.NaN(), Duration: time.Second}, "finite"},
		{Spec{Kind: Constant, Rate: math.Inf(1), Duration: time.Second}, "finite"},
		{Spec{Kind: Constant, Rate: 1e300, Duration: time.Second}, "more than"},
		{Spec{Kind: Constant, Rate: 1, Duration: 0}, "Duration must be > 0"},
		{Spec{Kind: "bursty", Rate: 1, Duration: time.Second}, `Kind "bursty": unknown arrival process (known: constant, poisson, gamma)`},
		// A constant schedule must hold a request; a Poisson one may draw
		// none.
		{Spec{Kind: Constant, Rate: 0.5, Duration: time.Second}, "Rate 0.5 × Duration 1s = 0.5: the schedule holds no request"},
		{Spec{Kind: Poisson, Rate: 0.5, Duration: time.Second}, ""},
	}
	for _, tc := range tests {
		_, err := New(tc.spec)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%+v: unexpected error %v", tc.spec, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%+v: error %v, want it to contain %q", tc.spec, err, tc.want)
		case tc.want != "" && !errors.As(err, new(*FieldError)):
			t.Errorf("%+v: error %v is a %T, not a *FieldError", tc.spec, err, err)
		}
	}
}

func TestFormatRate(t *testing.T) {
	for in, want := range map[float64]string{160: "160", 0.5: "0.5", 33.3333: "33.333", 1e5: "100000"} {
		if got := FormatRate(in); got != want {
			t.Errorf("FormatRate(%v) = %q, want %q", in, got, want)
		}
	}
}

func BenchmarkConstantNext(b *testing.B) {
	b.ReportAllocs()
	s := NewConstant(1e9, time.Hour)
	for b.Loop() {
		s.Next()
	}
}

func BenchmarkPoissonNext(b *testing.B) {
	b.ReportAllocs()
	s := NewPoisson(1e9, time.Hour, 1)
	for b.Loop() {
		s.Next()
	}
}

// TestMaxCount: the bound a sweep's early stop takes for a run's count
// is the count check's own: ⌊Λ⌋ when fixed, Λ + 5·√Λ for Poisson,
// Λ + 5·√(Λ/k) for gamma, over ∫λ dt for stages.
func TestMaxCount(t *testing.T) {
	for _, tc := range []struct {
		s    Spec
		want float64
	}{
		{Spec{Kind: Constant, Rate: 3, Duration: 1500 * time.Millisecond}, 4},
		{Spec{Kind: Poisson, Rate: 100, Duration: time.Second}, 150},
		{Spec{Kind: Gamma, Rate: 100, Duration: time.Second, Burstiness: 0.25}, 200},
		{Spec{Kind: Gamma, Rate: 100, Duration: time.Second, Burstiness: 4}, 125},
		{Spec{Kind: Poisson, Rate: 0, Duration: 2 * time.Second, Stages: "2s:100"}, 100 + 5*10},
	} {
		if got := tc.s.MaxCount(); math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("%+v: MaxCount %v, want %v", tc.s, got, tc.want)
		}
	}
}
