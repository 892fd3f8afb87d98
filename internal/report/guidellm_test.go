package report_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/openload/openload/internal/golden"
	"github.com/openload/openload/internal/recorder"
	"github.com/openload/openload/internal/report"
	"github.com/openload/openload/result"
)

// gs is a node of GuideLLM's schema: a JSON type ("object", "array",
// "int", "float", "str", "bool"), an object's fields, an array's element,
// the values a Literal allows.
type gs struct {
	typ    string
	fields map[string]*gs
	elem   *gs
	enum   []any
}

func gObj(f map[string]*gs) *gs { return &gs{typ: "object", fields: f} }
func gList(e *gs) *gs           { return &gs{typ: "array", elem: e} }

var (
	gFloat, gInt, gStr, gBool = &gs{typ: "float"}, &gs{typ: "int"}, &gs{typ: "str"}, &gs{typ: "bool"}
	gAny                      = &gs{typ: "object"} // a dict[str, Any]: not checked inside
)

func gLit(vs ...any) *gs { return &gs{typ: "literal", enum: vs} }

// gBreakdown is StatusBreakdown[e, e, e, e] (schemas/base.py).
func gBreakdown(e *gs) *gs {
	return gObj(map[string]*gs{"successful": e, "errored": e, "incomplete": e, "total": e})
}

// guidellmSchema is GuideLLM's GenerativeBenchmarksReport as
// model_dump(mode="json") writes it, transcribed field by field from
// vllm-project/guidellm @ee7a77457ba668b4b5ccb40f110518829893b36a:
//
//	src/guidellm/benchmark/schemas/report.py       GenerativeBenchmarksReport, GenerativeBenchmarkMetadata
//	src/guidellm/benchmark/schemas/benchmark.py    GenerativeBenchmark (+ computed start_time … cooldown_duration)
//	src/guidellm/benchmark/schemas/base.py         BenchmarkConfig, TransientPhaseConfig
//	src/guidellm/benchmark/schemas/metrics.py      GenerativeMetrics, SchedulerMetrics
//	src/guidellm/schemas/statistics.py             DistributionSummary, Percentiles, StatusDistributionSummary
//	src/guidellm/schemas/base.py                   StatusBreakdown
//	src/guidellm/schemas/request_stats.py          GenerativeRequestStats (+ computed fields)
//	src/guidellm/schemas/info.py                   RequestInfo, RequestTimings
//	src/guidellm/schemas/request.py                UsageMetrics
//	src/guidellm/scheduler/strategies.py           SchedulingStrategy subclasses' type_ and fields
//
// Parts openload never writes (scheduler_state, the report's config,
// the modality summaries text/image/video/audio/tool_call) are not
// transcribed: a file naming one fails the test until they are.
var guidellmSchema = func() *gs {
	pct := map[string]*gs{}
	for _, p := range []string{"p001", "p01", "p05", "p10", "p25", "p50", "p75", "p90", "p95", "p99", "p999"} {
		pct[p] = gFloat
	}
	dist := gObj(map[string]*gs{
		"mean": gFloat, "median": gFloat, "mode": gFloat, "variance": gFloat, "std_dev": gFloat,
		"min": gFloat, "max": gFloat, "count": gInt, "total_sum": gFloat,
		"percentiles": gObj(pct), "pdf": gList(gList(gFloat)),
	})
	metrics := map[string]*gs{"request_totals": gBreakdown(gInt)}
	for _, m := range []string{
		"requests_per_second", "request_concurrency", "request_latency", "request_streaming_iterations_count",
		"prompt_token_count", "output_token_count", "total_token_count", "time_to_first_token_ms",
		"time_to_first_output_token_ms", "time_per_output_token_ms", "inter_token_latency_ms",
		"prompt_tokens_per_second", "output_tokens_per_second", "tokens_per_second",
		"output_tokens_per_iteration", "iter_tokens_per_iteration",
	} {
		metrics[m] = gBreakdown(dist)
	}
	sched := map[string]*gs{"requests_made": gBreakdown(gInt)}
	for _, f := range []string{
		"start_time", "request_start_time", "measure_start_time", "measure_end_time", "request_end_time", "end_time",
		"queued_time_avg", "resolve_start_delay_avg", "resolve_targeted_start_delay_avg", "request_start_delay_avg",
		"request_targeted_start_delay_avg", "request_time_avg", "resolve_end_delay_avg", "resolve_time_avg",
		"finalized_delay_avg", "processed_delay_avg",
	} {
		sched[f] = gFloat
	}
	phase := gObj(map[string]*gs{"percent": gFloat, "value": gFloat, "mode": gStr})
	strategy := gObj(map[string]*gs{
		"type_":        gLit("synchronous", "concurrent", "throughput", "constant", "poisson", "trace"),
		"worker_count": gInt, "max_concurrency": gInt, "streams": gInt, "rampup_duration": gFloat,
		"rate": gFloat, "random_seed": gInt, "time_scale": gFloat,
	})
	timings := map[string]*gs{"request_iterations": gInt, "token_iterations": gInt}
	for _, f := range []string{
		"targeted_start", "queued", "dequeued", "scheduled_at", "resolve_start", "request_start",
		"first_request_iteration", "first_token_iteration", "first_output_token_iteration",
		"last_token_iteration", "last_request_iteration", "request_end", "resolve_end", "finalized",
	} {
		timings[f] = gFloat
	}
	usage := map[string]*gs{"video_seconds": gFloat, "audio_seconds": gFloat}
	for _, f := range []string{
		"text_tokens", "cached_tokens", "text_words", "text_characters", "image_tokens", "image_count",
		"image_pixels", "image_bytes", "video_tokens", "video_frames", "video_bytes", "audio_tokens",
		"audio_samples", "audio_bytes", "tool_call_tokens", "mixed_content_tool_tokens", "total_tokens",
	} {
		usage[f] = gInt
	}
	request := gObj(map[string]*gs{
		"type_": gLit("generative_request_stats"), "request_id": gStr, "response_id": gStr,
		"request_args": gStr, "output": gStr, "reasoning_output": gStr,
		"info": gObj(map[string]*gs{
			"request_id": gStr, "conversation_id": gStr, "history_len": gInt, "turn_index": gInt,
			"status":  gLit("queued", "pending", "in_progress", "first_token", "completed", "errored", "cancelled"),
			"timings": gObj(timings), "error": gStr, "traceback": gStr,
		}),
		"input_metrics": gObj(usage), "output_metrics": gObj(usage),
		"request_start_time": gFloat, "request_end_time": gFloat, "request_latency": gFloat,
		"prompt_tokens": gInt, "cached_tokens": gInt, "output_tokens": gInt, "total_tokens": gInt,
		"time_to_first_token_ms": gFloat, "time_per_output_token_ms": gFloat, "inter_token_latency_ms": gFloat,
		"tokens_per_second": gFloat, "output_tokens_per_second": gFloat, "time_to_first_output_token_ms": gFloat,
		"iter_tokens_per_iteration": gFloat, "output_tokens_per_iteration": gFloat,
	})
	bench := gObj(map[string]*gs{
		"type_": gLit("generative_benchmark"),
		"config": gObj(map[string]*gs{
			"id_": gStr, "run_id": gStr, "run_index": gInt, "strategy": strategy, "constraints": gAny,
			"sample_size": gInt, "warmup": phase, "cooldown": phase, "prefer_response_metrics": gBool,
			"profile": gAny, "requests": gAny, "backend": gAny, "environment": gAny,
		}),
		"scheduler_metrics": gObj(sched),
		"metrics":           gObj(metrics),
		"requests":          gBreakdown(gList(request)),
		"start_time":        gFloat, "end_time": gFloat, "duration": gFloat,
		"warmup_duration": gFloat, "cooldown_duration": gFloat,
	})
	return gObj(map[string]*gs{
		"metadata": gObj(map[string]*gs{
			"version": gLit(2.0), "guidellm_version": gStr, "python_version": gStr, "platform": gStr,
		}),
		"benchmarks": gList(bench),
	})
}()

// checkSchema fails t for each value of v (decoded with UseNumber) not
// in GuideLLM's schema s at path: an unknown field or a wrong type.
// Every value may be null, as GuideLLM's optional fields are.
func checkSchema(t *testing.T, path string, v any, s *gs) {
	t.Helper()
	if v == nil {
		return
	}
	bad := func() { t.Errorf("%s = %v: want %s", path, v, s.typ) }
	switch s.typ {
	case "object":
		m, ok := v.(map[string]any)
		if !ok {
			bad()
			return
		}
		if s.fields == nil {
			return // a dict of anything
		}
		for k, x := range m {
			f, ok := s.fields[k]
			if !ok {
				t.Errorf("%s.%s: no such field in GuideLLM's schema", path, k)
				continue
			}
			checkSchema(t, path+"."+k, x, f)
		}
	case "array":
		a, ok := v.([]any)
		if !ok {
			bad()
			return
		}
		for i, x := range a {
			checkSchema(t, fmt.Sprintf("%s[%d]", path, i), x, s.elem)
		}
	case "int":
		if n, ok := v.(json.Number); !ok || strings.ContainsAny(n.String(), ".eE") {
			bad()
		}
	case "float":
		if _, ok := v.(json.Number); !ok {
			bad()
		}
	case "str":
		if _, ok := v.(string); !ok {
			bad()
		}
	case "bool":
		if _, ok := v.(bool); !ok {
			bad()
		}
	case "literal":
		x := v
		if n, ok := v.(json.Number); ok {
			x, _ = n.Float64()
		}
		if !slices.Contains(s.enum, x) {
			t.Errorf("%s = %v: want one of %v", path, v, s.enum)
		}
	}
}

// writeGuideLLM writes runs and checks the file against GuideLLM's
// schema; it returns the file decoded (numbers as float64).
func writeGuideLLM(t *testing.T, runs ...report.GuideLLMRun) (map[string]any, string) {
	t.Helper()
	var b bytes.Buffer
	if err := report.GuideLLM(&b, runs); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(b.String(), "\n"); n != 1 || !strings.HasSuffix(b.String(), "\n") {
		t.Errorf("%d lines, want one, as json.dumps writes it", n)
	}
	dec := json.NewDecoder(bytes.NewReader(b.Bytes()))
	dec.UseNumber()
	var raw any
	if err := dec.Decode(&raw); err != nil {
		t.Fatalf("%v\n%s", err, b.String())
	}
	checkSchema(t, "report", raw, guidellmSchema)
	var m map[string]any
	json.Unmarshal(b.Bytes(), &m)
	return m, b.String()
}

// dig is the value at path (keys, and array indexes as ints) in v.
func dig(v any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, _ := v.(map[string]any)
			v = m[k]
		case int:
			a, _ := v.([]any)
			if k >= len(a) {
				return nil
			}
			v = a[k]
		}
	}
	return v
}

// TestGuideLLMKnownAnswer: the hand-built streamed run of vllm_test.go
// as GuideLLM's benchmark: every figure against its source, nothing
// openload lacks written.
func TestGuideLLMKnownAnswer(t *testing.T) {
	res := vllmResult(t)
	res.Stream.PromptTokens.Histogram = hist(t, 90, 100, 110)
	got, _ := writeGuideLLM(t, report.GuideLLMRun{Result: res})
	if v := dig(got, "metadata", "version"); v != 2.0 {
		t.Errorf("metadata.version %v, want 2", v)
	}
	b := dig(got, "benchmarks", 0)
	start := float64(res.Started.Unix())
	for k, want := range map[string]any{
		"type_": "generative_benchmark", "start_time": start, "end_time": start + 2, "duration": 2.0, "warmup_duration": 0.0,
	} {
		if v := dig(b, k); v != want {
			t.Errorf("%s = %v, want %v", k, v, want)
		}
	}
	if s, _ := json.Marshal(dig(b, "config", "strategy")); string(s) != `{"max_concurrency":8,"rate":1.5,"type_":"poisson"}` {
		t.Errorf("strategy %s, want poisson at 1.5/s, 8 in flight", s)
	}
	m := dig(b, "metrics")
	if s, _ := json.Marshal(dig(m, "request_totals")); string(s) != `{"errored":0,"incomplete":0,"successful":3,"total":3}` {
		t.Errorf("request_totals %s", s)
	}
	sd := func(xs ...float64) float64 {
		var mean, v float64
		for _, x := range xs {
			mean += x / float64(len(xs))
		}
		for _, x := range xs {
			v += (x - mean) * (x - mean) / float64(len(xs))
		}
		return math.Sqrt(v)
	}
	for _, c := range []struct {
		path []any
		want float64
	}{
		{[]any{"requests_per_second", "successful", "mean"}, 1.5},
		{[]any{"requests_per_second", "successful", "count"}, 3},
		{[]any{"request_latency", "successful", "mean"}, 0.0016}, // service, in s
		{[]any{"request_latency", "successful", "median"}, 0.0016},
		{[]any{"request_latency", "successful", "min"}, 0.0012},
		{[]any{"request_latency", "successful", "max"}, 0.002},
		{[]any{"request_latency", "successful", "std_dev"}, sd(.0012, .0016, .002)},
		{[]any{"request_latency", "successful", "variance"}, sd(.0012, .0016, .002) * sd(.0012, .0016, .002)},
		{[]any{"request_latency", "successful", "total_sum"}, 0.0048},
		{[]any{"request_latency", "successful", "percentiles", "p99"}, 0.002},
		{[]any{"request_latency", "successful", "percentiles", "p001"}, 0.0012},
		// TTFT from the send (1, 1.5, 2 ms), not from the schedule.
		{[]any{"time_to_first_token_ms", "successful", "mean"}, 1.5},
		{[]any{"time_to_first_token_ms", "successful", "percentiles", "p25"}, 1},
		{[]any{"time_to_first_token_ms", "successful", "percentiles", "p75"}, 1.5}, // HdrHistogram's rank ⌊q·n + ½⌋
		{[]any{"time_to_first_token_ms", "successful", "percentiles", "p90"}, 2},
		{[]any{"output_token_count", "successful", "total_sum"}, 30},
		{[]any{"output_token_count", "successful", "mean"}, 10},
		{[]any{"prompt_token_count", "successful", "count"}, 3},
		{[]any{"prompt_token_count", "successful", "max"}, 110},
		{[]any{"prompt_token_count", "successful", "total_sum"}, 300},
		{[]any{"total_token_count", "successful", "total_sum"}, 330},
	} {
		if v, ok := dig(m, c.path...).(float64); !ok || math.Abs(v-c.want) > 1e-9 {
			t.Errorf("%v = %v, want %v", c.path, dig(m, c.path...), c.want)
		}
	}
	// What openload has no figure for is left out: a histogram's mode,
	// the spread of the rate, GuideLLM's TPOT and ITL (averaged per
	// request and weighted by tokens), the other status groups.
	for _, p := range [][]any{
		{"request_latency", "successful", "mode"}, {"requests_per_second", "successful", "median"},
		{"time_per_output_token_ms"}, {"inter_token_latency_ms"}, {"request_concurrency"},
		{"request_latency", "errored"}, {"output_token_count", "successful", "median"},
	} {
		if v := dig(m, p...); v != nil {
			t.Errorf("%v = %v, want it left out", p, v)
		}
	}
	if v := dig(b, "requests"); v != nil {
		t.Errorf("requests without a log: %v", v)
	}

	// A failed request: the histograms hold more than the successful
	// requests, so no distribution is written, only the counts.
	res.Counts.Completed, res.Counts.Timeouts = 2, 1
	res.Status = map[string]int64{"200": 2}
	got, _ = writeGuideLLM(t, report.GuideLLMRun{Result: res})
	m = dig(got, "benchmarks", 0, "metrics")
	if s, _ := json.Marshal(dig(m, "request_totals")); string(s) != `{"errored":1,"incomplete":0,"successful":2,"total":3}` {
		t.Errorf("request_totals %s", s)
	}
	if keys := slices.Sorted(maps.Keys(m.(map[string]any))); !slices.Equal(keys, []string{"request_totals", "requests_per_second"}) {
		t.Errorf("metrics %v, want the counts and the rate only", keys)
	}
}

// TestGuideLLMLog: with the log, each request's figures as GuideLLM's
// GenerativeRequestStats computes them, the requests lists by status,
// and the distributions from_values makes of them: TPOT weighted by the
// output tokens and ITL by the gaps.
func TestGuideLLMLog(t *testing.T) {
	ms := func(f float64) time.Duration { return time.Duration(f * float64(time.Millisecond)) }
	res := vllmResult(t)
	res.Counts = result.Counts{Scheduled: 4, Sent: 3, Completed: 3, Unfinished: 1}
	res.Status = map[string]int64{"200": 2, "503": 1}
	log := []recorder.LogEntry{
		{Seq: 1, Scheduled: ms(500), Sent: ms(500), Done: ms(620), WasSent: true, Status: 200, Streamed: true, FirstToken: ms(520), LastToken: ms(600), Tokens: 5, PromptTokens: 100},
		{Seq: 0, Scheduled: 0, Sent: ms(1), Done: ms(51), WasSent: true, Status: 200, Streamed: true, FirstToken: ms(11), LastToken: ms(41), Tokens: 3, PromptTokens: 60},
		{Seq: 2, Scheduled: ms(1000), Sent: ms(1000), Done: ms(1010), WasSent: true, Status: 503, Streamed: true, FirstToken: -1, LastToken: -1, PromptTokens: 40},
		{Seq: 3, Scheduled: ms(1900), Done: ms(2000), Error: "unfinished", FirstToken: -1, LastToken: -1, PromptTokens: 30},
	}
	got, _ := writeGuideLLM(t, report.GuideLLMRun{Result: res, Log: log})
	b := dig(got, "benchmarks", 0)
	m := dig(b, "metrics")
	if s, _ := json.Marshal(dig(m, "request_totals")); string(s) != `{"errored":1,"incomplete":1,"successful":2,"total":4}` {
		t.Errorf("request_totals %s", s)
	}
	t0 := float64(res.Started.UnixNano()) / 1e9
	reqs := dig(b, "requests")
	for _, c := range []struct {
		path []any
		want any
	}{
		{[]any{"successful", 0, "request_id"}, "0"},
		{[]any{"successful", 0, "info", "status"}, "completed"},
		{[]any{"successful", 0, "info", "timings", "request_start"}, t0 + 0.001},
		{[]any{"successful", 0, "info", "timings", "first_token_iteration"}, t0 + 0.011},
		{[]any{"successful", 0, "request_latency"}, 0.05},
		{[]any{"successful", 0, "time_to_first_token_ms"}, 10.0},
		{[]any{"successful", 0, "time_per_output_token_ms"}, 40.0 / 3},
		{[]any{"successful", 0, "inter_token_latency_ms"}, 15.0},
		{[]any{"successful", 0, "prompt_tokens"}, 60.0},
		{[]any{"successful", 0, "total_tokens"}, 63.0},
		{[]any{"successful", 1, "time_per_output_token_ms"}, 20.0},
		{[]any{"successful", 1, "inter_token_latency_ms"}, 20.0},
		{[]any{"errored", 0, "info", "status"}, "errored"},
		{[]any{"errored", 0, "info", "error"}, "Service Unavailable"},
		{[]any{"errored", 0, "request_latency"}, 0.01},
		{[]any{"incomplete", 0, "info", "status"}, "cancelled"},
		{[]any{"incomplete", 0, "request_latency"}, nil},
	} {
		v := dig(reqs, c.path...)
		if f, ok := c.want.(float64); ok {
			if g, ok := v.(float64); !ok || math.Abs(g-f) > 1e-9 {
				t.Errorf("requests %v = %v, want %v", c.path, v, f)
			}
		} else if v != c.want {
			t.Errorf("requests %v = %v, want %v", c.path, v, c.want)
		}
	}
	// TPOT 13.33 ms × 3 tokens and 20 ms × 5: mean (40 + 100) / 8; the
	// median is the first value whose cumulative weight reaches ½: 20.
	// ITL 15 ms × 2 gaps and 20 ms × 4: mean 110 / 6, median 20, count 6.
	for _, c := range []struct {
		path []any
		want float64
	}{
		{[]any{"time_per_output_token_ms", "successful", "mean"}, 140.0 / 8},
		{[]any{"time_per_output_token_ms", "successful", "median"}, 20},
		{[]any{"time_per_output_token_ms", "successful", "mode"}, 20},
		{[]any{"time_per_output_token_ms", "successful", "count"}, 8},
		{[]any{"time_per_output_token_ms", "successful", "percentiles", "p25"}, 40.0 / 3},
		{[]any{"inter_token_latency_ms", "successful", "mean"}, 110.0 / 6},
		{[]any{"inter_token_latency_ms", "successful", "count"}, 6},
		{[]any{"inter_token_latency_ms", "successful", "total_sum"}, 110},
		{[]any{"time_to_first_token_ms", "successful", "mean"}, 15},
		{[]any{"time_to_first_token_ms", "successful", "mode"}, 10}, // equal weights: the first, as numpy's argmax
		{[]any{"request_latency", "successful", "max"}, 0.12},
		{[]any{"prompt_token_count", "successful", "total_sum"}, 160},
		{[]any{"output_token_count", "successful", "percentiles", "p50"}, 3},
		{[]any{"output_token_count", "successful", "percentiles", "p999"}, 5},
		{[]any{"requests_per_second", "successful", "mean"}, 1},
	} {
		if v, ok := dig(m, c.path...).(float64); !ok || math.Abs(v-c.want) > 1e-9 {
			t.Errorf("%v = %v, want %v", c.path, dig(m, c.path...), c.want)
		}
	}

	// A log of another run is refused.
	if err := report.GuideLLM(&bytes.Buffer{}, []report.GuideLLMRun{{Result: vllmResult(t), Log: log}}); err == nil || !strings.Contains(err.Error(), "not this run's log") {
		t.Errorf("another run's log: %v", err)
	}
}

// TestGuideLLMStrategies: each run's GuideLLM strategy, a profile
// sweep's points by their kind; none for what GuideLLM has no strategy
// for.
func TestGuideLLMStrategies(t *testing.T) {
	open := result.Config{Rate: 20, Arrival: "constant", Connections: 4, Protocol: "http/1.1"}
	closed := result.Config{Mode: result.ModeClosed, Users: 3, Arrival: ""}
	for _, c := range []struct {
		kind string
		cfg  func(*result.Config)
		want string
	}{
		{"", func(*result.Config) {}, `{"max_concurrency":4,"rate":20,"type_":"constant"}`},
		{"", func(c *result.Config) { c.Arrival = "poisson" }, `{"max_concurrency":4,"rate":20,"type_":"poisson"}`},
		{"", func(c *result.Config) { c.Rate, c.Arrival = 0, "inf" }, `{"max_concurrency":4,"type_":"throughput"}`},
		{"", func(c *result.Config) { c.Arrival, c.Burstiness = "gamma", 2 }, `null`},
		{"", func(c *result.Config) { c.Stages = "10s:20" }, `null`},
		{"", func(c *result.Config) { *c = closed }, `{"streams":3,"type_":"concurrent"}`},
		{"", func(c *result.Config) { *c = closed; c.Rate = 5 }, `null`},
		{result.PointSynchronous, func(c *result.Config) { *c = closed; c.Users = 1 }, `{"type_":"synchronous"}`},
		{result.PointThroughput, func(c *result.Config) { c.Rate, c.Arrival, c.Protocol = 0, "inf", "h2c" }, `{"type_":"throughput"}`},
	} {
		res := vllmResult(t)
		res.Config = open
		c.cfg(&res.Config)
		got, _ := writeGuideLLM(t, report.GuideLLMRun{Result: res, Kind: c.kind})
		if s, _ := json.Marshal(dig(got, "benchmarks", 0, "config", "strategy")); string(s) != c.want {
			t.Errorf("%q %+v: strategy %s, want %s", c.kind, res.Config, s, c.want)
		}
	}
}

// TestGuideLLMGolden: a real streamed run's result (testdata/stream.json)
// as GuideLLM's report; its figures are the result's own (TTFT from the
// send, ttft_service's p99 407.807 ms).
func TestGuideLLMGolden(t *testing.T) {
	_, s := writeGuideLLM(t, report.GuideLLMRun{Result: readResult(t, "stream.json")})
	golden.Check(t, "guidellm-stream.golden", s)
}
