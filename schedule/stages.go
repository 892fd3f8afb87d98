package schedule

// # Stages: a piecewise-linear rate
//
// k6's ramping arrival rate: each stage ramps the rate linearly from the
// previous stage's target (the first from the start rate, often 0) to its
// own target over its duration. On stage k, of duration T_k, from rate a to
// rate b, the rate at τ ∈ [0, T_k] into the stage is
//
//	λ(τ) = a + (b − a)·τ/T_k
//
// and the cumulative intensity, the requests due by then,
//
//	Λ_k(τ) = a·τ + (b − a)·τ²/(2·T_k),   Λ_k(T_k) = (a + b)/2 · T_k.
//
// Λ(t) adds the whole stages before t. Inverting a stage's Λ_k for x
// requests (a quadratic in τ) in the form that stays exact when a = b and
// loses no precision when b < a:
//
//	τ = 2x / (a + √(a² + 2(b − a)·x/T_k)).
//
// Constant arrivals put request i (i = 0, 1, …) where Λ passes i:
// t_i = sup{t : Λ(t) ≤ i}, which is where Λ reaches i wherever λ > 0; in a
// stretch at rate 0 the request waits for its end. There are
// N = ⌊Λ(D)⌋ of them (within 1e-9, as ConstantCount), the same count and
// offsets as NewConstant when every stage holds one rate.
//
// Poisson and gamma arrivals are drawn by time rescaling: a renewal process
// of rate 1 in "intensity time" s (gaps exponential of mean 1 for Poisson,
// gamma of shape k and mean 1 for gamma), each point s_j mapped to the time
// t_j = Λ⁻¹(s_j), for s_j < Λ(D). For exponential gaps this is exactly the
// inhomogeneous Poisson process of rate λ(t) (the time-rescaling theorem);
// its count is Poisson of mean Λ(D). For gamma gaps the count has mean about
// Λ(D) and variance about Λ(D)/k (renewal theory: variance/mean of the count
// tends to the squared coefficient of variation of a gap, 1/k).

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/openload/openload/field"
)

// MaxStages bounds the number of stages a schedule takes.
const MaxStages = 1000

// Stage is one stage of a ramping schedule: the rate ramps linearly to
// Target (requests per second) over Duration.
type Stage struct {
	Duration time.Duration
	Target   float64
}

// String writes the stage as ParseStages reads it, exactly: "30s:100".
func (s Stage) String() string {
	return s.Duration.String() + ":" + strconv.FormatFloat(s.Target, 'g', -1, 64)
}

// FormatStages writes stages as ParseStages reads them: "30s:100,1m0s:0".
func FormatStages(st []Stage) string {
	parts := make([]string, len(st))
	for i, s := range st {
		parts[i] = s.String()
	}
	return strings.Join(parts, ",")
}

// ParseStages reads "DURATION:TARGET,…", e.g. "30s:100,1m:100,30s:0". It
// checks the syntax only; Spec.Validate checks the values.
func ParseStages(s string) ([]Stage, error) {
	if strings.TrimSpace(s) == "" {
		return nil, fmt.Errorf("no stage: want DURATION:RATE[,DURATION:RATE…], e.g. 30s:100,1m:100,30s:0")
	}
	parts := strings.Split(s, ",")
	if len(parts) > MaxStages {
		return nil, fmt.Errorf("%d stages: at most %d", len(parts), MaxStages)
	}
	out := make([]Stage, 0, len(parts))
	for i, p := range parts {
		ds, ts, ok := strings.Cut(strings.TrimSpace(p), ":")
		if !ok {
			return nil, fmt.Errorf("stage %d %q: want DURATION:RATE, e.g. 30s:100", i+1, p)
		}
		d, err := time.ParseDuration(ds)
		if err != nil {
			return nil, fmt.Errorf("stage %d %q: duration %q: want e.g. 30s or 1m", i+1, p, ds)
		}
		r, err := strconv.ParseFloat(ts, 64)
		if err != nil {
			return nil, fmt.Errorf("stage %d %q: rate %q is not a number", i+1, p, ts)
		}
		out = append(out, Stage{Duration: d, Target: r})
	}
	return out, nil
}

// StagesDuration is the sum of the stages' durations.
func StagesDuration(st []Stage) time.Duration {
	var d time.Duration
	for _, s := range st {
		d += s.Duration
	}
	return d
}

// validateStages checks the stages from the start rate: each duration > 0,
// each target finite and ≥ 0, some request due.
func validateStages(start float64, st []Stage) error {
	if len(st) > MaxStages {
		return field.Errorf("Stages", FormatStages(st), "{Stages}: %d stages, at most %d", len(st), MaxStages)
	}
	var d time.Duration
	for i, s := range st {
		switch {
		case s.Duration <= 0:
			return field.Errorf("Stages", FormatStages(st), "{Stages}: stage %d (%s): the duration must be > 0", i+1, s)
		case math.IsNaN(s.Target) || math.IsInf(s.Target, 0) || s.Target < 0:
			return field.Errorf("Stages", FormatStages(st), "{Stages}: stage %d (%s): the rate must be a finite number ≥ 0", i+1, s)
		case d > math.MaxInt64-s.Duration:
			return field.Errorf("Stages", FormatStages(st), "{Stages}: the stages last longer than %v", time.Duration(math.MaxInt64))
		}
		d += s.Duration
	}
	if len(st) == 0 {
		return field.Errorf("Stages", "", "{Stages}: no stage")
	}
	p := NewProfile(start, st)
	if n := p.Total(); n > MaxArrivals {
		return field.Errorf("Stages", FormatStages(st), "{Stages}: ∫λ dt = %.3g arrivals is more than the %d a schedule can hold", n, int64(MaxArrivals))
	} else if n == 0 {
		return field.Errorf("Stages", FormatStages(st), "{Stages}: every rate is 0, the schedule holds no request")
	}
	return nil
}

// Profile is a piecewise-linear rate λ(t): Start at t = 0, then each stage
// ramps to its target. It is immutable and safe for concurrent use.
type Profile struct {
	start  float64
	stages []Stage
	begin  []float64 // begin[k]: Λ at stage k's start; begin[len] = Λ(D)
	at     []time.Duration
}

// NewProfile returns the rate profile of stages from the start rate.
func NewProfile(start float64, stages []Stage) Profile {
	p := Profile{start: start, stages: stages, begin: make([]float64, len(stages)+1), at: make([]time.Duration, len(stages)+1)}
	a := start
	for k, s := range stages {
		p.begin[k+1] = p.begin[k] + (a+s.Target)/2*s.Duration.Seconds()
		p.at[k+1] = p.at[k] + s.Duration
		a = s.Target
	}
	return p
}

// Duration is the profile's length.
func (p Profile) Duration() time.Duration { return p.at[len(p.stages)] }

// Total is Λ(D) = ∫₀ᴰ λ(t) dt, the expected number of requests.
func (p Profile) Total() float64 { return p.begin[len(p.stages)] }

// from is the rate at stage k's start.
func (p Profile) from(k int) float64 {
	if k == 0 {
		return p.start
	}
	return p.stages[k-1].Target
}

// Rate is λ(t); 0 outside [0, D).
func (p Profile) Rate(t time.Duration) float64 {
	if t < 0 || t >= p.Duration() {
		return 0
	}
	k := sort.Search(len(p.stages), func(k int) bool { return p.at[k+1] > t })
	a, b := p.from(k), p.stages[k].Target
	return a + (b-a)*float64(t-p.at[k])/float64(p.stages[k].Duration)
}

// Cumulative is Λ(t), the requests due in [0, t).
func (p Profile) Cumulative(t time.Duration) float64 {
	switch {
	case t <= 0:
		return 0
	case t >= p.Duration():
		return p.Total()
	}
	k := sort.Search(len(p.stages), func(k int) bool { return p.at[k+1] > t })
	a, b := p.from(k), p.stages[k].Target
	T, tau := p.stages[k].Duration.Seconds(), (t - p.at[k]).Seconds()
	return p.begin[k] + a*tau + (b-a)*tau*tau/(2*T)
}

// Inverse is sup{t : Λ(t) ≤ x} for 0 ≤ x < Λ(D), to the nanosecond: where
// the x-th request is due (see the comment at the top of stages.go).
func (p Profile) Inverse(x float64) time.Duration {
	n := len(p.stages)
	// The stage with begin[k] ≤ x < begin[k+1]; stages at rate 0 hold
	// none.
	k := sort.Search(n, func(k int) bool { return p.begin[k+1] > x }) // first stage ending past x
	if k == n {
		return p.Duration()
	}
	a, b := p.from(k), p.stages[k].Target
	T := p.stages[k].Duration.Seconds()
	x -= p.begin[k]
	tau := 0.0
	if x > 0 {
		tau = 2 * x / (a + math.Sqrt(max(a*a+2*(b-a)*x/T, 0)))
	}
	off := p.at[k] + time.Duration(math.Round(tau*1e9))
	return min(max(off, p.at[k]), p.at[k+1]-1)
}

// StagesSchedule is a schedule of constant arrivals whose rate follows a
// Profile: request i where Λ passes i (see the comment at the top of
// stages.go). Its count is exact, ⌊Λ(D)⌋ (Count), as ConstantSchedule's.
type StagesSchedule struct {
	p     Profile
	count int64
	i     int64
	last  time.Duration
}

// RandomStagesSchedule is a schedule of Poisson or gamma arrivals whose
// rate follows a Profile, drawn by time rescaling from a seeded source. A
// plain gamma schedule is one too, over one stage of constant rate. Its
// count is random: it has no Count.
type RandomStagesSchedule struct {
	kind    string // the process as Name says it: "poisson", "gamma k=0.5"
	p       Profile
	seed    uint64
	staged  bool    // from --stages, named so
	s       float64 // the current point in intensity time
	gap     func() float64
	last    time.Duration
	drained bool
}

// NewStages returns the schedule of stages from the start rate: kind is
// an exact process (a *StagesSchedule) or a drawn one, Poisson or Gamma of
// shape burstiness (a *RandomStagesSchedule) drawn from a PCG source
// seeded with seed. The kind and stages are assumed valid
// (Spec.Validate).
func NewStages(kind string, start float64, stages []Stage, seed uint64, burstiness float64) Schedule {
	a, _ := Lookup(kind)
	return a.build(Spec{Kind: kind, Rate: start, Duration: StagesDuration(stages), Seed: seed, Burstiness: burstiness}, stages)
}

// NewConstantStages returns the constant arrivals of stages from the start
// rate.
func NewConstantStages(start float64, stages []Stage) *StagesSchedule {
	p := NewProfile(start, stages)
	return &StagesSchedule{p: p, count: countOf(p.Total())}
}

// NewGamma returns a schedule of rate λ over d whose gaps are gamma
// distributed with shape k and mean 1/λ: k = 1 is Poisson, k < 1
// burstier, k > 1 smoother (the coefficient of variation of a gap is
// 1/√k).
func NewGamma(rate float64, d time.Duration, seed uint64, k float64) *RandomStagesSchedule {
	a, _ := Lookup(Gamma)
	return newDrawn(a, NewProfile(rate, []Stage{{Duration: d, Target: rate}}), seed, k)
}

// newDrawn returns the draw of the drawn process a over p: its gaps
// (Process.gaps) from a PCG source seeded with seed.
func newDrawn(a Process, p Profile, seed uint64, k float64) *RandomStagesSchedule {
	s := &RandomStagesSchedule{kind: a.Name, p: p, seed: seed}
	if a.label != nil {
		s.kind = a.label(k)
	}
	s.gap = a.gaps(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15), k)
	return s
}

// countOf is ⌊x⌋, where x within 1e-9 of an integer counts as that integer.
func countOf(x float64) int64 {
	if r := math.Round(x); math.Abs(x-r) < 1e-9 {
		return int64(r)
	}
	return int64(math.Floor(x))
}

// Profile is the schedule's rate profile.
func (s *StagesSchedule) Profile() Profile { return s.p }

// RateAt implements Rater: the profile's λ(t).
func (s *StagesSchedule) RateAt(t time.Duration) float64 { return s.p.Rate(t) }

// Offset is the offset of request i: Λ⁻¹(i). It is a pure function of i.
func (s *StagesSchedule) Offset(i int64) time.Duration { return s.p.Inverse(float64(i)) }

// Count is the number of arrivals, ⌊Λ(D)⌋.
func (s *StagesSchedule) Count() int64 { return s.count }

// Next implements Schedule.
func (s *StagesSchedule) Next() (time.Duration, bool) {
	if s.i >= s.count {
		return 0, false
	}
	// Rounding to the nanosecond must not reorder two close requests.
	off := max(s.Offset(s.i), s.last)
	s.i++
	s.last = off
	return off, true
}

// Expected implements Schedule: Λ(D).
func (s *StagesSchedule) Expected() float64 { return s.p.Total() }

// Exact implements Schedule: the count is ⌊Λ(D)⌋.
func (s *StagesSchedule) Exact() bool { return true }

// Name implements Schedule: "constant stages 30s:100,1m0s:100,30s:0 from
// 0/s, 2m0s".
func (s *StagesSchedule) Name() string {
	return fmt.Sprintf("constant stages %s from %s/s, %s", FormatStages(s.p.stages), FormatRate(s.p.start), s.p.Duration())
}

// Profile is the schedule's rate profile.
func (s *RandomStagesSchedule) Profile() Profile { return s.p }

// RateAt implements Rater: the profile's λ(t).
func (s *RandomStagesSchedule) RateAt(t time.Duration) float64 { return s.p.Rate(t) }

// Next implements Schedule.
func (s *RandomStagesSchedule) Next() (time.Duration, bool) {
	if s.drained {
		return 0, false
	}
	s.s += s.gap()
	if s.s >= s.p.Total() {
		s.drained = true
		return 0, false
	}
	off := max(s.p.Inverse(s.s), s.last)
	s.last = off
	return off, true
}

// Expected implements Schedule: Λ(D).
func (s *RandomStagesSchedule) Expected() float64 { return s.p.Total() }

// Exact implements Schedule: a random count is not.
func (s *RandomStagesSchedule) Exact() bool { return false }

// Name implements Schedule: "poisson stages 30s:100 from 0/s, 30s (seed
// 1)" or "gamma k=0.5 160/s for 10s (seed 1)".
func (s *RandomStagesSchedule) Name() string {
	if !s.staged {
		return fmt.Sprintf("%s %s/s for %s (seed %d)", s.kind, FormatRate(s.p.start), s.p.Duration(), s.seed)
	}
	return fmt.Sprintf("%s stages %s from %s/s, %s (seed %d)", s.kind, FormatStages(s.p.stages), FormatRate(s.p.start), s.p.Duration(), s.seed)
}
