package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
)

// TestNoDataNeverPasses: a TTFT objective against a server that streams
// nothing is no data, a breach (exit 4) that says why, in a run and in a
// search; never a PASS of 0 ms.
func TestNoDataNeverPasses(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, `{"ok":true}`) }))
	defer srv.Close()
	code, stdout, stderr := runCLI("--stream", "-rate", "20", "-d", "500ms", "--slo", "ttft.p99<=500ms", srv.URL)
	if code != exitSLOBreached {
		t.Fatalf("exit %d, want %d\n%s\n%s", code, exitSLOBreached, stdout, stderr)
	}
	// The checks are valid, perhaps with a warning (a busy machine's
	// send delay); the objective decides the exit code.
	wantLines(t, stdout, "FAIL  ttft_response.p99 <= 500.000 ms: no data: no streamed token in 10 answers; 10 answered 200")
	if !regexp.MustCompile(`\nresult: valid[^\n]*\nobjectives: BREACHED \(no data for ttft\.p99<=500ms\) \(exit 4\)\n`).MatchString(stdout) {
		t.Errorf("the verdict does not name the breach without data:\n%s", stdout)
	}
	if strings.Contains(stdout, "PASS  ttft") {
		t.Errorf("a TTFT objective passed on nothing:\n%s", stdout)
	}
	// -q: one line, the objectives', on stderr.
	code, stdout, stderr = runCLI("-q", "--stream", "-rate", "20", "-d", "500ms", "--slo", "ttft.p99<=500ms", srv.URL)
	if want := "openload: objectives: BREACHED (no data for ttft.p99<=500ms) (exit 4)\n"; code != exitSLOBreached || stdout != "" || stderr != want {
		t.Errorf("-q: exit %d, stdout %q, stderr %q; want %q", code, stdout, stderr, want)
	}
	code, stdout, stderr = runCLI("sweep", "--search", "--stream", "--slo", "ttft.p99<=500ms", "--from", "10", "--to", "20", "-d", "300ms", "--pause", "0s", srv.URL)
	if code != exitSLOBreached || !strings.Contains(stdout, "BREACH (no-data)") || strings.Contains(stdout, "PASS") ||
		!strings.Contains(stdout, "search: at 10/s: ttft_response.p99 <= 500.000 ms: no data: no streamed token in 3 answers; 3 answered 200") {
		t.Errorf("search: exit %d\n%s\n%s", code, stdout, stderr)
	}
}

// TestClientErrorsFailTheTarget: every answer a 415 is a target that
// refused the requests (exit 5), named with its status and plain cause;
// 429s stay answers (exit 0), and the user's own client_errors objective
// replaces the default.
func TestClientErrorsFailTheTarget(t *testing.T) {
	status := atomic.Int64{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(int(status.Load())) }))
	defer srv.Close()
	status.Store(415)
	// A body that is not JSON goes without a Content-Type: the hint says
	// how to name one.
	code, stdout, stderr := runCLI("-rate", "20", "-d", "500ms", "--body", `model=m`, srv.URL+"/v1/chat/completions")
	if code != exitTargetFailed {
		t.Fatalf("exit %d, want %d\n%s\n%s", code, exitTargetFailed, stdout, stderr)
	}
	wantLines(t, stdout,
		"FAIL  client_errors.rate <= 1 %: measured 100 % (breached) · openload's default",
		"\nresult: target refused the requests: 10 of 10 answered 415 Unsupported Media Type (a JSON body without Content-Type? send Content-Type: application/json) (exit 5)\nhint:   add -H 'Content-Type: application/json' to name a JSON body's type\n")
	// A JSON body goes as JSON: refused all the same, the type is named.
	code, stdout, stderr = runCLI("-rate", "20", "-d", "500ms", "--body", `{"model":"m"}`, srv.URL+"/v1/chat/completions")
	if code != exitTargetFailed {
		t.Fatalf("exit %d, want %d\n%s\n%s", code, exitTargetFailed, stdout, stderr)
	}
	wantLines(t, stdout,
		"\nrequest: Content-Type: application/json added (the body is JSON)\n",
		"\nresult: target refused the requests: 10 of 10 answered 415 Unsupported Media Type (the server does not take Content-Type application/json: check the type its API expects) (exit 5)\n")
	if strings.Contains(stdout, "add -H 'Content-Type") {
		t.Errorf("a hint to add the Content-Type openload sent:\n%s", stdout)
	}
	status.Store(404)
	if code, stdout, _ := runCLI("-rate", "20", "-d", "500ms", srv.URL+"/predict"); code != exitTargetFailed ||
		!strings.Contains(stdout, "result: target refused the requests: 10 of 10 answered 404 Not Found (nothing at /predict on this server: check the URL's path) (exit 5)") {
		t.Errorf("404: exit %d\n%s", code, stdout)
	}
	if code, stdout, _ := runCLI("-rate", "20", "-d", "500ms", "--slo", "client_errors<=100%", srv.URL); code != exitOK {
		t.Errorf("client_errors<=100%%: exit %d, want 0\n%s", code, stdout)
	}
	status.Store(429)
	if code, stdout, _ := runCLI("-rate", "20", "-d", "500ms", srv.URL); code != exitOK {
		t.Errorf("429s are answers: exit %d, want 0\n%s", code, stdout)
	}
}

// TestOutputsCheckedFirst: an output that cannot be written is a usage
// error (exit 2) before anything is sent: the server reads nothing.
func TestOutputsCheckedFirst(t *testing.T) {
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { n.Add(1) }))
	defer srv.Close()
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	cases := [][]string{
		{"-rate", "20", "-d", "500ms", "-o", dir, srv.URL},
		{"-rate", "20", "-d", "500ms", "--log", filepath.Join(dir, "no", "log.csv"), srv.URL},
		{"-rate", "20", "-d", "500ms", "--hlog", filepath.Join(file, "x.hlog"), srv.URL},
		{"-rate", "20", "-d", "500ms", "-o", file, "--log", file, srv.URL},
		{"sweep", "--rates", "10", "-d", "300ms", "--svg", filepath.Join(dir, "no", "x.svg"), srv.URL},
		{"sweep", "--rates", "10", "-d", "300ms", "--html", dir, srv.URL},
	}
	for _, args := range cases {
		code, _, stderr := runCLI(args...)
		first, _, _ := strings.Cut(stderr, "\n")
		if code != exitUsage || !strings.Contains(first, ` --`) || !strings.Contains(first, `": `) {
			t.Errorf("%v: exit %d, %q; want a one-line usage error naming the flag", args, code, stderr)
		}
	}
	if got := n.Load(); got != 0 {
		t.Errorf("the server read %d requests; a bad output must stop the run before it starts", got)
	}
}
