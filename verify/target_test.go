package verify

import (
	"strings"
	"testing"

	"github.com/openload/openload/result"
)

func TestWithDefault(t *testing.T) {
	p99, _ := ParseObjective("response.p99<=200ms")
	got := WithDefault([]Objective{p99})
	if len(got) != 3 || !got[1].Default || got[1].Expr != DefaultObjectiveExpr || got[0].Default ||
		!got[2].Default || got[2].Expr != DefaultClientErrorsExpr {
		t.Errorf("WithDefault(p99) = %+v: want p99 and the defaults", got)
	}
	for _, own := range []string{"errors<=5%", "errors.rate<0.1", "errors<=100%"} {
		o, err := ParseObjective(own)
		if err != nil {
			t.Fatal(err)
		}
		if got := WithDefault([]Objective{p99, o}); len(got) != 3 || got[1].Default || got[2].Expr != DefaultClientErrorsExpr {
			t.Errorf("WithDefault with %s = %+v: the user's objective replaces the default", own, got)
		}
	}
	// The default is the objective a user would write.
	parsed, err := ParseObjective(DefaultObjectiveExpr)
	parsed.Default = true
	if err != nil || parsed != DefaultObjective() || DefaultObjective().Threshold != DefaultErrors {
		t.Errorf("%s parses as %+v (%v), default is %+v", DefaultObjectiveExpr, parsed, err, DefaultObjective())
	}
}

// TestDefaultObjective: requests without an answer count against it;
// answers with any status (429, 503) do not; 1 % exactly passes.
func TestDefaultObjective(t *testing.T) {
	cases := []struct {
		c    result.Counts
		pass bool
	}{
		{result.Counts{Scheduled: 100, Completed: 100}, true},                         // 503s and 429s among them: answers
		{result.Counts{Scheduled: 100, Completed: 99, Errors: 1}, true},               // 1 %
		{result.Counts{Scheduled: 100, Completed: 98, Errors: 1, Timeouts: 1}, false}, // 2 %
		{result.Counts{Scheduled: 1000, Completed: 989, Unfinished: 11}, false},       // 1.1 %
		{result.Counts{Scheduled: 60, Errors: 60}, false},                             // a dead target
	}
	for _, tc := range cases {
		res := &result.Result{Counts: tc.c, Status: map[string]int64{"200": tc.c.Completed}}
		r := Evaluate(res, []Objective{DefaultObjective()})
		if len(r) != 1 || r[0].Pass != tc.pass {
			t.Errorf("counts %+v: %+v, want pass %v", tc.c, r, tc.pass)
		}
		res.SLOs = []result.SLO{{Expr: DefaultObjectiveExpr, Pass: r[0].Pass, Default: true}}
		if TargetFailed(res) == tc.pass {
			t.Errorf("counts %+v: target failed %v", tc.c, TargetFailed(res))
		}
		if !strings.Contains(r[0].Message, "openload's default") {
			t.Errorf("message %q does not say the objective is the default", r[0].Message)
		}
	}
	// A breached objective of the user's is not the target failing, and
	// a result without slos (written before the default) never is.
	if TargetFailed(&result.Result{SLOs: []result.SLO{{Expr: "errors<=0%", Pass: false}}}) || TargetFailed(&result.Result{}) {
		t.Error("target failed without a breached default objective")
	}
}

func TestTLSDetail(t *testing.T) {
	cases := []struct {
		causes map[string]int64
		want   string
	}{
		{nil, "TLS handshake failed or the certificate was not trusted"},
		{map[string]int64{"self_signed": 5}, "self-signed certificate: trust the certificate, or skip certificate verification"},
		{map[string]int64{"handshake": 5}, "handshake refused (no common protocol version or cipher suite, a client certificate required, …)"},
		{map[string]int64{"expired": 2, "unknown_authority": 3},
			"certificate signed by an unknown authority 3: trust its CA, or skip certificate verification; certificate expired or not yet valid 2: check its dates and this machine's clock, or skip certificate verification"},
	}
	for _, tc := range cases {
		if got := TLSDetail(&result.Result{TLSCauses: tc.causes}); got != tc.want {
			t.Errorf("causes %v:\n got %q\nwant %q", tc.causes, got, tc.want)
		}
	}
	for _, c := range []string{"self_signed", "unknown_authority", "expired", "hostname", "certificate", "handshake", "not_tls"} {
		if m, _ := TLSCauseMeaning(c); m == "unknown cause" {
			t.Errorf("cause %s has no meaning", c)
		}
	}
	res := &result.Result{Counts: result.Counts{Scheduled: 4, Errors: 4}, ErrorKinds: map[string]int64{"tls": 4}, TLSCauses: map[string]int64{"hostname": 4}}
	if f := failures(res); !strings.Contains(f.Message, "tls 4 (certificate not valid for the URL's host name: use a host name") {
		t.Errorf("outcomes check: %q", f.Message)
	}
}
