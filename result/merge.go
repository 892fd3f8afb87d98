package result

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/openload/openload/field"
)

// Merging shards.
//
// Shards of one schedule (ShardConfig) run on several generators; Merge
// adds their results into one, as if one generator had sent the whole
// schedule: counts, statuses and error kinds are summed, histograms are
// added bucket by bucket (HdrHistogram's Merge: lossless at equal
// precision), and per-second timelines are added second by second,
// aligned on each result's start (with a shared --start-at, the same
// instant). A merge of merges is the merge of all their shards: merging
// is associative and does not depend on the order of its inputs.
//
// What cannot be added is not made up: a second's response p99 is
// dropped from the merged timeline (the shards' per-second histograms are
// not in their results), the generator's CPU figures stay per shard
// (Result.Shards), and the checks and objectives are left for the caller
// to run again on the whole (verify.Run).
//
// A refusal names the input. One that is about a setting the shards
// differ in, or lack, is a *field.Error naming the setting by its field
// of the run's options (loadtest.Options: {StartAt}, {Shard.Index}, …),
// for the caller to render by its own names.

// MergeInput is one result to merge and the name errors call it by,
// usually its file.
type MergeInput struct {
	Name   string
	Result *Result
}

// Merge adds the results of shards of one schedule. It refuses results
// that are not shards', shards of another run (a different target,
// method, schedule, seed, shard count, start or per-run setting) and a
// shard given twice, each with an error naming the input. It does not
// require every shard: ShardConfig.Complete says whether the merge holds
// them all.
func Merge(in ...MergeInput) (*Result, error) {
	if len(in) == 0 {
		return nil, errors.New("merge: no results")
	}
	in = slices.Clone(in)
	if len(in[0].Result.Scenarios) > 0 {
		return mergeScenarios(in)
	}
	for _, x := range in {
		if x.Result.Config.Shard == nil || len(x.Result.Config.Shard.Indexes) == 0 {
			return nil, field.Errorf("Shard.Index", nil, "%s: not a shard's result (run with {Shard.Index} i/N)", x.Name)
		}
	}
	if err := sameRun(in); err != nil {
		return nil, err
	}
	slices.SortFunc(in, func(a, b MergeInput) int {
		return cmp.Compare(a.Result.Config.Shard.Indexes[0], b.Result.Config.Shard.Indexes[0])
	})
	// The sum starts from nothing of the run: its first input's
	// configuration with no shard in it, at the earliest start, so that
	// every timeline is shifted from the same second.
	first := in[0].Result
	sum := &Result{Version: Version, Tool: first.Tool, Started: first.Started, Config: first.Config}
	shard := *first.Config.Shard
	shard.Indexes = nil
	sum.Config.Shard = &shard
	for _, x := range in[1:] {
		if x.Result.Started.Before(sum.Started) {
			sum.Started = x.Result.Started
		}
	}
	m := &merger{}
	for _, x := range in {
		m.name = x.Name
		sum = m.add(sum, ownRuns(x))
		if m.err != nil {
			return nil, m.err
		}
	}
	if err := sum.derive(m.decode); err != nil {
		return nil, fmt.Errorf("merge: %v", err)
	}
	return sum, nil
}

// mergeScenarios merges shards of a run of scenarios: each shard's
// result is the union of its shard of every scenario (Union), so the
// merge is the union of each scenario's shards merged, scenario by
// scenario, as one schedule's shards are.
func mergeScenarios(in []MergeInput) (*Result, error) {
	first := in[0].Result.Scenarios
	for _, x := range in {
		sc := x.Result.Scenarios
		if len(sc) != len(first) {
			return nil, fmt.Errorf("merge: %s: %d scenarios, %s has %d: not shards of one run", x.Name, len(sc), in[0].Name, len(first))
		}
		for k := range sc {
			if sc[k].Name != first[k].Name {
				return nil, fmt.Errorf("merge: %s: scenario %d is %q, in %s %q: not shards of one run", x.Name, k+1, sc[k].Name, in[0].Name, first[k].Name)
			}
		}
	}
	parts := make([]Scenario, len(first))
	for k, sc := range first {
		shards := make([]MergeInput, len(in))
		for i, x := range in {
			shards[i] = MergeInput{Name: x.Name + " (scenario " + sc.Name + ")", Result: x.Result.Scenarios[k].Result}
		}
		m, err := Merge(shards...)
		if err != nil {
			return nil, err
		}
		parts[k] = Scenario{Name: sc.Name, Result: m}
	}
	return Union(parts)
}

// ownRuns is x's result with its shards' own runs (Shards) made when it
// was written without them, each naming the file it came from.
func ownRuns(x MergeInput) *Result {
	r := *x.Result
	runs := r.Shards
	if len(runs) == 0 {
		runs = []ShardRun{OwnShardRun(x.Result)}
	}
	r.Shards = make([]ShardRun, len(runs))
	for i, run := range runs {
		if run.Source == "" && len(r.Config.Shard.Indexes) == 1 {
			run.Source = x.Name
		}
		r.Shards[i] = run
	}
	return &r
}

// add returns the sum of a (the merge so far) and b (one more input,
// checked by sameRun to be of the same run). The literal names every
// field of Result, in order and unkeyed, so that a field added to
// Result without saying how it merges does not compile; each section's
// merge is a method of its type, in its own file. Figures derived from
// others (percentiles from histograms, shares, rates) are set from the
// sums by derive.
func (m *merger) add(a, b *Result) *Result {
	dropped := m.dropped
	r := &Result{
		a.Version,
		a.Tool,
		a.Started, // the earliest start, set by Merge
		0,         // Elapsed: derive, from Shards
		a.Config.merge(b.Config),
		a.Counts.merge(b.Counts),
		0, // SendRate: derive
		a.Censored + b.Censored,
		a.Clamped + b.Clamped,
		a.Dropped + b.Dropped, // + what this add dropped, below
		Percentiles{},         // Response, Service, SendDelay, Corrected: derive, from Histograms
		Percentiles{},
		Percentiles{},
		a.Corrected.merge(b.Corrected),
		orEmpty(addCounts(a.Status, b.Status)), // {} rather than null, as a run writes them
		orEmpty(addCounts(a.ErrorKinds, b.ErrorKinds)),
		a.Limit.merge(b.Limit),
		a.Histograms.merge(b.Histograms, m),
		mergeTimelines(a.Timeline, b.Timeline, int(b.Started.Sub(a.Started)/time.Second)),
		mergeClasses(a.Classes, b.Classes, m),
		mergeServerTiming(a.ServerTiming, b.ServerTiming, m),
		a.DwellBound.merge(b.DwellBound, m),
		a.Retries.merge(b.Retries),
		a.Redirects + b.Redirects,
		a.Wire.merge(b.Wire),
		a.Stamps.merge(b.Stamps),
		a.Refusal.merge(b.Refusal),
		addCounts(a.FailedStatus, b.FailedStatus),
		a.BodyOverCap + b.BodyOverCap,
		nil, // Generator: each shard's own, in Shards
		nil, // Checks and SLOs: for the caller to run again on the whole (verify.Run)
		nil,
		a.Interrupted || b.Interrupted,
		nil, // Answered, Unanswered: derive, from Histograms
		nil,
		addCounts(a.TLSCauses, b.TLSCauses),
		nil, // Start: each shard's own lateness, in Shards
		mergeShardRuns(a.Shards, b.Shards),
		a.Stream.merge(b.Stream, m),
		a.Warmup.merge(b.Warmup, m),
		mergeParts(a.Targets, b.Targets, "target", m),
		a.Lazy.merge(b.Lazy),
		mergeParts(a.Steps, b.Steps, "step", m),
		a.Sessions.merge(b.Sessions, int(b.Started.Sub(a.Started)/time.Second), m),
		nil, // Scenarios: a run of scenarios is not split into shards (Union keeps them)
		addCounts(a.GRPC, b.GRPC),
	}
	r.Dropped += m.dropped - dropped
	return r
}

// derive sets the figures a merge does not add but computes from what it
// added: the percentiles of the merged histograms, the configuration and
// counts that come from the shards' own runs, class shares and rates.
func (r *Result) derive(decode func(string) (*hdrhistogram.Histogram, error)) error {
	r.Config.derive(r.Shards)
	r.Counts.Expected, r.Elapsed = 0, 0
	for i := range r.Shards {
		s := &r.Shards[i]
		s.OffsetMs = math.Round(float64(s.Started.Sub(r.Started))/1e3) / 1e3
		r.Elapsed = max(r.Elapsed, s.OffsetMs/1e3+s.Elapsed)
		r.Counts.Expected += s.Expected // in index order: any grouping gives the same float
	}
	if r.Config.Shard.Complete() { // false for a union: no shard
		r.Counts.Expected = r.Config.Shard.WholeExpected
	}
	span := r.Elapsed
	if d, err := time.ParseDuration(r.Config.Duration); err == nil && d > 0 {
		span = d.Seconds()
	}
	r.SendRate = 0
	if span > 0 {
		r.SendRate = float64(r.Counts.Sent) / span
	}
	if err := r.deriveHistograms(decode); err != nil {
		return err
	}
	for i := range r.Classes {
		r.Classes[i].derive(r.Headline().Scheduled)
	}
	r.deriveStream(decode)
	return nil
}

// sameRun refuses inputs that are not shards of one run, or that hold a
// shard twice.
func sameRun(in []MergeInput) error {
	ref := in[0]
	rc := ref.Result.Config
	owner := map[int]string{}
	for _, x := range in {
		c := x.Result.Config
		for _, d := range []struct {
			what     string
			a, b     any
			mismatch bool
		}{
			{"target", c.Target, rc.Target, c.Target != rc.Target},
			{"method", c.Method, rc.Method, c.Method != rc.Method},
			{"arrival", c.Arrival, rc.Arrival, c.Arrival != rc.Arrival},
			{"rate", c.Rate, rc.Rate, c.Rate != rc.Rate},
			{"duration", c.Duration, rc.Duration, c.Duration != rc.Duration},
			{"seed", c.Seed, rc.Seed, c.Seed != rc.Seed},
			{"shard count", c.Shard.Of, rc.Shard.Of, c.Shard.Of != rc.Shard.Of},
			{"schedule", c.Shard.Whole, rc.Shard.Whole, c.Shard.Whole != rc.Shard.Whole},
			{"whole schedule's count", c.Shard.WholeScheduled, rc.Shard.WholeScheduled,
				c.Shard.WholeScheduled >= 0 && rc.Shard.WholeScheduled >= 0 && c.Shard.WholeScheduled != rc.Shard.WholeScheduled},
			{"{StartAt}", orNone(c.StartAt), orNone(rc.StartAt), c.StartAt != rc.StartAt},
			{"mode", orNone(c.Mode), orNone(rc.Mode), c.Mode != rc.Mode},
		} {
			if d.mismatch {
				return errNotSameRun(x.Name, d.what, d.a, ref.Name, d.b)
			}
		}
		if err := sameSettings(x, in); err != nil {
			return err
		}
		for _, i := range c.Shard.Indexes {
			if i < 0 || i >= c.Shard.Of {
				return fmt.Errorf("%s: shard index %d out of [0, %d)", x.Name, i, c.Shard.Of)
			}
			if o, dup := owner[i]; dup {
				what := fmt.Sprintf("shard %d/%d", i, c.Shard.Of)
				if o == x.Name {
					return errGivenTwice(x.Name, what)
				}
				return errAgain(x.Name, what, o)
			}
			owner[i] = x.Name
		}
	}
	return nil
}

// sameSettings refuses x when a setting that shapes a section of its
// result differs from the first input's that has the section: the
// warm-up (every shard has it alike, or none), the retry policy, the
// dwell bound, goodput's per-request objectives, and the targets of a
// mix and the steps of a session run (the same names in the same order,
// or none), without which the sums would not add up.
func sameSettings(x MergeInput, in []MergeInput) error {
	if w, ref := warmupUntil(x.Result.Warmup), warmupUntil(in[0].Result.Warmup); w != ref {
		return errNotSameRun(x.Name, "{Warmup}", w, in[0].Name, ref)
	}
	for _, s := range []struct {
		what string
		of   func(*Result) (string, bool)
	}{
		{"retry policy", func(r *Result) (string, bool) {
			if r.Retries == nil {
				return "", false
			}
			return strconv.Quote(r.Retries.Policy), true
		}},
		{"{DwellBound}", func(r *Result) (string, bool) {
			if r.DwellBound == nil {
				return "", false
			}
			return r.DwellBound.Bound, true
		}},
		{"targets", func(r *Result) (string, bool) { return partsSetting(r.Targets), true }},
		{"steps", func(r *Result) (string, bool) { return partsSetting(r.Steps), true }},
		{"{RequestObjectives}", func(r *Result) (string, bool) {
			if r.Stream == nil {
				return "", false
			}
			return strconv.Quote(r.Stream.objectives()), true
		}},
	} {
		v, ok := s.of(x.Result)
		if !ok {
			continue
		}
		for _, y := range in {
			if w, ok := s.of(y.Result); ok {
				if w != v {
					return errNotSameRun(x.Name, s.what, v, y.Name, w)
				}
				break
			}
		}
	}
	return nil
}

// warmupUntil is the end of w, or "none" without one.
func warmupUntil(w *Warmup) string {
	if w == nil {
		return "none"
	}
	return w.Until
}

// Missing returns the shards a merge lacks, or nil when it holds all
// (ShardConfig.Complete).
func (s *ShardConfig) Missing() []int {
	var out []int
	have := map[int]bool{}
	for _, i := range s.Indexes {
		have[i] = true
	}
	for i := range s.Of {
		if !have[i] {
			out = append(out, i)
		}
	}
	return out
}

func joinIndexes(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, ",")
}

// OwnShardRun is the ShardRun of a single shard's result (its own
// figures); Merge keeps the shards' runs.
func OwnShardRun(res *Result) ShardRun {
	r := ShardRun{
		Started: res.Started, Expected: res.Counts.Expected, Scheduled: res.Counts.Scheduled,
		Sent: res.Counts.Sent, Elapsed: res.Elapsed, SendDelay: res.SendDelay, Client: res.Config.Client,
		Generator: res.Generator, Connections: res.Limit.Connections, MaxInFlight: res.Limit.MaxInFlight,
	}
	if s := res.Config.Shard; s != nil && len(s.Indexes) == 1 {
		r.Index = s.Indexes[0]
	}
	if res.Start != nil {
		r.LateMs = res.Start.LateMs
	}
	return r
}

// deriveHistograms sets r's percentiles from its histograms, and the answered ones:
// response − unanswered, bucket by bucket, as the recorder derives them.
func (r *Result) deriveHistograms(decode func(string) (*hdrhistogram.Histogram, error)) error {
	h := &r.Histograms
	for _, p := range []struct {
		enc string
		sum *Percentiles
	}{{h.Response, &r.Response}, {h.Service, &r.Service}, {h.SendDelay, &r.SendDelay}} {
		if p.enc == "" {
			continue
		}
		d, err := decode(p.enc)
		if err != nil {
			return err
		}
		*p.sum = Summarize(d)
	}
	if r.Corrected != nil && h.Corrected != "" {
		d, err := decode(h.Corrected)
		if err != nil {
			return err
		}
		r.Corrected.Percentiles = Summarize(d)
	}
	r.Answered, r.Unanswered, h.Answered = nil, nil, ""
	if h.Unanswered == "" || h.Response == "" {
		return nil
	}
	resp, err := decode(h.Response)
	if err != nil {
		return err
	}
	u, err := decode(h.Unanswered)
	if err != nil {
		return err
	}
	a := Subtract(resp, u)
	pa, pu := Summarize(a), Summarize(u)
	r.Answered, r.Unanswered = &pa, &pu
	h.Answered, err = EncodeHistogram(a)
	return err
}

// deriveStream sets the stream's percentiles from r's histograms, and its rates
// over r's elapsed time.
func (r *Result) deriveStream(decode func(string) (*hdrhistogram.Histogram, error)) {
	s := r.Stream
	if s == nil {
		return
	}
	hs := &r.Histograms
	for _, p := range []struct {
		enc string
		sum *Percentiles
	}{{hs.TTFTResponse, &s.TTFTResponse}, {hs.TTFTService, &s.TTFTService}, {hs.ITL, &s.ITL}, {hs.TPOT, &s.TPOT},
		{hs.TTFAResponse, &s.TTFAResponse}, {hs.TTFAService, &s.TTFAService}} {
		if h, err := decode(p.enc); err == nil {
			*p.sum = Summarize(h)
		}
	}
	s.SetRates(r.Elapsed, r.Counts)
}
