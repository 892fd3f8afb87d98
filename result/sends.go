package result

import (
	"fmt"
	"slices"
	"strings"
)

// Sends says what the run sends, for its headline: SendsOf its method,
// target and request, or what its scenarios send.
func (r *Result) Sends() string {
	if len(r.Scenarios) > 0 {
		return scenariosSend(r.Scenarios)
	}
	return SendsOf(r.Config.Method, r.Config.Target, r.Config.Request)
}

// SendsOf says what a run sends, for its headline: METHOD URL, or for a
// request mix its targets by method ("3 targets (GET 2, POST 1)"), not
// its first target's method and templated URL.
func SendsOf(method, target string, q *Request) string {
	if q == nil || len(q.TargetMethods) == 0 {
		return method + " " + target
	}
	n := 0
	for _, c := range q.TargetMethods {
		n += c
	}
	return targetCount(n, q.TargetMethods)
}

// methodCounts lists methods by count, most first: "GET 2, POST 1".
func methodCounts(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int {
		if m[a] != m[b] {
			return m[b] - m[a]
		}
		return strings.Compare(a, b)
	})
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", k, m[k])
	}
	return strings.Join(parts, ", ")
}

// scenariosSend says what the scenarios of a run send: each one's METHOD
// URL when there are at most two and none is a mix, else their targets
// by method ("4 targets (GET 3, POST 1)") and the scenarios that are
// session runs ("sessions of shop").
func scenariosSend(scs []Scenario) string {
	methods := map[string]int{}
	var each, sessions []string
	plain := len(scs) <= 2
	for _, sc := range scs {
		if sc.Result == nil {
			continue
		}
		c := sc.Result.Config
		switch {
		case c.Request != nil && len(c.Request.TargetMethods) > 0:
			plain = false
			for m, n := range c.Request.TargetMethods {
				methods[m] += n
			}
		case len(sc.Result.Steps) > 0: // in the plain list by its URL, else named apart
			sessions = append(sessions, sc.Name)
		default:
			methods[c.Method]++
		}
		if s := c.Method + " " + c.Target; !slices.Contains(each, s) {
			each = append(each, s)
		}
	}
	if plain {
		return strings.Join(each, ", ")
	}
	n := 0
	for _, c := range methods {
		n += c
	}
	var out []string
	if n > 0 {
		out = append(out, targetCount(n, methods))
	}
	if len(sessions) > 0 {
		out = append(out, "sessions of "+strings.Join(sessions, ", "))
	}
	return strings.Join(out, " + ")
}

// targetCount is "3 targets (GET 2, POST 1)", "1 target (POST 1)".
func targetCount(n int, methods map[string]int) string {
	word := "targets"
	if n == 1 {
		word = "target"
	}
	return fmt.Sprintf("%d %s (%s)", n, word, methodCounts(methods))
}
