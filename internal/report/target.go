package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/openload/openload/result"
	"github.com/openload/openload/verify"
)

// unanswered says how many requests got no answer and why: "60 of 60
// refused", "32 of 1600 reset (2.0 %, above errors<=1%)", "45 of 60 got no
// answer (75.0 %, above errors<=1%): refused 30 · timed out 15".
func unanswered(res *result.Result) string {
	c := res.Counts
	bad := c.Errors + c.Timeouts + c.Unfinished
	kinds := sortedKeys(res.ErrorKinds)
	share := ""
	if bad < c.Scheduled {
		share = fmt.Sprintf(" (%.1f %%, above %s)", 100*float64(bad)/float64(max(c.Scheduled, 1)), defaultExpr(res))
	}
	if len(kinds) == 1 {
		return fmt.Sprintf("%d of %d %s%s", bad, c.Scheduled, kindPhrase(res, kinds[0]), share)
	}
	parts := make([]string, len(kinds))
	for i, k := range kinds {
		parts[i] = fmt.Sprintf("%s %d", kindPhrase(res, k), res.ErrorKinds[k])
	}
	return fmt.Sprintf("%d of %d got no answer%s: %s", bad, c.Scheduled, share, strings.Join(parts, " · "))
}

// kindPhrase is an error kind as a verdict says it: "refused", "timed
// out", "tls: self-signed certificate".
func kindPhrase(res *result.Result, kind string) string {
	switch kind {
	case "timeout":
		return "timed out"
	case "stream":
		return "ended in a stream error event"
	case "save":
		return "answered without a value to save"
	case "protocol":
		if res.Config.Protocol == "h2c" {
			return "protocol (answered HTTP/1.1 to HTTP/2 with prior knowledge: the server does not speak h2c)"
		}
		return "protocol (" + verify.KindMeaning(kind) + ")"
	case "tls":
		if len(res.TLSCauses) == 0 {
			return "tls"
		}
		return "tls: " + strings.Join(verify.TLSCausePhrases(res, false), ", ")
	case "other":
		return "other (" + verify.KindMeaning(kind) + ")"
	}
	return kind
}

func defaultExpr(res *result.Result) string {
	for _, s := range res.SLOs {
		if s.Default {
			return "the default " + s.Expr
		}
	}
	return "the default " + verify.DefaultObjectiveExpr
}

// sortedKeys returns m's keys, largest count first, then by name.
func sortedKeys(m map[string]int64) []string { return verify.SortedByCount(m) }

// headRows are the first rows of the latency table. When every request got
// an answer: response time, service time, send delay. When some did not,
// the response-time row holds both, as it always did, and two rows under
// it set them apart: the requests answered (any status) and those without
// an answer ("no answer (N)"), at the time they took to fail. When none
// got an answer, the one response-time row is named for what it holds,
// "no answer (N)", the line under the table saying it is the time to
// failure, so that a refused port does not read as a fast service. (Not
// "no answer (N): time to failure": the table then took 111 columns.)
func headRows(res *result.Result) []Row {
	c := res.Counts
	bad := c.Errors + c.Timeouts + c.Unfinished
	rest := []Row{{"service time", res.Service}, {"send delay", res.SendDelay}}
	switch {
	case bad == 0:
		return append([]Row{{"response time", res.Response}}, rest...)
	case c.Completed == 0:
		return append([]Row{{fmt.Sprintf("no answer (%d)", bad), res.Response}}, rest...)
	case res.Answered == nil || res.Unanswered == nil:
		// A result written before the split: label the mix.
		return append([]Row{{"response time, all", res.Response}}, rest...)
	}
	return append([]Row{
		{"response time, all", res.Response},
		{fmt.Sprintf("answered (%d)", res.Answered.Count), *res.Answered},
		{fmt.Sprintf("no answer (%d)", res.Unanswered.Count), *res.Unanswered},
	}, rest...)
}

// answerNote says what the head rows hold when some requests got no
// answer (nothing otherwise).
func answerNote(w io.Writer, res *result.Result) {
	c := res.Counts
	bad := c.Errors + c.Timeouts + c.Unfinished
	switch {
	case bad == 0:
	case c.Completed == 0:
		fmt.Fprintf(w, "NO ANSWER: none of the %d requests got one (%s); the first row is the time each took to fail, not a response time\n",
			c.Scheduled, whatFailed(res))
	default:
		fmt.Fprintf(w, "all = every request; %d of %d got no answer (%s) and count at the time they took to fail · answered = the %d that completed, with any status\n",
			bad, c.Scheduled, whatFailed(res), c.Completed)
	}
}

// whatFailed lists the error kinds: "refused 60", "reset 3 · timeout 2".
func whatFailed(res *result.Result) string { return verify.KindCounts(res.ErrorKinds) }

// tlsLine is the report's line on TLS failures by cause, with what to do
// ("" when there were none).
func tlsLine(res *result.Result) string {
	causes := sortedKeys(res.TLSCauses)
	if len(causes) == 0 {
		return ""
	}
	parts := make([]string, len(causes))
	for i, c := range causes {
		meaning, hint := verify.TLSCauseMeaning(c)
		parts[i] = fmt.Sprintf("%s ×%d", meaning, res.TLSCauses[c])
		if hint != "" {
			parts[i] += " (" + hint + ")"
		}
	}
	return strings.Join(parts, " · ")
}
