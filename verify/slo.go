package verify

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/openload/openload/result"
)

// An Objective is a user's threshold on a figure of the result, written
//
//	METRIC[.STAT] OP VALUE
//
// METRIC is response, service or send_delay, or for streamed answers ttft
// (from the schedule; also ttft_response), ttft_service, itl or tpot
// (latency; STAT one of p50 p90
// p95 p99 p999 p9999 max mean, p99.9 and p99.99 accepted as aliases; VALUE
// a duration such as 200ms, 1.5s or 800us), server.NAME (a Server-Timing
// metric, same STATs and VALUEs), errors (the share of scheduled requests
// that did not complete: errors, timeouts and unfinished; VALUE a share
// such as 1% or 0.01), client_errors (the share of scheduled requests
// answered with a 4xx status other than 408 and 429; VALUE a share) or
// class.VALUE.share (the share of requests whose class header had VALUE;
// VALUE a share). OP is one of <= < >= >.
//
// An objective may be scoped to a part of the run, written
//
//	NAME:METRIC[.STAT] OP VALUE
//
// NAME is a target of a request mix (result.Part; later also a scenario),
// and the objective judges that part's figures: response, service,
// send_delay, errors or client_errors, the figures a part has. The name
// is what precedes the last colon before the metric, so it may hold
// colons ("GET http://h:8080/x:response.p99<=300ms"). CheckScopes refuses
// a name the run has no part of.
//
// A figure with no samples is no data, never a pass (Evaluate): a TTFT
// objective on a run that streamed nothing, a response time when nothing
// was answered.
//
// Examples: response.p99<=200ms, server.queue.max<150ms, errors<=0.5%,
// class.model.share>=0.4, checkout:response.p99<=300ms.
type Objective struct {
	Expr      string
	Scope     string // the part judged (a target's name); "" for the whole run
	Metric    string // response, service, send_delay, server.NAME, errors, client_errors, class.VALUE
	Stat      string // p99, max, mean …; "rate" for errors, "share" for classes
	Op        string
	Threshold float64 // ms for latencies, a ratio for errors and shares
	Share     bool    // Threshold is a ratio, not ms
	Default   bool    // openload's own objective, not the user's (target.go)
}

var latencyStats = []string{"p50", "p90", "p95", "p99", "p999", "p9999", "max", "mean"}

// latencyMetrics are the latency figures an objective names with a
// statistic (server.NAME aside); "ttft" is read as ttft_response.
var latencyMetrics = []string{"response", "service", "send_delay", "ttft_response", "ttft_service", "itl", "tpot"}

var statAliases = map[string]string{"p99.9": "p999", "p99.99": "p9999", "median": "p50"}

var ops = []string{"<=", ">=", "<", ">"} // two-character operators first

// ParseObjective parses one objective; the error names the expression and
// the problem.
func ParseObjective(expr string) (Objective, error) {
	o := Objective{Expr: expr}
	s := strings.TrimSpace(expr)
	i, op := -1, ""
	for _, candidate := range ops {
		if j := strings.Index(s, candidate); j >= 0 && (i < 0 || j < i) {
			i, op = j, candidate
		}
	}
	if i < 0 {
		return o, fmt.Errorf("objective %q: no comparison; write e.g. response.p99<=200ms (operators: <=, <, >=, >)", expr)
	}
	lhs, rhs := strings.TrimSpace(s[:i]), strings.TrimSpace(s[i+len(op):])
	o.Op = op
	if lhs == "" || rhs == "" {
		return o, fmt.Errorf("objective %q: missing metric or value", expr)
	}
	if strings.ContainsAny(rhs, "<>=") {
		return o, fmt.Errorf("objective %q: more than one comparison", expr)
	}
	if err := o.parseScoped(lhs); err != nil {
		return o, fmt.Errorf("objective %q: %v", expr, err)
	}
	var err error
	if o.Share {
		o.Threshold, err = parseShare(rhs)
	} else {
		o.Threshold, err = parseMillis(rhs)
	}
	if err != nil {
		return o, fmt.Errorf("objective %q: %v", expr, err)
	}
	return o, nil
}

// partMetrics are the metrics of a part (result.Part), which a scoped
// objective may judge.
var partMetrics = []string{"response", "service", "send_delay", "errors", "client_errors"}

// parseScoped parses lhs, scoped (NAME:METRIC) when what follows its last
// colon is a metric; else lhs is a metric of the whole run, which may hold
// a colon of its own (class.a:b.share).
func (o *Objective) parseScoped(lhs string) error {
	i := strings.LastIndexByte(lhs, ':')
	if i < 0 {
		return o.parseMetric(lhs)
	}
	scoped := *o
	if scoped.parseMetric(strings.TrimSpace(lhs[i+1:])) != nil {
		return o.parseMetric(lhs)
	}
	scoped.Scope = strings.TrimSpace(lhs[:i])
	switch {
	case scoped.Scope == "":
		return fmt.Errorf("no name before the colon; write NAME:%s", strings.TrimSpace(lhs[i+1:]))
	case !slices.Contains(partMetrics, scoped.Metric):
		return fmt.Errorf("%s is not a figure of a part: a scoped objective judges %s", scoped.Metric, strings.Join(partMetrics, ", "))
	}
	*o = scoped
	return nil
}

// CheckScopes refuses the first objective whose scope names no part in
// names (the run's targets), in one line naming the objective and the
// names known, so that a misspelt name is said before anything is sent.
func CheckScopes(objs []Objective, names []string) error {
	for _, o := range objs {
		if o.Scope == "" || slices.Contains(names, o.Scope) {
			continue
		}
		if len(names) == 0 {
			return fmt.Errorf("objective %q: no target or scenario named %q: the run has no request mix and no scenarios", o.Expr, o.Scope)
		}
		known := make([]string, len(names))
		for i, n := range names {
			known[i] = strconv.Quote(n)
		}
		return fmt.Errorf("objective %q: no target or scenario named %q (known: %s)", o.Expr, o.Scope, strings.Join(known, ", "))
	}
	return nil
}

func (o *Objective) parseMetric(lhs string) error {
	known := "known metrics: response, service, send_delay, ttft, ttft_service, itl, tpot, server.NAME, errors, client_errors, class.VALUE.share"
	switch {
	case lhs == "errors" || lhs == "errors.rate":
		o.Metric, o.Stat, o.Share = "errors", "rate", true
		return nil
	case lhs == "client_errors" || lhs == "client_errors.rate":
		o.Metric, o.Stat, o.Share = "client_errors", "rate", true
		return nil
	case strings.HasPrefix(lhs, "class."):
		rest := strings.TrimPrefix(lhs, "class.")
		v, ok := strings.CutSuffix(rest, ".share")
		if !ok || v == "" {
			return fmt.Errorf("write a class objective as class.VALUE.share")
		}
		o.Metric, o.Stat, o.Share = "class."+v, "share", true
		return nil
	}
	metric, stat := lhs, ""
	if strings.HasPrefix(lhs, "server.") {
		rest := strings.TrimPrefix(lhs, "server.")
		name, st, _ := cutStat(rest)
		if name == "" {
			return fmt.Errorf("write a server metric as server.NAME.STAT")
		}
		metric, stat = "server."+name, st
	} else {
		metric, stat, _ = cutStat(lhs)
		if metric == "ttft" { // from the schedule, as response time is
			metric = "ttft_response"
		}
		if !slices.Contains(latencyMetrics, metric) {
			return fmt.Errorf("unknown metric %q (%s)", metric, known)
		}
	}
	if stat == "" {
		return fmt.Errorf("%s needs a statistic, e.g. %s.p99 (one of %s)", metric, metric, strings.Join(latencyStats, " "))
	}
	if a, ok := statAliases[stat]; ok {
		stat = a
	}
	valid := false
	for _, s := range latencyStats {
		valid = valid || s == stat
	}
	if !valid {
		return fmt.Errorf("unknown statistic %q (one of %s)", stat, strings.Join(latencyStats, " "))
	}
	o.Metric, o.Stat = metric, stat
	return nil
}

// cutStat splits "response.p99" into ("response", "p99"); the alias forms
// p99.9 and p99.99 contain a dot, so the statistic is found by its "p" or
// name, not by the last dot.
func cutStat(s string) (metric, stat string, ok bool) {
	for _, st := range []string{".p99.99", ".p99.9"} {
		if m, found := strings.CutSuffix(s, st); found {
			return m, st[1:], true
		}
	}
	i := strings.LastIndexByte(s, '.')
	if i < 0 {
		return s, "", false
	}
	return s[:i], s[i+1:], true
}

func parseMillis(v string) (float64, error) {
	if f, err := strconv.ParseFloat(v, 64); err == nil {
		return 0, fmt.Errorf("value %v needs a unit (ms, s, us), e.g. %vms", f, v)
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		return 0, fmt.Errorf("value %q is not a duration like 200ms or 1.5s", v)
	}
	if d < 0 {
		return 0, fmt.Errorf("value %q is negative", v)
	}
	return float64(d) / float64(time.Millisecond), nil
}

func parseShare(v string) (float64, error) {
	pct := strings.HasSuffix(v, "%")
	f, err := strconv.ParseFloat(strings.TrimSuffix(v, "%"), 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, fmt.Errorf("value %q is not a share like 1%% or 0.01", v)
	}
	if pct {
		f /= 100
	}
	if f < 0 || f > 1 {
		return 0, fmt.Errorf("value %q is not a share between 0 and 1 (0%%–100%%)", v)
	}
	return f, nil
}

// SLOResult is an objective evaluated on a result.
type SLOResult struct {
	Objective Objective
	Measured  float64 // ms or ratio; 0 with NoData
	Pass      bool
	// NoData: the result holds no sample of the figure (Measure's
	// *NoDataError), so the objective is not met. Message says why.
	NoData  bool
	Message string
}

// NoDataError is Measure's error: the result holds no sample of the
// objective's figure, and Reason says why in words ("no streamed token in
// 30 answers; 30 answered 415").
type NoDataError struct{ Reason string }

func (e *NoDataError) Error() string { return "no data: " + e.Reason }

func noData(format string, args ...any) error {
	return &NoDataError{Reason: fmt.Sprintf(format, args...)}
}

// Measure reads the objective's figure from res. A figure with no samples
// is a *NoDataError saying why, never a 0: a percentile of nothing is not
// fast, and a share of nothing is not small.
func (o Objective) Measure(res *result.Result) (float64, error) {
	if o.Scope != "" {
		part, err := partOf(res, o.Scope)
		if err != nil {
			return 0, err
		}
		res = part
	}
	c := res.Headline() // without a --warmup's requests
	switch {
	case o.Metric == "errors":
		// The requests a stop cut short (an interrupted run, a sweep's
		// early stop) are unfinished by the stop, not failed by the
		// target: they count in neither the share nor its base.
		bad, n := c.Errors+c.Timeouts+c.Unfinished, c.Scheduled
		if res.Interrupted {
			bad, n = bad-c.Unfinished, n-c.Unfinished
		}
		if n <= 0 {
			return 0, noData("no request was scheduled")
		}
		return float64(bad) / float64(n), nil
	case o.Metric == "client_errors":
		// Statuses are counted over the whole run, warm-up included, and
		// so is the base of the share.
		if res.Counts.Scheduled == 0 {
			return 0, noData("no request was scheduled")
		}
		return float64(ClientErrors(res)) / float64(res.Counts.Scheduled), nil
	case strings.HasPrefix(o.Metric, "class."):
		want := strings.TrimPrefix(o.Metric, "class.")
		if len(res.Classes) == 0 {
			return 0, noData("no answer carried a class header (%s)", answers(res))
		}
		for _, t := range res.Classes {
			for _, v := range t.Values {
				if v.Value == want {
					return v.Share, nil
				}
			}
		}
		// A class value that never occurred among classed answers has
		// share 0: that is a measurement.
		return 0, nil
	case strings.HasPrefix(o.Metric, "server."):
		name := strings.TrimPrefix(o.Metric, "server.")
		var names []string
		for _, m := range res.ServerTiming {
			if m.Name == name {
				if m.Percentiles.Count == 0 {
					return 0, noData("no answer carried Server-Timing metric %q", name)
				}
				v, _ := m.Percentiles.Get(o.Stat)
				return v, nil
			}
			names = append(names, m.Name)
		}
		if len(names) == 0 {
			return 0, noData("no answer carried a Server-Timing header (%s)", answers(res))
		}
		return 0, noData("no answer carried Server-Timing metric %q (they carry: %s)", name, strings.Join(names, ", "))
	case isStreamMetric(o.Metric):
		return streamFigure(res, o)
	}
	var p result.Percentiles
	switch o.Metric {
	case "response", "service":
		// Without an answer there is no response or service time: the
		// histogram then holds only the time each request took to fail.
		if c.Completed == 0 {
			return 0, noData("%s", answers(res))
		}
		p = res.Response
		if o.Metric == "service" {
			p = res.Service
		}
	case "send_delay":
		p = res.SendDelay
		if p.Count == 0 {
			return 0, noData("no request was sent (%d scheduled)", c.Scheduled)
		}
	}
	v, _ := p.Get(o.Stat)
	return v, nil
}

// partOf is the part of res named name as a result of its own, for
// Measure to read as it reads a run's: its counts (the headline's
// requests only: a part holds no warm-up), statuses, error kinds and
// latencies. No such part is no data.
func partOf(res *result.Result, name string) (*result.Result, error) {
	for _, sc := range res.Scenarios { // a scenario's own result, whole
		if sc.Name == name {
			return sc.Result, nil
		}
	}
	p := res.Part(name)
	if p == nil {
		if len(res.Targets) == 0 {
			return nil, noData("the run has no request mix, so no target %q", name)
		}
		return nil, noData("the run has no target %q", name)
	}
	return &result.Result{Config: res.Config, Counts: p.Counts.Counts(), Response: p.Response, Service: p.Service, SendDelay: p.SendDelay,
		Status: p.Status, ErrorKinds: p.ErrorKinds, Interrupted: res.Interrupted}, nil
}

// streamFigure reads a stream figure (TTFT either way, ITL, TPOT) of res.
func streamFigure(res *result.Result, o Objective) (float64, error) {
	p := streamPercentiles(res.Stream, o.Metric)
	if p != nil && p.Count > 0 {
		v, _ := p.Get(o.Stat)
		return v, nil
	}
	ttft := 0
	if res.Stream != nil {
		ttft = int(res.Stream.TTFTResponse.Count)
	}
	switch {
	case ttft == 0 && res.Stream != nil && res.Stream.OutputTokens > 0:
		// A stream that failed keeps its tokens but no TTFT.
		return 0, noData("no stream completed (%d tokens came in streams that failed): %s", res.Stream.OutputTokens, answers(res))
	case res.Headline().Completed == 0 && ttft == 0:
		return 0, noData("no streamed token: %s", answers(res))
	case ttft == 0:
		return 0, noData("no streamed token in %s", answers(res))
	}
	// ITL and TPOT need a second token in a stream.
	return 0, noData("no stream had a second token (%d streams, one token each)", ttft)
}

// answers says in words what the requests of res got: "30 answers; 30
// answered 415", "20 answers; 18 answered 200 · 2 answered 503", or, when
// none got one, "none of the 20 requests got an answer (refused 20)".
func answers(res *result.Result) string {
	c := res.Headline()
	if c.Scheduled == 0 {
		return "no request was scheduled"
	}
	if c.Completed == 0 {
		return fmt.Sprintf("none of the %d requests got an answer (%s)", c.Scheduled, KindCounts(res.ErrorKinds))
	}
	codes := SortedByCount(res.Status)
	parts := make([]string, len(codes))
	for i, s := range codes {
		parts[i] = fmt.Sprintf("%d answered %s", res.Status[s], s)
	}
	return fmt.Sprintf("%d answers; %s", c.Completed, strings.Join(parts, " · "))
}

// KindCounts lists error kinds by count: "refused 20", "reset 3 · timeout 2".
func KindCounts(kinds map[string]int64) string {
	ks := SortedByCount(kinds)
	parts := make([]string, len(ks))
	for i, k := range ks {
		parts[i] = fmt.Sprintf("%s %d", k, kinds[k])
	}
	return strings.Join(parts, " · ")
}

// SortedByCount returns m's keys, largest count first, then by name: the
// order in which openload lists statuses, error kinds and causes.
func SortedByCount(m map[string]int64) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		return m[keys[i]] > m[keys[j]] || m[keys[i]] == m[keys[j]] && keys[i] < keys[j]
	})
	return keys
}

// isStreamMetric reports whether metric is a stream figure (recorder's
// stream.go): TTFT from the schedule or the send, ITL or TPOT.
func isStreamMetric(metric string) bool {
	switch metric {
	case "ttft_response", "ttft_service", "itl", "tpot":
		return true
	}
	return false
}

// streamPercentiles returns s's figure named metric, or nil.
func streamPercentiles(s *result.StreamResult, metric string) *result.Percentiles {
	if s == nil {
		return nil
	}
	switch metric {
	case "ttft_response":
		return &s.TTFTResponse
	case "ttft_service":
		return &s.TTFTService
	case "itl":
		return &s.ITL
	case "tpot":
		return &s.TPOT
	}
	return nil
}

// Evaluate checks the objectives against res. An objective whose figure
// has no samples is not met: it is no data, never a pass.
func Evaluate(res *result.Result, objs []Objective) []SLOResult {
	out := make([]SLOResult, 0, len(objs))
	for _, o := range objs {
		r := SLOResult{Objective: o}
		name := o.Metric + "." + o.Stat
		if o.Scope != "" {
			name = o.Scope + ":" + name
		}
		v, err := o.Measure(res)
		switch {
		case err != nil:
			r.NoData = true
			r.Message = fmt.Sprintf("%s %s %s: %v", name, o.Op, o.format(o.Threshold), err)
		default:
			r.Measured = v
			r.Pass = meets(o, v)
			r.Message = fmt.Sprintf("%s %s %s: measured %s", name, o.Op, o.format(o.Threshold), o.format(v))
			if !r.Pass {
				r.Message += " (breached)"
			}
		}
		if o.Default {
			r.Message += " · openload's default (an objective of yours on " + o.Metric + " replaces it)"
		}
		out = append(out, r)
	}
	return out
}

// meets reports whether figure v meets o's bound.
func meets(o Objective, v float64) bool {
	switch o.Op {
	case "<=":
		return v <= o.Threshold
	case "<":
		return v < o.Threshold
	case ">=":
		return v >= o.Threshold
	case ">":
		return v > o.Threshold
	}
	return false
}

// Meets reports whether figure v (ms, or a share) meets the objective's
// bound: what a search applies to a median of repeats.
func (o Objective) Meets(v float64) bool { return meets(o, v) }

func (o Objective) format(v float64) string {
	if o.Share {
		return fmt.Sprintf("%.3g %%", 100*v)
	}
	return fmt.Sprintf("%.3f ms", v)
}

// Breached reports whether any objective was not met.
func Breached(rs []SLOResult) bool {
	for _, r := range rs {
		if !r.Pass {
			return true
		}
	}
	return false
}
