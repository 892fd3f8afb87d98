package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// uriServer counts the request targets (path and query) it reads.
type uriServer struct {
	mu  sync.Mutex
	uri map[string]int
}

func (u *uriServer) start(t *testing.T) *httptest.Server {
	u.uri = map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u.mu.Lock()
		u.uri[r.URL.RequestURI()]++
		u.mu.Unlock()
	}))
	t.Cleanup(srv.Close)
	return srv
}

func (u *uriServer) count() (map[string]int, int) {
	u.mu.Lock()
	defer u.mu.Unlock()
	n := 0
	c := map[string]int{}
	for k, v := range u.uri {
		c[k] = v
		n += v
	}
	return c, n
}

// waitFor waits until the server has read n requests: the run sends
// while its targets are still being written.
func (u *uriServer) waitFor(t *testing.T, n int, done <-chan int) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(5 * time.Millisecond) {
		if _, got := u.count(); got >= n {
			return
		}
		select {
		case code := <-done:
			t.Fatalf("the run ended (exit %d) before its targets did", code)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server read fewer than %d requests while the targets were still being written", n)
		}
	}
}

// TestLazyTargets is --lazy's known answer: targets written into a pipe
// five at a time, with a pause between, as a generator slower than the
// rate writes them. The first requests are sent before the pipe closes;
// request i goes to the i-th target (its path names the target, its
// {{seq}} the request); the requests whose target came late left late,
// their wait in their send delay; the end of the targets, before the
// schedule's, ends the run there, every request scheduled accounted
// for, and the report says why it ended.
func TestLazyTargets(t *testing.T) {
	var u uriServer
	srv := u.start(t)
	dir := t.TempDir()
	out, logf := filepath.Join(dir, "r.json"), filepath.Join(dir, "log.csv")
	pr, pw := io.Pipe()
	defer pw.Close()
	defer func(r io.Reader) { stdin = r }(stdin)
	stdin = pr
	var stdout, stderr bytes.Buffer
	done := make(chan int, 1)
	go func() {
		done <- run(context.Background(), []string{"--targets", "-", "--lazy", "-rate", "100", "-d", "10s", "-o", out, "--log", logf}, &stdout, &stderr)
	}()
	write := func(from, to int) {
		for i := from; i < to; i++ {
			fmt.Fprintf(pw, "GET %s/t/%d?seq={{seq}}\n\n", srv.URL, i)
		}
	}
	write(0, 5)
	u.waitFor(t, 5, done)              // sent while the pipe is open
	time.Sleep(200 * time.Millisecond) // the generator pauses: requests 5 … are due meanwhile
	write(5, 10)
	pw.Close()
	if code := <-done; code != exitOK {
		t.Fatalf("exit %d, want 0\n%s\n%s", code, stdout.String(), stderr.String())
	}
	got, n := u.count()
	if n != 10 {
		t.Errorf("the server read %d requests, want 10: one per target", n)
	}
	for i := range 10 {
		if uri := fmt.Sprintf("/t/%d?seq=%d", i, i); got[uri] != 1 {
			t.Errorf("the server read %s %d times, want once (request i to target i): %v", uri, got[uri], got)
		}
	}
	res := readResult(t, out)
	c := res.Counts
	if c.Expected != 1000 || c.Scheduled != 10 || c.Completed != 10 || !c.Balanced() || res.Interrupted {
		t.Errorf("counts %+v, interrupted %v: want 10 of 1000 scheduled, all completed", c, res.Interrupted)
	}
	if l := res.Lazy; l == nil || !l.Ended || l.Error != "" || l.Waited < 1 {
		t.Errorf("lazy %+v: want the targets ended, requests that waited for theirs", l)
	}
	if ch, ok := res.Check("schedule"); !ok || ch.Severity != "warn" || !strings.Contains(ch.Message, "the targets ran out: 10 targets") {
		t.Errorf("schedule check %+v", ch)
	}
	wantLines(t, stdout.String(), "request: targets from standard input, read as the run sends (vegeta's -lazy), in turn",
		"run      TARGETS RAN OUT at ", "10 requests scheduled, one per target (all accounted for above), 990 never scheduled",
		"request(s) came due before their target was read (the wait is in their send delay)")

	// The per-request log: request 5, whose target came after the
	// pause, waited for it, so its send delay is past request 4's, the
	// last sent before the pause, by the pause's part past its schedule.
	delay := sendDelays(t, logf)
	if delay[5] <= delay[4] || delay[5] <= delay[0] {
		t.Errorf("send delays %v: request 5, which waited for its target, not later than requests 0 and 4", delay)
	}
}

// sendDelays reads a per-request log's send delays, by seq.
func sendDelays(t *testing.T, path string) map[int]float64 {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	out := map[int]float64{}
	for _, r := range rows[1:] {
		seq, _ := strconv.Atoi(r[0])
		out[seq], _ = strconv.ParseFloat(r[6], 64) // send_delay_ms
	}
	return out
}

// TestLazyTargetsInterrupted: one cancel (the first signal) stops a run
// whose generator has stopped writing without closing: the requests
// sent are kept, accounted for, exit 130.
func TestLazyTargetsInterrupted(t *testing.T) {
	var u uriServer
	srv := u.start(t)
	out := filepath.Join(t.TempDir(), "r.json")
	pr, pw := io.Pipe()
	defer pw.Close()
	defer func(r io.Reader) { stdin = r }(stdin)
	stdin = pr
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout, stderr bytes.Buffer
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"--targets", "-", "--lazy", "-rate", "100", "-d", "1h", "-o", out}, &stdout, &stderr)
	}()
	fmt.Fprintf(pw, "GET %s/a\n\nGET %s/b\n\n", srv.URL, srv.URL)
	u.waitFor(t, 2, done)
	cancel()
	if code := <-done; code != exitInterrupted {
		t.Fatalf("exit %d, want %d\n%s", code, exitInterrupted, stderr.String())
	}
	res := readResult(t, out)
	if c := res.Counts; !res.Interrupted || c.Scheduled != 2 || c.Completed != 2 || !c.Balanced() {
		t.Errorf("interrupted %v, counts %+v: want the 2 requests sent, kept", res.Interrupted, c)
	}
}

// TestLazyRefused: what --lazy cannot mean the same with is refused in
// one line, exit 2, before a target is read or a request sent.
func TestLazyRefused(t *testing.T) {
	defer func(r io.Reader) { stdin = r }(stdin)
	for _, c := range []struct {
		args  []string
		input string
		want  string
	}{
		{[]string{"--shard", "0/2"}, "", "--lazy: each shard of --shard picks request i's target from i"},
		{[]string{"--repeats", "2"}, "", "--lazy: --repeats sends the targets again"},
		{[]string{"--closed"}, "", "--lazy: --closed sends its targets from a table"},
		{nil, "# openload: weight=2\nGET http://127.0.0.1:1/\n\n", "standard input:2: GET http://127.0.0.1:1/: a weight, but targets read as the run sends"},
		{nil, "", "--targets: standard input: empty: no targets"},
	} {
		stdin = strings.NewReader(c.input)
		args := append([]string{"--targets", "-", "--lazy", "-rate", "10", "-d", "1s"}, c.args...)
		code, stdout, stderr := runCLI(args...)
		if line, _, _ := strings.Cut(stderr, "\n"); code != exitUsage || stdout != "" || !strings.Contains(line, c.want) {
			t.Errorf("%q: exit %d, %q; want exit 2 and %q", args, code, stderr, c.want)
		}
	}
	code, _, stderr := runCLI("sweep", "--targets", "-", "--lazy", "--rates", "10,20", "-d", "1s")
	if code != exitUsage || !strings.Contains(stderr, "--lazy: a sweep sends the targets again") {
		t.Errorf("sweep: exit %d, %q", code, stderr)
	}
	dir := t.TempDir()
	sc := filepath.Join(dir, "s.yaml")
	if err := os.WriteFile(sc, []byte("scenarios:\n  - name: a\n    rate: 1\n    targets: "+filepath.Join(dir, "t.http")+"\n    lazy: true\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr = runCLI("--scenarios", sc, "-d", "1s")
	if code != exitUsage || !strings.Contains(stderr, "--lazy: each scenario reads its own targets") {
		t.Errorf("scenarios: exit %d, %q", code, stderr)
	}
	code, _, stderr = runCLI("k8s", "manifest", "--shards", "2", "--targets", "t.http", "--lazy", "-rate", "10", "-d", "1s")
	if code != exitUsage || !strings.Contains(stderr, "--lazy does not apply to a cluster run") {
		t.Errorf("k8s: exit %d, %q", code, stderr)
	}
}

// TestLazyTargetError: a target that cannot be sent, after the run
// started, ends the targets there: the run stops scheduling, the
// schedule check fails naming the line (exit 1), what was sent is kept.
func TestLazyTargetError(t *testing.T) {
	var u uriServer
	srv := u.start(t)
	defer func(r io.Reader) { stdin = r }(stdin)
	stdin = strings.NewReader(fmt.Sprintf("GET %s/a\n\nGET %s/b\n\nGET http://elsewhere.invalid/c\n\nGET %s/d\n\n", srv.URL, srv.URL, srv.URL))
	code, stdout, _ := runCLI("--targets", "-", "--lazy", "-rate", "100", "-d", "10s")
	if code != exitCheckFailed {
		t.Fatalf("exit %d, want %d\n%s", code, exitCheckFailed, stdout)
	}
	if got, n := u.count(); n != 2 || got["/a"] != 1 || got["/b"] != 1 {
		t.Errorf("the server read %v, want /a and /b once", got)
	}
	wantLines(t, stdout, "TARGETS ENDED AT AN ERROR at ", "2 requests scheduled (all accounted for above)",
		"standard input:5: GET http://elsewhere.invalid/c: origin http://elsewhere.invalid:80 is not the first target's")
}
