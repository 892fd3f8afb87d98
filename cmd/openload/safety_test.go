package main

import (
	"context"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openload/openload/servers/stub"
)

// TestSecretsNeverWritten: the values of Authorization, Cookie,
// Proxy-Authorization and of headers named by --redact are sent to the
// server but appear in none of the files a run writes, nor in its output.
func TestSecretsNeverWritten(t *testing.T) {
	secrets := map[string]string{
		"Authorization":       "Bearer sekrit-auth-1f3a",
		"Cookie":              "session=sekrit-cookie-77c2",
		"Proxy-Authorization": "Basic sekrit-proxy-90b1",
		"X-Api-Key":           "sekrit-apikey-5e4d",
	}
	var mu sync.Mutex
	seen := map[string]bool{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		for k, v := range secrets {
			if r.Header.Get(k) == v {
				seen[k] = true
			}
		}
	}))
	defer srv.Close()
	dir := t.TempDir()
	out, logf, hlog := filepath.Join(dir, "r.json"), filepath.Join(dir, "r.csv"), filepath.Join(dir, "r.hlog")
	args := []string{"-rate", "100", "-d", "200ms", "-o", out, "--log", logf, "--hlog", hlog, "--redact", "x-api-key", "--send-delay-budget", "1s"}
	for k, v := range secrets {
		args = append(args, "-H", k+": "+v)
	}
	stdout, stderr := runOK(t, append(args, srv.URL+"/")...)
	mu.Lock()
	if len(seen) != len(secrets) {
		t.Errorf("the server saw %v of the secret headers: the test proves nothing", seen)
	}
	mu.Unlock()
	texts := map[string]string{"stdout": stdout, "stderr": stderr}
	for _, p := range []string{out, logf, hlog} {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		texts[filepath.Base(p)] = string(b)
	}
	if !strings.Contains(texts["r.json"], `"REDACTED"`) {
		t.Errorf("the result does not show the redacted headers:\n%s", texts["r.json"])
	}
	for name, text := range texts {
		for k, v := range secrets {
			// Any distinctive part of the value counts as a leak.
			if strings.Contains(text, v) || strings.Contains(text, "sekrit") {
				t.Errorf("%s holds the value of %s", name, k)
			}
		}
	}
}

// openFDs counts the process's open file descriptors.
func openFDs(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("no /proc/self/fd: %v", err)
	}
	return len(ents)
}

// TestFDsReleased: several short runs against the built-in stub, each
// writing a result, a log and an interval log, leave the process's open
// file descriptors where they were. The baseline is taken after a first
// run, so that what the Go runtime opens once and keeps (the netpoller's
// epoll and event descriptors) is in it. Slack: none is needed for the
// files and listeners, which runLoad closes; closed client connections
// are released when the transport closes its idle connections, but a
// socket the kernel still holds in its close can show for a moment, so
// the count is polled until it is back at the baseline, for up to 30 s:
// a guard for a leak, which never comes back, and not a bound on how
// soon a busy machine closes (it was 2 s).
func TestFDsReleased(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("counts /proc/self/fd")
	}
	dir := t.TempDir()
	runOnce := func(i int) {
		p := filepath.Join(dir, "r")
		code, stdout, stderr := runCLI("-rate", "200", "-d", "100ms", "-q", "-o", p+".json", "--log", p+".csv", "--hlog", p+".hlog")
		if code != exitOK && code != exitCheckFailed {
			t.Fatalf("run %d: exit %d\n%s\n%s", i, code, stdout, stderr)
		}
	}
	runOnce(0)
	base := openFDs(t)
	for i := 1; i <= 5; i++ {
		runOnce(i)
	}
	got := openFDs(t)
	for deadline := time.Now().Add(30 * time.Second); got > base && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
		got = openFDs(t)
	}
	if got > base {
		t.Errorf("open fds %d after 5 runs, %d before", got, base)
	}
	t.Logf("open fds: %d before, %d after 5 runs", base, got)
}

// TestStubListensOnLoopback: the stub binds to loopback unless told
// otherwise, as a library and as 'openload stub'. (It has no HTTP endpoint
// that injects faults: stalls and slowdowns are configuration, flags of
// 'openload stub'; every path but GET /stats is a model request.)
func TestStubListensOnLoopback(t *testing.T) {
	loopback := func(raw string) bool {
		u, err := url.Parse(raw)
		if err != nil {
			return false
		}
		ip := net.ParseIP(u.Hostname())
		return ip != nil && ip.IsLoopback()
	}
	for _, listen := range []string{stub.DefaultConfig().Listen, ""} {
		cfg := stub.DefaultConfig()
		cfg.Listen = listen
		s, err := stub.NewServer(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if !loopback(s.URL) {
			t.Errorf("Listen %q: the stub listens on %s", listen, s.URL)
		}
		s.Close()
	}

	ctx, cancel := context.WithCancel(context.Background())
	var out syncBuilder
	done := make(chan int)
	go func() { done <- runStub(ctx, nil, &out, &out) }()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(out.String(), "listening on") && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	if code := <-done; code != exitOK {
		t.Fatalf("openload stub exited %d: %s", code, out.String())
	}
	line, _, _ := strings.Cut(out.String(), "\n")
	f := strings.Fields(line)
	addr := ""
	for i, w := range f {
		if w == "on" && i+1 < len(f) {
			addr = f[i+1]
		}
	}
	if !loopback(addr) {
		t.Errorf("openload stub: %q", line)
	}
}

// TestFaultFlags: --max-body is validated, and --insecure and
// --follow-redirects reach the run (a self-signed server is refused
// without --insecure, answers with it).
func TestFaultFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-rate", "10", "--max-body", "-5", "http://127.0.0.1:1/"}, "--max-body must be ≥ 0 bytes (0: no cap), got -5"},
		{[]string{"-rate", "10", "--max-body", "0", "http://127.0.0.1:1/"}, "--max-body 0 means no cap"},
	} {
		code, _, stderr := runCLI(tc.args...)
		if code != exitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, %q; want %d and %q", tc.args, code, stderr, exitUsage, tc.want)
		}
	}
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/r" {
			http.Redirect(w, r, "/ok", http.StatusFound)
		}
	}))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshakes
	defer srv.Close()
	_, stdout, _ := runCLI("-rate", "50", "-d", "100ms", "--send-delay-budget", "1s", srv.URL+"/r")
	if !strings.Contains(stdout, "errors   tls ×5") {
		t.Errorf("self-signed certificate without --insecure:\n%s", stdout)
	}
	_, stdout, _ = runCLI("-rate", "50", "-d", "100ms", "--send-delay-budget", "1s", "--insecure", "--follow-redirects", "--max-body", "1", srv.URL+"/r")
	wantLines(t, stdout, "status   200 ×5", "certificates were not verified (verification skipped)", "followed 5 redirect(s)")
}
