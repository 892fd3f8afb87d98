package verify

import (
	"fmt"
	"sort"
	"strings"

	"github.com/openload/openload/recorder"
)

// The default objective: a target that does not answer fails the run.
//
// A share of the scheduled requests that got no answer at all (errors such
// as refused, reset or tls, timeouts, unfinished) above DefaultErrors
// breaches it. A status is an answer: 429 and 503 are completed responses,
// counted under their status, and never count here. The user's own
// objective on errors (--slo errors<=…) replaces it, and errors<=100%
// switches it off.
//
// Why 1 %: a dead or misconfigured target (nothing listening, an untrusted
// certificate) fails every request and must fail the run; a service that
// answers every request, even with 503s, must not. In between, one user in
// a hundred getting no answer is already worse than the availability most
// services promise (99 % to 99.9 %), and it is the failure threshold k6's
// documentation writes first (http_req_failed rate<0.01; there it counts
// 4xx and 5xx answers too, so that threshold is the stricter one). So a
// service that resets 2 % of its connections fails it; a load test that
// means to push a service into dropping connections says so with its own
// --slo errors<=N%.
const DefaultErrors = 0.01

// DefaultObjectiveExpr is the default objective as the user would write it.
const DefaultObjectiveExpr = "errors<=1%"

// DefaultObjective returns the objective checked when the user set none on
// errors (Objective.Default is true).
func DefaultObjective() Objective {
	return Objective{Expr: DefaultObjectiveExpr, Metric: "errors", Stat: "rate", Op: "<=", Threshold: DefaultErrors, Share: true, Default: true}
}

// WithDefault returns objs with DefaultObjective appended, unless one of
// objs is on errors: the user's own replaces it.
func WithDefault(objs []Objective) []Objective {
	for _, o := range objs {
		if o.Metric == "errors" {
			return objs
		}
	}
	return append(append([]Objective(nil), objs...), DefaultObjective())
}

// TargetFailed reports whether res holds a breached default objective: the
// target failed. False for results written before it existed.
func TargetFailed(res *recorder.Result) bool {
	for _, s := range res.SLOs {
		if s.Default && !s.Pass {
			return true
		}
	}
	return false
}

// tlsCauseWords say what each TLS cause of a result means, and what to do.
var tlsCauseWords = map[string]struct{ meaning, hint string }{
	"self_signed":       {"self-signed certificate", "add --insecure to skip certificate verification, or trust the certificate"},
	"unknown_authority": {"certificate signed by an unknown authority", "add --insecure to skip certificate verification, or trust its CA"},
	"expired":           {"certificate expired or not yet valid", "check its dates and this machine's clock; --insecure skips verification"},
	"hostname":          {"certificate not valid for the URL's host name", "use a host name the certificate names, or --insecure to skip verification"},
	"certificate":       {"certificate rejected", "--insecure skips verification"},
	"handshake":         {"handshake refused (no common protocol version or cipher suite, a client certificate required, …)", ""},
	"not_tls":           {"the server did not answer in TLS", "if it serves plain HTTP, use an http:// URL"},
}

// TLSCauseMeaning explains a TLS cause (a key of Result.TLSCauses) and
// says what to do about it (hint may be empty).
func TLSCauseMeaning(cause string) (meaning, hint string) {
	if w, ok := tlsCauseWords[cause]; ok {
		return w.meaning, w.hint
	}
	return "unknown cause", ""
}

// TLSDetail says in words why the tls errors of res failed, with a hint
// for each cause that has one: "self-signed certificate: add --insecure …"
// for one cause, "self-signed certificate 6: …; expired 4: …" for several.
// A result without causes (written before they were counted) gets the kind's
// meaning.
func TLSDetail(res *recorder.Result) string {
	if len(res.TLSCauses) == 0 {
		return KindMeaning("tls")
	}
	return strings.Join(TLSCausePhrases(res, true), "; ")
}

// TLSCausePhrases says each TLS cause of res in words, the most frequent
// first (then by name): its meaning, its count when there are several
// causes, and with hints its hint after a colon ("expired 4: check its
// dates …"). Nil when res has no causes.
func TLSCausePhrases(res *recorder.Result, hints bool) []string {
	causes := make([]string, 0, len(res.TLSCauses))
	for c := range res.TLSCauses {
		causes = append(causes, c)
	}
	sort.Slice(causes, func(i, j int) bool {
		ni, nj := res.TLSCauses[causes[i]], res.TLSCauses[causes[j]]
		return ni > nj || ni == nj && causes[i] < causes[j]
	})
	var parts []string
	for _, c := range causes {
		meaning, hint := TLSCauseMeaning(c)
		if len(causes) > 1 {
			meaning += fmt.Sprintf(" %d", res.TLSCauses[c])
		}
		if hints && hint != "" {
			meaning += ": " + hint
		}
		parts = append(parts, meaning)
	}
	return parts
}
