package report_test

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/openload/openload/internal/golden"
	"github.com/openload/openload/internal/recorder"
	"github.com/openload/openload/internal/report"
	"github.com/openload/openload/result"
)

// hist encodes a histogram of the values us (µs). Values under 2,048 µs
// are exact at 3 significant digits, so every figure below is known.
func hist(t *testing.T, us ...int64) string {
	t.Helper()
	h := result.NewHistogram()
	for _, v := range us {
		if err := h.RecordValue(v); err != nil {
			t.Fatal(err)
		}
	}
	s, err := result.EncodeHistogram(h)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// vllmResult is a hand-built streamed run of three requests, each
// histogram holding values whose mean, median, std and p99 are known.
func vllmResult(t *testing.T) *result.Result {
	return &result.Result{
		Version: 1, Started: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Elapsed: 2,
		Config: result.Config{
			Target: "http://127.0.0.1:8000/v1/completions", Arrival: "poisson", Rate: 1.5, Duration: "2s",
			Connections: 8, Protocol: "http/1.1", Request: &result.Request{Model: "m"},
		},
		Counts: result.Counts{Expected: 3, Scheduled: 3, Sent: 3, Completed: 3},
		Status: map[string]int64{"200": 3},
		Limit:  result.Limit{Connections: 8, MaxInFlight: 2},
		Histograms: result.Histograms{
			Unit:         "us",
			Response:     hist(t, 1201, 1602, 2003),
			Service:      hist(t, 1200, 1600, 2000),
			SendDelay:    hist(t, 1, 2, 3),
			TTFTResponse: hist(t, 1700, 1800, 1900), // from the schedule: no vLLM field
			TTFTService:  hist(t, 1000, 1500, 2000),
			ITL:          hist(t, 10, 20, 30, 40),
			TPOT:         hist(t, 100, 200, 300),
		},
		Timeline: []result.Second{{Tokens: 12}, {Tokens: 18}},
		Stream: &result.StreamResult{
			OutputTokens: 30, TokensPerS: 15,
			Goodput:      &result.Goodput{Objectives: "ttft_service<=2ms", Met: 2, PerS: 1},
			PromptTokens: &result.Tokens{Requests: 3, Sum: 300},
		},
	}
}

// decodeVLLM writes res (and log) as vLLM's result and decodes it,
// keeping the keys' order.
func decodeVLLM(t *testing.T, res *result.Result, log []recorder.LogEntry) (map[string]any, []string) {
	t.Helper()
	var b bytes.Buffer
	if err := report.VLLM(&b, res, report.VLLMOptions{Log: log}); err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b.Bytes(), &m); err != nil {
		t.Fatalf("%v\n%s", err, b.String())
	}
	dec := json.NewDecoder(&b)
	dec.Token() // {
	var keys []string
	for dec.More() {
		k, _ := dec.Token()
		keys = append(keys, k.(string))
		var v any
		dec.Decode(&v)
	}
	return m, keys
}

// checkFields fails t for each field of got not as want (numbers to
// 1e-9), and for each field of got that want does not name.
func checkFields(t *testing.T, got map[string]any, want map[string]any) {
	t.Helper()
	for k, w := range want {
		g, ok := got[k]
		switch wf, isNum := w.(float64); {
		case !ok:
			t.Errorf("%s missing, want %v", k, w)
		case isNum:
			if gf, ok := g.(float64); !ok || math.Abs(gf-wf) > 1e-9 {
				t.Errorf("%s = %v, want %v", k, g, w)
			}
		default:
			gb, _ := json.Marshal(g)
			wb, _ := json.Marshal(w)
			if string(gb) != string(wb) {
				t.Errorf("%s = %s, want %s", k, gb, wb)
			}
		}
	}
	for k, g := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("unexpected field %s = %v", k, g)
		}
	}
}

// TestVLLMKnownAnswer: every field of vLLM's result from a hand-built
// result, against figures worked out by hand (std is the population
// deviation, numpy's np.std, which vLLM uses).
func TestVLLMKnownAnswer(t *testing.T) {
	got, keys := decodeVLLM(t, vllmResult(t), nil)
	sd := func(xs ...float64) float64 { // population std
		var m, v float64
		for _, x := range xs {
			m += x / float64(len(xs))
		}
		for _, x := range xs {
			v += (x - m) * (x - m) / float64(len(xs))
		}
		return math.Sqrt(v)
	}
	checkFields(t, got, map[string]any{
		"date": "20260102-030405", "endpoint_type": "openai", "backend": "openai", "model_id": "m",
		"num_prompts": 3.0, "request_rate": 1.5, "burstiness": 1.0, "max_concurrency": 8.0,
		"duration": 2.0, "completed": 3.0, "failed": 0.0,
		"total_input_tokens": 300.0, "total_output_tokens": 30.0,
		"request_throughput": 1.5, "request_goodput": 1.0, "output_throughput": 15.0, "total_token_throughput": 165.0,
		"max_output_tokens_per_s": 18.0, "max_concurrent_requests": 2.0,
		// TTFT from the send, not from the schedule (1.7–1.9 ms).
		"mean_ttft_ms": 1.5, "median_ttft_ms": 1.5, "std_ttft_ms": sd(1, 1.5, 2), "p99_ttft_ms": 2.0,
		"mean_tpot_ms": 0.2, "median_tpot_ms": 0.2, "std_tpot_ms": sd(.1, .2, .3), "p99_tpot_ms": 0.3,
		"mean_itl_ms": 0.025, "median_itl_ms": 0.02, "std_itl_ms": sd(.01, .02, .03, .04), "p99_itl_ms": 0.04,
		"mean_e2el_ms": 1.6, "median_e2el_ms": 1.6, "std_e2el_ms": sd(1.2, 1.6, 2), "p99_e2el_ms": 2.0,
		"mean_client_queue_time_ms": 0.002, "median_client_queue_time_ms": 0.002, "std_client_queue_time_ms": sd(.001, .002, .003), "p99_client_queue_time_ms": 0.003,
		"mean_e2el_including_client_queue_ms": 1.602, "median_e2el_including_client_queue_ms": 1.602,
		"std_e2el_including_client_queue_ms": sd(1.201, 1.602, 2.003), "p99_e2el_including_client_queue_ms": 2.003,
	})
	if want := "date,endpoint_type,backend,model_id,num_prompts,request_rate,burstiness,max_concurrency,duration,completed,failed"; !strings.HasPrefix(strings.Join(keys, ","), want) {
		t.Errorf("keys in the order %v, want vLLM's, starting %s", keys, want)
	}

	// What openload has no figure for is left out, not written as 0:
	// a constant schedule (vLLM's infinite burstiness), no model, no
	// prompt counts, a failed request (the token sums of the successful
	// ones are then unknown without the log), HTTP/2.
	res := vllmResult(t)
	res.Config.Arrival, res.Config.Request, res.Config.Protocol = "constant", nil, "h2c"
	res.Counts.Completed, res.Counts.Timeouts = 2, 1
	res.Status = map[string]int64{"200": 2}
	res.Stream.PromptTokens, res.Stream.Goodput = nil, nil
	got, _ = decodeVLLM(t, res, nil)
	for _, k := range []string{"burstiness", "model_id", "max_concurrency", "total_input_tokens", "total_output_tokens", "output_throughput", "total_token_throughput", "ttfts", "input_lens", "itls", "generated_texts", "tokenizer_id", "label"} {
		if v, ok := got[k]; ok {
			t.Errorf("%s = %v, want it left out", k, v)
		}
	}
	if got["completed"] != 2.0 || got["failed"] != 1.0 || got["request_goodput"] != nil {
		t.Errorf("completed %v, failed %v, goodput %v; want 2, 1 and null (vLLM's without --goodput)", got["completed"], got["failed"], got["request_goodput"])
	}
	if _, ok := got["request_goodput"]; !ok {
		t.Error("request_goodput missing: vLLM writes null without --goodput")
	}
}

// TestVLLMLog: with the run's per-request log, the per-request arrays
// in request order, the warm-up's requests left out, and vLLM's counts
// of the successful requests: a 503 and a timeout are failures, with
// their reason in errors, and their figures null.
func TestVLLMLog(t *testing.T) {
	ms := func(f float64) time.Duration { return time.Duration(f * float64(time.Millisecond)) }
	res := vllmResult(t)
	res.Warmup = &result.Warmup{Until: "1s", Scheduled: 1, Completed: 1}
	res.Counts = result.Counts{Scheduled: 5, Sent: 4, Completed: 4, Timeouts: 1}
	res.Status = map[string]int64{"200": 3, "503": 1}
	log := []recorder.LogEntry{ // in completion order, as the log is
		{Seq: 3, Scheduled: ms(1500), Sent: ms(1501), Done: ms(1510), WasSent: true, Status: 503, Streamed: true, FirstToken: -1, LastToken: -1, PromptTokens: 40},
		{Seq: 1, Scheduled: ms(1000), Sent: ms(1000.5), Done: ms(1100), WasSent: true, Status: 200, Streamed: true, FirstToken: ms(1020.5), LastToken: ms(1090.5), Tokens: 8, PromptTokens: 100},
		{Seq: 0, Scheduled: 0, Sent: ms(1), Done: ms(50), WasSent: true, Status: 200, Streamed: true, FirstToken: ms(10), LastToken: ms(40), Tokens: 5, PromptTokens: 7}, // warm-up
		{Seq: 2, Scheduled: ms(1250), Sent: ms(1252), Done: ms(1400), WasSent: true, Status: 200, Streamed: true, FirstToken: ms(1262), LastToken: ms(1392), Tokens: 14, PromptTokens: 60},
		{Seq: 4, Scheduled: ms(1750), Done: ms(2000), Error: "timeout", FirstToken: -1, LastToken: -1, PromptTokens: 30},
	}
	got, keys := decodeVLLM(t, res, log)
	checkFields(t, map[string]any{
		"completed": got["completed"], "failed": got["failed"], "total_input_tokens": got["total_input_tokens"],
		"total_output_tokens": got["total_output_tokens"], "request_throughput": got["request_throughput"],
		"input_lens": got["input_lens"], "output_lens": got["output_lens"], "ttfts": got["ttfts"],
		"latencies": got["latencies"], "start_times": got["start_times"], "queue_times": got["queue_times"], "errors": got["errors"],
	}, map[string]any{
		"completed": 2.0, "failed": 2.0, "total_input_tokens": 160.0, "total_output_tokens": 22.0, "request_throughput": 1.0,
		"input_lens":  []any{100, 60, 40, 30},
		"output_lens": []any{8, 14, nil, nil},
		"ttfts":       []any{0.02, 0.01, nil, nil},
		"latencies":   []any{0.09, 0.14, nil, nil},
		"start_times": []any{1.0005, 1.252, 1.501, nil},
		"queue_times": []any{0.0005, 0.002, 0.001, nil},
		"errors":      []any{"", "", "Service Unavailable", "timeout"},
	})
	if i, j := strings.Index(strings.Join(keys, ","), "total_token_throughput,input_lens"), strings.Index(strings.Join(keys, ","), ",errors,"); i < 0 || j < i {
		t.Errorf("keys %v: want the arrays after total_token_throughput, as vLLM writes them", keys)
	}
	if _, ok := got["itls"]; ok {
		t.Error("itls written: the log keeps no gaps")
	}

	// A log of another run is refused.
	if err := report.VLLM(&bytes.Buffer{}, vllmResult(t), report.VLLMOptions{Log: log}); err == nil || !strings.Contains(err.Error(), "the log holds 5 requests after the warm-up, the result 3: not this run's log") {
		t.Errorf("another run's log: %v", err)
	}
}

// TestVLLMGolden: a real streamed run's result (testdata/stream.json) as
// vLLM's result file; its figures are the result's own (ttft_service's
// p99 407.807 ms, tpot's mean 9.341 ms…).
func TestVLLMGolden(t *testing.T) {
	var b bytes.Buffer
	if err := report.VLLM(&b, readResult(t, "stream.json"), report.VLLMOptions{}); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "vllm-stream.golden", b.String())
}

// TestVLLMPercentiles: the percentiles asked are written under vLLM's
// names (p99.9 as Python's str(99.9)), and only they.
func TestVLLMPercentiles(t *testing.T) {
	var b bytes.Buffer
	if err := report.VLLM(&b, vllmResult(t), report.VLLMOptions{Percentiles: []float64{0, 50, 99.9}}); err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(b.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]float64{"p0_ttft_ms": 1, "p50_ttft_ms": 1.5, "p99.9_ttft_ms": 2, "p50_itl_ms": 0.02, "p99.9_tpot_ms": 0.3} {
		if got[k] != want {
			t.Errorf("%s = %v, want %v", k, got[k], want)
		}
	}
	if v, ok := got["p99_ttft_ms"]; ok {
		t.Errorf("p99_ttft_ms = %v, not asked", v)
	}
}
