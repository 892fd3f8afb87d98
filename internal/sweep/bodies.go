package sweep

// # Bodies that never repeat by accident
//
// A run's request seq sends body BodyOffset + seq of the list it is given
// (engine.Config.BodyIndex). Every run of a sweep, a search, a profile
// sweep or repeats starts at seq 0, so each would re-send the first run's
// bodies, and a server's prefix cache would answer the later runs from
// the earlier ones' prompts. RunPoint therefore gives each run the offset
// where the run before it stopped (span), and Plan says how many bodies
// the runs take in all, so that a caller can make that many.

import (
	"fmt"
	"math"

	"github.com/openload/openload/internal/loadtest"
	"github.com/openload/openload/result"
	"github.com/openload/openload/schedule"
)

// span is how many request indexes (engine seqs) run opt took, so that
// the next run's bodies start after them: the requests it scheduled (and
// a closed loop's skipped slots). A shard's own count is a share of the
// whole, which a shard stopped early does not know: it takes the bound
// of the whole schedule's count instead (schedule.Spec.MaxCount: exact
// for constant arrivals, a bound a drawn count stays under otherwise), a
// function of the configuration alone, so that every shard gives the
// next run the same offset.
func span(opt loadtest.Options, res *result.Result) uint64 {
	if opt.Shard.Enabled() {
		return uint64(math.Ceil(opt.Schedule.MaxCount()))
	}
	return uint64(res.Counts.Scheduled + res.Counts.Skipped)
}

// Plan is what the runs of a sweep, a search or repeats will take of a
// list of bodies, known before they run. The zero value is a plan not
// known ahead: a profile sweep finds its rates as it goes.
type Plan struct {
	// Runs says how many runs, in words: "3 points", "2 runs", "at most
	// 9 probes of 2 runs each".
	Runs string
	// Requests is about how many requests they schedule in all (λ·D
	// summed); Bodies, how many bodies they may take (the counts'
	// bounds summed, schedule.Spec.MaxCount), enough that none repeats.
	Requests float64
	Bodies   float64
	// AtMost: a search may stop before its bound, and stops early.
	AtMost bool
}

// Known reports whether the plan was known ahead.
func (p Plan) Known() bool { return p.Runs != "" }

// add adds n runs of base at rate r.
func (p *Plan) add(base schedule.Spec, r float64, n int) {
	base.Rate = r
	p.Requests += float64(n) * base.Expected()
	p.Bodies += float64(n) * math.Ceil(base.MaxCount())
}

// PlanSweep is the plan of a sweep of base at rates.
func PlanSweep(base schedule.Spec, rates []float64) Plan {
	p := Plan{Runs: plural(len(rates), "point")}
	for _, r := range rates {
		p.add(base, r, 1)
	}
	return p
}

// PlanRepeats is the plan of n repeats of base.
func PlanRepeats(base schedule.Spec, n int) Plan {
	p := Plan{Runs: plural(n, "run")}
	p.add(base, base.Rate, n)
	return p
}

// PlanSearch bounds a search's runs (search.go): the bracket's rates
// (from, 2·from, … up to to), then at most ⌈log₂(1/precision)⌉ + 1
// bisections, each below to (a bracket [low, high) starts at most low
// wide, and each step halves it, the last rounding to 0.001/s aside),
// each probe repeats times.
func PlanSearch(base schedule.Spec, from, to, precision float64, repeats int) Plan {
	p := Plan{AtMost: true}
	probes := 0
	for r := from; ; r *= 2 {
		r = math.Min(r, to)
		p.add(base, r, repeats)
		probes++
		if r == to {
			break
		}
	}
	bisect := int(math.Ceil(math.Log2(1/precision))) + 1
	p.add(base, to, bisect*repeats)
	probes += bisect
	p.Runs = fmt.Sprintf("at most %s of %s each", plural(probes, "probe"), plural(repeats, "run"))
	return p
}

// plural is "1 point", "3 points".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
