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
// VALUE a share), status.CODE (the requests answered with status CODE, a
// code such as 503 or a class 1xx to 5xx: a share of the scheduled
// requests when VALUE ends in %, or written status.CODE.share; else a
// count, a whole number, or written status.CODE.count), and of a session run session (the time of a session
// that ended, from its arrival to its last step's done; a time) or
// sessions_ended_early (the share of the ended sessions that ended early,
// at a failed step; VALUE a share): the rows of result.MetricTable an
// objective may name. OP is one of <= < >= >.
//
// An objective may be scoped to a part of the run, written
//
//	NAME:METRIC[.STAT] OP VALUE
//
// NAME is a target of a request mix or a step of a session run
// (result.Part), a scenario of a run of several, or a scenario's step
// (or target) written SCEN:STEP, and the objective judges its figures:
// response, service, send_delay, errors or client_errors, and ttft
// (ttft_response), ttft_service and tpot where its requests streamed (a
// conversation's turn), the figures a part has; a scenario's own result
// also has session and sessions_ended_early. The name is what precedes
// the last colon before the metric, so it may hold colons ("GET
// http://h:8080/x:response.p99<=300ms", "shop:checkout:response.p99<=300ms").
// scopable reports whether an objective scoped to a part or scenario may
// judge metric (a Name, or a family's member: status.503).
func scopable(metric string) bool {
	m, _ := result.LookupMetric(metric)
	return m.Part || m.Scenario
}

// CheckScopes refuses a name the run has no part of.
//
// A figure with no samples is no data, never a pass (Evaluate): a TTFT
// objective on a run that streamed nothing, a response time when nothing
// was answered.
//
// Examples: response.p99<=200ms, server.queue.max<150ms, errors<=0.5%,
// status.5xx<=1%, status.503<=0, status.2xx.share>=99%,
// class.model.share>=0.4, checkout:response.p99<=300ms, session.p99<=5s,
// shop:sessions_ended_early<=1%, chat:turn2:ttft.p99<=500ms.
type Objective struct {
	Expr      string
	Scope     string // the part judged (a target, step or scenario, or SCEN:STEP); "" for the whole run
	Metric    string // a result.MetricTable Name: response, ttft_response, server.NAME, errors, class.VALUE, session …
	Stat      string // p99, max, mean …; "rate" for errors, "share" for classes
	Op        string
	Threshold float64 // ms for latencies, a ratio for errors and shares
	Share     bool    // Threshold is a ratio, not ms
	Count     bool    // Threshold is a number of requests (status.503<=0)
	Default   bool    // openload's own objective, not the user's (target.go)
}

var latencyStats = []string{"p50", "p90", "p95", "p99", "p999", "p9999", "max", "mean"}

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
	if o.Stat == "" { // status.CODE: the value says share or count
		o.Stat = "count"
		if strings.HasSuffix(rhs, "%") {
			o.Stat = "share"
		}
		o.Share, o.Count = o.Stat == "share", o.Stat == "count"
	}
	switch {
	case o.Count:
		o.Threshold, err = parseCount(rhs)
	case o.Share:
		o.Threshold, err = parseShare(rhs)
	default:
		o.Threshold, err = parseMillis(rhs)
	}
	if err != nil {
		return o, fmt.Errorf("objective %q: %v", expr, err)
	}
	return o, nil
}

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
	case !scopable(scoped.Metric):
		return fmt.Errorf("%s is not a figure of a part: a scoped objective judges %s, and scoped to a scenario %s",
			scoped.Metric, strings.Join(partMetrics(), ", "), strings.Join(scenarioMetrics(), ", "))
	}
	*o = scoped
	return nil
}

// CheckScopes refuses the first objective whose scope names no part in
// names (the run's targets, scenarios and steps: a session run's own as
// STEP, a scenario's as SCEN:STEP), in one line naming the objective and
// the names known, so that a misspelt name is said before anything is
// sent. A misspelt step of a known scenario is said as that: the
// scenario's steps are the names that begin "SCEN:".
func CheckScopes(objs []Objective, names []string) error {
	for _, o := range objs {
		if o.Scope == "" || slices.Contains(names, o.Scope) {
			continue
		}
		if len(names) == 0 {
			return fmt.Errorf("objective %q: no target or scenario named %q: the run has no request mix and no scenarios", o.Expr, o.Scope)
		}
		if scen, step, steps := stepOfScenario(o.Scope, names); len(steps) > 0 {
			return fmt.Errorf("objective %q: scenario %q has no step %q (its steps: %s)", o.Expr, scen, step, quoted(steps))
		}
		return fmt.Errorf("objective %q: no target or scenario named %q (known: %s)", o.Expr, o.Scope, quoted(names))
	}
	return nil
}

// stepOfScenario splits scope as SCEN:STEP by a scenario of names that
// has steps there (names beginning "SCEN:"): the scenario, the step
// asked for, and the scenario's steps; no steps when no scenario fits.
func stepOfScenario(scope string, names []string) (scen, step string, steps []string) {
	for _, n := range names {
		rest, ok := strings.CutPrefix(scope, n+":")
		if !ok {
			continue
		}
		for _, m := range names {
			if s, ok := strings.CutPrefix(m, n+":"); ok {
				steps = append(steps, s)
			}
		}
		if len(steps) > 0 {
			return n, rest, steps
		}
	}
	return "", "", nil
}

// quoted lists names, each quoted: "a", "b".
func quoted(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = strconv.Quote(n)
	}
	return strings.Join(q, ", ")
}

// partMetrics are the figures of a part (result.Part), which a scoped
// objective may judge.
func partMetrics() []string {
	return result.MetricNames(func(m result.Metric) bool { return m.Part })
}

// scenarioMetrics are the run's figures no part has, which an objective
// scoped to a scenario may judge: the session figures.
func scenarioMetrics() []string {
	return result.MetricNames(func(m result.Metric) bool { return m.Scenario })
}

// knownMetrics lists the figures an objective may name, as it writes
// them (result.MetricTable's Objective).
func knownMetrics() string {
	var names []string
	for _, m := range result.MetricTable() {
		if m.Objective != "" {
			names = append(names, m.Objective)
		}
	}
	return "known metrics: " + strings.Join(names, ", ")
}

// parseMetric reads METRIC[.STAT] by result.MetricTable: a share by its
// name ("errors", or "errors.rate"), a family by its prefix
// (parseFamily), a time as NAME.STAT.
func (o *Objective) parseMetric(lhs string) error {
	for _, m := range result.MetricTable() {
		switch {
		case m.Objective == "":
		case m.Prefix != "" && strings.HasPrefix(lhs, m.Prefix):
			return o.parseFamily(m, strings.TrimPrefix(lhs, m.Prefix))
		case m.Prefix == "" && m.Share && (lhs == m.Name || lhs == m.Name+".rate"):
			o.Metric, o.Stat, o.Share = m.Name, "rate", true
			return nil
		}
	}
	metric, stat, _ := cutStat(lhs)
	m, ok := objectiveTime(metric)
	if !ok {
		return fmt.Errorf("unknown metric %q (%s)", metric, knownMetrics())
	}
	return o.setTime(m.Name, stat)
}

// objectiveTime is the time figure an objective writes as name: by its
// Name, or by its Objective ("ttft" is ttft_response).
func objectiveTime(name string) (result.Metric, bool) {
	for _, m := range result.MetricTable() {
		if m.Objective != "" && !m.Share && m.Prefix == "" && (name == m.Name || name == m.Objective) {
			return m, true
		}
	}
	return result.Metric{}, false
}

// parseFamily reads the rest of a family's objective after its prefix:
// a share's VALUE.share (class.VALUE.share), a time's NAME.STAT
// (server.NAME.STAT).
func (o *Objective) parseFamily(m result.Metric, rest string) error {
	family := strings.TrimSuffix(m.Prefix, ".")
	if m.Count {
		return o.parseStatus(m, rest)
	}
	if m.Share {
		v, ok := strings.CutSuffix(rest, ".share")
		if !ok || v == "" {
			return fmt.Errorf("write a %s objective as %s", family, m.Objective)
		}
		o.Metric, o.Stat, o.Share = m.Prefix+v, "share", true
		return nil
	}
	name, stat, _ := cutStat(rest)
	if name == "" {
		return fmt.Errorf("write a %s metric as %s.STAT", family, m.Objective)
	}
	return o.setTime(m.Prefix+name, stat)
}

// parseStatus reads a status objective's CODE[.share|.count] after its
// prefix: a code (100 to 599) or a class (1xx to 5xx). Without a
// statistic the value decides (ParseObjective): 1% a share, 0 a count.
func (o *Objective) parseStatus(m result.Metric, rest string) error {
	code, stat := rest, ""
	if c, s, ok := strings.Cut(rest, "."); ok {
		code, stat = c, s
	}
	switch {
	case m.Prefix == "grpc.":
		if _, ok := result.GRPCCode(code); !ok && code != result.GRPCOther {
			return fmt.Errorf("grpc status %q is not a gRPC code's name (ok, cancelled, unknown, invalid_argument, deadline_exceeded, not_found, … unavailable, unauthenticated) nor %s; write e.g. grpc.unavailable<=1%% or grpc.ok>=99%%", code, result.GRPCOther)
		}
		code = strings.ToLower(code)
	case !statusKey(code):
		return fmt.Errorf("status %q is neither a code (100 to 599, e.g. 503) nor a class (1xx to 5xx); write e.g. status.5xx<=1%% or status.503<=0", code)
	}
	switch stat {
	case "", "share", "count":
	default:
		return fmt.Errorf("unknown statistic %q of a status: write %s%s.share (a share) or %s%s.count (a count)", stat, m.Prefix, code, m.Prefix, code)
	}
	o.Metric, o.Stat, o.Share, o.Count = m.Prefix+code, stat, stat == "share", stat == "count"
	return nil
}

// statusKey reports whether k is a status code (100 to 599) or a
// status class (1xx to 5xx).
func statusKey(k string) bool {
	if len(k) != 3 || k[0] < '1' || k[0] > '5' {
		return false
	}
	if k[1:] == "xx" {
		return true
	}
	_, err := strconv.Atoi(k)
	return err == nil && k[1] >= '0' && k[1] <= '9' && k[2] >= '0' && k[2] <= '9'
}

// statusMatches reports whether an answer's status s (a key of
// result.Status, "503") is of key: the code itself, or in its class.
func statusMatches(key, s string) bool {
	if strings.HasSuffix(key, "xx") {
		return len(s) == 3 && s[0] == key[0]
	}
	return s == key
}

// setTime sets a time objective's metric and statistic, an alias read as
// its statistic.
func (o *Objective) setTime(metric, stat string) error {
	if stat == "" {
		return fmt.Errorf("%s needs a statistic, e.g. %s.p99 (one of %s)", metric, metric, strings.Join(latencyStats, " "))
	}
	if a, ok := statAliases[stat]; ok {
		stat = a
	}
	if !slices.Contains(latencyStats, stat) {
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

// parseCount reads a count of requests: a whole number ≥ 0.
func parseCount(v string) (float64, error) {
	n, err := strconv.ParseUint(v, 10, 53)
	if err != nil {
		return 0, fmt.Errorf("value %q is not a count of requests (a whole number such as 0 or 10); a share is written with %%, e.g. 1%%", v)
	}
	return float64(n), nil
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
	m, ok := result.LookupMetric(o.Metric)
	if o.Scope != "" {
		scoped, isPart, err := partOf(res, o.Scope)
		switch {
		case err != nil:
			return 0, err
		case isPart && ok && m.Scenario && m.Prefix == "grpc.":
			return 0, noData("%s is a figure of a scenario's gRPC calls, and %q is a step or target, not a scenario", o.Metric, o.Scope)
		case isPart && ok && m.Scenario:
			return 0, noData("%s is a figure of a scenario's sessions, and %q is a step or target, not a scenario", o.Metric, o.Scope)
		}
		res = scoped
	}
	switch {
	case !ok:
		return 0, noData("no figure named %q (%s)", o.Metric, knownMetrics())
	case computed[m.Name] != nil:
		return computed[m.Name](res, o)
	case m.Of == nil:
		return 0, noData("%s is not a figure an objective reads", o.Metric)
	}
	return timeFigure(res, o, m)
}

// computed are the readers of the figures verify counts itself, rather
// than reading percentiles the result holds (result.Metric.Of): the
// shares and the Server-Timing family, by their rows' Names.
// TestMeasuresEveryMetric holds every row an objective may name to a
// reader, here or the row's Of.
var computed = map[string]func(*result.Result, Objective) (float64, error){
	"errors":               errorsShare,
	"client_errors":        clientErrorsShare,
	"class.VALUE":          classShare,
	"status.CODE":          statusFigure,
	"grpc.CODE":            grpcFigure,
	"server.NAME":          serverFigure,
	"sessions_ended_early": endedEarlyShare,
}

// endedEarlyShare is the share of the ended sessions (completed or ended
// early) that ended early. A session still walking when the run ended
// might have gone either way, so it is in neither the share nor its
// base.
func endedEarlyShare(res *result.Result, _ Objective) (float64, error) {
	s := res.Sessions
	if s == nil {
		return 0, noSessions(res)
	}
	ended := s.Completed + s.EndedEarly
	if ended == 0 {
		return 0, noneEnded(s)
	}
	return float64(s.EndedEarly) / float64(ended), nil
}

// noSessions is the no data of a session figure on a run without
// sessions, naming the scenarios that had some: their sessions are
// theirs, judged by a scoped objective.
func noSessions(res *result.Result) error {
	var with []string
	for _, sc := range res.Scenarios {
		if sc.Result != nil && sc.Result.Sessions != nil {
			with = append(with, sc.Name)
		}
	}
	if len(with) > 0 {
		return noData("the run has no sessions of its own; scenarios %s have theirs: scope the objective to one (%s:…)", quoted(with), with[0])
	}
	return noData("the run has no sessions")
}

// noneEnded is the no data of a session figure when no session ended.
func noneEnded(s *result.Sessions) error {
	if s.Started == 0 {
		return noData("no session started (%d expected)", s.Expected)
	}
	return noData("no session ended: %d started, %d unfinished when the run ended", s.Started, s.Unfinished)
}

// errorsShare is the share of scheduled requests that did not complete.
func errorsShare(res *result.Result, _ Objective) (float64, error) {
	c := res.Headline() // without a --warmup's requests
	// The requests a stop cut short (an interrupted run, a sweep's early
	// stop) are unfinished by the stop, not failed by the target: they
	// count in neither the share nor its base.
	bad, n := c.Errors+c.Timeouts+c.Unfinished, c.Scheduled
	if res.Interrupted {
		bad, n = bad-c.Unfinished, n-c.Unfinished
	}
	if n <= 0 {
		return 0, noData("no request was scheduled")
	}
	return float64(bad) / float64(n), nil
}

// clientErrorsShare is the share of scheduled requests answered with a
// client error.
func clientErrorsShare(res *result.Result, _ Objective) (float64, error) {
	// Statuses are counted over the whole run, warm-up included, and so
	// is the base of the share.
	if res.Counts.Scheduled == 0 {
		return 0, noData("no request was scheduled")
	}
	return float64(ClientErrors(res)) / float64(res.Counts.Scheduled), nil
}

// statusFigure is the share of the scheduled requests answered with
// the objective's status (a code, or any of a class), or their count.
// As client_errors, statuses and the base of the share are counted over
// the whole run, warm-up included; a request that got no answer has no
// status, so it is in the base of the share but in no status's count
// (errors judges it).
func statusFigure(res *result.Result, o Objective) (float64, error) {
	key := strings.TrimPrefix(o.Metric, "status.")
	if res.Counts.Scheduled == 0 {
		return 0, noData("no request was scheduled")
	}
	var n int64
	for s, c := range res.Status {
		if statusMatches(key, s) {
			n += c
		}
	}
	if o.Count {
		return float64(n), nil
	}
	return float64(n) / float64(res.Counts.Scheduled), nil
}

// grpcFigure is the share of the scheduled requests answered with the
// objective's grpc-status, or their count, as statusFigure's: a call that
// got no grpc-status is in the base of the share and in no code's count.
func grpcFigure(res *result.Result, o Objective) (float64, error) {
	key := strings.TrimPrefix(o.Metric, "grpc.")
	switch {
	case res.Counts.Scheduled == 0:
		return 0, noData("no request was scheduled")
	case res.GRPC == nil:
		return 0, noData("no answer carried a grpc-status (%s)", answers(res))
	}
	n := res.GRPC[key]
	if o.Count {
		return float64(n), nil
	}
	return float64(n) / float64(res.Counts.Scheduled), nil
}

// classShare is the share of classed answers whose class header had the
// objective's value.
func classShare(res *result.Result, o Objective) (float64, error) {
	_, want, _ := strings.Cut(o.Metric, ".") // past the family's prefix
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
	// A class value that never occurred among classed answers has share
	// 0: that is a measurement.
	return 0, nil
}

// serverFigure is the objective's statistic of a Server-Timing metric.
func serverFigure(res *result.Result, o Objective) (float64, error) {
	_, name, _ := strings.Cut(o.Metric, ".") // past the family's prefix
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
}

// timeFigure is the objective's statistic of a time the result holds,
// and no data by what the time has samples of (result.Samples).
func timeFigure(res *result.Result, o Objective, m result.Metric) (float64, error) {
	p := m.Of(res)
	switch m.Samples {
	case result.OfStreams:
		return streamFigure(res, o, p)
	case result.OfSessions:
		return sessionFigure(res, o, p)
	}
	if p == nil {
		p = &result.Percentiles{}
	}
	c := res.Headline() // without a --warmup's requests
	switch {
	case m.Samples == result.OfAnswers && c.Completed == 0:
		// Without an answer there is no response or service time: the
		// histogram then holds only the time each request took to fail.
		return 0, noData("%s", answers(res))
	case m.Samples == result.OfSends && p.Count == 0:
		return 0, noData("no request was sent (%d scheduled)", c.Scheduled)
	}
	v, _ := p.Get(o.Stat)
	return v, nil
}

// sessionFigure is the objective's statistic of the session time, p
// (nil when res had no sessions): no data when no session ended.
func sessionFigure(res *result.Result, o Objective, p *result.Percentiles) (float64, error) {
	switch {
	case p == nil:
		return 0, noSessions(res)
	case p.Count == 0:
		return 0, noneEnded(res.Sessions)
	}
	v, _ := p.Get(o.Stat)
	return v, nil
}

// partOf is the part of res named name as a result of its own, for
// Measure to read as it reads a run's, and whether it is a part (a
// target or step) rather than a scenario, whose own result is whole.
// name is, in this order, a scenario; a target or step of res
// (result.Result.Part: a session run's own steps); or SCEN:STEP, a
// scenario's step (or target). No such part is no data.
func partOf(res *result.Result, name string) (*result.Result, bool, error) {
	for _, sc := range res.Scenarios { // a scenario's own result, whole
		if sc.Name == name {
			return sc.Result, false, nil
		}
	}
	if p := res.Part(name); p != nil {
		return partResult(res, p), true, nil
	}
	// A target or step of a scenario by its name alone, when no other
	// scenario has one of that name (else SCEN:NAME says which).
	var own []string
	var part *result.Part
	var of *result.Result
	for _, sc := range res.Scenarios {
		if sc.Result == nil {
			continue
		}
		if p := sc.Result.Part(name); p != nil {
			own, part, of = append(own, sc.Name), p, sc.Result
		}
	}
	switch {
	case len(own) == 1:
		return partResult(of, part), true, nil
	case len(own) > 1:
		return nil, false, noData("scenarios %s each have %q: name one as SCENARIO:%s", quoted(own), name, name)
	}
	// A scenario's name may hold a colon too: try every scenario the
	// name begins with.
	var in *result.Scenario
	for i, sc := range res.Scenarios {
		rest, ok := strings.CutPrefix(name, sc.Name+":")
		if !ok || sc.Result == nil {
			continue
		}
		if p := sc.Result.Part(rest); p != nil {
			return partResult(sc.Result, p), true, nil
		}
		in = &res.Scenarios[i]
	}
	switch {
	case in != nil && len(in.Result.Steps) > 0:
		step := strings.TrimPrefix(name, in.Name+":")
		return nil, false, noData("scenario %q has no step %q (its steps: %s)", in.Name, step, quoted(result.PartNames(in.Result.Steps)))
	case in != nil:
		return nil, false, noData("scenario %q has no steps or targets, so no %q", in.Name, strings.TrimPrefix(name, in.Name+":"))
	case len(res.Steps) > 0:
		return nil, false, noData("the run has no step %q (its steps: %s)", name, quoted(result.PartNames(res.Steps)))
	case len(res.Targets) == 0:
		return nil, false, noData("the run has no request mix, so no target %q", name)
	}
	return nil, false, noData("the run has no target %q", name)
}

// partResult is part p of res as a result: its counts (the headline's
// requests only: a part holds no warm-up), statuses, error kinds,
// latencies and stream figures.
func partResult(res *result.Result, p *result.Part) *result.Result {
	out := &result.Result{Config: res.Config, Counts: p.Counts.Counts(), Response: p.Response, Service: p.Service, SendDelay: p.SendDelay,
		Status: p.Status, ErrorKinds: p.ErrorKinds, Interrupted: res.Interrupted}
	if s := p.Stream; s != nil {
		out.Stream = &result.StreamResult{TTFTResponse: s.TTFTResponse, TTFTService: s.TTFTService, TPOT: s.TPOT,
			OutputTokens: s.OutputTokens, PromptTokens: s.PromptTokens, CachedTokens: s.CachedTokens}
	}
	return out
}

// streamFigure reads a stream figure (TTFT either way, ITL, TPOT) of res,
// p (nil when res streamed nothing).
func streamFigure(res *result.Result, o Objective, p *result.Percentiles) (float64, error) {
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
	if o.Count {
		return fmt.Sprintf("%.0f", v)
	}
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
