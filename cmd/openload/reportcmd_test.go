package main

import (
	"bytes"
	"encoding/json"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/olekukonko/tablewriter/pkg/twwidth"
	"github.com/openload/openload/internal/engine"
	"github.com/openload/openload/internal/plot"
	"github.com/openload/openload/internal/recorder"
)

// TestReportFormatsAndHlog runs a short load with --hlog, then renders the
// result as csv and html (checking the data behind the charts, not pixels),
// writes an SVG and a PNG, and reads the interval log back.
func TestReportFormatsAndHlog(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	dir := t.TempDir()
	res, hlog := filepath.Join(dir, "r.json"), filepath.Join(dir, "r.hlog")
	if code, out, errs := runCLI("-rate", "100", "-d", "1s", "-q", "--send-delay-budget", "1s", "-o", res, "--hlog", hlog, srv.URL); code != exitOK {
		t.Fatalf("run: exit %d\n%s\n%s", code, out, errs)
	}

	code, csv, errs := runCLI("report", "--format", "csv", res)
	lines := strings.Split(strings.TrimSpace(csv), "\n")
	if code != exitOK || lines[0] != "second,scheduled,skipped,sent,completed,errors,response_p99_ms" || !strings.HasPrefix(lines[1], "0,100,0,100,") {
		t.Fatalf("csv: exit %d %s\n%s", code, errs, csv)
	}

	htmlPath, svgPath, pngPath := filepath.Join(dir, "r.html"), filepath.Join(dir, "l.svg"), filepath.Join(dir, "t.png")
	runOK(t, "report", res, "--html", htmlPath, "--svg", svgPath, "--png", pngPath, "--chart", "timeline")
	charts := pageCharts(t, htmlPath)
	ids := []string{}
	for _, c := range charts {
		ids = append(ids, c.ID)
	}
	if strings.Join(ids, ",") != "latency,timeline,timeline-p99" {
		t.Errorf("charts %v", ids)
	}
	if s := charts[1].Series[0]; s.Name != "scheduled" || s.Y[0] != 100 {
		t.Errorf("timeline's scheduled series %+v", s)
	}
	if s := charts[0].Series; len(s) != 3 || s[0].Name != "response time" || len(s[0].X) < 5 {
		t.Errorf("latency series %+v", s)
	}
	for path, magic := range map[string]string{svgPath: "<svg", pngPath: "\x89PNG"} {
		b, err := os.ReadFile(path)
		if err != nil || !bytes.Contains(b[:min(len(b), 200)], []byte(magic)) {
			t.Errorf("%s: %v, starts %q", path, err, b[:min(len(b), 20)])
		}
	}
	if code, _, errs := runCLI("report", res, "--svg", svgPath, "--chart", "nosuch"); code != exitUsage || !strings.Contains(errs, `--chart "nosuch" is not in this result (it has: latency, timeline, timeline-p99)`) {
		t.Errorf("unknown chart: exit %d %s", code, errs)
	}

	code, table, errs := runCLI("report", "--hlog", hlog)
	if code != exitOK || !strings.Contains(table, "│ response   │") || !strings.Contains(table, "send_delay") {
		t.Errorf("report --hlog: exit %d %s\n%s", code, errs, table)
	}
	if code, _, errs := runCLI("report", "--hlog", filepath.Join(dir, "missing.hlog")); code != exitUsage || !strings.Contains(errs, "missing.hlog") {
		t.Errorf("missing hlog: exit %d %s", code, errs)
	}

	// An interval log given as the file, without --hlog, is recognised by
	// its first lines and read as --hlog reads it.
	for _, flags := range [][]string{nil, {"--format", "hgrm", "--metric", "service"}} {
		_, viaFlag, _ := runCLI(append(append([]string{"report"}, flags...), "--hlog", hlog)...)
		code, direct, errs := runCLI(append(append([]string{"report"}, flags...), hlog)...)
		if code != exitOK || direct != viaFlag || !strings.Contains(direct, "0.") {
			t.Errorf("report %v %s: exit %d %s\n%s\nwant what --hlog prints:\n%s", flags, hlog, code, errs, direct, viaFlag)
		}
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"report", "--format", "json", hlog}, "an interval log takes --format table or hgrm, not json"},
		{[]string{"report", hlog, "--html", htmlPath}, "r.hlog is an interval log: --html, --svg and --png draw a result"},
		{[]string{"report", "--hlog", hlog, "--svg", svgPath}, "r.hlog is an interval log: --html, --svg and --png draw a result"},
	} {
		if code, out, errs := runCLI(c.args...); code != exitUsage || out != "" || !strings.Contains(errs, c.want) {
			t.Errorf("%v: exit %d %q %q", c.args, code, out, errs)
		}
	}
	// A file that is neither still gets the result reader's error.
	comment := filepath.Join(dir, "comment.json")
	if err := os.WriteFile(comment, []byte("#[not a log header]\n{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errs := runCLI("report", comment); code != exitUsage || !strings.Contains(errs, "comment.json: corrupt result at byte 1") {
		t.Errorf("comment line: exit %d %s", code, errs)
	}
}

func TestProgressOnlyOnATerminal(t *testing.T) {
	if isTerminal(new(bytes.Buffer)) {
		t.Error("a buffer counted as a terminal")
	}
	f, err := os.CreateTemp(t.TempDir(), "out")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if isTerminal(f) {
		t.Error("a regular file counted as a terminal")
	}
	// The rates are the window's counts over its length: 199 sent and 200
	// due in 1.25 s are 159/s and 160/s.
	line := progressLine(engine.Progress{Elapsed: 12 * time.Second, Window: 1250 * time.Millisecond, WindowSent: 199, WindowDue: 200, InFlight: 14, Failed: 2, ResponseP99: 153.9, SendDelayP99: 0.61}, 40*time.Second)
	want := "12.0s/40s · sent 159/s of 160/s · in flight 14 · errors 2 · p99 response 153.9 ms, send delay 0.61 ms"
	if line != want {
		t.Errorf("progress line\n got %q\nwant %q", line, want)
	}
	// On a terminal it is cut to the width, so that it never wraps (a
	// wrapped line is repeated, not rewritten in place).
	if got := twwidth.Truncate(line, 20); got != "12.0s/40s · sent 159" {
		t.Errorf("cut to 20 columns: %q", got)
	}
	if got := twwidth.Truncate(line, 200); got != line {
		t.Errorf("cut to 200 columns: %q", got)
	}
	if line := progressLine(engine.Progress{}, time.Second); !strings.Contains(line, "sent 0/s of 0/s") {
		t.Errorf("empty window: %q", line)
	}
	// A run whose stdout is not a terminal prints no progress line.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	_, out, _ := runCLI("-rate", "20", "-d", "1200ms", "--send-delay-budget", "1s", srv.URL)
	if strings.ContainsAny(out, "\r\x1b") {
		t.Errorf("progress written to a non-terminal:\n%q", out)
	}
}

func TestDiffHTML(t *testing.T) {
	out := filepath.Join(t.TempDir(), "d.html")
	runOK(t, "diff", "testdata/diff-closed.json", "testdata/diff-open.json", "--html", out)
	charts := pageCharts(t, out)
	if len(charts) != 1 || len(charts[0].Series) != 2 || charts[0].Series[0].Name != "testdata/diff-closed.json" || !charts[0].LogX {
		t.Fatalf("diff chart %+v", charts)
	}
	// The open run's response curve ends far above the closed run's p99.
	a, b := charts[0].Series[0], charts[0].Series[1]
	if b.Y[len(b.Y)-1] < a.Y[len(a.Y)/2] {
		t.Errorf("curves: closed %v … open %v", a.Y, b.Y)
	}
	if code, _, errs := runCLI("diff", "testdata/diff-open.json", "--html", out); code != exitUsage || !strings.Contains(errs, "--html draws two results") {
		t.Errorf("one file with --html: exit %d %s", code, errs)
	}
}

// TestChartPercentiles: --chart percentiles is the latency chart,
// HdrHistogram's percentile plot, under the name HdrHistogram gives it.
func TestChartPercentiles(t *testing.T) {
	dir := t.TempDir()
	var svgs [2][]byte
	for i, name := range []string{"latency", "percentiles"} {
		path := filepath.Join(dir, name+".svg")
		if code, _, errs := runCLI("report", "testdata/diff-open.json", "--svg", path, "--chart", name); code != exitOK {
			t.Fatalf("--chart %s: exit %d %s", name, code, errs)
		}
		var err error
		if svgs[i], err = os.ReadFile(path); err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(svgs[0], svgs[1]) || !bytes.Contains(svgs[1], []byte(">Latency by percentile<")) {
		t.Error("--chart percentiles is not the latency chart")
	}
}

// pageCharts reads the charts' data from an HTML page written by --html.
func pageCharts(t *testing.T, path string) []plot.Chart {
	t.Helper()
	page, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	charts, err := plot.ReadData(page)
	if err != nil {
		t.Fatal(err)
	}
	return charts
}

// TestReportVLLM: a real streamed run against the stub, written as vLLM's
// bench serve result with the run's log: the counts and token sums are
// the log's, every TTFT is the log's first token − sent, the stats are
// the result's TTFT from the send; and the flag's misuses are refused.
func TestReportVLLM(t *testing.T) {
	s := tokenStub(t)
	dir := t.TempDir()
	out, logf := filepath.Join(dir, "r.json"), filepath.Join(dir, "r.csv")
	runOK(t, "-rate", "40", "-d", "500ms", "-q", "--prompt-tokens", "200", "--output-tokens", "12", "--model", "auto",
		"--log", logf, "-o", out, s.URL+"/v1/chat/completions")
	res := readResult(t, out)
	entries, err := readLog(t, logf)
	if err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(entries, func(a, b recorder.LogEntry) int { return int(a.Seq) - int(b.Seq) })

	stdout, _ := runOK(t, "report", "--format", "vllm", "--log", logf, out)
	var v struct {
		ModelID           string `json:"model_id"`
		NumPrompts        int64  `json:"num_prompts"`
		Completed, Failed int64
		RequestRate       float64 `json:"request_rate"`
		TotalInput        int64   `json:"total_input_tokens"`
		TotalOutput       int64   `json:"total_output_tokens"`
		InputLens         []int64 `json:"input_lens"`
		OutputLens        []int64 `json:"output_lens"`
		TTFTs             []float64
		MeanTTFT          float64 `json:"mean_ttft_ms"`
		P99TTFT           float64 `json:"p99_ttft_ms"`
		Errors            []string
	}
	if err := json.Unmarshal([]byte(stdout), &v); err != nil {
		t.Fatalf("%v\n%s", err, stdout)
	}
	var fields map[string]any
	json.Unmarshal([]byte(stdout), &fields)
	if fields["backend"] != "openai-chat" || v.ModelID != "openload-stub" || v.RequestRate != 40 || v.NumPrompts != 20 || v.Completed != 20 || v.Failed != 0 {
		t.Errorf("backend %v, model %q, rate %v, %d prompts, %d completed, %d failed; want openai-chat, openload-stub, 40, 20, 20, 0",
			fields["backend"], v.ModelID, v.RequestRate, v.NumPrompts, v.Completed, v.Failed)
	}
	if v.TotalInput != res.Stream.PromptTokens.Sum || v.TotalOutput != 240 || v.TotalOutput != res.Stream.OutputTokens {
		t.Errorf("tokens in %d out %d; the result's %d and %d", v.TotalInput, v.TotalOutput, res.Stream.PromptTokens.Sum, res.Stream.OutputTokens)
	}
	if len(v.TTFTs) != 20 || len(v.InputLens) != 20 || len(v.OutputLens) != 20 || len(v.Errors) != 20 {
		t.Fatalf("arrays of %d, %d, %d, %d; want 20 each", len(v.TTFTs), len(v.InputLens), len(v.OutputLens), len(v.Errors))
	}
	for i, e := range entries {
		if want := (e.FirstToken - e.Sent).Seconds(); v.TTFTs[i] != want || v.InputLens[i] != int64(e.PromptTokens) || v.OutputLens[i] != 12 || v.Errors[i] != "" {
			t.Errorf("request %d: ttft %v, input %d, output %d, error %q; the log's %v, %d, 12, none", i, v.TTFTs[i], v.InputLens[i], v.OutputLens[i], v.Errors[i], want, e.PromptTokens)
		}
	}
	if ts := res.Stream.TTFTService; math.Abs(v.MeanTTFT-ts.Mean) > 0.001 || v.P99TTFT != ts.P99 {
		t.Errorf("TTFT mean %v p99 %v; the result's TTFT from the send %v and %v", v.MeanTTFT, v.P99TTFT, ts.Mean, ts.P99)
	}
	// Without the log: no per-request arrays. --percentiles as vLLM's
	// --metric-percentiles.
	stdout, _ = runOK(t, "report", "--format", "vllm", "--percentiles", "50,99.9", out)
	if strings.Contains(stdout, `"ttfts"`) || strings.Contains(stdout, `"p99_ttft_ms"`) || !strings.Contains(stdout, `"p50_ttft_ms": `) || !strings.Contains(stdout, `"p99.9_itl_ms": `) {
		t.Errorf("without --log, --percentiles 50,99.9: %s", stdout)
	}

	other := filepath.Join(dir, "other.csv")
	os.WriteFile(other, []byte(recorder.LogHeader+"\n0,0.000,0.100,1.000,0.900,1.000,0.100,200,,1\n"), 0o644)
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"report", "--log", logf, out}, exitUsage, "--log applies to --format vllm and guidellm, not table"},
		{[]string{"report", "--format", "hgrm", "--percentiles", "50", out}, exitUsage, "--percentiles applies to --format vllm, not hgrm"},
		{[]string{"report", "--format", "vllm", "--percentiles", "50,101", out}, exitUsage, `--percentiles "50,101": want percentiles from 0 to 100, comma-separated, e.g. 50,90,99`},
		{[]string{"report", "--format", "vllm", "--log", filepath.Join(dir, "missing.csv"), out}, exitUsage, "--log " + filepath.Join(dir, "missing.csv")},
		{[]string{"report", "--format", "vllm", "--log", other, out}, exitUsage, "the log holds 1 requests after the warm-up, the result 20: not this run's log"},
	} {
		if code, stdout, errs := runCLI(c.args...); code != c.code || stdout != "" || !strings.Contains(errs, c.want) {
			t.Errorf("%v: exit %d %q %q, want exit %d and %q", c.args, code, stdout, errs, c.code, c.want)
		}
	}
}
