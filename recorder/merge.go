package recorder

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
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

// mergeSection adds one part of the inputs (sorted by their first shard)
// into dst, whose Config, Counts, Started and Shards are already set. A
// section the results gain is merged by one more function in
// mergeSections.
type mergeSection func(dst *Result, in []MergeInput) error

var mergeSections = []mergeSection{
	mergeHistograms,
	mergeOutcomeMaps,
	mergeTimeline,
	mergeWarmupSection, // before mergeClasses: class shares are of the headline's requests
	mergeClasses,
	mergeServerTiming,
	mergeRetries,
	mergeWire,
	mergeDwell,
	mergeLimit,
	mergeStream,
}

// mergedKeys are the result's sections (JSON keys) that Merge accounts
// for: added by mergeSections, recomputed (percentiles, checks, SLOs), or
// kept per shard (generator, start, in Shards). A result holding any
// other section is refused rather than merged without it: a section added
// to Result gets its mergeSection and its key here.
var mergedKeys = map[string]bool{
	"version": true, "tool": true, "started": true, "elapsed_s": true, "config": true, "counts": true,
	"send_rate": true, "censored": true, "clamped": true, "dropped": true, "response": true, "service": true,
	"send_delay": true, "corrected": true, "status": true, "error_kinds": true, "limit": true, "histograms": true,
	"timeline": true, "classes": true, "server_timing": true, "dwell_bound": true, "retries": true,
	"redirects_followed": true, "wire": true, "failed_status": true, "body_over_cap": true, "generator": true,
	"checks": true, "slos": true, "interrupted": true, "answered": true, "unanswered": true, "tls_causes": true,
	"start": true, "shards": true, "stream": true, "warmup": true,
}

// unmergedSection returns a section of r that Merge does not account for
// (mergedKeys), or "".
func unmergedSection(r *Result) (string, error) {
	b, err := json.Marshal(r)
	if err != nil {
		return "", err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return "", err
	}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if !mergedKeys[k] {
			return k, nil
		}
	}
	return "", nil
}

// Merge adds the results of shards of one schedule. It refuses results
// that are not shards', shards of another run (a different target,
// method, schedule, seed, shard count or start) and a shard given twice,
// each with an error naming the input. It does not require every shard:
// ShardConfig.Complete says whether the merge holds them all.
func Merge(in ...MergeInput) (*Result, error) {
	if len(in) == 0 {
		return nil, errors.New("merge: no results")
	}
	in = slices.Clone(in)
	for _, x := range in {
		if x.Result.Config.Shard == nil || len(x.Result.Config.Shard.Indexes) == 0 {
			return nil, field.Errorf("Shard.Index", nil, "%s: not a shard's result (run with {Shard.Index} i/N)", x.Name)
		}
		if k, err := unmergedSection(x.Result); err != nil || k != "" {
			if err == nil {
				err = fmt.Errorf("its %q section cannot be merged by this openload yet", k)
			}
			return nil, fmt.Errorf("%s: %v", x.Name, err)
		}
	}
	if err := sameRun(in); err != nil {
		return nil, err
	}
	slices.SortFunc(in, func(a, b MergeInput) int {
		return cmp.Compare(a.Result.Config.Shard.Indexes[0], b.Result.Config.Shard.Indexes[0])
	})
	first := in[0].Result
	dst := &Result{Version: Version, Tool: first.Tool, Config: first.Config, Interrupted: slices.ContainsFunc(in, func(x MergeInput) bool { return x.Result.Interrupted })}
	shard := *first.Config.Shard
	shard.Indexes = nil
	dst.Started = first.Started
	for _, x := range in {
		r := x.Result
		shard.Indexes = append(shard.Indexes, r.Config.Shard.Indexes...)
		if r.Started.Before(dst.Started) {
			dst.Started = r.Started
		}
		if shard.WholeScheduled < 0 {
			shard.WholeScheduled = r.Config.Shard.WholeScheduled
		}
		runs := r.Shards
		if len(runs) == 0 { // written without its own run: make it
			runs = []ShardRun{OwnShardRun(r)}
		}
		for _, run := range runs {
			if run.Source == "" && len(r.Config.Shard.Indexes) == 1 {
				run.Source = x.Name
			}
			dst.Shards = append(dst.Shards, run)
		}
	}
	slices.Sort(shard.Indexes)
	dst.Config.Shard = &shard
	slices.SortFunc(dst.Shards, func(a, b ShardRun) int { return cmp.Compare(a.Index, b.Index) })
	mergeConfig(dst, in)
	mergeCounts(dst, in)
	for _, f := range mergeSections {
		if err := f(dst, in); err != nil {
			return nil, err
		}
	}
	return dst, nil
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

// The refusals Merge and MergeIntervalLogs share: one text each.

// errGivenTwice refuses the input name, given before under the same name;
// what it holds is said in parentheses ("shard 1/4"), unless "".
func errGivenTwice(name, what string) error {
	if what == "" {
		return fmt.Errorf("%s: given twice", name)
	}
	return fmt.Errorf("%s: given twice (%s)", name, what)
}

// errAgain refuses the input name, which holds what the input other
// holds too.
func errAgain(name, what, other string) error {
	return fmt.Errorf("%s: %s again (%s has it too)", name, what, other)
}

// errNotSameRun refuses the input name, whose what is a where ref's is b:
// it is not of ref's run. what is words ("seed"), or a field of the run's
// options in braces ("{StartAt}"): then the error is a *field.Error of
// that field, value a.
func errNotSameRun(name, what string, a any, ref string, b any) error {
	format := "%s: " + what + " %v, but %s has %v: not a shard of the same run" // what is the caller's constant
	if f, ok := strings.CutPrefix(what, "{"); ok && strings.HasSuffix(f, "}") {
		return field.Errorf(strings.TrimSuffix(f, "}"), a, format, name, a, ref, b)
	}
	return fmt.Errorf(format, name, a, ref, b)
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
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

// mergeConfig sets what the merged configuration says of the whole: its
// schedule, and the generators' clients and connections summed.
func mergeConfig(dst *Result, in []MergeInput) {
	c := &dst.Config
	sc := c.Shard
	if sc.Complete() {
		c.Schedule = sc.Whole
	} else {
		c.Schedule = fmt.Sprintf("shards %s of %d of %s", joinIndexes(sc.Indexes), sc.Of, sc.Whole)
	}
	clients := map[string]bool{}
	c.Connections, c.StubCPUSeconds = 0, 0
	for _, r := range dst.Shards {
		c.Connections += r.Connections
		if r.Client != "" {
			clients[r.Client] = true
		}
	}
	c.Client = strings.Join(slices.Sorted(maps.Keys(clients)), "+")
	for _, x := range in {
		c.StubChild = c.StubChild && x.Result.Config.StubChild
	}
}

func joinIndexes(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, ",")
}

// mergeCounts sums the counts. Figures that are not integers come from the
// shards' own runs in index order, so that any grouping of a merge gives
// the same float: the expected count (the whole's when complete), the
// elapsed time, the send rate.
func mergeCounts(dst *Result, in []MergeInput) {
	c := &dst.Counts
	for _, x := range in {
		s := x.Result.Counts
		c.Scheduled += s.Scheduled
		c.Sent += s.Sent
		c.Completed += s.Completed
		c.Errors += s.Errors
		c.Timeouts += s.Timeouts
		c.Unfinished += s.Unfinished
		c.Skipped += s.Skipped
		dst.Censored += x.Result.Censored
		dst.Clamped += x.Result.Clamped
		dst.Dropped += x.Result.Dropped
		dst.Redirects += x.Result.Redirects
		dst.BodyOverCap += x.Result.BodyOverCap
	}
	for i := range dst.Shards {
		r := &dst.Shards[i]
		r.OffsetMs = math.Round(float64(r.Started.Sub(dst.Started))/1e3) / 1e3
		dst.Elapsed = max(dst.Elapsed, r.OffsetMs/1e3+r.Elapsed)
		c.Expected += r.Expected
	}
	if dst.Config.Shard.Complete() {
		c.Expected = dst.Config.Shard.WholeExpected
	}
	span := dst.Elapsed
	if d, err := time.ParseDuration(dst.Config.Duration); err == nil && d > 0 {
		span = d.Seconds()
	}
	if span > 0 {
		dst.SendRate = float64(c.Sent) / span
	}
}

// mergeHist decodes and adds the histograms get returns of each input
// ("" is skipped); nil when none had one. Values a merge drops are
// counted in dst.Dropped.
func mergeHist(dst *Result, in []MergeInput, what string, get func(*Result) string) (*hdrhistogram.Histogram, error) {
	var h *hdrhistogram.Histogram
	for _, x := range in {
		s := get(x.Result)
		if s == "" {
			continue
		}
		o, err := DecodeHistogram(s)
		if err != nil {
			return nil, fmt.Errorf("%s: %s histogram: %v", x.Name, what, err)
		}
		if h == nil {
			h = NewHistogram()
		}
		dst.Dropped += h.Merge(o)
	}
	return h, nil
}

func encodeInto(p *string, h *hdrhistogram.Histogram) error {
	if h == nil {
		*p = ""
		return nil
	}
	s, err := EncodeHistogram(h)
	*p = s
	return err
}

// mergeHistograms adds the response, service and send-delay histograms,
// and the unanswered one; answered = response − unanswered, as the
// recorder derives it (answered.go).
func mergeHistograms(dst *Result, in []MergeInput) error {
	hs := &dst.Histograms
	hs.Unit = "us"
	for _, m := range []struct {
		name string
		get  func(*Result) string
		sum  *Percentiles
		enc  *string
	}{
		{"response", func(r *Result) string { return r.Histograms.Response }, &dst.Response, &hs.Response},
		{"service", func(r *Result) string { return r.Histograms.Service }, &dst.Service, &hs.Service},
		{"send_delay", func(r *Result) string { return r.Histograms.SendDelay }, &dst.SendDelay, &hs.SendDelay},
	} {
		h, err := mergeHist(dst, in, m.name, m.get)
		if err != nil {
			return err
		}
		if h == nil {
			h = NewHistogram()
		}
		*m.sum = Summarize(h)
		if err := encodeInto(m.enc, h); err != nil {
			return err
		}
	}
	u, err := mergeHist(dst, in, "unanswered", func(r *Result) string { return r.Histograms.Unanswered })
	if err != nil || u == nil {
		return err
	}
	resp, err := DecodeHistogram(hs.Response)
	if err != nil {
		return err
	}
	s, us := resp.Export(), u.Export()
	for i := range s.Counts {
		if i < len(us.Counts) {
			s.Counts[i] -= us.Counts[i]
		}
	}
	a := hdrhistogram.Import(s)
	pa, pu := Summarize(a), Summarize(u)
	dst.Answered, dst.Unanswered = &pa, &pu
	if err := encodeInto(&hs.Answered, a); err != nil {
		return err
	}
	return encodeInto(&hs.Unanswered, u)
}

// addCounts adds the counts of src into *dst, making the map when needed.
func addCounts(dst *map[string]int64, src map[string]int64) {
	if len(src) == 0 {
		return
	}
	if *dst == nil {
		*dst = map[string]int64{}
	}
	for k, v := range src {
		(*dst)[k] += v
	}
}

// mergeOutcomeMaps sums statuses, error kinds, TLS causes and the
// statuses of failed responses.
func mergeOutcomeMaps(dst *Result, in []MergeInput) error {
	dst.Status, dst.ErrorKinds = map[string]int64{}, map[string]int64{}
	for _, x := range in {
		r := x.Result
		addCounts(&dst.Status, r.Status)
		addCounts(&dst.ErrorKinds, r.ErrorKinds)
		addCounts(&dst.TLSCauses, r.TLSCauses)
		addCounts(&dst.FailedStatus, r.FailedStatus)
	}
	return nil
}

// mergeTimeline adds the timelines second by second, each shifted by its
// start's whole seconds after the merge's start (0 with a shared
// --start-at). The per-second p99 is dropped: it cannot be added.
func mergeTimeline(dst *Result, in []MergeInput) error {
	dst.Timeline = []Second{}
	for _, x := range in {
		shift := int(x.Result.Started.Sub(dst.Started) / time.Second)
		for i, s := range x.Result.Timeline {
			j := i + shift
			for len(dst.Timeline) <= j {
				dst.Timeline = append(dst.Timeline, Second{})
			}
			d := &dst.Timeline[j]
			d.Scheduled += s.Scheduled
			d.Sent += s.Sent
			d.Completed += s.Completed
			d.Errors += s.Errors
			d.Skipped += s.Skipped
			d.Retries += s.Retries
			d.RateLimited += s.RateLimited
			d.Tokens += s.Tokens
			for h, vs := range s.Classes {
				for v, n := range vs {
					d.addClass(h, v, n)
				}
			}
		}
	}
	return nil
}

// mergeClasses adds the class tables header by header and value by value,
// their response histograms included; tables and values come out sorted
// (by header; by count, then value).
func mergeClasses(dst *Result, in []MergeInput) error {
	type acc struct {
		table  ClassTable
		counts map[string]int64
		hists  map[string]*hdrhistogram.Histogram
	}
	tables := map[string]*acc{}
	for _, x := range in {
		for _, t := range x.Result.Classes {
			a := tables[t.Header]
			if a == nil {
				a = &acc{table: ClassTable{Header: t.Header, Auto: t.Auto}, counts: map[string]int64{}, hists: map[string]*hdrhistogram.Histogram{}}
				tables[t.Header] = a
			}
			a.table.Auto = a.table.Auto && t.Auto
			for _, v := range t.Values {
				if v.Histogram == "" {
					return fmt.Errorf("%s: class %s=%s has no histogram (written by an older openload): its response times cannot be merged", x.Name, t.Header, v.Value)
				}
				h, err := DecodeHistogram(v.Histogram)
				if err != nil {
					return fmt.Errorf("%s: class %s=%s: %v", x.Name, t.Header, v.Value, err)
				}
				if a.hists[v.Value] == nil {
					a.hists[v.Value] = NewHistogram()
				}
				dst.Dropped += a.hists[v.Value].Merge(h)
				a.counts[v.Value] += v.Count
			}
		}
	}
	dst.Classes = nil
	for _, header := range slices.Sorted(maps.Keys(tables)) {
		a := tables[header]
		for _, v := range slices.Sorted(maps.Keys(a.counts)) {
			cv := ClassValue{Value: v, Count: a.counts[v], Response: Summarize(a.hists[v])}
			if n := dst.Headline().Scheduled; n > 0 {
				cv.Share = float64(cv.Count) / float64(n)
			}
			if err := encodeInto(&cv.Histogram, a.hists[v]); err != nil {
				return err
			}
			a.table.Values = append(a.table.Values, cv)
		}
		slices.SortStableFunc(a.table.Values, func(p, q ClassValue) int { return cmp.Compare(q.Count, p.Count) })
		a.table.setPer100Rest()
		dst.Classes = append(dst.Classes, a.table)
	}
	return nil
}

// mergeServerTiming adds the Server-Timing metrics by name, sorted by
// name.
func mergeServerTiming(dst *Result, in []MergeInput) error {
	hists := map[string]*hdrhistogram.Histogram{}
	for _, x := range in {
		for _, m := range x.Result.ServerTiming {
			h, err := DecodeHistogram(m.Histogram)
			if err != nil {
				return fmt.Errorf("%s: Server-Timing %s: %v", x.Name, m.Name, err)
			}
			if hists[m.Name] == nil {
				hists[m.Name] = NewHistogram()
			}
			dst.Dropped += hists[m.Name].Merge(h)
		}
	}
	dst.ServerTiming = nil
	for _, name := range slices.Sorted(maps.Keys(hists)) {
		m := ServerMetric{Name: name, Percentiles: Summarize(hists[name])}
		if err := encodeInto(&m.Histogram, hists[name]); err != nil {
			return err
		}
		dst.ServerTiming = append(dst.ServerTiming, m)
	}
	return nil
}

// mergeRetries sums the retry counts; the shards share one policy.
func mergeRetries(dst *Result, in []MergeInput) error {
	for _, x := range in {
		r := x.Result.Retries
		if r == nil {
			continue
		}
		if dst.Retries == nil {
			dst.Retries = &RetryCounts{Policy: r.Policy}
		} else if r.Policy != dst.Retries.Policy {
			return errNotSameRun(x.Name, "retry policy", strconv.Quote(r.Policy), "another shard", strconv.Quote(dst.Retries.Policy))
		}
		d := dst.Retries
		d.FirstAttempts += r.FirstAttempts
		d.RetriesSent += r.RetriesSent
		d.RefusedByBudget += r.RefusedByBudget
		d.Exhausted += r.Exhausted
		d.Retried += r.Retried
		addCounts(&d.AttemptStatus, r.AttemptStatus)
		addCounts(&d.AttemptErrors, r.AttemptErrors)
	}
	if dst.Retries != nil && dst.Retries.AttemptStatus == nil {
		dst.Retries.AttemptStatus = map[string]int64{}
	}
	return nil
}

// mergeWire sums the attempts written to connections.
func mergeWire(dst *Result, in []MergeInput) error {
	for _, x := range in {
		w := x.Result.Wire
		if w == nil {
			continue
		}
		if dst.Wire == nil {
			dst.Wire = &Wire{Counted: true}
		}
		dst.Wire.Add(w)
	}
	return nil
}

// mergeDwell sums the dwell-bound counts and adds the answers' dwell
// histograms (the exact max is the largest); the shards share one bound.
func mergeDwell(dst *Result, in []MergeInput) error {
	var h *hdrhistogram.Histogram
	for _, x := range in {
		d := x.Result.DwellBound
		if d == nil {
			continue
		}
		if dst.DwellBound == nil {
			dst.DwellBound = &DwellBound{Bound: d.Bound, BoundMs: d.BoundMs}
		} else if d.Bound != dst.DwellBound.Bound {
			return errNotSameRun(x.Name, "{DwellBound}", d.Bound, "another shard", dst.DwellBound.Bound)
		}
		m := dst.DwellBound
		m.Answers += d.Answers
		m.Over += d.Over
		m.Unreported += d.Unreported
		m.Others += d.Others
		m.Dwell.Max = max(m.Dwell.Max, d.Dwell.Max)
		if d.Histogram == "" {
			return fmt.Errorf("%s: the dwell bound's histogram is missing (written by an older openload): its dwell cannot be merged", x.Name)
		}
		o, err := DecodeHistogram(d.Histogram)
		if err != nil {
			return fmt.Errorf("%s: dwell histogram: %v", x.Name, err)
		}
		if h == nil {
			h = NewHistogram()
		}
		dst.Dropped += h.Merge(o)
	}
	if dst.DwellBound == nil {
		return nil
	}
	exactMax := dst.DwellBound.Dwell.Max
	dst.DwellBound.Dwell = Summarize(h)
	if dst.DwellBound.Answers > 0 {
		dst.DwellBound.Dwell.Max = exactMax
	}
	return encodeInto(&dst.DwellBound.Histogram, h)
}

// mergeLimit sums the connection limits, the requests that waited for one
// and the connections opened before the start. MaxInFlight is the sum of
// the shards' own peaks: an upper bound of the whole's, which the shards
// reached at instants no result records.
func mergeLimit(dst *Result, in []MergeInput) error {
	l := &dst.Limit
	for _, x := range in {
		s := x.Result.Limit
		l.Connections += s.Connections
		l.MaxInFlight += s.MaxInFlight
		l.Waited += s.Waited
		if p := s.Predial; p != nil {
			if l.Predial == nil {
				l.Predial = &Predial{}
			}
			l.Predial.Wanted += p.Wanted
			l.Predial.Opened += p.Opened
			l.Predial.Ms = max(l.Predial.Ms, p.Ms)
			if l.Predial.Error == "" {
				l.Predial.Error = p.Error
			}
		}
	}
	return nil
}

// mergeStream adds the streamed answers' histograms and counts; every
// shard that streamed must have judged goodput by the same per-request
// objectives (or none), or the met counts would not add up. The clamped
// and dropped values are in the results' own counts (mergeCounts).
func mergeStream(dst *Result, in []MergeInput) error {
	var (
		sum  *StreamStats
		objs []RequestObjective
		from string
	)
	for _, x := range in {
		s, o, err := StreamStatsOf(x.Result)
		if err != nil {
			return fmt.Errorf("%s: stream: %v", x.Name, err)
		}
		if s == nil {
			continue
		}
		if sum == nil {
			sum, objs, from = NewStreamStats(), o, x.Name
		} else if FormatRequestObjectives(o) != FormatRequestObjectives(objs) {
			return errNotSameRun(x.Name, "{RequestObjectives}", strconv.Quote(FormatRequestObjectives(o)), from, strconv.Quote(FormatRequestObjectives(objs)))
		}
		s.Clamped, s.Dropped = 0, 0
		sum.Merge(s)
	}
	return setStream(dst, sum, objs)
}

// mergeWarmupSection adds the shards' warm-ups (--warmup), which every
// shard of one run has alike: counts and histograms.
func mergeWarmupSection(dst *Result, in []MergeInput) error {
	dst.Warmup = nil
	var w *Warmup
	var response, service *hdrhistogram.Histogram
	for _, x := range in {
		o := x.Result.Warmup
		if until, ref := warmupUntil(o), warmupUntil(in[0].Result.Warmup); until != ref {
			return errNotSameRun(x.Name, "{Warmup}", until, in[0].Name, ref)
		}
		if o == nil {
			continue
		}
		if w == nil {
			w, response, service = &Warmup{Until: o.Until}, NewHistogram(), NewHistogram()
		}
		w.Scheduled += o.Scheduled
		w.Completed += o.Completed
		w.Errors += o.Errors
		w.Timeouts += o.Timeouts
		w.Unfinished += o.Unfinished
		for _, p := range []struct {
			enc string
			h   *hdrhistogram.Histogram
		}{{o.ResponseHistogram, response}, {o.ServiceHistogram, service}} {
			if p.enc == "" {
				return fmt.Errorf("%s: its warm-up has no histograms (written before they were kept): cannot be merged", x.Name)
			}
			h, err := DecodeHistogram(p.enc)
			if err != nil {
				return fmt.Errorf("%s: warm-up histogram: %v", x.Name, err)
			}
			dst.Dropped += p.h.Merge(h)
		}
	}
	if w == nil {
		return nil
	}
	dst.Warmup = w
	return w.setHistograms(response, service)
}

// warmupUntil is the end of w, or "none" without one.
func warmupUntil(w *Warmup) string {
	if w == nil {
		return "none"
	}
	return w.Until
}
