package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/openload/openload/internal/rawtcp"
	"github.com/openload/openload/internal/sweep"
	"github.com/openload/openload/result"
	"github.com/openload/openload/servers/stub"
)

// stagesUsageCases are bad --stages and --burstiness input: one line each,
// naming the flag (TestUsageErrorsGolden).
func stagesUsageCases() [][]string {
	const u = "http://127.0.0.1:1/"
	return [][]string{
		{"--stages", "30s", u},
		{"--stages", "30s:x", u},
		{"--stages", "0s:10", u},
		{"--stages", "-1s:10", u},
		{"--stages", "1s:-5", u},
		{"--stages", "1s:0", u},
		{"--stages", "1s:1", u},
		{"--stages", "1s:10", "-d", "5s", u},
		{"--stages", "1s:10", "--closed", u},
		{"--stages", "1s:1e12", u},
		{"--stages", "", u},
		{"--arrival", "gamma", "-rate", "10", u},
		{"--arrival", "gamma", "--burstiness", "-1", "-rate", "10", u},
		{"--burstiness", "2", "-rate", "10", u},
		{"--warmup", "5s", "-rate", "10", "-d", "2s", u},
		{"--warmup", "-1s", "-rate", "10", u},
		{"--repeats", "0", "-rate", "10", u},
		{"--repeats", "2", "--closed", u},
		{"--repeats", "2", "-rate", "10", "--log", "x.csv", u},
		{"--repeats", "2", "-rate", "10", "-o", "-", u},
	}
}

// sweepUsageCases are bad input of 'openload sweep'.
func sweepUsageCases() [][]string {
	const u = "http://127.0.0.1:1/"
	return [][]string{
		{"sweep", u},
		{"sweep", "--rate", "10", u},
		{"sweep", "--rates", "10,0", u},
		{"sweep", "--rates", "10,x", u},
		{"sweep", "--rates", "10", "--from", "1", u},
		{"sweep", "--from", "10", "--to", "5", "--steps", "3", u},
		{"sweep", "--from", "10", "--to", "20", u},
		{"sweep", "--from", "10", "--to", "20", "--steps", "1", u},
		{"sweep", "--rates", "10,20", "--knee", "1", u},
		{"sweep", "--rates", "10,20", "--pause", "-1s", u},
		{"sweep", "--rates", "10,20", "--repeats", "3", u},
		{"sweep", "--rates", "10,20", "--stages", "1s:10", u},
		{"sweep", "--search", "--from", "10", "--to", "20", u},
		{"sweep", "--search", "--slo", "response.p99<=1s", "--to", "20", u},
		{"sweep", "--search", "--slo", "response.p99<=1s", "--from", "20", "--to", "20", u},
		{"sweep", "--search", "--slo", "response.p99<=1s", "--from", "1", "--to", "20", "--precision", "0", u},
		{"sweep", "--search", "--slo", "response.p99<=1s", "--from", "1", "--to", "20", "--repeats", "0", u},
		{"sweep", "--search", "--slo", "response.p99<=1s", "--rates", "1,2", u},
		{"sweep", "--rates", "10,20", "--slo", "latency.p99<=1s", u},
		{"sweep", "--rates", "10,20", "-o", "-", u},
		{"sweep", "--profile", "steps", u},
		{"sweep", "--rates", "10,20", "--points", "3", u},
		{"sweep", "--profile", "sweep", "--rates", "10,20", u},
		{"sweep", "--profile", "sweep", "--search", "--slo", "response.p99<=1s", u},
		{"sweep", "--profile", "sweep", "--points", "0", u},
		{"sweep", "--profile", "sweep", "--requests", "0", u},
		{"sweep", "--profile", "sweep", "--shard", "1/2", u},
	}
}

// sweepStub is a stub of 4 workers × 20 ms behind no gate, closed when
// the test ends.
func sweepStub(t *testing.T) *stub.Server {
	t.Helper()
	cfg := stub.DefaultConfig()
	cfg.Workers, cfg.Latency, cfg.Policy = 4, 20*time.Millisecond, stub.PolicyNone
	s, err := stub.NewServer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// TestSweepCLI: a sweep's table names every point and the knee; its file
// holds every point's full result, which report and diff read as FILE#N.
func TestSweepCLI(t *testing.T) {
	s := sweepStub(t)
	dir := t.TempDir()
	out := filepath.Join(dir, "sweep.json")
	svg := filepath.Join(dir, "sweep.svg")
	stdout, _ := runOK(t, "sweep", "--rates", "20,40", "-d", "500ms", "--pause", "0s", "-o", out, "--svg", svg,
		"--slo", "response.p99<=1s", s.URL+"/predict")
	wantLines(t, stdout, "offered/s", "response.p99<=1s")
	// Where the knee is, against a stub of 200/s, is the machine's: a
	// pause at 40/s can double its p99. So the line is held to the knee
	// rule (sweep.go) applied to the points' own figures: 40/s is the
	// knee when its p99 is over 2 × 20/s's or it broke the objective
	// (a knee at 20/s, or a line that disagrees with the points, fails).
	_, f, ok, err := readSweep(out)
	if !ok || err != nil || len(f.Points) != 2 {
		t.Fatalf("the sweep file: %v, %v", ok, err)
	}
	base, top := f.Points[0].Result, f.Points[1].Result
	knee := top.Response.P99 > 2*base.Response.P99 || f.Points[1].Stopped != ""
	for _, o := range top.SLOs {
		knee = knee || !o.Pass
	}
	if want := map[bool]string{true: "\nknee: 40/s (point 2): ", false: "\nknee: none up to 40/s"}[knee]; !strings.Contains(stdout, want) {
		t.Errorf("response p99 %.3f ms at 20/s, %.3f ms at 40/s, objectives %+v: want %q:\n%s", base.Response.P99, top.Response.P99, top.SLOs, want, stdout)
	}
	// The header and two points, in one table or, when it would be over
	// 100 columns, two (the latencies, then the outcomes).
	if n := strings.Count(stdout, "\n│ "); n != 3 && n != 6 {
		t.Errorf("%d rows, want 3 (or 6 in two tables):\n%s", n, stdout)
	}
	rep, _ := runOK(t, "report", out+"#2")
	wantLines(t, rep, "constant 40/s for 500ms", "scheduled 20 = rate × duration")
	diff, _ := runOK(t, "diff", out+"#1", out+"#2")
	wantLines(t, diff, "response time")
	if code, _, stderr := runCLI("diff", out, out+"#1"); code != exitUsage || !strings.Contains(stderr, "is a sweep file of 2 runs: name one") {
		t.Errorf("diff of the whole sweep file: exit %d, %q", code, stderr)
	}
	if code, _, stderr := runCLI("report", out+"#3"); code != exitUsage || !strings.Contains(stderr, "holds points 1 to 2") {
		t.Errorf("report of point 3 of 2: exit %d, %q", code, stderr)
	}
	if b, err := os.ReadFile(svg); err != nil || !strings.Contains(string(b), "<svg") {
		t.Errorf("--svg: %v", err)
	}

	// A search whose --from already breaches says so and exits 4; one
	// whose --to still passes says so and exits 0.
	code, stdout, stderr := runCLI("sweep", "--search", "--slo", "response.p50<=1ms", "--from", "10", "--to", "20", "-d", "300ms", "--pause", "0s", s.URL+"/predict")
	if code != exitSLOBreached || !strings.Contains(stdout, "the lowest rate, 10/s, already breaches") {
		t.Errorf("from breaches: exit %d\n%s\n%s", code, stdout, stderr)
	}
	// (The first is known on any machine: the stub's calls take 20 ms;
	// so is the second, since no response outlasts the test binary, go
	// test -timeout, 10 minutes unless set. It was 10 s, a bound on the
	// machine.)
	code, stdout, stderr = runCLI("sweep", "--search", "--slo", "response.max<=1h", "--from", "10", "--to", "20", "-d", "300ms", "--pause", "0s", s.URL+"/predict")
	if code != exitOK || !strings.Contains(stdout, "the highest rate, 20/s, still passes") || strings.Count(stdout, "PASS (pass)") != 2 {
		t.Errorf("to passes: exit %d\n%s\n%s", code, stdout, stderr)
	}

	// --repeats on a plain run: the spread table, and every run in -o.
	reps := filepath.Join(dir, "repeats.json")
	stdout, _ = runOK(t, "-r", "20", "-d", "300ms", "--repeats", "3", "-o", reps, s.URL+"/predict")
	wantLines(t, stdout, "over 3 runs", "response p99 (ms)", "send delay p99 (ms)")
	rep, _ = runOK(t, "report", reps+"#3")
	wantLines(t, rep, "constant 20/s for 300ms", "scheduled 6 = rate × duration")
}

// TestSweepProfileCLI is --profile sweep's known answer: against the stub
// of 4 workers × 20 ms (no gate), the synchronous point completes about
// 50/s, the throughput probe about 200/s, and the open rates lie evenly
// between. Only relations are held, with bounds a busy machine cannot
// break: each call sleeps 20 ms, so one user completes at most 50/s and 4
// workers at most 200/s (5 % over, for the clock's grain and the runs'
// first and last request); the probe keeps 8 in flight over 4 sleeping
// workers, so a loaded machine still completes more than twice the
// synchronous rate (sleeps need no CPU; 4× is the answer, 2× the bound).
// Runs of 1 s: about 1 + 2 + 3 s.
func TestSweepProfileCLI(t *testing.T) {
	s := sweepStub(t)
	dir := t.TempDir()
	out, svg := filepath.Join(dir, "profile.json"), filepath.Join(dir, "profile.svg")
	stdout, stderr := runOK(t, "sweep", "--profile", "sweep", "--points", "3", "-d", "1s", "-c", "8", "--pause", "0s",
		"-o", out, "--svg", svg, s.URL+"/predict")
	_, f, ok, err := readSweep(out)
	if !ok || err != nil || len(f.Points) != 5 {
		t.Fatalf("the sweep file: %v, %v\n%s", ok, err, stdout)
	}
	kinds := []string{result.PointSynchronous, "", "", "", result.PointThroughput}
	for i, p := range f.Points {
		t.Logf("point %d %-11s offered %8.3f/s completed %6.1f/s response p99 %7.1f ms", i+1, p.Kind, p.Rate, p.Completed(), p.Result.Response.P99)
		if p.Kind != kinds[i] || !p.Pass {
			t.Errorf("point %d: kind %q, pass %v; want %q, passing", i+1, p.Kind, p.Pass, kinds[i])
		}
		c := p.Result.Counts
		if c.Completed != c.Scheduled || c.Errors+c.Timeouts+c.Unfinished != 0 {
			t.Errorf("point %d: counts %+v, want every scheduled request completed", i+1, c)
		}
	}
	rSync, rMax := f.Points[0].Completed(), f.Points[4].Completed()
	if !(rSync > 0 && rSync <= 50*1.05) || !(rMax > 2*rSync && rMax <= 200*1.05) {
		t.Errorf("synchronous %.1f/s, throughput %.1f/s: want ≤ 50/s, and above twice it and ≤ 200/s", rSync, rMax)
	}
	// The probe: ⌈rSync × 1 s⌉ × -c 8 at once, its count exact.
	if n, want := f.Points[4].Result.Counts.Scheduled, sweep.ProbeCount(rSync, time.Second, 8); n != want {
		t.Errorf("throughput probe scheduled %d, want %d", n, want)
	}
	want, err := sweep.ProfileRates(rSync, rMax, 3)
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range f.Points[1:4] {
		if p.Rate != want[i] || !(p.Rate > rSync && p.Rate < rMax) || (i > 0 && p.Rate <= f.Points[i].Rate) {
			t.Errorf("open point %d at %v/s, want %v/s, increasing, between %.1f and %.1f", i+1, p.Rate, want[i], rSync, rMax)
		}
		if n := p.Result.Counts.Scheduled; n != int64(p.Rate) { // ⌊rate × 1 s⌋, constant arrivals
			t.Errorf("%v/s: scheduled %d, want %d", p.Rate, n, int64(p.Rate))
		}
	}
	wantLines(t, stdout, "│      sync │", "│       inf │", "synchronous point: 1 user, closed loop", "throughput probe: ")
	wantLines(t, stderr, "the throughput probe: ", "rates between ")
	if n := strings.Count(stdout, "\n│ "); n != 6 && n != 12 { // the header and five points, in one table or two
		t.Errorf("%d rows, want 6 (or 12 in two tables):\n%s", n, stdout)
	}
	if b, err := os.ReadFile(svg); err != nil || !strings.Contains(string(b), "<svg") {
		t.Errorf("--svg: %v", err)
	}
	if rep, _ := runOK(t, "report", out); rep != stdout {
		t.Errorf("report of the saved profile:\n%s\nlive:\n%s", rep, stdout)
	}
	rep, _ := runOK(t, "report", out+"#1")
	wantLines(t, rep, "closed loop: 1 user, unpaced")
}

// TestSweepDeadTarget: a target that refuses every request never passes
// a sweep or a search (exit 5, the verdict named), however flat and low
// its refusals' times would draw the curve.
func TestSweepDeadTarget(t *testing.T) {
	addr, release, err := rawtcp.RefusedAddr()
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	url := "http://" + addr + "/"
	saved := filepath.Join(t.TempDir(), "dead.json")
	code, stdout, stderr := runCLI("sweep", "--rates", "10,20", "-d", "300ms", "--pause", "0s", "-o", saved, url)
	if code != exitTargetFailed || !strings.Contains(stdout, "sweep: at the lowest rate, 10/s: target failed: 3 of 3 refused (exit 5)") {
		t.Errorf("sweep: exit %d\n%s\n%s", code, stdout, stderr)
	}
	// Saved, it renders as it ran, but for the outcome line (live only).
	if rep, _ := runOK(t, "report", saved); rep != outcomeLine.ReplaceAllString(stdout, "") || !strings.Contains(rep, "errors<=1%") {
		t.Errorf("report of the saved sweep:\n%s\nlive:\n%s", rep, stdout)
	}
	code, stdout, stderr = runCLI("sweep", "--search", "--slo", "response.p99<=1s", "--from", "10", "--to", "40", "-d", "300ms", "--pause", "0s", url)
	if code != exitTargetFailed || !strings.Contains(stdout, "search: at 10/s: target failed: 3 of 3 refused (exit 5)") {
		t.Errorf("search: exit %d\n%s\n%s", code, stdout, stderr)
	}
}

// TestSweepStreamCLI: a streamed sweep's table has the stream columns
// (goodput with --slo-request) and --svg writes the token chart beside the
// others.
func TestSweepStreamCLI(t *testing.T) {
	cfg := stub.DefaultConfig()
	cfg.Policy, cfg.BatchSlots = stub.PolicyNone, 16
	cfg.Prefill, cfg.ITL, cfg.OutputTokens = 5*time.Millisecond, time.Millisecond, 8
	s, err := stub.NewServer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	dir := t.TempDir()
	svg := filepath.Join(dir, "sweep.svg")
	out := filepath.Join(dir, "sweep.json")
	stdout, _ := runOK(t, "sweep", "--rates", "10,20", "-d", "300ms", "--pause", "0s", "--stream", "--svg", svg, "-o", out,
		"--slo-request", "ttft<=5s,tpot<=1s", "--body", `{"model":"stub","prompt":"hi","stream":true}`, s.URL+"/v1/completions")
	wantLines(t, stdout, "goodput/s", "tokens/s", "TTFT p99", "ITL p50", "ITL p99", "TPOT p50")
	if strings.Contains(stdout, "resp p90") {
		t.Errorf("streamed sweep keeps resp p90:\n%s", stdout)
	}
	for _, f := range []string{svg, filepath.Join(dir, "sweep-throughput.svg"), filepath.Join(dir, "sweep-tokens.svg")} {
		if b, err := os.ReadFile(f); err != nil || !strings.Contains(string(b), "<svg") {
			t.Errorf("%s: %v", f, err)
		}
	}
	// Saved, the same table and the token chart beside the others.
	rep, _ := runOK(t, "report", out, "--svg", filepath.Join(dir, "saved.svg"))
	if rep != stdout {
		t.Errorf("report of the saved sweep:\n%s\nlive:\n%s", rep, stdout)
	}
	a, _ := os.ReadFile(filepath.Join(dir, "sweep-tokens.svg"))
	if b, err := os.ReadFile(filepath.Join(dir, "saved-tokens.svg")); err != nil || string(a) != string(b) {
		t.Errorf("saved-tokens.svg differs from the live one: %v", err)
	}
}

// outcomeLine is the line a live sweep or search ends with when its
// outcome is not valid, naming its exit code.
var outcomeLine = regexp.MustCompile(`(?m)^(sweep|search): .* \(exit \d+\)\n`)

// TestSweepReportSaved: a sweep, a search and repeats saved with -o
// re-render with 'openload report FILE' exactly as the live command
// printed them (the table and knee, the probes and answer, the spread),
// and its --html, --svg and --png write the same files as the live ones.
// Live only, and so not compared: the progress lines on stderr, and the
// outcome line a sweep or search ends with when not valid ("search: … (exit
// 5)"), the live command's exit code.
func TestSweepReportSaved(t *testing.T) {
	s := sweepStub(t)
	dir := t.TempDir()
	u := s.URL + "/predict"
	for _, tc := range []struct {
		name   string
		args   []string
		charts bool // the command writes --html, --svg and --png
	}{
		{"sweep", []string{"sweep", "--rates", "20,40,80", "-d", "400ms", "--pause", "0s", "--slo", "response.p99<=1s"}, true},
		{"search", []string{"sweep", "--search", "--slo", "response.p99<=30ms", "--from", "20", "--to", "80", "--repeats", "2", "-d", "300ms", "--pause", "0s"}, true},
		{"repeats", []string{"-r", "20", "-d", "300ms", "--repeats", "3"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := filepath.Join(dir, tc.name+".json")
			files := func(prefix string) []string {
				if !tc.charts {
					return nil
				}
				p := filepath.Join(dir, prefix+"-"+tc.name)
				return []string{"--html", p + ".html", "--svg", p + ".svg", "--png", p + ".png"}
			}
			args := append(append(append([]string{}, tc.args...), "-o", file), files("live")...)
			code, live, stderr := runCLI(append(args, u)...)
			if code != exitOK && code != exitSLOBreached {
				t.Fatalf("live: exit %d\n%s\n%s", code, live, stderr)
			}
			live = outcomeLine.ReplaceAllString(live, "")
			saved, _ := runOK(t, append([]string{"report", file}, files("saved")...)...)
			if saved != live {
				t.Errorf("report %s prints\n%s\nthe live command printed\n%s", tc.name, saved, live)
			}
			if !tc.charts {
				return
			}
			for _, f := range []string{".html", ".svg", "-throughput.svg", ".png", "-throughput.png"} {
				a, aerr := os.ReadFile(filepath.Join(dir, "live-"+tc.name+f))
				b, berr := os.ReadFile(filepath.Join(dir, "saved-"+tc.name+f))
				if aerr != nil || berr != nil || len(a) == 0 || string(a) != string(b) {
					t.Errorf("%s%s: live and saved differ (%v, %v; %d and %d bytes)", tc.name, f, aerr, berr, len(a), len(b))
				}
			}
			csv, _ := runOK(t, "report", "--format", "csv", file)
			if lines := strings.Split(strings.TrimSpace(csv), "\n"); !strings.HasPrefix(lines[0], "point,probe,offered_per_s,") || len(lines) < 3 {
				t.Errorf("csv:\n%s", csv)
			}
		})
	}

	sw := filepath.Join(dir, "sweep.json")
	for _, bad := range []struct {
		args []string
		want string
	}{
		{[]string{"report", "--format", "hgrm", sw}, "is a sweep file of 3 runs: --format hgrm renders one run; name one, e.g. " + sw + "#1"},
		{[]string{"report", sw, "--svg", filepath.Join(dir, "x.svg"), "--chart", "timeline"}, "--chart picks a chart of one run"},
		{[]string{"report", filepath.Join(dir, "repeats.json"), "--svg", filepath.Join(dir, "x.svg")}, "the repeats file has no charts to write"},
	} {
		if code, _, stderr := runCLI(bad.args...); code != exitUsage || !strings.Contains(stderr, bad.want) {
			t.Errorf("%s: exit %d, %q", strings.Join(bad.args, " "), code, stderr)
		}
	}
}
