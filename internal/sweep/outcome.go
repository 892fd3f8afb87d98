package sweep

import (
	"fmt"

	"github.com/openload/openload/verify"
)

// The outcome of a sweep and of a search, in verify's classes, so that the
// CLI maps them to exit codes as it maps a run's. Each point was judged as
// it ran (loadtest.Judged, through RunPoint); these rules say what the
// points add up to.

// Outcome is what a sweep or a search ends in: its class, the point that
// decided it (nil when none did) and why, in words; for a target that
// failed, where ("at the lowest rate, 10/s"), the point's result saying
// what happened.
type Outcome struct {
	Class verify.Class
	At    *Point
	Why   string
}

// Outcome classifies a sweep: interrupted (ctxDone); a point's check
// failed; the target failed at the lowest rate (fast refusals would draw
// a flat, healthy-looking curve); an objective had no data at some point
// (nothing passes on nothing). A breach past the knee is what a sweep is
// for: it does not fail the sweep.
func (sw *Sweep) Outcome(ctxDone bool) Outcome {
	if ctxDone {
		return Outcome{Class: verify.ClassInterrupted}
	}
	for i, p := range sw.Points {
		if !p.Valid {
			return Outcome{verify.ClassInvalid, &sw.Points[i], fmt.Sprintf("at %s a check failed: the measurement is not valid", p.Label())}
		}
	}
	if len(sw.Points) > 0 && verify.TargetFailed(sw.Points[0].Result) {
		return Outcome{verify.ClassTargetFailed, &sw.Points[0], lowest(sw.Points[0])}
	}
	for i, p := range sw.Points {
		if nd := p.NoData(); nd != nil {
			return Outcome{verify.ClassBreached, &sw.Points[i], fmt.Sprintf("at %s: %s", p.Label(), nd.Message)}
		}
	}
	return Outcome{Class: verify.ClassValid}
}

// lowest says where the lowest point of a sweep is: its rate, or the
// synchronous point of a profile.
func lowest(p Point) string {
	if p.Kind != "" {
		return "at " + p.Label()
	}
	return fmt.Sprintf("at the lowest rate, %g/s", p.Rate)
}

// Outcome classifies a search: stopped before an answer (interrupted);
// the lowest rate, or a probe without data, failed the target in every
// run (target failed); the lowest rate breached, or a probe had no data
// (breached). Found and a range that still passes are valid.
func (s *Search) Outcome() Outcome {
	switch s.Verdict {
	case Unanswered:
		return Outcome{Class: verify.ClassInterrupted}
	case FromBreach, NoData:
		p := &s.Probes[len(s.Probes)-1]
		if targetFailedEvery(p.Points) {
			return Outcome{verify.ClassTargetFailed, &p.Points[0], fmt.Sprintf("at %g/s", p.Rate)}
		}
		return Outcome{Class: verify.ClassBreached, Why: s.Message}
	}
	return Outcome{Class: verify.ClassValid}
}

// targetFailedEvery reports whether every run of a probe failed its
// target (a default objective breached).
func targetFailedEvery(runs []Point) bool {
	for _, p := range runs {
		if !verify.TargetFailed(p.Result) {
			return false
		}
	}
	return len(runs) > 0
}
