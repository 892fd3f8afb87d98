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
	"time"
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
		// Each error names its line: yaml.v3 alone said "line 1" for a
		// slip on line 4, and no line for a value.
		{write("indent.yaml", "scenarios:\n  - name: a\n    rate: 1\n   url: http://x/\n"), `indent.yaml": line 4: did not find expected '-' indicator`},
		{write("key.yaml", "scenarios:\n  - name: a\n    rate: 1\n    - url: http://x/\n"), `line 4: did not find expected key`},
		{write("value.yaml", "scenarios:\n  - name: a\n    url: http://127.0.0.1:1/\n    rate: -1\n"), `line 4: scenario "a": --rate must be > 0`},
		{write("typoline.yaml", "scenarios:\n  - name: a\n    url: http://127.0.0.1:1/\n    rat: 1\n"), `line 4: scenario "a": unknown flag: --rat: did you mean --rate?`},
		{write("scalar.yaml", "scenarios: 5\n"), `line 1: "scenarios:" holds the value "5": want a list of scenarios`},
		{write("item.yaml", "scenarios:\n  - a\n"), `line 2: scenario 1 is the value "a": a scenario is a map of keys`},
		{write("mapname.yaml", "scenarios:\n  a:\n    name: b\n    rate: 1\n"), `line 3: scenario "a" has the name "b": in a map of scenarios, the key is the name`},
		// k6's keys: read where they mean the same, else what to write.
		{write("tags.yaml", "scenarios:\n  - name: a\n    rate: 1\n    tags: {x: y}\n"), `line 4: scenario "a": tags (k6's): the scenario's name labels`},
		{write("startrate.yaml", "scenarios:\n  - name: a\n    startRate: 1\n"), `line 3: scenario "a": startRate (k6's) is the rate stages start from`},
		{write("vus.yaml", "scenarios:\n  - name: a\n    rate: 1\n    maxVUs: 10\n"), `maxVUs (k6's): openload has no VUs`},
		{write("prealloc.yaml", "scenarios:\n  - name: a\n    rate: 1\n    preAllocatedVUs: 10\n"), `preAllocatedVUs (k6's): openload has no VUs`},
		{write("exec.yaml", "scenarios:\n  - name: a\n    rate: 1\n    exec: browse\n"), `exec (k6's): openload has no VUs and runs no script`},
		{write("executor.yaml", "scenarios:\n  - name: a\n    executor: constant-vus\n"), `executor constant-vus (k6's): openload's scenarios are open arrival rates`},
		{write("ramping.yaml", "scenarios:\n  - name: a\n    rate: 1\n    executor: ramping-arrival-rate\n"), `line 4: scenario "a": executor ramping-arrival-rate (k6's) without stages`},
		{write("timeunit.yaml", "scenarios:\n  - name: a\n    rate: 1\n    timeUnit: 1m\n"), `timeUnit 1m (k6's): openload's rates are per second`},
		{write("k6stage.yaml", "scenarios:\n  - name: a\n    stages: [{duration: 1s}]\n"), `line 3: scenario "a": stage 1: a list of stages is k6's, each {duration, target}`},
		{write("start.yaml", "scenarios:\n  - name: a\n    rate: 1\n    start-after: -1s\n"), `line 4: scenario "a": --start-after "-1s": want a duration ≥ 0`},
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

// TestScenariosK6 reads a scenarios file as k6 writes one: a map of
// scenarios by name (run in the file's order), their executors, rate
// per timeUnit 1s, a later start (startTime) and k6's list of stages
// from a leading 0s stage (startRate the rate they start from). -d on the command line
// is the duration of the scenarios without stages (REFERENCE's example
// exited 2: "--stages and --duration are exclusive"). The late
// scenario's sends begin its offset after the early one's, and the
// whole's timeline holds them from that second.
func TestScenariosK6(t *testing.T) {
	var c pathCounter
	srv := c.server(t)
	dir := t.TempDir()
	file := writeFile(t, dir, "k6.yaml", fmt.Sprintf(`scenarios:
  early:
    executor: constant-arrival-rate
    rate: 20
    timeUnit: 1s
    url: %[1]s/early
  late:
    executor: ramping-arrival-rate
    startTime: 1s
    startRate: 0
    stages:
      - {duration: 0s, target: 10}
      - {duration: 1s, target: 10}
    url: %[1]s/late
`, srv.URL))
	out := filepath.Join(dir, "r.json")
	_, stderr := runOK(t, "--scenarios", file, "-d", "2s", "-o", out)
	res := readResult(t, out)
	if len(res.Scenarios) != 2 || res.Scenarios[0].Name != "early" || res.Scenarios[1].Name != "late" {
		t.Fatalf("scenarios %+v, want early and late in the file's order", res.Scenarios)
	}
	early, late := res.Scenarios[0].Result, res.Scenarios[1].Result
	if early.Counts.Sent != 40 || late.Counts.Sent != 10 || c.count("/early") != 40 || c.count("/late") != 10 {
		t.Errorf("sent early %d, late %d; the server read %d and %d; want 40 and 10", early.Counts.Sent, late.Counts.Sent, c.count("/early"), c.count("/late"))
	}
	// The instants each waited for (Config.StartAt) are exact; Started
	// is read off the clock.
	e, _ := time.Parse(time.RFC3339Nano, early.Config.StartAt)
	l, _ := time.Parse(time.RFC3339Nano, late.Config.StartAt)
	if d := l.Sub(e); d != time.Second || res.Config.StartAt != early.Config.StartAt {
		t.Errorf("late's start %v after early's (the whole's %s), want startTime's 1s", d, res.Config.StartAt)
	}
	if len(res.Timeline) < 2 || res.Timeline[0].Scheduled != 20 || res.Timeline[1].Scheduled != 30 {
		t.Errorf("the whole's timeline %+v: want 20 then 20+10 scheduled", res.Timeline)
	}
	wantLines(t, stderr, "openload: scenario late: constant stages 0s:10,1s:10 from 0/s, 1s from +1s → GET ")
}

// TestScenariosUID: two scenarios, one of single requests and one of
// sessions, each send {{seq}} and {{uid}}. Their seqs collide (each
// counts from 0, as documented); every uid the server reads is its own.
func TestScenariosUID(t *testing.T) {
	var mu sync.Mutex
	seqs, uids := map[string]int{}, map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seqs[r.Header.Get("X-Seq")]++
		uids[r.Header.Get("X-Uid")]++
		mu.Unlock()
	}))
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	file := writeFile(t, dir, "ids.yaml", fmt.Sprintf(`scenarios:
  - name: a
    rate: 20
    header: ["X-Seq: {{seq}}", "X-Uid: {{uid}}"]
    url: %[1]s/a
  - name: b
    rate: 10
    steps:
      - name: one
        header: ["X-Seq: {{seq}}", "X-Uid: {{uid}}"]
    url: %[1]s/b
`, srv.URL))
	runOK(t, "--scenarios", file, "-d", "2s", "-q")
	mu.Lock()
	defer mu.Unlock()
	sent := 0
	for u, n := range uids {
		sent += n
		if n != 1 || u == "" {
			t.Errorf("uid %q read %d times", u, n)
		}
	}
	if sent != 60 || len(seqs) != 40 {
		t.Errorf("%d requests, %d distinct seqs; want 60, and 40 (b's 20 repeat a's first)", sent, len(seqs))
	}
}

// TestScenarioTargetObjectives: objectives scoped to a target of a
// scenario's request mix, by SCENARIO:TARGET or by the target's name
// alone when one scenario has it; the text report has each scenario's
// by-target table, as the JSON has its targets.
func TestScenarioTargetObjectives(t *testing.T) {
	var c pathCounter
	srv := c.server(t)
	dir := t.TempDir()
	targets := writeFile(t, dir, "shop.http", fmt.Sprintf("# openload: name=cart\nGET %[1]s/cart\n\n# openload: name=home\nGET %[1]s/home\n", srv.URL))
	file := writeFile(t, dir, "mix.yaml", fmt.Sprintf(`scenarios:
  - name: shop
    rate: 10
    targets: %s
    slo: ["home:errors<=0%%"]
  - name: other
    rate: 10
    url: %s/other
`, targets, srv.URL))
	stdout, _ := runOK(t, "--scenarios", file, "-d", "1s", "--slo", "cart:response.p99<=1h")
	wantLines(t, stdout, "scenario shop · by target", "PASS  cart:response.p99 <= 3600000.000 ms: measured", "PASS  shop:home:errors.rate <= 0 %")
	if c.count("/cart") != 5 || c.count("/home") != 5 {
		t.Errorf("the server read cart %d, home %d; want 5 each", c.count("/cart"), c.count("/home"))
	}
	// A name no scenario's target has is refused before the run.
	code, _, stderr := runCLI("--scenarios", file, "-d", "1s", "--slo", "basket:errors<=0%")
	if first, _, _ := strings.Cut(stderr, "\n"); code != exitUsage || !strings.Contains(first, `no target or scenario named "basket"`) || !strings.Contains(first, `"shop:cart"`) {
		t.Errorf("--slo basket:…: exit %d, %q", code, first)
	}
}
