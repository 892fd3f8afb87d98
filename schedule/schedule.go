// Package schedule produces arrival processes: the intended send offsets of
// every request of a run, measured from the run's start.
//
// A schedule is a pure producer of offsets. It never reads a clock and never
// sleeps; the engine turns offsets into wall-clock deadlines. That keeps every
// schedule testable with plain tables and makes a seeded run reproducible.
//
// # Constant arrivals
//
// For a rate λ (requests per second) and a duration D, the constant schedule
// has
//
//	N = ⌊λ·D⌋ arrivals at offsets t_i = i/λ, i = 0 … N−1.
//
// Every offset lies in [0, D). A fractional last arrival rounds down: at
// λ = 3/s for D = 1.5 s, λ·D = 4.5 and the schedule has 4 arrivals (at 0,
// 333 ms, 667 ms and 1 s); the fifth would be due at 1.333 s but only half
// of its interval fits in the run. To absorb floating-point noise, a product
// within 1e-9 of an integer counts as that integer (160/s × 10 s is exactly
// 1600 arrivals).
//
// # Poisson arrivals
//
// For a Poisson process of rate λ, the gaps between arrivals are independent
// and exponentially distributed with mean 1/λ:
//
//	P(gap > x) = e^(−λx),   gap = −ln(U)/λ for U uniform in (0, 1].
//
// The first arrival is at offset gap_1 (not at 0), and arrivals continue while
// the offset is below D. The count is then Poisson distributed with mean and
// variance λ·D, so a run's count is compared with the schedule's own count,
// with λ·D shown as the expected value. The uniform source is a PCG generator
// seeded with the run's seed, so the same seed gives the same offsets on
// every machine and Go version that keeps math/rand/v2's PCG stable.
//
// A seeded Poisson schedule is therefore a fixed list of offsets: a run's
// per-request log replays it (its scheduled_ms column, to the microsecond;
// see OpenReplay), and several generators can split it by each drawing the
// whole sequence. Split by a seeded coin per arrival, each share is a
// Poisson process of rate λ/n (thinning); split by index (arrival j to
// generator j mod n), a share's gaps are sums of n exponential gaps and it
// is not Poisson. The union is the original schedule either way.
//
// # The rest, each with its maths in its own file
//
// Gamma arrivals (gaps of shape Spec.Burstiness: 1 is Poisson, below 1
// burstier, above smoother) and a rate that ramps through Spec.Stages are
// drawn by time rescaling (stages.go); a recorded run's arrivals are
// replayed from its log (replay.go); and one schedule is split over N
// generators by index (shard.go). The processes New builds are the rows
// of one table, Processes (process.go): what other packages know of a
// process (its parameters, whether its count is exact, how far a drawn
// count strays) they read there, not by its name.
package schedule

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/openload/openload/field"
)

// Schedule is an iterator over intended send offsets, in non-decreasing
// order. Next returns false once the schedule is exhausted.
type Schedule interface {
	// Next returns the offset from the start of the run at which the next
	// request is due.
	Next() (time.Duration, bool)
	// Expected is the expected number of arrivals (λ·D).
	Expected() float64
	// Exact reports whether the schedule's count is fixed in advance, so
	// that the count of a run must equal Expected rounded down.
	Exact() bool
	// Name describes the arrival process, e.g. "constant 160/s for 10s".
	Name() string
}

// Rater is implemented by schedules whose arrival rate is known at every
// offset: λ(t) requests a second, 0 outside [0, D). It reads only what the
// schedule was built with, so it may be called while another goroutine
// draws from Next (a live view's offered rate).
type Rater interface {
	RateAt(t time.Duration) float64
}

// RateAt is s's arrival rate at offset t, and whether s has one: a
// Rater's, or a shard's share (its whole schedule's ÷ N).
func RateAt(s Schedule, t time.Duration) (float64, bool) {
	switch s := s.(type) {
	case *ShardSchedule:
		r, ok := RateAt(s.whole, t)
		return r / float64(s.shard.Of), ok
	case Rater:
		return s.RateAt(t), true
	}
	return 0, false
}

// flat is the rate of a schedule at rate λ over [0, d).
func flat(rate float64, d, t time.Duration) float64 {
	if t < 0 || t >= d {
		return 0
	}
	return rate
}

// MaxArrivals bounds the number of arrivals a schedule may hold, so that an
// absurd rate or duration is refused up front instead of running for years.
const MaxArrivals = 1 << 40

// Spec describes a schedule. It is validated by New.
type Spec struct {
	Kind     string        // a Process's Name: Constant, Poisson or Gamma (Processes)
	Rate     float64       // requests per second for the whole run, > 0; with Stages, the start rate, ≥ 0
	Duration time.Duration // length of the run, > 0; with Stages, their sum
	Seed     uint64        // source of randomness for Poisson and Gamma
	// Stages, if not empty, make the rate ramp linearly from Rate through
	// each stage's target: "30s:100,1m:100,30s:0" (ParseStages, stages.go).
	// Text, so that a Spec stays comparable.
	Stages string
	// Burstiness is the shape k of Gamma's gaps (> 0): 1 is Poisson, below
	// 1 burstier, above smoother. Only Gamma takes it.
	Burstiness float64
	// Count, with Rate +Inf, is the number of requests of the throughput
	// probe, all due at offset 0 (AtOnce, atonce.go); 0 otherwise, where
	// the count is ∫λ dt.
	Count int64
}

// Expected is the spec's expected number of arrivals, ∫λ dt over its
// duration: Rate·Duration, or for stages the integral of their linear
// ramps (Profile.Total). Stages that do not parse expect none: Validate
// says why.
func (s Spec) Expected() float64 {
	if s.IsAtOnce() {
		return float64(s.Count)
	}
	if s.Stages != "" {
		st, err := ParseStages(s.Stages)
		if err != nil {
			return 0
		}
		return NewProfile(s.Rate, st).Total()
	}
	return s.Rate * s.Duration.Seconds()
}

// Validate checks the spec. Its errors are *FieldError, naming the fields
// of Spec. A constant spec must hold at least one arrival (⌊Rate·Duration⌋
// ≥ 1); a Poisson one may draw none.
func (s Spec) Validate() error {
	if s.IsAtOnce() {
		return s.validateAtOnce() // atonce.go
	}
	if s.Count != 0 {
		return field.Errorf("Count", s.Count, "{Count} applies to {Rate} inf only: with a finite rate the count is {Rate} × {Duration}")
	}
	if err := s.validateKind(); err != nil {
		return err
	}
	if s.Stages != "" {
		return s.validateStages()
	}
	switch {
	case math.IsNaN(s.Rate) || math.IsInf(s.Rate, 0):
		return field.Errorf("Rate", s.Rate, "{Rate} must be a finite number, got %v", s.Rate)
	case s.Rate <= 0:
		return field.Errorf("Rate", s.Rate, "{Rate} must be > 0, got %v", s.Rate)
	case s.Duration <= 0:
		return field.Errorf("Duration", s.Duration, "{Duration} must be > 0, got %v", s.Duration)
	}
	if n := s.Rate * s.Duration.Seconds(); n > MaxArrivals {
		return field.Errorf("Rate", s.Rate, "{Rate} %v × {Duration} %v = %.3g arrivals is more than the %d a schedule can hold", s.Rate, s.Duration, n, int64(MaxArrivals))
	}
	if s.process().Exact() && ConstantCount(s.Rate, s.Duration) < 1 {
		return field.Errorf("Rate", s.Rate, "{Rate} %v × {Duration} %v = %.3g: the schedule holds no request",
			s.Rate, s.Duration, s.Rate*s.Duration.Seconds())
	}
	return nil
}

// validateStages checks a spec with stages: the start rate, the stages,
// and that Duration is their sum.
func (s Spec) validateStages() error {
	if math.IsNaN(s.Rate) || math.IsInf(s.Rate, 0) || s.Rate < 0 {
		return field.Errorf("Rate", s.Rate, "{Rate}, the rate {Stages} start from, must be a finite number ≥ 0, got %v", s.Rate)
	}
	st, err := ParseStages(s.Stages)
	if err != nil {
		return field.Errorf("Stages", s.Stages, "{Stages} %q: %v", s.Stages, err)
	}
	if err := validateStages(s.Rate, st); err != nil {
		return err
	}
	if d := StagesDuration(st); s.Duration != d {
		return field.Errorf("Duration", s.Duration, "{Duration} %v is not the sum of the {Stages}, %v", s.Duration, d)
	}
	if n, a := NewProfile(s.Rate, st).Total(), s.process(); a.Exact() && countOf(n) < 1 {
		return field.Errorf("Stages", s.Stages, "{Stages}: ∫λ dt = %.3g, the schedule holds no request", n)
	}
	return nil
}

// New builds the schedule a Spec describes: its process's, over its
// stages if it has any.
func New(s Spec) (Schedule, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	if s.IsAtOnce() {
		return NewAtOnce(s.Count), nil
	}
	var st []Stage
	if s.Stages != "" {
		st, _ = ParseStages(s.Stages) // checked by Validate
	}
	return s.process().build(s, st), nil
}

// process is the spec's process (the zero Process, exact, when Kind names
// none: Validate refuses it).
func (s Spec) process() Process {
	a, _ := Lookup(s.Kind)
	return a
}

// ConstantCount is the number of arrivals of a constant schedule: ⌊λ·D⌋,
// where a product within 1e-9 of an integer counts as that integer.
func ConstantCount(rate float64, d time.Duration) int64 {
	x := rate * d.Seconds()
	if r := math.Round(x); math.Abs(x-r) < 1e-9 {
		return int64(r)
	}
	return int64(math.Floor(x))
}

// ConstantSchedule emits ⌊λ·D⌋ evenly spaced arrivals: t_i = i/λ.
type ConstantSchedule struct {
	rate  float64
	d     time.Duration
	i     int64
	count int64
}

// NewConstant returns a constant schedule of rate λ per second over d.
func NewConstant(rate float64, d time.Duration) *ConstantSchedule {
	return &ConstantSchedule{rate: rate, d: d, count: ConstantCount(rate, d)}
}

// Offset returns the offset of arrival i: i/λ seconds. It is a pure function
// of i, rounded to the nearest nanosecond.
func (c *ConstantSchedule) Offset(i int64) time.Duration {
	return time.Duration(math.Round(float64(i) * 1e9 / c.rate))
}

// Next implements Schedule.
func (c *ConstantSchedule) Next() (time.Duration, bool) {
	if c.i >= c.count {
		return 0, false
	}
	off := c.Offset(c.i)
	c.i++
	return off, true
}

// Count is the number of arrivals the schedule holds.
func (c *ConstantSchedule) Count() int64 { return c.count }

// Expected implements Schedule.
func (c *ConstantSchedule) Expected() float64 { return c.rate * c.d.Seconds() }

// RateAt implements Rater.
func (c *ConstantSchedule) RateAt(t time.Duration) float64 { return flat(c.rate, c.d, t) }

// Exact implements Schedule: a constant schedule's count is fixed.
func (c *ConstantSchedule) Exact() bool { return true }

// Name implements Schedule.
func (c *ConstantSchedule) Name() string {
	return fmt.Sprintf("constant %s/s for %s", FormatRate(c.rate), c.d)
}

// PoissonSchedule emits arrivals with exponential gaps of mean 1/λ from a
// seeded source; see the package documentation.
type PoissonSchedule struct {
	rate float64
	d    time.Duration
	seed uint64
	rng  *rand.Rand
	t    float64 // current offset in seconds
	done bool
}

// NewPoisson returns a Poisson schedule of rate λ per second over d, drawn
// from a PCG source seeded with seed.
func NewPoisson(rate float64, d time.Duration, seed uint64) *PoissonSchedule {
	return &PoissonSchedule{rate: rate, d: d, seed: seed, rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}
}

// Next implements Schedule.
func (p *PoissonSchedule) Next() (time.Duration, bool) {
	if p.done {
		return 0, false
	}
	// ExpFloat64 returns an exponential variate of rate 1; dividing by λ
	// gives the gap in seconds.
	p.t += p.rng.ExpFloat64() / p.rate
	off := time.Duration(p.t * 1e9)
	if off >= p.d {
		p.done = true
		return 0, false
	}
	return off, true
}

// Expected implements Schedule.
func (p *PoissonSchedule) Expected() float64 { return p.rate * p.d.Seconds() }

// RateAt implements Rater.
func (p *PoissonSchedule) RateAt(t time.Duration) float64 { return flat(p.rate, p.d, t) }

// Exact implements Schedule: a Poisson count is random.
func (p *PoissonSchedule) Exact() bool { return false }

// Name implements Schedule.
func (p *PoissonSchedule) Name() string {
	return fmt.Sprintf("poisson %s/s for %s (seed %d)", FormatRate(p.rate), p.d, p.seed)
}

// FormatRate prints a rate without trailing zeros: 160, 0.5, 33.333.
func FormatRate(r float64) string {
	s := fmt.Sprintf("%.3f", r)
	s = strings.TrimRight(s, "0")
	return strings.TrimSuffix(s, ".")
}

// CountSpreads is how many standard deviations (Process.Spread) a drawn
// count may stray from its expected count before the count check warns,
// and what bounds a run's count from above where it must be known in
// advance (Spec.MaxCount): at 5, a correct schedule strays that far once
// in about 1.7 million runs.
const CountSpreads = 5

// MaxCount bounds the number of arrivals the spec's schedule draws: ⌊Λ⌋
// for an exact process, else Λ plus CountSpreads of its Process.Spread;
// Λ itself for a Kind that names no process.
func (s Spec) MaxCount() float64 {
	e := s.Expected()
	a, ok := Lookup(s.Kind)
	switch {
	case !ok:
		return e
	case a.Exact():
		return math.Floor(e + 1e-9)
	}
	return e + CountSpreads*a.Spread(e, s.Burstiness)
}
