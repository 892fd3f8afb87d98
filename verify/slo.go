package verify

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/openload/openload/recorder"
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
// such as 1% or 0.01) or class.VALUE.share (the share of requests whose
// class header had VALUE; VALUE a share). OP is one of <= < >= >.
//
// Examples: response.p99<=200ms, server.queue.max<150ms, errors<=0.5%,
// class.model.share>=0.4.
type Objective struct {
	Expr      string
	Metric    string // response, service, send_delay, server.NAME, errors, class.VALUE
	Stat      string // p99, max, mean …; "rate" for errors, "share" for classes
	Op        string
	Threshold float64 // ms for latencies, a ratio for errors and shares
	Share     bool    // Threshold is a ratio, not ms
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
	if err := o.parseMetric(lhs); err != nil {
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

func (o *Objective) parseMetric(lhs string) error {
	known := "known metrics: response, service, send_delay, ttft, ttft_service, itl, tpot, server.NAME, errors, class.VALUE.share"
	switch {
	case lhs == "errors" || lhs == "errors.rate":
		o.Metric, o.Stat, o.Share = "errors", "rate", true
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
		switch metric {
		case "response", "service", "send_delay", "ttft_response", "ttft_service", "itl", "tpot":
		case "ttft": // from the schedule, as response time is
			metric = "ttft_response"
		default:
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
	Measured  float64 // ms or ratio
	Pass      bool
	Message   string
}

// Measure reads the objective's figure from res. The error says why the
// result cannot answer it (the metric is absent) and lists what it holds.
func (o Objective) Measure(res *recorder.Result) (float64, error) {
	switch {
	case o.Metric == "errors":
		c := res.Headline() // without a --warmup's requests
		if c.Scheduled == 0 {
			return 0, fmt.Errorf("no request was scheduled")
		}
		return float64(c.Errors+c.Timeouts+c.Unfinished) / float64(c.Scheduled), nil
	case strings.HasPrefix(o.Metric, "class."):
		want := strings.TrimPrefix(o.Metric, "class.")
		if len(res.Classes) == 0 {
			return 0, fmt.Errorf("the run recorded no classes (use --class-header)")
		}
		for _, t := range res.Classes {
			for _, v := range t.Values {
				if v.Value == want {
					return v.Share, nil
				}
			}
		}
		// A class value that never occurred has share 0.
		return 0, nil
	case strings.HasPrefix(o.Metric, "server."):
		name := strings.TrimPrefix(o.Metric, "server.")
		var names []string
		for _, m := range res.ServerTiming {
			if m.Name == name {
				v, _ := m.Percentiles.Get(o.Stat)
				return v, nil
			}
			names = append(names, m.Name)
		}
		if len(names) == 0 {
			return 0, fmt.Errorf("the result has no Server-Timing metrics (use --server-timing)")
		}
		return 0, fmt.Errorf("the result has no Server-Timing metric %q (it has: %s)", name, strings.Join(names, ", "))
	}
	var p recorder.Percentiles
	if st := streamPercentiles(res.Stream, o.Metric); st != nil {
		v, _ := st.Get(o.Stat)
		return v, nil
	} else if isStreamMetric(o.Metric) {
		return 0, fmt.Errorf("the result has no stream figures (use --stream against a server that streams)")
	}
	switch o.Metric {
	case "response":
		p = res.Response
	case "service":
		p = res.Service
	case "send_delay":
		p = res.SendDelay
	}
	v, _ := p.Get(o.Stat)
	return v, nil
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
func streamPercentiles(s *recorder.StreamResult, metric string) *recorder.Percentiles {
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

// Evaluate checks the objectives against res. An objective the result cannot
// answer is a breach: an objective nobody can check is not met.
func Evaluate(res *recorder.Result, objs []Objective) []SLOResult {
	out := make([]SLOResult, 0, len(objs))
	for _, o := range objs {
		r := SLOResult{Objective: o}
		v, err := o.Measure(res)
		if err != nil {
			r.Message = fmt.Sprintf("%s: cannot evaluate: %v", o.Expr, err)
			out = append(out, r)
			continue
		}
		r.Measured = v
		switch o.Op {
		case "<=":
			r.Pass = v <= o.Threshold
		case "<":
			r.Pass = v < o.Threshold
		case ">=":
			r.Pass = v >= o.Threshold
		case ">":
			r.Pass = v > o.Threshold
		}
		r.Message = fmt.Sprintf("%s %s %s: measured %s", o.Metric+"."+o.Stat, o.Op, o.format(o.Threshold), o.format(v))
		if !r.Pass {
			r.Message += " (breached)"
		}
		if o.Default {
			r.Message += " · openload's default (your own --slo errors<=N% replaces it)"
		}
		out = append(out, r)
	}
	return out
}

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
