package main

import (
	"encoding/json"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/openload/openload/internal/recorder"
	"github.com/openload/openload/result"
)

// guidellmDist is the part of GuideLLM's DistributionSummary read here.
type guidellmDist struct {
	Mean, Median, Min, Max float64
	TotalSum               float64 `json:"total_sum"`
	Count                  int64
	Percentiles            map[string]float64
}

// guidellmBench is the part of GuideLLM's GenerativeBenchmark read here.
type guidellmBench struct {
	Config struct {
		RunIndex int            `json:"run_index"`
		Strategy map[string]any `json:"strategy"`
	}
	Duration float64
	Metrics  struct {
		RequestTotals     map[string]int64        `json:"request_totals"`
		RequestsPerSecond map[string]guidellmDist `json:"requests_per_second"`
		RequestLatency    map[string]guidellmDist `json:"request_latency"`
		PromptTokens      map[string]guidellmDist `json:"prompt_token_count"`
		OutputTokens      map[string]guidellmDist `json:"output_token_count"`
		TTFT              map[string]guidellmDist `json:"time_to_first_token_ms"`
	}
	Requests map[string][]struct {
		RequestID string  `json:"request_id"`
		TTFT      float64 `json:"time_to_first_token_ms"`
		Latency   float64 `json:"request_latency"`
		Prompt    int     `json:"prompt_tokens"`
		Output    int     `json:"output_tokens"`
	}
}

func readGuideLLM(t *testing.T, stdout string) []guidellmBench {
	t.Helper()
	var r struct {
		Metadata   struct{ Version int }
		Benchmarks []guidellmBench
	}
	if err := json.Unmarshal([]byte(stdout), &r); err != nil {
		t.Fatalf("%v\n%s", err, stdout)
	}
	if r.Metadata.Version != 2 {
		t.Errorf("metadata.version %d, want 2", r.Metadata.Version)
	}
	return r.Benchmarks
}

// checkGuideLLMRun fails t for each figure of b that is not res's own.
func checkGuideLLMRun(t *testing.T, name string, b guidellmBench, res *result.Result) {
	t.Helper()
	c := res.Counts
	if got := b.Metrics.RequestTotals; got["successful"] != res.Status["200"] || got["successful"] != c.Completed ||
		got["errored"] != c.Errors+c.Timeouts || got["incomplete"] != c.Unfinished || got["total"] != c.Scheduled {
		t.Errorf("%s: request_totals %v; the result's counts %+v, status %v", name, got, c, res.Status)
	}
	if rps := b.Metrics.RequestsPerSecond["successful"]; rps.Count != c.Completed || math.Abs(rps.Mean-float64(c.Completed)/res.Elapsed) > 1e-9 || b.Duration != res.Elapsed {
		t.Errorf("%s: requests_per_second %+v over %v s; the result's %d completed in %v s", name, rps, b.Duration, c.Completed, res.Elapsed)
	}
	// The distributions against the result's percentiles (ms, to the µs).
	for _, d := range []struct {
		name  string
		got   guidellmDist
		scale float64 // to ms
		want  result.Percentiles
	}{
		{"request_latency", b.Metrics.RequestLatency["successful"], 1000, res.Service},
		{"time_to_first_token_ms", b.Metrics.TTFT["successful"], 1, res.Stream.TTFTService},
	} {
		ms := func(v float64) float64 { return math.Round(v*d.scale*1000) / 1000 }
		g, w := d.got, d.want
		if g.Count != w.Count || g.Count != c.Completed || ms(g.Percentiles["p50"]) != w.P50 || ms(g.Median) != w.P50 ||
			ms(g.Percentiles["p90"]) != w.P90 || ms(g.Percentiles["p95"]) != w.P95 || ms(g.Percentiles["p99"]) != w.P99 ||
			ms(g.Max) != w.Max || math.Abs(g.Mean*d.scale-w.Mean) > 0.001 || g.Min > g.Percentiles["p001"] {
			t.Errorf("%s: %s %+v; the result's %+v", name, d.name, g, w)
		}
	}
	pt, ot := b.Metrics.PromptTokens["successful"], b.Metrics.OutputTokens["successful"]
	if p := res.Stream.PromptTokens; pt.TotalSum != float64(p.Sum) || pt.Count != p.Requests || pt.Min != float64(p.Min) || pt.Max != float64(p.Max) || pt.Median != float64(p.P50) {
		t.Errorf("%s: prompt_token_count %+v; the result's %+v", name, pt, p)
	}
	if ot.TotalSum != float64(res.Stream.OutputTokens) || ot.Count != c.Completed {
		t.Errorf("%s: output_token_count %+v; the result's %d tokens of %d requests", name, ot, res.Stream.OutputTokens, c.Completed)
	}
}

// TestReportGuideLLM: a real streamed run against the stub, and a sweep
// file of two points, as GuideLLM's benchmarks.json: every figure copied
// is the result's own; with --log, each request's figures are the log's.
func TestReportGuideLLM(t *testing.T) {
	s := tokenStub(t)
	u := s.URL + "/v1/chat/completions"
	dir := t.TempDir()
	out, logf := filepath.Join(dir, "r.json"), filepath.Join(dir, "r.csv")
	runOK(t, "-rate", "20", "-d", "1s", "-q", "--prompt-tokens", "64", "--output-tokens", "8", "--model", "m",
		"--log", logf, "-o", out, u)
	res := readResult(t, out)

	stdout, _ := runOK(t, "report", "--format", "guidellm", out)
	bs := readGuideLLM(t, stdout)
	if len(bs) != 1 {
		t.Fatalf("%d benchmarks, want 1", len(bs))
	}
	checkGuideLLMRun(t, "run", bs[0], res)
	if st := bs[0].Config.Strategy; st["type_"] != "constant" || st["rate"] != 20.0 {
		t.Errorf("strategy %v, want constant at 20/s", st)
	}
	if bs[0].Requests != nil || strings.Contains(stdout, `"time_per_output_token_ms"`) {
		t.Errorf("without --log: requests %v, or GuideLLM's TPOT written from openload's", bs[0].Requests)
	}

	// With the log: the requests lists, each request's figures the log's.
	stdout, _ = runOK(t, "report", "--format", "guidellm", "--log", logf, out)
	bs = readGuideLLM(t, stdout)
	entries, err := readLog(t, logf)
	if err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(entries, func(a, b recorder.LogEntry) int { return int(a.Seq) - int(b.Seq) })
	ok := bs[0].Requests["successful"]
	if len(ok) != 20 || len(bs[0].Requests["errored"]) != 0 || len(bs[0].Requests["incomplete"]) != 0 {
		t.Fatalf("requests %d successful, %d errored, %d incomplete; want 20, 0, 0", len(ok), len(bs[0].Requests["errored"]), len(bs[0].Requests["incomplete"]))
	}
	for i, e := range entries {
		r := ok[i]
		if want := float64(e.FirstToken-e.Sent) / 1e6; math.Abs(r.TTFT-want) > 1e-9 || r.Latency != (e.Done-e.Sent).Seconds() || r.Prompt != e.PromptTokens || r.Output != 8 {
			t.Errorf("request %s: %+v; the log's ttft %v ms, latency %v, %d prompt tokens, 8 out", r.RequestID, r, want, (e.Done - e.Sent).Seconds(), e.PromptTokens)
		}
	}
	if !strings.Contains(stdout, `"time_per_output_token_ms":{"successful":{`) || !strings.Contains(stdout, `"inter_token_latency_ms":{"successful":{`) {
		t.Errorf("with --log: want GuideLLM's TPOT and ITL distributions")
	}

	// A sweep file of two points: a benchmark for each.
	sw := filepath.Join(dir, "sweep.json")
	runOK(t, "sweep", "--rates", "10,20", "-d", "500ms", "--pause", "0s", "--prompt-tokens", "64", "--output-tokens", "8",
		"--model", "m", "-o", sw, u)
	_, f, isSweep, err := readSweep(sw)
	if !isSweep || err != nil || len(f.Points) != 2 {
		t.Fatalf("the sweep file: %v, %v", isSweep, err)
	}
	stdout, _ = runOK(t, "report", "--format", "guidellm", sw)
	bs = readGuideLLM(t, stdout)
	if len(bs) != 2 {
		t.Fatalf("%d benchmarks, want 2", len(bs))
	}
	for i, p := range f.Points {
		checkGuideLLMRun(t, "point "+string(rune('1'+i)), bs[i], p.Result)
		if st := bs[i].Config.Strategy; bs[i].Config.RunIndex != i || st["type_"] != "constant" || st["rate"] != p.Rate {
			t.Errorf("point %d: run_index %d, strategy %v; want %d, constant at %v/s", i+1, bs[i].Config.RunIndex, st, i, p.Rate)
		}
	}
	one, _ := runOK(t, "report", "--format", "guidellm", sw+"#2")
	if bs1 := readGuideLLM(t, one); len(bs1) != 1 || bs1[0].Metrics.RequestTotals["total"] != f.Points[1].Result.Counts.Scheduled {
		t.Errorf("point 2 alone: %s", one)
	}

	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"report", "--format", "guidellm", "--log", logf, sw}, exitUsage, "--log is one run's log; name its run, e.g. " + sw + "#1"},
		{[]string{"report", "--format", "guidellm", "--percentiles", "50", out}, exitUsage, "--percentiles applies to --format vllm, not guidellm"},
		{[]string{"report", "--format", "csv", "--log", logf, out}, exitUsage, "--log applies to --format vllm and guidellm, not csv"},
	} {
		code, _, stderr := runCLI(c.args...)
		if code != c.code || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, %q; want %d, %q", c.args, code, stderr, c.code, c.want)
		}
	}
}

// TestReportGuideLLMProfile: a profile sweep's synchronous and
// throughput points under GuideLLM's strategies of those names, its
// open points as constant rates.
func TestReportGuideLLMProfile(t *testing.T) {
	s := tokenStub(t)
	sw := filepath.Join(t.TempDir(), "profile.json")
	runOK(t, "sweep", "--profile", "sweep", "--points", "1", "-d", "1s", "-c", "4", "--pause", "0s", "--prompt-tokens", "16",
		"--output-tokens", "4", "--model", "m", "-o", sw, s.URL+"/v1/chat/completions")
	_, f, _, err := readSweep(sw)
	if err != nil {
		t.Fatal(err)
	}
	stdout, _ := runOK(t, "report", "--format", "guidellm", sw)
	bs := readGuideLLM(t, stdout)
	var kinds []any
	for i, b := range bs {
		kinds = append(kinds, b.Config.Strategy["type_"])
		if got, want := b.Metrics.RequestTotals["total"], f.Points[i].Result.Counts.Scheduled; got != want {
			t.Errorf("point %d: %d requests, the result's %d", i+1, got, want)
		}
	}
	if want := []any{"synchronous", "constant", "throughput"}; !slices.Equal(kinds, want) || bs[1].Config.Strategy["rate"] != f.Points[1].Rate {
		t.Errorf("strategies %v (open at %v), want %v at %v/s", kinds, bs[1].Config.Strategy["rate"], want, f.Points[1].Rate)
	}
}
