package main

import (
	"bufio"
	"context"
	"io"
	"maps"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/openload/openload/internal/rawtcp"
)

// mixServer counts what it reads: requests by method and path, and the
// distinct requests (method, URI, X-Id, body).
type mixServer struct {
	mu       sync.Mutex
	by       map[string]int64
	distinct map[string]bool
}

func (m *mixServer) start(t *testing.T) *httptest.Server {
	m.by, m.distinct = map[string]int64{}, map[string]bool{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		m.mu.Lock()
		m.by[r.Method+" "+r.URL.Path]++
		m.distinct[r.Method+" "+r.URL.RequestURI()+" "+r.Header.Get("X-Id")+" "+string(b)] = true
		m.mu.Unlock()
	}))
	t.Cleanup(srv.Close)
	return srv
}

func (m *mixServer) counts() (map[string]int64, int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := map[string]int64{}
	for k, v := range m.by {
		out[k] = v
	}
	return out, len(m.distinct)
}

// writeTargets writes a vegeta targets file for srv: three targets, a
// body read from @file, a header.
func writeTargets(t *testing.T, dir, url, directives string) string {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, "body.json"), []byte(`{"cart": 1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	d := strings.Split(directives+"\n\n", "\n")
	text := d[0] + "\nGET " + url + "/browse\n\n" +
		d[1] + "\nPOST " + url + "/checkout\nContent-Type: application/json\n@" + filepath.Join(dir, "body.json") + "\n\n" +
		d[2] + "\nGET " + url + "/search?q=shoes\nX-Account-ID: 99\n"
	p := filepath.Join(dir, "targets.txt")
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestTargetsInTurn: three targets in turn at 300/s for 1 s: the server
// reads exactly 100 of each, and openload's per-target counts are its.
// The checkout target's objective, response.p99<=1h, is met on any
// machine (no response time outlasts the test binary: go test -timeout,
// 10 minutes unless set); it was 10 s, a bound on the machine.
func TestTargetsInTurn(t *testing.T) {
	var m mixServer
	srv := m.start(t)
	dir := t.TempDir()
	file := writeTargets(t, dir, srv.URL, "")
	out := filepath.Join(dir, "r.json")
	stdout, _ := runOK(t, "--targets", file, "-rate", "300", "-d", "1s", "--slo", "POST "+srv.URL+"/checkout:response.p99<=1h", "-o", out)
	got, _ := m.counts()
	res := readResult(t, out)
	if len(res.Targets) != 3 {
		t.Fatalf("%d targets in the result", len(res.Targets))
	}
	for _, p := range res.Targets {
		method, u, _ := strings.Cut(p.Name, " ")
		path := strings.TrimPrefix(strings.SplitN(u, "?", 2)[0], srv.URL)
		if p.Counts.Sent != 100 || got[method+" "+path] != p.Counts.Sent || p.Status["200"] != 100 {
			t.Errorf("%s: openload sent %d (%v), the server read %d; want 100", p.Name, p.Counts.Sent, p.Status, got[method+" "+path])
		}
	}
	wantLines(t, stdout, "by target", "request: 3 targets from "+file+", in turn", "PASS  target accounting", "PASS  POST "+srv.URL+"/checkout:response.p99 <= 3600000.000 ms")
}

// TestTargetsWeighted: weights 1:2:1 with a seed land within the
// binomial spread, and {{seq}}, {{rand}} and {{csv.…}} make every
// templated request distinct at the server.
func TestTargetsWeighted(t *testing.T) {
	var m mixServer
	srv := m.start(t)
	dir := t.TempDir()
	file := writeTargets(t, dir, srv.URL, "# openload: name=browse weight=1\n# openload: name=checkout weight=2\n# openload: name=search weight=1")
	text, _ := os.ReadFile(file)
	text = []byte(strings.Replace(string(text), "/search?q=shoes\nX-Account-ID: 99", "/search?q={{csv.q}}&page={{rand 1 20}}\nX-Id: {{seq}}", 1))
	if err := os.WriteFile(file, text, 0o644); err != nil {
		t.Fatal(err)
	}
	vals := filepath.Join(dir, "q.csv")
	if err := os.WriteFile(vals, []byte("q\nshoes\nhats\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "r.json")
	runOK(t, "--targets", file, "--values", vals, "--seed", "11", "-rate", "400", "-d", "1s", "-q", "-o", out)
	got, distinct := m.counts()
	res := readResult(t, out)
	n := float64(res.Counts.Sent)
	for i, p := range res.Targets {
		share := []float64{0.25, 0.5, 0.25}[i]
		// The count of a target drawn with probability p from n draws is
		// binomial: mean np, standard deviation √(np(1−p)), 8.7–10 here;
		// 5 of them is a bound no seed should cross by chance.
		if sd := math.Sqrt(n * share * (1 - share)); math.Abs(float64(p.Counts.Sent)-n*share) > 5*sd {
			t.Errorf("%s: %d of %v, want %v ± %.0f", p.Name, p.Counts.Sent, n, n*share, 5*sd)
		}
	}
	if got["GET /search"] != res.Targets[2].Counts.Sent || got["POST /checkout"] != res.Targets[1].Counts.Sent {
		t.Errorf("the server read %v, openload's targets %+v", got, res.Targets)
	}
	// browse and checkout are the same request each time; every search
	// is distinct.
	if want := int(got["GET /search"]) + 2; distinct != want {
		t.Errorf("%d distinct requests, want %d", distinct, want)
	}
}

func TestTargetsErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string { return writeFile(t, dir, name, text) }
	good := write("good.txt", "GET http://127.0.0.1:1/a\n")
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--targets", write("empty.txt", "")}, "empty.txt"},
		{[]string{"--targets", write("noscheme.txt", "GET 127.0.0.1:1/a\n")}, "noscheme.txt:1:"},
		{[]string{"--targets", write("nobody.txt", "POST http://127.0.0.1:1/a\n@"+filepath.Join(dir, "missing.json")+"\n")}, "missing.json"},
		{[]string{"--targets", write("hosts.txt", "GET http://127.0.0.1:1/a\n\nGET http://127.0.0.2:1/b\n")}, "hosts.txt:3:"},
		{[]string{"--targets", filepath.Join(dir, "none.txt")}, "no such file"},
		{[]string{"--targets", good, "http://127.0.0.1:1/"}, "drop the URL"},
		{[]string{"--targets", good, "--body", "x"}, "drop --body"},
		{[]string{"--targets", good, "--targets-format", "yaml"}, `--targets-format "yaml"`},
		{[]string{"--targets", write("undef.txt", "GET http://127.0.0.1:1/a?u={{user}}\n")}, "undef.txt:1:"},
		{[]string{"--targets", write("csv.txt", "GET http://127.0.0.1:1/a?u={{csv.user}}\n")}, "csv.txt:1:"},
		{[]string{"--targets", good, "--slo", "nope:response.p99<=1s"}, `no target or scenario named "nope"`},
		{[]string{"--values", good, "http://127.0.0.1:1/"}, "--values"},
		{[]string{"--targets-format", "http", "http://127.0.0.1:1/"}, "--targets-format applies to a --targets file"},
	}
	for _, c := range cases {
		code, _, stderr := runCLI(append([]string{"-rate", "10", "-d", "1s"}, c.args...)...)
		first, _, _ := strings.Cut(stderr, "\n")
		if code != exitUsage || !strings.Contains(first, c.want) {
			t.Errorf("%v: exit %d, %q; want exit 2 and %q", c.args, code, first, c.want)
		}
	}
}

// TestValuesOnTheCommandLine: {{…}} in a plain run's URL path, a header
// and the body make every request distinct at the server.
func TestValuesOnTheCommandLine(t *testing.T) {
	var m mixServer
	srv := m.start(t)
	runOK(t, "-rate", "50", "-d", "1s", "-q", "-H", "X-Id: {{rand 1 1000000000}}", "--body", `{"order": {{seq}}}`, srv.URL+"/item/{{seq}}")
	got, distinct := m.counts()
	var n int64
	for _, c := range got {
		n += c
	}
	if n != 50 || distinct != 50 || len(got) != 50 {
		t.Errorf("the server read %d requests on %d paths, %d distinct; want 50 each", n, len(got), distinct)
	}
}

// TestTargetsStdin: --targets - reads the targets from standard input;
// and while it waits for them (a generator that has not written yet), one
// cancel (the first signal) stops openload: exit 130, nothing sent.
func TestTargetsStdin(t *testing.T) {
	var m mixServer
	srv := m.start(t)
	text, err := os.ReadFile(writeTargets(t, t.TempDir(), srv.URL, ""))
	if err != nil {
		t.Fatal(err)
	}
	defer func(r io.Reader) { stdin = r }(stdin)
	stdin = strings.NewReader(string(text))
	stdout, _ := runOK(t, "--targets", "-", "-rate", "300", "-d", "1s")
	got, _ := m.counts()
	if got["GET /browse"] != 100 || got["POST /checkout"] != 100 || got["GET /search"] != 100 {
		t.Errorf("the server read %v, want 100 of each", got)
	}
	wantLines(t, stdout, "request: 3 targets from standard input, in turn")

	pr, pw := io.Pipe()
	defer pw.Close()
	stdin = pr
	ctx, cancel := context.WithCancel(context.Background())
	var out, errb strings.Builder
	done := make(chan int)
	go func() { done <- run(ctx, []string{"--targets", "-", "-rate", "300", "-d", "1s"}, &out, &errb) }()
	cancel()
	if code := <-done; code != exitInterrupted || !strings.Contains(errb.String(), "interrupted while reading the inputs") {
		t.Errorf("cancelled while reading: exit %d, %q", code, errb.String())
	}
}

// TestLogStdout: --log - streams the per-request log to stdout, as -o -
// does the result, and the report goes to stderr.
func TestLogStdout(t *testing.T) {
	var m mixServer
	srv := m.start(t)
	code, stdout, stderr := runCLI("--log", "-", "-rate", "20", "-d", "1s", srv.URL)
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	if code != exitOK || len(lines) != 21 || !strings.HasPrefix(lines[0], "seq,scheduled_ms,") {
		t.Errorf("exit %d, %d lines on stdout, first %q", code, len(lines), lines[0])
	}
	wantLines(t, stderr, "PASS  accounting")
	if _, err := os.Stat("-"); err == nil {
		t.Error("a file named - was written")
	}
}

// TestTargetsHeaderCase: a templated header arrives in the file's case,
// as a static one does (REFERENCE: "unchanged"), and every request of
// every client writes the headers in one order, whatever Go's map order.
// -H adds its headers to every target, but a target's own value of a
// header replaces -H's (vegeta would send both: REFERENCE says why not).
func TestTargetsHeaderCase(t *testing.T) {
	var mu sync.Mutex
	heads := map[string]int{}  // header names in the order read → requests
	static := map[string]int{} // x-static's values → requests
	srv, err := rawtcp.Serve(func(c net.Conn, _ <-chan struct{}) {
		br := bufio.NewReader(c)
		for {
			var names []string
			_, err := br.ReadString('\n') // the request line
			var line string
			for err == nil {
				if line, err = br.ReadString('\n'); strings.TrimSpace(line) == "" {
					break
				}
				name, value, _ := strings.Cut(line, ":")
				names = append(names, name)
				if strings.EqualFold(name, "x-static") {
					mu.Lock()
					static[strings.TrimSpace(value)]++
					mu.Unlock()
				}
			}
			if err != nil {
				return
			}
			mu.Lock()
			heads[strings.Join(names, ",")]++
			mu.Unlock()
			if _, err := c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")); err != nil {
				return
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	file := filepath.Join(t.TempDir(), "t.http")
	text := "GET http://" + srv.Addr() + "/a\nx-request-id: {{seq}}\nx-static: 1\nX-Zeta: 2\nx-alpha: 3\nX-Mid: 4\n"
	if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	// Three runs of each client: a request is serialised once per run,
	// so an order from map iteration shows between runs (the lean
	// client wrote its headers in map order before).
	for _, client := range [][]string{nil, {"--net-http"}} {
		mu.Lock()
		clear(heads)
		clear(static)
		mu.Unlock()
		for range 3 {
			runOK(t, append([]string{"--targets", file, "-rate", "20", "-d", "1s", "-q", "-H", "X-Static: global", "-H", "X-Global: g"}, client...)...)
		}
		mu.Lock() // the server's handlers may still be ending
		static, heads := maps.Clone(static), maps.Clone(heads)
		mu.Unlock()
		if len(static) != 1 || static["1"] != 60 {
			t.Errorf("%v: x-static sent as %v, want the target's 1 alone, 60 times", client, static)
		}
		if len(heads) != 1 {
			t.Errorf("%v: %d orders of headers: %v", client, len(heads), heads)
		}
		for h := range heads {
			if !strings.Contains(h, "x-request-id") || !strings.Contains(h, "x-static") || !strings.Contains(h, "X-Zeta") || !strings.Contains(h, "X-Global") || strings.Count(strings.ToLower(h), "x-static") != 1 {
				t.Errorf("%v: headers sent %s, want the file's case", client, h)
			}
		}
	}
}
