package result

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
)

// Scenarios: several arrival processes in one run, each a run of its own
// (its own schedule, connections, checks and objectives) started at one
// instant. Union adds their results into the run's whole as Merge adds
// shards: counts, statuses and error kinds summed, histograms added
// bucket by bucket, timelines second by second from the shared start.
// Each scenario's own result is kept whole in Scenarios, so that its
// schedule is checked against its own ∫λ dt and its figures can be
// judged alone ('browse:response.p99<=200ms').

// Scenario is one scenario's own result, by its name.
type Scenario struct {
	Name   string  `json:"name"`
	Result *Result `json:"result"`
}

// Union returns the whole of the scenarios' results, with each kept in
// Scenarios. Their figures per target and per step are theirs alone (a
// target or a step belongs to one scenario), so the whole has none; its
// Sessions are the sum of the session scenarios' (nil when none was
// one). The checks and objectives are for the caller to run on the whole
// (verify.Run), as after Merge.
func Union(parts []Scenario) (*Result, error) {
	if len(parts) == 0 {
		return nil, errors.New("union: no scenarios")
	}
	seen := map[string]bool{}
	for _, p := range parts {
		switch {
		case p.Result == nil:
			return nil, fmt.Errorf("union: scenario %q has no result", p.Name)
		case seen[p.Name]:
			return nil, fmt.Errorf("union: scenario %q given twice", p.Name)
		case !sameShard(p.Result.Config.Shard, parts[0].Result.Config.Shard):
			// A run of scenarios split into shards splits every scenario
			// alike: each shard's union holds the same shard of each.
			return nil, fmt.Errorf("union: scenario %q is another shard than scenario %q", p.Name, parts[0].Name)
		}
		seen[p.Name] = true
	}
	first := parts[0].Result
	sum := &Result{Version: Version, Tool: first.Tool, Started: first.Started, Config: unionConfig(parts)}
	for _, p := range parts[1:] {
		if p.Result.Started.Before(sum.Started) {
			sum.Started = p.Result.Started
		}
	}
	m := &merger{}
	for _, p := range parts {
		m.name = "scenario " + p.Name
		in := *p.Result
		in.Config = sum.Config
		in.Targets = nil // a target belongs to its scenario: in its own result
		in.Steps = nil   // so does a step; its sessions add up in the whole
		run := OwnShardRun(p.Result)
		run.Source = p.Name
		in.Shards = []ShardRun{run}
		sum = m.add(sum, &in)
		if m.err != nil {
			return nil, m.err
		}
	}
	if err := sum.derive(m.decode); err != nil {
		return nil, fmt.Errorf("union: %v", err)
	}
	// The scenarios' runs served derive (elapsed, expected, connections);
	// they are in Scenarios, not shards of one schedule.
	sum.Shards = nil
	sum.Scenarios = parts
	return sum, nil
}

// ProtocolMixed is the protocol of a run of scenarios on several.
const ProtocolMixed = "mixed"

// unionConfig is the whole's configuration: the first scenario's
// settings, with what differs from scenario to scenario said for all.
func unionConfig(parts []Scenario) Config {
	c := parts[0].Result.Config
	c.Shard, c.StartAt = nil, parts[0].Result.Config.StartAt
	first := parts[0].Result.Started
	for _, p := range parts[1:] { // the earliest: a scenario may start later (loadtest's StartAfter)
		if p.Result.Started.Before(first) {
			first, c.StartAt = p.Result.Started, p.Result.Config.StartAt
		}
	}
	var sched, targets, protos []string
	rate, span := 0.0, 0.0
	for _, p := range parts {
		pc := p.Result.Config
		sched = append(sched, p.Name+": "+pc.Schedule)
		targets = append(targets, pc.Target)
		protos = append(protos, pc.Protocol)
		rate += pc.Rate
		span = math.Max(span, p.Result.Elapsed)
	}
	// Scenarios on different protocols (a gRPC one beside HTTP/1.1
	// ones): never the first one's for all; each scenario's result has
	// its own. The clients are joined by derive.
	if len(dedupe(protos)) > 1 {
		c.Protocol = ProtocolMixed
	}
	c.Schedule = fmt.Sprintf("%d scenarios: %s", len(parts), strings.Join(sched, " + "))
	c.Target = strings.Join(dedupe(targets), ", ")
	c.Rate, c.Arrival, c.Stages, c.Warmup = rate, "scenarios", "", ""
	c.Duration = ""
	c.Request = nil
	return c
}

// sameShard reports whether a and b are the same shards of their
// schedules (both nil: no shard).
func sameShard(a, b *ShardConfig) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Of == b.Of && slices.Equal(a.Indexes, b.Indexes)
}

func dedupe(xs []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, x := range xs {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}
