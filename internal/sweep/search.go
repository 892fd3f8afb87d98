package sweep

// # Capacity search
//
// The capacity is the highest offered rate at which every objective holds.
// Search first brackets it, then bisects:
//
//  1. Probe From. If it breaches, the capacity is below From: say so and
//     stop (no guess below the range asked).
//  2. Bracket: probe From·2, From·4, … (capped at To) until a probe
//     breaches. If To passes, the capacity is at least To: say so and stop.
//  3. Bisect between the highest passing rate and the lowest breaching one
//     until (high − low) ≤ Precision · low.
//
// The answer is the highest passing rate, with the bracket [low, high): by
// the decision rule the capacity lies in it.
//
// # Decision rule
//
// A probe runs Repeats times. It passes when, for every objective, the
// median of the measured figure over the repeats meets the bound, and
// every repeat measured validly (no check failed) and ran whole. A repeat
// that stopped early (a breach was already certain, see the package
// comment) counts as breaching, its figure taken as beyond any bound. With
// an even number of repeats the median is the mean of the middle two.
//
// The deciding figure of a probe is the figure of the objective nearest to
// (or furthest past) its bound, as a ratio of it. For it the search reports
// the min–max over the repeats and a 95 % bootstrap interval of the median
// (2000 resamples of the repeats, seeded: the same figures give the same
// interval).

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/openload/openload/internal/stats"
	"github.com/openload/openload/verify"
)

// SearchOptions describe a capacity search. Base.Objectives must hold at
// least one objective of the user's.
type SearchOptions struct {
	Options           // Base (with its Objectives), Pause, EarlyStop, Run, OnPoint; Rates unused
	From, To  float64 // the range searched, 0 < From < To
	Precision float64 // relative width of the final bracket, e.g. 0.02
	Repeats   int     // runs per probe, ≥ 1
	// OnProbe, if set, is called after each probe.
	OnProbe func(Probe)
}

// Probe is one rate of a search, run Repeats times.
type Probe struct {
	Rate   float64
	Points []Point
	Pass   bool
	// Why says what decided a breach: the objective and its median, a
	// failed check, an early stop.
	Why string
	// Deciding is the objective nearest its bound; Figures its measured
	// value in each repeat (+Inf for a repeat stopped early), Median their
	// median, Lo and Hi the 95 % bootstrap interval of the median.
	Deciding verify.Objective
	Figures  []float64
	Median   float64
	Lo, Hi   float64
}

// Verdicts of a search.
const (
	Found      = "found"       // the capacity lies in [Low, High)
	FromBreach = "from-breach" // From already breaches: the capacity is below it
	ToPasses   = "to-passes"   // To still passes: the capacity is at least To
	Unanswered = "unanswered"  // stopped before an answer (context ended)
	NoData     = "no-data"     // a probe's objective had no samples: nothing to search on
)

// Search is the outcome of a capacity search.
type Search struct {
	Probes  []Probe // in the order run
	Verdict string
	// Low is the highest passing rate (the answer), High the lowest
	// breaching one; 0 when there is none.
	Low, High float64
	Message   string
}

// Validate checks the options.
func (o *SearchOptions) Validate() error {
	switch {
	case math.IsNaN(o.From) || math.IsInf(o.From, 0) || o.From <= 0:
		return fmt.Errorf("from %v: want a finite number > 0", o.From)
	case math.IsNaN(o.To) || math.IsInf(o.To, 0) || o.To <= o.From:
		return fmt.Errorf("to %v: want a finite number > from (%v)", o.To, o.From)
	case math.IsNaN(o.Precision) || o.Precision <= 0 || o.Precision >= 1:
		return fmt.Errorf("precision %v: want a share in (0, 1), e.g. 0.02", o.Precision)
	case o.Repeats < 1:
		return fmt.Errorf("repeats %d: want ≥ 1", o.Repeats)
	case !slices.ContainsFunc(o.Base.Objectives, func(v verify.Objective) bool { return !v.Default }):
		return errors.New("a search needs an objective to search for")
	}
	return nil
}

// RunSearch brackets and bisects (see the comment at the top of
// search.go). The error is non-nil when a run could not be carried out at
// all; the probes so far are returned with it.
func RunSearch(ctx context.Context, o SearchOptions) (*Search, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	o.taken = new(uint64)
	s := &Search{}
	probe := func(r float64) (Probe, bool, error) {
		if len(s.Probes) > 0 && !pause(ctx, o.Pause) {
			return Probe{}, false, nil
		}
		p, err := runProbe(ctx, o, r)
		if err != nil {
			return p, false, err
		}
		s.Probes = append(s.Probes, p)
		if o.OnProbe != nil {
			o.OnProbe(p)
		}
		if ctx.Err() != nil {
			return p, false, nil
		}
		// A probe none of whose runs measured an objective's figure
		// cannot be bisected on: a lower rate will not make a server that
		// streams nothing stream.
		if nd := p.noData(); nd != nil {
			s.Verdict, s.Message = NoData, fmt.Sprintf("at %s/s: %s", fmtRate(r), nd.Message)
			return p, false, nil
		}
		return p, true, nil
	}
	unanswered := func() (*Search, error) {
		if s.Verdict == "" {
			s.Verdict, s.Message = Unanswered, "stopped before an answer"
		}
		return s, nil
	}

	p, ok, err := probe(o.From)
	if err != nil || !ok {
		res, _ := unanswered()
		return res, err
	}
	if !p.Pass {
		s.Verdict, s.High = FromBreach, o.From
		s.Message = fmt.Sprintf("the lowest rate, %s/s, already breaches (%s): the capacity is below it; search a lower range", fmtRate(o.From), p.Why)
		return s, nil
	}
	low, high := o.From, 0.0
	for r := o.From * 2; high == 0; r *= 2 {
		r = math.Min(r, o.To)
		p, ok, err := probe(r)
		if err != nil || !ok {
			res, _ := unanswered()
			return res, err
		}
		if !p.Pass {
			high = r
			break
		}
		low = r
		if r == o.To {
			s.Verdict, s.Low = ToPasses, o.To
			s.Message = fmt.Sprintf("the highest rate, %s/s, still passes: the capacity is at least %s/s; search a higher range", fmtRate(o.To), fmtRate(o.To))
			return s, nil
		}
	}
	for high-low > o.Precision*low {
		mid := math.Round((low+high)/2*1000) / 1000
		if mid <= low || mid >= high {
			break
		}
		p, ok, err := probe(mid)
		if err != nil || !ok {
			s.Low, s.High = low, high
			res, _ := unanswered()
			return res, err
		}
		if p.Pass {
			low = mid
		} else {
			high = mid
		}
	}
	s.Verdict, s.Low, s.High = Found, low, high
	s.Message = fmt.Sprintf("capacity %s/s: every objective holds at %s/s and not at %s/s (bracket %s–%s/s, %.1f %% wide)",
		fmtRate(low), fmtRate(low), fmtRate(high), fmtRate(low), fmtRate(high), 100*(high-low)/low)
	return s, nil
}

// runProbe runs rate r Repeats times and decides it.
func runProbe(ctx context.Context, o SearchOptions, r float64) (Probe, error) {
	p := Probe{Rate: r}
	for i := range o.Repeats {
		if i > 0 && !pause(ctx, o.Pause) {
			break
		}
		pt, err := RunPoint(ctx, o.Options, r)
		if err != nil {
			return p, err
		}
		p.Points = append(p.Points, pt)
		if o.OnPoint != nil {
			o.OnPoint(pt)
		}
		if ctx.Err() != nil {
			break
		}
	}
	decide(&p, verify.WithDefault(o.Base.Objectives))
	return p, nil
}

// decide applies the decision rule to p.
func decide(p *Probe, objs []verify.Objective) {
	if len(p.Points) == 0 {
		p.Why = "no run"
		return
	}
	p.Pass = true
	worst := math.Inf(-1)
	for _, pt := range p.Points {
		nd := pt.NoData()
		switch {
		case nd != nil && p.Pass:
			p.Pass, p.Why = false, nd.Message
		case pt.Stopped != "" && p.Pass:
			p.Pass, p.Why = false, "stopped early: "+pt.Stopped
		case !pt.Valid && p.Pass:
			p.Pass, p.Why = false, "a check failed: the measurement is not valid"
		}
	}
	for k, o := range objs {
		figs := make([]float64, len(p.Points))
		for i, pt := range p.Points {
			figs[i] = pt.SLOs[k].Measured
			if pt.Stopped != "" || pt.SLOs[k].NoData {
				figs[i] = o.Past() // no figure: past any bound, never a pass
			}
		}
		med := stats.Median(figs)
		if !o.Meets(med) && p.Pass {
			p.Pass, p.Why = false, fmt.Sprintf("%s: median %s", o.Expr, format(o, med))
		}
		if near := o.Nearness(med); near > worst || k == 0 {
			worst = near
			p.Deciding, p.Figures, p.Median = o, figs, med
		}
	}
	p.Lo, p.Hi = stats.Bootstrap(p.Figures)
}

// format writes a figure of o, or says that it is past any bound
// (Past).
func format(o verify.Objective, v float64) string {
	if math.IsInf(v, 0) {
		return "past (stopped early, or no data)"
	}
	return o.Format(v)
}

// noData is the first objective that no run of p measured, or nil.
func (p Probe) noData() *verify.SLOResult {
	var first *verify.SLOResult
	for i, pt := range p.Points {
		nd := pt.NoData()
		if nd == nil {
			return nil
		}
		if i == 0 {
			first = nd
		}
	}
	return first
}
