package report

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/openload/openload/result"
)

func rowNames(rows []Row) string {
	names := make([]string, len(rows))
	for i, r := range rows {
		names[i] = r.Name
	}
	return strings.Join(names, " | ")
}

// TestHeadRows: the latency table says which requests its first row
// holds.
func TestHeadRows(t *testing.T) {
	p := func(n int64) *result.Percentiles { return &result.Percentiles{Count: n, P50: float64(n)} }
	cases := []struct {
		name string
		res  result.Result
		rows string
		note string
	}{
		{"every request answered", result.Result{Counts: result.Counts{Scheduled: 10, Completed: 10}},
			"response time | service time | send delay", ""},
		{"some without an answer", result.Result{Counts: result.Counts{Scheduled: 10, Completed: 7, Errors: 2, Timeouts: 1},
			ErrorKinds: map[string]int64{"reset": 2, "timeout": 1}, Answered: p(7), Unanswered: p(3)},
			"response time, all | answered (7) | no answer (3) | service time | send delay",
			"all = every request; 3 of 10 got no answer (reset 2 · timeout 1) and count at the time they took to fail · answered = the 7 that completed, with any status\n"},
		{"none answered", result.Result{Counts: result.Counts{Scheduled: 10, Errors: 10},
			ErrorKinds: map[string]int64{"refused": 10}, Answered: p(0), Unanswered: p(10)},
			"no answer (10) | service time | send delay",
			"NO ANSWER: none of the 10 requests got one (refused 10); the first row is the time each took to fail, not a response time\n"},
		{"some without an answer, written before the split", result.Result{Counts: result.Counts{Scheduled: 10, Completed: 9, Errors: 1},
			ErrorKinds: map[string]int64{"reset": 1}},
			"response time, all | service time | send delay",
			"all = every request; 1 of 10 got no answer (reset 1) and count at the time they took to fail · answered = the 9 that completed, with any status\n"},
	}
	for _, tc := range cases {
		if got := rowNames(headRows(&tc.res)); got != tc.rows {
			t.Errorf("%s: rows %q, want %q", tc.name, got, tc.rows)
		}
		var b strings.Builder
		answerNote(&b, &tc.res)
		if b.String() != tc.note {
			t.Errorf("%s: note %q, want %q", tc.name, b.String(), tc.note)
		}
	}
	// The answered row shows the answered percentiles, not the mix.
	res := cases[1].res
	if rows := headRows(&res); rows[1].P.P50 != 7 || rows[2].P.P50 != 3 {
		t.Errorf("rows %+v", rows)
	}
}

func TestTargetVerdict(t *testing.T) {
	failed := []result.SLO{{Expr: "errors<=1%", Default: true, Pass: false}}
	cases := []struct {
		name string
		res  result.Result
		want string
	}{
		{"refused port", result.Result{Counts: result.Counts{Scheduled: 60, Errors: 60}, ErrorKinds: map[string]int64{"refused": 60}},
			"target failed: 60 of 60 refused"},
		{"self-signed", result.Result{Counts: result.Counts{Scheduled: 60, Errors: 60}, ErrorKinds: map[string]int64{"tls": 60}, TLSCauses: map[string]int64{"self_signed": 60}},
			"target failed: 60 of 60 tls: self-signed certificate"},
		{"two tls causes", result.Result{Counts: result.Counts{Scheduled: 60, Errors: 60}, ErrorKinds: map[string]int64{"tls": 60}, TLSCauses: map[string]int64{"expired": 20, "self_signed": 40}},
			"target failed: 60 of 60 tls: self-signed certificate 40, certificate expired or not yet valid 20"},
		{"some resets", result.Result{Counts: result.Counts{Scheduled: 1600, Completed: 1568, Errors: 32}, ErrorKinds: map[string]int64{"reset": 32}},
			"target failed: 32 of 1600 reset (2.0 %, above the default errors<=1%)"},
		{"several kinds", result.Result{Counts: result.Counts{Scheduled: 60, Completed: 15, Errors: 30, Timeouts: 15}, ErrorKinds: map[string]int64{"refused": 30, "timeout": 15}},
			"target failed: 45 of 60 got no answer (75.0 %, above the default errors<=1%): refused 30 · timed out 15"},
	}
	for _, tc := range cases {
		tc.res.SLOs = failed
		got, ok := TargetVerdict(&tc.res)
		if !ok || got != tc.want {
			t.Errorf("%s: %q, %v; want %q", tc.name, got, ok, tc.want)
		}
		if v := RunVerdict(&tc.res); v != tc.want {
			t.Errorf("%s: run verdict %q, want %q", tc.name, v, tc.want)
		}
	}
	res := cases[1].res
	res.SLOs = failed
	if h := TargetHints(&res); len(h) != 1 || !strings.Contains(h[0], "skip certificate verification") {
		t.Errorf("hints %q", h)
	}
	res.Checks = []result.Check{{Name: "accounting", Severity: "fail"}}
	if v := RunVerdict(&res); !strings.HasPrefix(v, "INVALID measurement: 1 check(s) failed (accounting); and target failed: 60 of 60 tls") {
		t.Errorf("a failed check and a failed target: %q", v)
	}
	// Without the default objective (a result written before it), the
	// verdict is the checks'.
	old := result.Result{Counts: result.Counts{Scheduled: 60, Errors: 60}, ErrorKinds: map[string]int64{"refused": 60},
		Checks: []result.Check{{Name: "outcomes", Severity: "warn"}}}
	if _, ok := TargetVerdict(&old); ok || RunVerdict(&old) != "valid, with 1 warning(s) (outcomes)" {
		t.Errorf("old result: %q", RunVerdict(&old))
	}
}

// TestRefusedVerdict: answers that refuse the requests as client errors
// fail the target (verify.DefaultClientErrorsObjective), named by status,
// with the plain cause of a lone status.
func TestRefusedVerdict(t *testing.T) {
	failed := []result.SLO{{Expr: "errors<=1%", Default: true, Pass: true}, {Expr: "client_errors<=1%", Default: true}}
	cfg := result.Config{Target: "http://127.0.0.1:8000/v1/chat/completions", Method: "POST"}
	cases := []struct {
		name string
		res  result.Result
		want string
	}{
		{"all 415", result.Result{Config: cfg, Counts: result.Counts{Scheduled: 30, Completed: 30}, Status: map[string]int64{"415": 30}},
			"target refused the requests: 30 of 30 answered 415 Unsupported Media Type (a JSON body without Content-Type? send Content-Type: application/json)"},
		{"all 404", result.Result{Config: cfg, Counts: result.Counts{Scheduled: 30, Completed: 30}, Status: map[string]int64{"404": 30}},
			"target refused the requests: 30 of 30 answered 404 Not Found (nothing at /v1/chat/completions on this server: check the URL's path)"},
		{"some 401", result.Result{Config: cfg, Counts: result.Counts{Scheduled: 100, Completed: 100}, Status: map[string]int64{"200": 95, "401": 5}},
			"target refused 5 of 100 requests (5.0 %, above the default client_errors<=1%): 5 answered 401 Unauthorized (the server wants credentials: send them in an Authorization header)"},
		{"mixed", result.Result{Config: cfg, Counts: result.Counts{Scheduled: 30, Completed: 30}, Status: map[string]int64{"400": 10, "404": 20}},
			"target refused the requests: 30 of 30 answered a client error: 20 answered 404 Not Found · 10 answered 400 Bad Request"},
		// The first refusal's body, in the server's own words.
		{"all 400, said", result.Result{Config: cfg, Counts: result.Counts{Scheduled: 30, Completed: 30}, Status: map[string]int64{"400": 30},
			Refusal: &result.Refusal{Status: 400, Body: stubNoModel}},
			"target refused the requests: 30 of 30 answered 400 Bad Request (the server refused the request as malformed: check the body, and that a JSON body is sent with Content-Type: application/json); the first said: " + strings.TrimSpace(stubNoModel)},
		{"mixed, said", result.Result{Config: cfg, Counts: result.Counts{Scheduled: 30, Completed: 30}, Status: map[string]int64{"400": 10, "404": 20},
			Refusal: &result.Refusal{Seq: 3, Status: 400, Body: `{"error":"model is required"}`}},
			`target refused the requests: 30 of 30 answered a client error: 20 answered 404 Not Found · 10 answered 400 Bad Request; the first (400) said: {"error":"model is required"}`},
		// An empty body says nothing; some refusals, not all, quote none.
		{"all 404, empty", result.Result{Config: cfg, Counts: result.Counts{Scheduled: 30, Completed: 30}, Status: map[string]int64{"404": 30},
			Refusal: &result.Refusal{Status: 404, Body: " \n"}},
			"target refused the requests: 30 of 30 answered 404 Not Found (nothing at /v1/chat/completions on this server: check the URL's path)"},
		{"some 401, said", result.Result{Config: cfg, Counts: result.Counts{Scheduled: 100, Completed: 100}, Status: map[string]int64{"200": 95, "401": 5},
			Refusal: &result.Refusal{Status: 401, Body: "no key"}},
			"target refused 5 of 100 requests (5.0 %, above the default client_errors<=1%): 5 answered 401 Unauthorized (the server wants credentials: send them in an Authorization header)"},
	}
	for _, tc := range cases {
		tc.res.SLOs = failed
		if got, ok := TargetVerdict(&tc.res); !ok || got != tc.want {
			t.Errorf("%s: %q, %v; want %q", tc.name, got, ok, tc.want)
		}
	}
	if h := TargetHints(&cases[3].res); len(h) != 2 || !strings.HasPrefix(h[0], "404: ") || !strings.HasPrefix(h[1], "400: ") {
		t.Errorf("mixed statuses: hints %q, want one per status", h)
	}
}

// stubNoModel is the stub's answer to a model request without a model.
const stubNoModel = `{"error":{"message":"you must provide a model parameter","type":"invalid_request_error","param":"model","code":null}}` + "\n"

// TestRefusalQuote: a refused answer's body on one line, at most
// RefusalQuoteMax characters, JSON as written.
func TestRefusalQuote(t *testing.T) {
	long := strings.Repeat("é", 300)
	for _, tc := range []struct {
		r    *result.Refusal
		want string
	}{
		{nil, ""},
		{&result.Refusal{Body: ""}, ""},
		{&result.Refusal{Body: "\r\n\t \x00"}, ""},
		{&result.Refusal{Body: stubNoModel}, strings.TrimSpace(stubNoModel)},
		{&result.Refusal{Body: "{\n  \"error\": \"model is required\"\n}\n"}, `{ "error": "model is required" }`},
		{&result.Refusal{Body: "\x1b[1mbad\x1b[0m\r\n\r\nrequest"}, "[1mbad [0m request"},
		{&result.Refusal{Body: long}, strings.Repeat("é", RefusalQuoteMax-1) + "…"},
		{&result.Refusal{Body: long[:2*RefusalQuoteMax], Cut: true}, strings.Repeat("é", RefusalQuoteMax-1) + "…"},
		{&result.Refusal{Body: "abc", Cut: true}, "abc…"},
	} {
		got := RefusalQuote(tc.r)
		if got != tc.want {
			t.Errorf("RefusalQuote(%+v) = %q, want %q", tc.r, got, tc.want)
		}
		if n := utf8.RuneCountInString(got); n > RefusalQuoteMax {
			t.Errorf("%q: %d characters, more than %d", got, n, RefusalQuoteMax)
		}
	}
}
