package main

import (
	"bufio"
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// TestMain lets the test binary act as the openload command for the
// subprocess tests: with OPENLOAD_AS_MAIN=1 it runs main() instead; as
// a fake kubectl with OPENLOAD_FAKE_KUBECTL (k8s_test.go); and
// as `openload stub`, the built-in stub's child process (stubchild.go),
// whose executable under go test is the test binary.
func TestMain(m *testing.M) {
	if dir := os.Getenv(fakeKubectlEnv); dir != "" { // k8s_test.go
		fakeKubectl(dir)
		return
	}
	if os.Getenv("OPENLOAD_AS_MAIN") == "1" || (len(os.Args) > 1 && os.Args[1] == "stub") {
		main()
		return
	}
	// After every test: no goroutine of a run left behind (safety_test.go).
	goleak.VerifyTestMain(m)
}

// startOpenload runs openload as a real subprocess and returns it once it
// has printed its first line on stderr (the run has started).
func startOpenload(t *testing.T, args ...string) (*exec.Cmd, *syncBuilder) {
	t.Helper()
	return startOpenloadCmd(t, exec.Command(os.Args[0], args...))
}

// startOpenloadCmd is startOpenload with cmd made by the caller.
func startOpenloadCmd(t *testing.T, cmd *exec.Cmd) (*exec.Cmd, *syncBuilder) {
	t.Helper()
	cmd.Env = append(os.Environ(), "OPENLOAD_AS_MAIN=1")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	out := &syncBuilder{}
	cmd.Stdout = out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stderr)
	if !sc.Scan() {
		t.Fatalf("openload printed nothing: %v", sc.Err())
	}
	go func() { // keep draining stderr
		for sc.Scan() {
			out.WriteString("stderr: " + sc.Text() + "\n")
		}
	}()
	return cmd, out
}

// syncBuilder collects the subprocess's stdout (copied by exec's goroutine)
// and stderr (copied by the test's) without a race.
type syncBuilder struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuilder) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuilder) WriteString(x string) (int, error) { return s.Write([]byte(x)) }

func (s *syncBuilder) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func exitCode(t *testing.T, cmd *exec.Cmd) int {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(60 * time.Second): // a hang, not slowness: the drain is 2 s
		cmd.Process.Kill()
		t.Fatal("openload did not exit after the signal")
	}
	return cmd.ProcessState.ExitCode()
}

// TestInterruptWritesResultAndLog: SIGINT in the middle of a 60 s run stops
// scheduling, drains briefly, and leaves a result marked interrupted whose
// accounting balances, and a log of complete lines with one line per
// scheduled request; the exit code is 130.
func TestInterruptWritesResultAndLog(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(5 * time.Millisecond)
	}))
	defer srv.Close()
	dir := t.TempDir()
	res, logf := filepath.Join(dir, "r.json"), filepath.Join(dir, "r.csv")
	cmd, out := startOpenload(t, "-rate", "200", "-d", "60s", "-o", res, "--log", logf, srv.URL)
	time.Sleep(700 * time.Millisecond)
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if code := exitCode(t, cmd); code != exitInterrupted {
		t.Fatalf("exit %d, want %d\n%s", code, exitInterrupted, out)
	}
	if _, err := os.Stat(res); err != nil {
		t.Fatalf("no result after SIGINT: %v\n%s", err, out)
	}
	r := readResult(t, res)
	c := r.Counts
	if !r.Interrupted || !c.Balanced() || c.Scheduled == 0 || c.Scheduled >= 12000 || c.Expected != 12000 {
		t.Errorf("interrupted %v counts %+v", r.Interrupted, c)
	}
	if es, err := readLog(t, logf); err != nil || int64(len(es)) != c.Scheduled {
		t.Errorf("log: %d lines (err %v), want one per scheduled request (%d)", len(es), err, c.Scheduled)
	}
	if !strings.Contains(out.String(), "INTERRUPTED") || !regexp.MustCompile(`\nresult: interrupted after [0-9.]+ s: [0-9]+ of 12000 requests scheduled before the stop; checks .* \(exit 130\)\n`).MatchString(out.String()) {
		t.Errorf("report does not say it was interrupted:\n%s", out)
	}
}

// TestSecondSignalExitsAtOnce: a second signal during the drain exits
// immediately, leaving a log of complete lines and no half-written result.
func TestSecondSignalExitsAtOnce(t *testing.T) {
	release := make(chan struct{})
	var served atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if served.Add(1) <= 100 {
			return // the first 100 are answered: they reach the log
		}
		select { // the rest never are until the test ends: the drain would take its full time
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	dir := t.TempDir()
	res, logf := filepath.Join(dir, "r.json"), filepath.Join(dir, "r.csv")
	cmd, out := startOpenload(t, "-rate", "200", "-d", "60s", "-c", "4", "-o", res, "--log", logf, srv.URL)
	// The log is flushed once a second: wait for the first flush, its
	// header and a line (up to 30 s, a guard; it was a sleep of 1.5 s,
	// which a busy machine's late flush outlasts).
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if b, _ := os.ReadFile(logf); bytes.Count(b, []byte("\n")) >= 2 {
			break
		}
	}
	cmd.Process.Signal(syscall.SIGINT)
	time.Sleep(200 * time.Millisecond)
	cmd.Process.Signal(syscall.SIGTERM)
	if code := exitCode(t, cmd); code != exitInterrupted {
		t.Fatalf("exit %d, want %d\n%s", code, exitInterrupted, out)
	}
	if _, err := os.Stat(res); !os.IsNotExist(err) {
		t.Errorf("a result file exists after the second signal: %v", err)
	}
	// The hidden temporary file may remain after os.Exit; its name never
	// matches the result's.
	// At least the lines of the first flush, awaited above: of the 100
	// answered requests (a busy machine may flush fewer of them).
	if es, err := readLog(t, logf); err != nil || len(es) == 0 || len(es) > 100 {
		t.Errorf("log: %d complete lines, err %v", len(es), err)
	}
}

// TestSecondSignalDuringGrace: a second signal while the metrics wait for
// their last scrape (nothing scrapes here) exits at once and says that the
// result was written in full, which it was, and that only that wait was
// cut short.
func TestSecondSignalDuringGrace(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	res := filepath.Join(t.TempDir(), "r.json")
	cmd, out := startOpenload(t, "-r", "20", "-d", "500ms", "-o", res, "--metrics-addr", "127.0.0.1:0", "--metrics-grace", "50s", srv.URL)
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(res); err == nil {
			break
		}
	}
	// The result is renamed into place just before its notice: wait for
	// the notice, so that the signal comes after writeOutput returned.
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline) && !strings.Contains(out.String(), "wrote "+res); time.Sleep(20 * time.Millisecond) {
	}
	cmd.Process.Signal(syscall.SIGINT)
	time.Sleep(200 * time.Millisecond)
	cmd.Process.Signal(syscall.SIGTERM)
	if code := exitCode(t, cmd); code != exitInterrupted {
		t.Fatalf("exit %d, want %d\n%s", code, exitInterrupted, out)
	}
	want := "second signal: exiting now; written in full: --output " + res + "; the log holds complete lines; only the metrics' wait for a last scrape was cut short"
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline) && !strings.Contains(out.String(), want); time.Sleep(20 * time.Millisecond) {
	}
	if !strings.Contains(out.String(), want) || strings.Contains(out.String(), "was not written") {
		t.Errorf("stderr does not say the result was written in full:\n%s", out)
	}
	if r := readResult(t, res); r.Counts.Scheduled != 10 {
		t.Errorf("the result holds %d requests, want 10", r.Counts.Scheduled)
	}
}

// TestSecondSignalLine: what the line says of each state.
func TestSecondSignalLine(t *testing.T) {
	for _, c := range []struct {
		written []string
		grace   bool
		want    string
	}{
		{nil, false, "openload: second signal: exiting now; the log holds complete lines, the result was not written"},
		{nil, true, "openload: second signal: exiting now; the log holds complete lines, the result was not written"},
		{[]string{"--output r.json"}, true, "openload: second signal: exiting now; written in full: --output r.json; the log holds complete lines; only the metrics' wait for a last scrape was cut short"},
		{[]string{"--output stdout", "--csv c.csv"}, false, "openload: second signal: exiting now; written in full: --output stdout, --csv c.csv; the log holds complete lines; the outputs still to come were not written"},
	} {
		if got := secondSignalLine(c.written, c.grace); got != c.want {
			t.Errorf("%q, grace %v:\n got %s\nwant %s", c.written, c.grace, got, c.want)
		}
	}
}
