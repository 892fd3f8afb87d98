package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// pathCounter counts the requests it reads by path.
type pathCounter struct {
	mu sync.Mutex
	n  map[string]int64
}

func (c *pathCounter) server(t *testing.T) *httptest.Server {
	c.n = map[string]int64{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.mu.Lock()
		c.n[r.URL.Path]++
		c.mu.Unlock()
	}))
	t.Cleanup(srv.Close)
	return srv
}

func (c *pathCounter) count(path string) int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[path]
}

// TestScenarios: two scenarios, 100/s constant and 20/s Poisson, run at
// once; each keeps its own count and schedule check, the server reads
// what each says it sent, and the whole is their sum. The browse
// scenario's objective, response.p99<=1h, is met on any machine: no
// response time outlasts the test binary (go test -timeout, 10 minutes
// unless set); it was 10 s, a bound on the machine, however loose.
func TestScenarios(t *testing.T) {
	var c pathCounter
	srv := c.server(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "mix.yaml")
	yaml := fmt.Sprintf(`scenarios:
  - name: browse
    rate: 100
    slo: ["response.p99<=1h"]
    url: %[1]s/browse
  - name: search
    rate: 20
    arrival: poisson
    seed: 7
    connections: 8
    url: %[1]s/search
`, srv.URL)
	if err := os.WriteFile(file, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "r.json")
	stdout, _ := runOK(t, "--scenarios", file, "-d", "2s", "--slo", "search:errors<=0%", "-o", out)
	res := readResult(t, out)
	if len(res.Scenarios) != 2 {
		t.Fatalf("%d scenarios", len(res.Scenarios))
	}
	browse, search := res.Scenarios[0].Result, res.Scenarios[1].Result
	if browse.Counts.Scheduled != 200 || c.count("/browse") != browse.Counts.Sent || browse.Counts.Sent != 200 {
		t.Errorf("browse: scheduled %d, sent %d, the server read %d; want 200", browse.Counts.Scheduled, browse.Counts.Sent, c.count("/browse"))
	}
	if c.count("/search") != search.Counts.Sent || search.Counts.Sent != search.Counts.Scheduled || search.Limit.Connections != 8 {
		t.Errorf("search: scheduled %d, sent %d, the server read %d, connections %d", search.Counts.Scheduled, search.Counts.Sent, c.count("/search"), search.Limit.Connections)
	}
	if res.Counts.Scheduled != browse.Counts.Scheduled+search.Counts.Scheduled || res.Counts.Completed != res.Counts.Scheduled {
		t.Errorf("the whole %+v is not the sum", res.Counts)
	}
	// Every second of the whole holds both scenarios' sends.
	var sent int64
	for _, s := range res.Timeline {
		sent += s.Sent
	}
	if sent != res.Counts.Sent {
		t.Errorf("the whole's timeline sums %d sends of %d", sent, res.Counts.Sent)
	}
	wantLines(t, stdout, "by scenario", "PASS  browse:response.p99 <= 3600000.000 ms: measured", "PASS  search:errors.rate <= 0 %", "PASS  schedule          scheduled ", "= the sum of 2 scenarios, each against its own schedule: browse: scheduled 200 = rate × duration · search: poisson draw scheduled")
	// diff compares the scenarios one by one.
	if code, diff, _ := runCLI("diff", out, out); code != exitOK || !strings.Contains(diff, "by scenario · response time p99 (ms)") || !strings.Contains(diff, "│ search   │") {
		t.Errorf("diff: exit %d\n%s", code, diff)
	}
	for _, sc := range res.Scenarios {
		if !strings.Contains(sc.Result.Config.Target, "/"+sc.Name) {
			t.Errorf("scenario %s went to %s", sc.Name, sc.Result.Config.Target)
		}
	}
}

func TestScenarioErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string { return writeFile(t, dir, name, text) }
	cases := []struct{ file, want string }{
		{write("empty.yaml", ""), "the file is empty"},
		{write("none.yaml", "scenarios: []\n"), "no scenario in it"},
		{write("other.yaml", "scenario:\n  - name: a\n"), "field scenario not found"},
		{write("noname.yaml", "scenarios:\n  - rate: 1\n"), "scenario 1 has no name"},
		{write("twice.yaml", "scenarios:\n  - name: a\n    rate: 1\n  - name: a\n    rate: 2\n"), `scenario "a" given twice`},
		{write("typo.yaml", "scenarios:\n  - name: a\n    rat: 1\n    url: http://127.0.0.1:1/\n"), "did you mean --rate?"},
		{write("nourl.yaml", "scenarios:\n  - name: a\n    rate: 1\n"), `scenario "a" has no url`},
		{write("out.yaml", "scenarios:\n  - name: a\n    rate: 1\n    output: x.json\n"), "--output is the whole run's"},
		{write("badrate.yaml", "scenarios:\n  - name: a\n    rate: -1\n    url: http://127.0.0.1:1/\n"), `scenario "a": --rate`},
		{write("noscheme.yaml", "scenarios:\n  - name: a\n    rate: 1\n    url: 127.0.0.1:1/\n"), "has no scheme"},
		{filepath.Join(dir, "missing.yaml"), "no such file"},
	}
	for _, c := range cases {
		code, _, stderr := runCLI("--scenarios", c.file, "-d", "1s")
		first, _, _ := strings.Cut(stderr, "\n")
		if code != exitUsage || !strings.Contains(first, c.want) {
			t.Errorf("%s: exit %d, %q; want exit 2 and %q", filepath.Base(c.file), code, first, c.want)
		}
	}
	// An objective naming no scenario.
	one := write("one.yaml", "scenarios:\n  - name: a\n    rate: 1\n    url: http://127.0.0.1:1/\n")
	code, _, stderr := runCLI("--scenarios", one, "-d", "1s", "--slo", "b:response.p99<=1s")
	if first, _, _ := strings.Cut(stderr, "\n"); code != exitUsage || !strings.Contains(first, `no target or scenario named "b" (known: "a")`) {
		t.Errorf("--slo b:…: exit %d, %q", code, first)
	}
}
