package verify

import (
	"fmt"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/openload/openload/result"
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

// The default objective on client errors: a target that refuses the
// requests fails the run.
//
// A share of the scheduled requests answered with a 4xx status other than
// 408 (Request Timeout) and 429 (Too Many Requests) above
// DefaultClientErrors breaches it. Such an answer says the request itself
// was wrong (a body without Content-Type refused with 415 by TGI or 400 by
// vLLM, a wrong path, missing credentials): the load measured nothing of
// the service. 408 and 429, and 503 and other 5xx, stay answers, as an
// overload gate gives them by design. The user's own objective on
// client_errors replaces it; client_errors<=100% switches it off. 1 % for
// the reason DefaultErrors is.
const DefaultClientErrors = 0.01

// DefaultClientErrorsExpr is the client-error default as the user would
// write it.
const DefaultClientErrorsExpr = "client_errors<=1%"

// DefaultObjective returns the objective checked when the user set none on
// errors (Objective.Default is true).
func DefaultObjective() Objective {
	return Objective{Expr: DefaultObjectiveExpr, Metric: "errors", Stat: "rate", Op: "<=", Threshold: DefaultErrors, Share: true, Default: true}
}

// DefaultClientErrorsObjective returns the objective checked when the user
// set none on client_errors (Objective.Default is true).
func DefaultClientErrorsObjective() Objective {
	return Objective{Expr: DefaultClientErrorsExpr, Metric: "client_errors", Stat: "rate", Op: "<=", Threshold: DefaultClientErrors, Share: true, Default: true}
}

// WithDefault returns objs with the default objectives appended, each
// unless one of objs is on its metric for the whole run: the user's own
// replaces it (one on a target's errors judges that target only). It is
// the one rule for every run, merge, sweep point and repeat (Judge).
func WithDefault(objs []Objective) []Objective {
	out := append([]Objective(nil), objs...)
	for _, d := range []Objective{DefaultObjective(), DefaultClientErrorsObjective()} {
		if !slices.ContainsFunc(objs, func(o Objective) bool { return o.Metric == d.Metric && o.Scope == "" }) {
			out = append(out, d)
		}
	}
	return out
}

// TargetFailed reports whether res holds a breached default objective: the
// target failed. False for results written before it existed.
func TargetFailed(res *result.Result) bool {
	for _, s := range res.SLOs {
		if s.Default && !s.Pass {
			return true
		}
	}
	return false
}

// isClientError reports whether an answer's status says the request was
// refused as wrong (result.ClientError).
func isClientError(code int) bool { return result.ClientError(code) }

// ClientErrorCodes lists the client-error statuses of res (a 4xx other
// than 408 and 429), the most frequent first.
func ClientErrorCodes(res *result.Result) []int {
	var out []int
	for _, s := range SortedByCount(res.Status) {
		if code, err := strconv.Atoi(s); err == nil && isClientError(code) {
			out = append(out, code)
		}
	}
	return out
}

// ClientErrors counts the answers of res with a client-error status,
// and the gRPC calls answered with a code that refuses the call as a
// 4xx does (result.GRPCClass: UNIMPLEMENTED, UNAUTHENTICATED,
// PERMISSION_DENIED, INVALID_ARGUMENT, NOT_FOUND), whose HTTP status is
// 200: a run of them fails the target as a run of 4xx does, and
// RESOURCE_EXHAUSTED stays an answer as 429 does.
func ClientErrors(res *result.Result) int64 {
	var n int64
	for _, code := range ClientErrorCodes(res) {
		n += res.Status[strconv.Itoa(code)]
	}
	for key, c := range res.GRPC {
		if code, ok := result.GRPCCode(key); ok && result.GRPCClass(code) == result.GRPCRefusal {
			n += c
		}
	}
	return n
}

// StatusHint says what a client-error status most likely means for a load
// test ("" when nothing plain can be said): the usual reasons a whole run
// is refused.
func StatusHint(res *result.Result, code int) string {
	path := "/"
	if u, err := url.Parse(res.Config.Target); err == nil && u.Path != "" {
		path = u.Path
	}
	switch code {
	case 400:
		return "the server refused the request as malformed: check the body, and that a JSON body is sent with Content-Type: application/json"
	case 401:
		return "the server wants credentials: send them in an Authorization header"
	case 403:
		return "the server refused these credentials: check the Authorization header or API key"
	case 404:
		return fmt.Sprintf("nothing at %s on this server: check the URL's path", path)
	case 405:
		return fmt.Sprintf("%s is not allowed at %s: check the method", res.Config.Method, path)
	case 413:
		return "the body is larger than the server accepts"
	case 415:
		if ct := res.Config.Headers["Content-Type"]; len(ct) > 0 {
			return fmt.Sprintf("the server does not take Content-Type %s: check the type its API expects", ct[0])
		}
		return "a JSON body without Content-Type? send Content-Type: application/json"
	case 422:
		return "the body's fields do not match what the API expects (the model name?)"
	}
	return ""
}

// tlsCauseWords say what each TLS cause of a result means, and what to do.
var tlsCauseWords = map[string]struct{ meaning, hint string }{
	"self_signed":       {"self-signed certificate", "trust the certificate, or skip certificate verification"},
	"unknown_authority": {"certificate signed by an unknown authority", "trust its CA, or skip certificate verification"},
	"expired":           {"certificate expired or not yet valid", "check its dates and this machine's clock, or skip certificate verification"},
	"hostname":          {"certificate not valid for the URL's host name", "use a host name the certificate names, or skip certificate verification"},
	"certificate":       {"certificate rejected", "skipping certificate verification gets past it"},
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
// for each cause that has one: "self-signed certificate: trust the …"
// for one cause, "self-signed certificate 6: …; expired 4: …" for several.
// A result without causes (written before they were counted) gets the kind's
// meaning.
func TLSDetail(res *result.Result) string {
	if len(res.TLSCauses) == 0 {
		return KindMeaning("tls")
	}
	return strings.Join(TLSCausePhrases(res, true), "; ")
}

// TLSCausePhrases says each TLS cause of res in words, the most frequent
// first (then by name): its meaning, its count when there are several
// causes, and with hints its hint after a colon ("expired 4: check its
// dates …"). Nil when res has no causes.
func TLSCausePhrases(res *result.Result, hints bool) []string {
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
