package main

import (
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/openload/openload/internal/golden"
	"github.com/openload/openload/internal/rawtcp"
	"github.com/openload/openload/result"
	"github.com/openload/openload/verify"
)

// TestRefusedPort: a port nobody listens on fails the default objective
// (exit 5), the verdict says what happened, and the latency table does not
// pass the time to the refusal off as a response time. The user's own
// objective on errors replaces the default: errors<=100% switches it off,
// a breach of errors<=50% is the user's objective (exit 4).
func TestRefusedPort(t *testing.T) {
	addr, release, err := rawtcp.RefusedAddr()
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	url := "http://" + addr + "/"
	out := filepath.Join(t.TempDir(), "r.json")

	code, stdout, stderr := runCLI("-rate", "50", "-d", "400ms", "-o", out, url)
	if code != exitTargetFailed {
		t.Fatalf("exit %d, want %d\n%s\n%s", code, exitTargetFailed, stdout, stderr)
	}
	wantLines(t, stdout,
		"│ no answer (20) │",
		"NO ANSWER: none of the 20 requests got one (refused 20); the first row is the time each took to fail, not a response time",
		"FAIL  errors.rate <= 1 %: measured 100 % (breached) · openload's default",
		"\nresult: target failed: 20 of 20 refused (exit 5)\n")
	if strings.Contains(stdout, "│ response time") || strings.Contains(stdout, "result: valid") {
		t.Errorf("a refused port reads as a valid run with a response time:\n%s", stdout)
	}
	res := readResult(t, out)
	if len(res.SLOs) != 2 || !res.SLOs[0].Default || res.SLOs[0].Pass || res.SLOs[0].Measured != 1 ||
		!res.SLOs[1].Default || !res.SLOs[1].Pass || res.SLOs[1].Expr != "client_errors<=1%" {
		t.Errorf("slos %+v: want the default objective, breached at 100 %%", res.SLOs)
	}
	// response keeps its meaning: every request, at its time to failure.
	if res.Response.Count != 20 || res.Answered == nil || res.Answered.Count != 0 || res.Unanswered == nil || res.Unanswered.Count != 20 {
		t.Errorf("response %+v answered %+v unanswered %+v", res.Response, res.Answered, res.Unanswered)
	}
	if res.Unanswered.Max != res.Response.Max || res.Unanswered.P50 != res.Response.P50 {
		t.Errorf("with no answer at all, unanswered %+v must equal response %+v", res.Unanswered, res.Response)
	}

	code, stdout, _ = runCLI("-rate", "50", "-d", "400ms", "--slo", "errors<=100%", url)
	if code != exitOK || !strings.Contains(stdout, "result: valid") || strings.Contains(stdout, "target failed") {
		t.Errorf("--slo errors<=100%%: exit %d, want 0, without the default objective\n%s", code, stdout)
	}
	code, stdout, _ = runCLI("-rate", "50", "-d", "400ms", "--slo", "errors<=50%", url)
	if code != exitSLOBreached || !strings.Contains(stdout, "objectives: BREACHED: errors<=50% (exit 4)") || strings.Contains(stdout, "target failed") {
		t.Errorf("--slo errors<=50%%: exit %d, want %d (the user's objective)\n%s", code, exitSLOBreached, stdout)
	}
}

// TestSelfSignedTarget: an https server with a self-signed certificate
// fails every request with tls (exit 5); the verdict names the cause and
// suggests --insecure, also with -q; with --insecure the run is valid.
func TestSelfSignedTarget(t *testing.T) {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the handshakes fail, as they should
	srv.StartTLS()
	defer srv.Close()
	out := filepath.Join(t.TempDir(), "r.json")

	code, stdout, stderr := runCLI("-rate", "50", "-d", "400ms", "-o", out, srv.URL)
	if code != exitTargetFailed {
		t.Fatalf("exit %d, want %d\n%s\n%s", code, exitTargetFailed, stdout, stderr)
	}
	wantLines(t, stdout,
		"tls      self-signed certificate ×20 (trust the certificate, or skip certificate verification)",
		"\nresult: target failed: 20 of 20 tls: self-signed certificate (exit 5)\nhint:   trust the certificate, or add --insecure to skip certificate verification\n")
	// The saved result says the same when read back.
	if code, report, _ := runCLI("report", out); code != exitOK ||
		!strings.HasSuffix(report, "\nresult: target failed: 20 of 20 tls: self-signed certificate\nhint:   trust the certificate, or add --insecure to skip certificate verification\n") {
		t.Errorf("openload report: exit %d\n%s", code, report)
	}
	res := readResult(t, out)
	if res.ErrorKinds["tls"] != 20 || len(res.TLSCauses) != 1 || res.TLSCauses["self_signed"] != 20 {
		t.Errorf("error kinds %v, tls causes %v: want 20 tls, all self_signed", res.ErrorKinds, res.TLSCauses)
	}

	code, stdout, stderr = runCLI("-q", "-rate", "50", "-d", "400ms", srv.URL)
	want := "openload: target failed: 20 of 20 tls: self-signed certificate (exit 5)\nopenload: hint: trust the certificate, or add --insecure to skip certificate verification\n"
	if code != exitTargetFailed || stdout != "" || stderr != want {
		t.Errorf("-q: exit %d, stdout %q, stderr %q; want %d and stderr %q", code, stdout, stderr, exitTargetFailed, want)
	}

	code, stdout, _ = runCLI("-rate", "50", "-d", "400ms", "--insecure", srv.URL)
	if code != exitOK || !strings.Contains(stdout, "result: valid") || !strings.Contains(stdout, "PASS  errors.rate <= 1 %: measured 0 %") {
		t.Errorf("--insecure: exit %d, want 0\n%s", code, stdout)
	}
}

// TestH2CAgainstHTTP1Server: --h2c against a server that speaks HTTP/1.1
// only fails as "protocol", says the server does not speak h2c, and
// hints both ways out by their flags. A request may also meet the
// connection as the server closes it (a reset, under load), so the kinds
// are asserted as mostly protocol, not all.
func TestH2CAgainstHTTP1Server(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }))
	defer srv.Close()
	out := filepath.Join(t.TempDir(), "r.json")
	code, stdout, stderr := runCLI("--h2c", "-rate", "50", "-d", "400ms", "-o", out, srv.URL)
	if code != exitTargetFailed {
		t.Fatalf("exit %d, want %d\n%s\n%s", code, exitTargetFailed, stdout, stderr)
	}
	if res := readResult(t, out); res.Counts.Errors != 20 || res.ErrorKinds["protocol"] < 11 {
		t.Errorf("errors %d, kinds %v: want 20 errors, most of them protocol", res.Counts.Errors, res.ErrorKinds)
	}
	wantLines(t, stdout, "protocol (answered HTTP/1.1 to HTTP/2 with prior knowledge: the server does not speak h2c)",
		"\nhint:   the server does not speak h2c: send HTTP/1.1 (without --h2c), or serve h2c (openload stub serves it with --h2c)\n")
}

// cuttingServer answers every request but cuts the body of every nth
// response short (a reset, for the client): the requests cut get no
// answer. It returns its URL.
func cuttingServer(t *testing.T, n int64) string {
	var seen atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if seen.Add(1)%n != 0 {
			return
		}
		w.Header().Set("Content-Length", "100")
		io.WriteString(w, "short")
		if c, _, err := w.(http.Hijacker).Hijack(); err == nil {
			c.Close()
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/"
}

// TestFewErrorsPass: a target that fails one request in 150, under the
// default objective's 1 %, still exits 0; the report sets the answered
// requests apart from the one without an answer. One in 10 exits 5.
func TestFewErrorsPass(t *testing.T) {
	out := filepath.Join(t.TempDir(), "r.json")
	code, stdout, stderr := runCLI("-rate", "200", "-d", "1s", "-o", out, cuttingServer(t, 150))
	res := readResult(t, out)
	c := res.Counts
	bad := c.Errors + c.Timeouts + c.Unfinished
	if code != exitOK || bad == 0 || float64(bad)/float64(c.Scheduled) > verify.DefaultErrors {
		t.Fatalf("exit %d with %d of %d without an answer: want 0, with at least one and at most 1 %%\n%s\n%s", code, bad, c.Scheduled, stdout, stderr)
	}
	wantLines(t, stdout, "│ response time, all ", fmtRow("answered", c.Completed), fmtRow("no answer", bad)+" ",
		"PASS  errors.rate <= 1 %", "result: valid")
	if res.Answered == nil || res.Unanswered == nil || res.Answered.Count != c.Completed || res.Unanswered.Count != bad || res.Response.Count != c.Scheduled {
		t.Errorf("response %+v, answered %+v, unanswered %+v; counts %+v", res.Response, res.Answered, res.Unanswered, c)
	}

	code, stdout, _ = runCLI("-rate", "200", "-d", "1s", cuttingServer(t, 10))
	verdict := regexp.MustCompile(`\nresult: target failed: \d+ of 200 reset \(\d+\.\d %, above the default errors<=1%\) \(exit 5\)\n`)
	if code != exitTargetFailed || !verdict.MatchString(stdout) {
		t.Errorf("one in ten cut: exit %d, want %d, with a verdict matching %s\n%s", code, exitTargetFailed, verdict, stdout)
	}
}

// fmtRow is the start of a latency table row: "│ answered (199)".
func fmtRow(name string, n int64) string { return fmt.Sprintf("│ %s (%d)", name, n) }

// TestVerdictPrecedence: interrupted (130) before a failed check (1),
// before the target failing (5), before a breached objective of the
// user's (4).
func TestVerdictPrecedence(t *testing.T) {
	fail := []verify.Finding{{Check: "accounting", Severity: verify.Fail}}
	warn := []verify.Finding{{Check: "outcomes", Severity: verify.Warn}}
	cases := []struct {
		interrupted      bool
		findings         []verify.Finding
		breached, target bool
		want             int
	}{
		{false, warn, false, false, exitOK},
		{false, warn, true, false, exitSLOBreached},
		{false, warn, false, true, exitTargetFailed},
		{false, warn, true, true, exitTargetFailed},
		{false, fail, true, true, exitCheckFailed},
		{true, fail, true, true, exitInterrupted},
	}
	for _, tc := range cases {
		res := &result.Result{Interrupted: tc.interrupted, Checks: verify.ToChecks(tc.findings)}
		if tc.breached {
			res.SLOs = append(res.SLOs, result.SLO{Expr: "response.p99<=1ms"})
		}
		if tc.target {
			res.SLOs = append(res.SLOs, result.SLO{Expr: verify.DefaultObjectiveExpr, Default: true})
		}
		if got := exitOf(verify.ClassOf(res)); got != tc.want {
			t.Errorf("interrupted %v, %s, breached %v, target failed %v: exit %d, want %d",
				tc.interrupted, verify.Worst(tc.findings), tc.breached, tc.target, got, tc.want)
		}
	}
}

// TestExitCodesGolden: the exit codes as the usage text gives them.
func TestExitCodesGolden(t *testing.T) {
	u := usageText()
	i := strings.Index(u, "Exit codes:")
	if i < 0 {
		t.Fatalf("the usage text has no exit codes:\n%s", u)
	}
	golden.Check(t, "exit-codes.golden", u[i:])
}
