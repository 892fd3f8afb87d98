package report

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"unicode"

	"github.com/openload/openload/result"
	"github.com/openload/openload/verify"
)

// The verdict: the one renderer of what a run, a merge, a sweep's point or
// a repeat ended in (verify.Outcome, as its result stores it). The CLI
// gives the exit code it chose; nothing here maps classes to codes.

// A Line is one line of the verdict: its label ("result", "hint",
// "objectives") and its text.
type Line struct{ Label, Text string }

// String is the line as the report prints it: "result: …", "hint:   …".
func (l Line) String() string {
	return fmt.Sprintf("%-7s %s", l.Label+":", l.Text)
}

// VerdictLines are the verdict of res: the result line, a hint line per
// hint when the target failed, a hint line when the connection limit of
// a streamed run bound (verify.StreamLimit), and, when an objective of the user's was
// not met, the objectives' line; the line that decided the exit code ends
// in "(exit N)" when exit is not 0.
func VerdictLines(res *result.Result, exit int) []Line {
	code := ""
	if exit != 0 {
		code = " (exit " + strconv.Itoa(exit) + ")"
	}
	class := verify.ClassOf(res)
	// The exit code goes on the line that decided it: the objectives'
	// for a breach of the user's, the result's for every other.
	lines := []Line{{"result", RunVerdict(res)}}
	if class != verify.ClassBreached {
		lines[0].Text += code
	}
	if verify.TargetFailed(res) && (class == verify.ClassTargetFailed || class == verify.ClassInvalid) {
		for _, h := range TargetHints(res) {
			lines = append(lines, Line{"hint", h})
		}
	}
	if text, ok := verify.StreamLimit(res); ok {
		// Said on its own line: a valid run's verdict names only the
		// check, and this wait is the one a model-server user misreads
		// as the server's TTFT.
		lines = append(lines, Line{"hint", fmt.Sprintf("the limit of %d connections bound: %s", res.Limit.Connections, text)})
	}
	if verify.UserBreached(res) {
		// Name the objectives breached, so that a -q run's one line says
		// which; those without data are said apart.
		var breached, nodata []string
		for _, s := range res.SLOs {
			switch {
			case s.Default || s.Pass:
			case s.NoData:
				nodata = append(nodata, s.Expr)
			default:
				breached = append(breached, s.Expr)
			}
		}
		text := "BREACHED"
		if len(breached) > 3 { // a line, not a list: the report above has them all
			breached = append(breached[:3], fmt.Sprintf("and %d more", len(breached)-3))
		}
		if len(breached) > 0 {
			text += ": " + strings.Join(breached, ", ")
		}
		if len(nodata) > 0 {
			text += " (no data for " + strings.Join(nodata, ", ") + ")"
		}
		if class == verify.ClassBreached {
			text += code
		}
		lines = append(lines, Line{"objectives", text})
	}
	return lines
}

// RunVerdict is the verdict line of a run: the checks' (Verdict), or what
// the target did when it failed, or both when a check failed too; an
// interrupted run says so first.
func RunVerdict(res *result.Result) string {
	v := Verdict(res.Checks)
	line, failed := TargetVerdict(res)
	switch {
	case res.Interrupted:
		return fmt.Sprintf("interrupted after %.1f s: %d of %d requests scheduled before the stop; checks %s", res.Elapsed, res.Counts.Scheduled, int64(res.Counts.Expected), v)
	case !failed:
		return v
	case strings.HasPrefix(v, "INVALID"):
		return v + "; and " + line
	}
	return line
}

// TargetVerdict is the verdict of a run whose target failed (a default
// objective, verify.WithDefault, was breached), naming what happened:
// "target failed: 60 of 60 refused", "target refused the requests: 30 of
// 30 answered 415 Unsupported Media Type". ok is false when the target did
// not fail, and for results written before the default objectives existed.
func TargetVerdict(res *result.Result) (line string, ok bool) {
	var parts []string
	for _, s := range res.SLOs {
		if !s.Default || s.Pass {
			continue
		}
		if strings.HasPrefix(s.Expr, "client_errors") {
			parts = append(parts, refused(res, s))
		} else {
			parts = append(parts, "target failed: "+unanswered(res))
		}
	}
	if len(parts) == 0 {
		return "", false
	}
	return strings.Join(parts, "; and "), true
}

// refused says how many answers refused the requests as client errors, by
// status, with the plain cause of a lone status: "target refused the
// requests: 30 of 30 answered 415 Unsupported Media Type (a JSON body
// without Content-Type? …)", "target refused 5 of 100 requests (5.0 %,
// above the default client_errors<=1%): 5 answered 404 Not Found".
func refused(res *result.Result, s result.SLO) string {
	if s.NoData {
		return "target failed: " + s.Message
	}
	n, of := verify.ClientErrors(res), res.Counts.Scheduled
	codes := verify.ClientErrorCodes(res)
	parts := make([]string, len(codes))
	for i, code := range codes {
		parts[i] = fmt.Sprintf("%d answered %s", res.Status[strconv.Itoa(code)], statusName(code))
	}
	for _, key := range verify.SortedByCount(res.GRPC) { // gRPC's refusals (verify.ClientErrors)
		if code, ok := result.GRPCCode(key); ok && result.GRPCClass(code) == result.GRPCRefusal {
			parts = append(parts, fmt.Sprintf("%d answered grpc-status %s", res.GRPC[key], result.GRPCCodeName(code)))
		}
	}
	what := strings.Join(parts, " · ")
	if len(codes) == 1 {
		what = fmt.Sprintf("answered %s", statusName(codes[0]))
		if h := verify.StatusHint(res, codes[0]); h != "" {
			what += " (" + h + ")"
		}
	}
	if n == of {
		said := ""
		if q := RefusalQuote(res.Refusal); q != "" {
			// The server's own words: why is often only there.
			said = "; the first said: " + q
			if len(codes) > 1 {
				said = fmt.Sprintf("; the first (%d) said: %s", res.Refusal.Status, q)
			}
		}
		if len(codes) == 1 {
			return fmt.Sprintf("target refused the requests: %d of %d %s%s", n, of, what, said)
		}
		return fmt.Sprintf("target refused the requests: %d of %d answered a client error: %s%s", n, of, what, said)
	}
	if len(codes) == 1 {
		what = fmt.Sprintf("%d %s", n, what)
	}
	return fmt.Sprintf("target refused %d of %d requests (%.1f %%, above the default %s): %s", n, of, 100*float64(n)/float64(max(of, 1)), s.Expr, what)
}

// RefusalQuoteMax is the most characters RefusalQuote keeps of a body.
const RefusalQuoteMax = 160

// RefusalQuote is the body of a refused answer on one line, as a
// verdict quotes it: control characters and line breaks made spaces,
// runs of spaces one, at most RefusalQuoteMax characters, "…" where it
// was cut (here or when it was kept); JSON stays as the server wrote it.
// "" when there is no refusal or its body is empty.
func RefusalQuote(r *result.Refusal) string {
	if r == nil {
		return ""
	}
	var out []rune
	space := false
	for _, c := range r.Body {
		if unicode.IsControl(c) || unicode.IsSpace(c) {
			space = len(out) > 0
			continue
		}
		if space {
			out = append(out, ' ')
			space = false
		}
		out = append(out, c)
		if len(out) > RefusalQuoteMax {
			break
		}
	}
	switch {
	case len(out) == 0:
		return ""
	case len(out) > RefusalQuoteMax, r.Cut && len(out) == RefusalQuoteMax:
		return string(out[:RefusalQuoteMax-1]) + "…"
	case r.Cut:
		return string(out) + "…"
	}
	return string(out)
}

// statusName is a status with its text: "415 Unsupported Media Type".
func statusName(code int) string {
	if t := http.StatusText(code); t != "" {
		return fmt.Sprintf("%d %s", code, t)
	}
	return strconv.Itoa(code)
}

// TargetHints are what to do about the failures of res, one line each:
// for each client-error status with a plain cause, the cause (a 415: a
// JSON body without Content-Type?), and for each TLS cause, what to do
// (in words: the CLI names its flags).
func TargetHints(res *result.Result) []string {
	var out []string
	seen := map[string]bool{}
	add := func(h string) {
		if h != "" && !seen[h] {
			seen[h] = true
			out = append(out, h)
		}
	}
	if codes := verify.ClientErrorCodes(res); len(codes) > 1 { // a lone one's is in the verdict
		for _, code := range codes {
			if h := verify.StatusHint(res, code); h != "" {
				add(fmt.Sprintf("%d: %s", code, h))
			}
		}
	}
	for _, c := range sortedKeys(res.TLSCauses) {
		_, hint := verify.TLSCauseMeaning(c)
		add(hint)
	}
	if res.ErrorKinds["protocol"] > 0 && res.Config.Protocol == "h2c" {
		add("the server does not speak h2c: send HTTP/1.1 (without h2c), or serve h2c (openload stub serves it with its h2c switch)")
	}
	return out
}
