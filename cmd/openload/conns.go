package main

import (
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/spf13/pflag"

	"github.com/openload/openload/internal/engine"
	"github.com/openload/openload/schedule"
)

// defaultConnections is -c's default for a run whose answers are short.
const defaultConnections = 64

// The connection limit of a model server's load, when -c is not given.
//
// A model's answer holds its connection for seconds (20/s × 5 s answers
// are 100 in flight), so -c 64 binds and the wait lands in TTFT from the
// schedule; vLLM's benchmark sets no cap by default. The answer time is not
// known before the run, but the timeout bounds it: a request holds its
// connection at most --timeout from its send, so no more than the arrivals
// of one timeout at the peak rate are ever in flight (and never more than
// the run's requests). That many connections cannot bind unless answers
// time out, and it makes no guess about the model. The count is of the
// schedule's own process (schedule.Spec.MaxCount: a Poisson window's
// count 5 spreads above its mean), at least -c's default, and at most
// half the open-file limit: the built-in stub's end of each connection
// may be in this process too. Connections are opened only as requests
// need them (and up to one second's worth before the start), so a high
// limit costs nothing the load does not use.

// chooseConnections sets the connection limit of a run whose answers
// come from a model server (streamed: --stream, --slo-request, generated
// prompts, --dataset; or --model) when -c was not given, and notes why
// in the result. Closed runs (-c is their users) keep theirs.
func (o *loadOptions) chooseConnections(fs *pflag.FlagSet) {
	r := &o.run
	if fs.Changed("connections") || r.Closed || !r.Stream && o.bodies.model == "" {
		return
	}
	n, why := modelConnections(r.Schedule, r.Shard, r.Timeout, openFileLimit())
	if n > 0 {
		r.Connections = n
		note(r).Connections = why
	}
}

// modelConnections is the limit of chooseConnections and why, for the
// schedule spec s (one shard of it when sharded), a per-request timeout
// and the process's open-file limit (0: none known). n is 0 when spec
// gives no rate to size from (an arrivals file; an infinite rate).
func modelConnections(s schedule.Spec, shard schedule.Shard, timeout time.Duration, files int) (n int, why string) {
	peak := s.Rate
	if s.Stages != "" {
		st, err := schedule.ParseStages(s.Stages)
		if err != nil {
			return 0, ""
		}
		for _, x := range st {
			peak = max(peak, x.Target)
		}
	}
	if peak <= 0 || math.IsInf(peak, 0) || math.IsNaN(peak) {
		return 0, ""
	}
	of := 1.0
	if shard.Enabled() {
		of = float64(shard.Of)
	}
	run := s.MaxCount() / of
	window := schedule.Spec{Kind: s.Kind, Rate: peak, Duration: timeout, Burstiness: s.Burstiness}.MaxCount() / of
	need := math.Ceil(window - 1e-9)
	why = fmt.Sprintf("model answers, no -c: the most requests one %s timeout at %s/s holds", timeout, strconv.FormatFloat(peak/of, 'g', 4, 64))
	if timeout <= 0 || run < window {
		need = math.Ceil(run - 1e-9)
		why = fmt.Sprintf("model answers, no -c: the run's %.0f requests", need)
	}
	limit := engine.MaxConnections
	if files > 0 {
		limit = min(limit, max(defaultConnections, (files-64)/2))
	}
	switch {
	case need > float64(limit) && limit < engine.MaxConnections:
		return limit, fmt.Sprintf("%s would be %.0f, held to half the open-file limit of %d", why, need, files)
	case need > float64(limit):
		return limit, fmt.Sprintf("%s would be %.0f, held to openload's most", why, need)
	case need < defaultConnections:
		return defaultConnections, why + fmt.Sprintf(", at least %d", defaultConnections)
	}
	return int(need), why
}
