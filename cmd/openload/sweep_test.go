package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/openload/openload/internal/rawtcp"
	"github.com/openload/openload/targets/stub"
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
	}
}

// TestSweepCLI: a sweep's table names every point and the knee; its file
// holds every point's full result, which report and diff read as FILE#N.
func TestSweepCLI(t *testing.T) {
	cfg := stub.DefaultConfig()
	cfg.Workers, cfg.Latency, cfg.Policy = 4, 20*time.Millisecond, stub.PolicyNone
	s, err := stub.NewServer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	dir := t.TempDir()
	out := filepath.Join(dir, "sweep.json")
	svg := filepath.Join(dir, "sweep.svg")
	stdout, _ := runOK(t, "sweep", "--rates", "20,40", "-d", "500ms", "--pause", "0s", "-o", out, "--svg", svg,
		"--slo", "response.p99<=1s", s.URL+"/predict")
	wantLines(t, stdout, "offered/s", "response.p99<=1s", "knee: none up to 40/s")
	if n := strings.Count(stdout, "\n│ "); n != 3 { // the header and two points
		t.Errorf("%d rows, want 3:\n%s", n, stdout)
	}
	rep, _ := runOK(t, "report", out+"#2")
	wantLines(t, rep, "constant 40/s for 500ms", "scheduled 20 = rate × duration")
	diff, _ := runOK(t, "diff", out+"#1", out+"#2")
	wantLines(t, diff, "response time")
	if code, _, stderr := runCLI("report", out); code != exitUsage || !strings.Contains(stderr, "is a sweep file of 2 runs: name one") {
		t.Errorf("report of the whole sweep file: exit %d, %q", code, stderr)
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
	code, stdout, stderr = runCLI("sweep", "--search", "--slo", "response.max<=10s", "--from", "10", "--to", "20", "-d", "300ms", "--pause", "0s", s.URL+"/predict")
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
	code, stdout, stderr := runCLI("sweep", "--rates", "10,20", "-d", "300ms", "--pause", "0s", url)
	if code != exitTargetFailed || !strings.Contains(stdout, "sweep: at the lowest rate, 10/s: target failed: 3 of 3 refused (exit 5)") {
		t.Errorf("sweep: exit %d\n%s\n%s", code, stdout, stderr)
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
	stdout, _ := runOK(t, "sweep", "--rates", "10,20", "-d", "300ms", "--pause", "0s", "--stream", "--svg", svg,
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
}
