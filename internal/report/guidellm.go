package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/openload/openload/internal/recorder"
	"github.com/openload/openload/result"
	"github.com/openload/openload/schedule"
)

// GuideLLMRun is one run for GuideLLM: a run, or one point of a sweep.
type GuideLLMRun struct {
	Result *result.Result
	// Kind is a profile sweep's point kind (result.PointSynchronous,
	// result.PointThroughput), empty for a run at its rate.
	Kind string
	// Log is the run's per-request log, for the requests lists and the
	// distributions computed from each request; nil without one.
	Log []recorder.LogEntry
}

// GuideLLM writes runs as the benchmarks.json `guidellm benchmark
// --output-path` writes, one benchmark each, so that what reads
// GuideLLM's report reads openload's runs.
//
// The names, types and meanings are read from vllm-project/guidellm
// @ee7a77457ba6 (v0.7.3 and after, report schema version 2): benchmark/schemas/report.py
// (GenerativeBenchmarksReport, GenerativeBenchmarkMetadata version 2),
// benchmark.py (GenerativeBenchmark and its computed start_time…),
// base.py (BenchmarkConfig), metrics.py (GenerativeMetrics,
// SchedulerMetrics), schemas/statistics.py (DistributionSummary,
// Percentiles, StatusDistributionSummary), schemas/request_stats.py,
// info.py and request.py (GenerativeRequestStats, RequestInfo,
// RequestTimings, UsageMetrics), scheduler/strategies.py (type_).
// docs/REFERENCE.md maps each field onto openload's figure.
//
// A field openload has no figure for is left out, never written as 0,
// so GuideLLM's own model, whose fields are mostly required, would not
// load the file: it is the metrics block a reader of GuideLLM's results
// takes, not a file GuideLLM itself reads back.
func GuideLLM(w io.Writer, runs []GuideLLMRun) error {
	var benches []any
	for i, r := range runs {
		b, err := guidellmBenchmark(i, r)
		if err != nil {
			if len(runs) > 1 {
				return fmt.Errorf("point %d: %v", i+1, err)
			}
			return err
		}
		benches = append(benches, b)
	}
	var meta, top vllmObject
	meta.add("version", 2) // the schema version whose fields these are
	top.add("metadata", &meta)
	top.add("benchmarks", benches)
	// On one line, as GuideLLM's json.dumps writes it.
	var b bytes.Buffer
	if err := top.write(&b); err != nil {
		return err
	}
	var c bytes.Buffer
	if err := json.Compact(&c, b.Bytes()); err != nil {
		return err
	}
	c.WriteByte('\n')
	_, err := w.Write(c.Bytes())
	return err
}

// guidellmBenchmark is run r as GuideLLM's GenerativeBenchmark, the i'th
// (0-based) of the report.
func guidellmBenchmark(i int, r GuideLLMRun) (*vllmObject, error) {
	res := r.Result
	var warm time.Duration
	if res.Warmup != nil {
		d, err := time.ParseDuration(res.Warmup.Until)
		if err != nil {
			return nil, fmt.Errorf("warm-up %q: %v", res.Warmup.Until, err)
		}
		warm = d
	}
	reqs, err := vllmRequests(res, r.Log)
	if err != nil {
		return nil, err
	}
	// GuideLLM's measured window: after the warm-up, to the last answer;
	// its length from openload's clock, not from Unix seconds, which keep
	// only a fraction of a µs.
	t0 := float64(res.Started.UnixNano()) / 1e9
	d := res.Elapsed - warm.Seconds()
	start, end := t0+warm.Seconds(), t0+res.Elapsed

	var b, cfg, sched vllmObject
	b.add("type_", "generative_benchmark")
	cfg.add("run_index", i)
	if s := guidellmStrategy(r.Kind, res.Config); s != nil {
		cfg.add("strategy", s)
	}
	b.add("config", &cfg)
	sched.add("measure_start_time", start)
	sched.add("measure_end_time", end)
	b.add("scheduler_metrics", &sched)
	b.add("metrics", guidellmMetrics(res, reqs, d))
	if reqs != nil {
		b.add("requests", reqs.guidellmRequests(t0))
	}
	b.add("start_time", start)
	b.add("end_time", end)
	b.add("duration", d)
	b.add("warmup_duration", warm.Seconds())
	return &b, nil
}

// guidellmStrategy is GuideLLM's SchedulingStrategy for a run: a profile
// sweep's synchronous and throughput points as GuideLLM's; an open run at
// a constant or Poisson rate as its constant and poisson strategies, an
// infinite rate as throughput, an unpaced closed run as concurrent; nil
// for what GuideLLM has no strategy for (a ramp, gamma gaps, a closed run
// paced to a rate). max_concurrency is the bound on requests in flight,
// as vLLM's format writes it.
func guidellmStrategy(kind string, c result.Config) *vllmObject {
	var s vllmObject
	limit := func() {
		if n := vllmConcurrency(c); n > 0 {
			s.add("max_concurrency", n)
		}
	}
	open := c.Stages == "" && c.Mode != result.ModeClosed
	switch {
	case kind == result.PointSynchronous:
		s.add("type_", "synchronous")
	case kind == result.PointThroughput, open && (c.Arrival == schedule.AtOnce || math.IsInf(c.Rate, 1)):
		s.add("type_", "throughput")
		limit()
	case c.Stages == "" && c.Mode == result.ModeClosed && c.Rate == 0 && c.Users > 0:
		s.add("type_", "concurrent")
		s.add("streams", c.Users)
	case open && c.Rate > 0 && (c.Arrival == schedule.Constant || c.Arrival == schedule.Poisson):
		s.add("type_", c.Arrival) // GuideLLM's names too
		s.add("rate", c.Rate)
		limit()
	default:
		return nil
	}
	return &s
}

// guidellmMetrics is GuideLLM's GenerativeMetrics of res over its
// measured window of d seconds: from each request of the log when there
// is one (exactly as GuideLLM computes them), else from the result's
// counts and histograms.
func guidellmMetrics(res *result.Result, reqs *vllmRequestsT, d float64) *vllmObject {
	var m vllmObject
	head := res.Headline()
	t := vllmTotals(res, reqs)
	if !t.completedOK {
		return &m // which answers succeeded is not known
	}
	ok := t.completed
	// GuideLLM's errored: an error or an answer other than success;
	// incomplete: cancelled at the end, openload's unfinished.
	var totals vllmObject
	totals.add("successful", ok)
	totals.add("errored", head.Scheduled-head.Unfinished-ok)
	totals.add("incomplete", head.Unfinished)
	totals.add("total", head.Scheduled)
	m.add("request_totals", &totals)
	if d > 0 {
		// The mean of GuideLLM's rate distribution over the window is the
		// count over the window; its spread needs each answer's time.
		var s vllmObject
		mean := float64(ok) / d
		s.add("mean", mean)
		s.add("count", ok)
		s.add("total_sum", mean*float64(ok))
		m.add("requests_per_second", successful(&s))
	}
	if reqs != nil {
		reqs.guidellmDistributions(&m)
		return &m
	}

	// Without the log, a histogram holds the successful requests only when
	// every request succeeded.
	if ok == 0 || ok != head.Scheduled {
		return &m
	}
	hist := func(name string, scale float64) *vllmObject {
		h, err := res.Histogram(name)
		if err != nil || h.TotalCount() != ok {
			return nil
		}
		return successful(guidellmHistSummary(h, scale))
	}
	addIf := func(k string, o *vllmObject) {
		if o != nil {
			m.add(k, o)
		}
	}
	addIf("request_latency", hist("service", 1e6)) // seconds
	if t.inputOK {
		if h, err := result.DecodeHistogram(res.Stream.PromptTokens.Histogram); err == nil && h.TotalCount() == ok {
			m.add("prompt_token_count", successful(guidellmHistSummary(h, 1)))
		}
	}
	if t.outputOK {
		m.add("output_token_count", successful(guidellmSumSummary(t.output, ok)))
		if t.inputOK {
			m.add("total_token_count", successful(guidellmSumSummary(t.input+t.output, ok)))
		}
	}
	addIf("time_to_first_token_ms", hist("ttft_service", 1e3))
	addIf("time_to_first_output_token_ms", hist("ttfa_service", 1e3))
	return &m
}

// successful is a StatusDistributionSummary of the successful requests'
// summary s; the other groups are left out.
func successful(s *vllmObject) *vllmObject {
	var o vllmObject
	o.add("successful", s)
	return &o
}

// guidellmPercentiles are GuideLLM's Percentiles: its field, the
// percentile (0 to 100).
var guidellmPercentiles = [...]struct {
	name string
	p    float64
}{
	{"p001", 0.1}, {"p01", 1}, {"p05", 5}, {"p10", 10}, {"p25", 25}, {"p50", 50},
	{"p75", 75}, {"p90", 90}, {"p95", 95}, {"p99", 99}, {"p999", 99.9},
}

// guidellmHistSummary is GuideLLM's DistributionSummary of h's values
// divided by scale (µs to s or ms), to the histogram's 3 significant
// digits. mode is left out: the most common value of GuideLLM's exact
// values is not a histogram's bucket.
func guidellmHistSummary(h *hdrhistogram.Histogram, scale float64) *vllmObject {
	var o, ps vllmObject
	n := h.TotalCount()
	mean, std := h.Mean()/scale, h.StdDev()/scale
	at := func(p float64) float64 { return float64(h.ValueAtQuantile(p)) / scale }
	o.add("mean", mean)
	o.add("median", at(50))
	o.add("variance", std*std)
	o.add("std_dev", std)
	o.add("min", at(0))
	o.add("max", float64(h.Max())/scale)
	o.add("count", n)
	o.add("total_sum", mean*float64(n)) // GuideLLM's: mean × count
	for _, p := range guidellmPercentiles {
		ps.add(p.name, at(p.p))
	}
	o.add("percentiles", &ps)
	return &o
}

// guidellmSumSummary is the part of a DistributionSummary a sum over n
// requests gives: mean, count and total_sum.
func guidellmSumSummary(sum, n int64) *vllmObject {
	var o vllmObject
	o.add("mean", float64(sum)/float64(n))
	o.add("count", n)
	o.add("total_sum", float64(sum))
	return &o
}

// guidellmValue is one value of a distribution and its weight, as
// GuideLLM's from_values takes (value, weight) pairs.
type guidellmValue struct{ v, w float64 }

// guidellmSummary is DistributionSummary.from_values of xs, as
// statistics.py computes it: equal values merged, weights normalised to
// a pdf, each percentile the first value whose cumulative probability
// reaches it (numpy's searchsorted, side left), count the sum of the
// weights rounded; nil for no values.
func guidellmSummary(xs []guidellmValue) *vllmObject {
	if len(xs) == 0 {
		return nil
	}
	var count float64
	for _, x := range xs {
		count += x.w
	}
	xs = slices.Clone(xs)
	slices.SortStableFunc(xs, func(a, b guidellmValue) int {
		switch {
		case a.v < b.v:
			return -1
		case a.v > b.v:
			return 1
		}
		return 0
	})
	var u []guidellmValue // unique values with weight
	for _, x := range xs {
		if n := len(u); n > 0 && u[n-1].v == x.v {
			u[n-1].w += x.w
		} else {
			u = append(u, x)
		}
	}
	u = slices.DeleteFunc(u, func(x guidellmValue) bool { return !(x.w > 0) })
	var total float64
	for _, x := range u {
		total += x.w
	}
	if len(u) == 0 || total <= 1e-6 {
		return nil // GuideLLM's uniform fallback for zero weights: not met by openload's values
	}
	cdf := make([]float64, len(u))
	var mean, acc float64
	mode, best := u[0].v, -1.0
	for i, x := range u {
		p := x.w / total
		acc += p
		cdf[i] = acc
		mean += x.v * p
		if p > best {
			mode, best = x.v, p
		}
	}
	var variance float64
	for _, x := range u {
		variance += (x.v - mean) * (x.v - mean) * x.w / total
	}
	at := func(p float64) float64 {
		i, _ := slices.BinarySearch(cdf, p)
		return u[min(i, len(u)-1)].v
	}
	var o, ps vllmObject
	n := int64(math.RoundToEven(count)) // Python's round
	o.add("mean", mean)
	o.add("median", at(0.5))
	o.add("mode", mode)
	o.add("variance", variance)
	o.add("std_dev", math.Sqrt(variance))
	o.add("min", u[0].v)
	o.add("max", u[len(u)-1].v)
	o.add("count", n)
	o.add("total_sum", mean*float64(n))
	for _, p := range guidellmPercentiles {
		ps.add(p.name, at(p.p/100))
	}
	o.add("percentiles", &ps)
	return &o
}

// guidellmStats are one request's figures as GuideLLM's
// GenerativeRequestStats computes them (request_stats.py); a figure
// GuideLLM leaves None is NaN.
type guidellmStats struct {
	latency, ttft, tpot, itl float64 // s, ms, ms, ms
	prompt, output           int     // 0: unknown
}

func (r *vllmRequestsT) stats(e recorder.LogEntry) guidellmStats {
	nan := math.NaN()
	s := guidellmStats{latency: nan, ttft: nan, tpot: nan, itl: nan, prompt: e.PromptTokens}
	if !e.WasSent || e.Error != "" {
		return s
	}
	s.latency = (e.Done - e.Sent).Seconds()
	if !r.streamed || !e.Streamed {
		return s
	}
	s.output = e.Tokens
	ms := func(d time.Duration) float64 { return float64(d) / 1e6 }
	if e.FirstToken >= 0 {
		s.ttft = ms(e.FirstToken - e.Sent)
	}
	last := e.LastToken // GuideLLM: the last token, else the request's end
	if last < 0 {
		last = e.Done
	}
	if s.output > 0 {
		s.tpot = ms(last-e.Sent) / float64(s.output)
	}
	if e.FirstToken >= 0 && e.LastToken >= 0 && s.output > 1 {
		s.itl = ms(e.LastToken-e.FirstToken) / float64(s.output-1)
	}
	return s
}

// guidellmDistributions adds GuideLLM's value distributions of the
// successful requests, each request's figure weighted as
// GenerativeMetrics.compile weighs it (time per output token by the
// output tokens, inter-token latency by the gaps).
func (r *vllmRequestsT) guidellmDistributions(m *vllmObject) {
	var lat, prompt, output, total, ttft, tpot, itl []guidellmValue
	for _, e := range r.entries {
		if !r.ok(e) {
			continue
		}
		s := r.stats(e)
		lat = append(lat, guidellmValue{s.latency, 1})
		if s.prompt > 0 {
			prompt = append(prompt, guidellmValue{float64(s.prompt), 1})
		}
		if r.streamed {
			output = append(output, guidellmValue{float64(s.output), 1})
			ttft = append(ttft, guidellmValue{s.ttft, 1})
			if s.prompt > 0 {
				total = append(total, guidellmValue{float64(s.prompt + s.output), 1})
			}
			if !math.IsNaN(s.tpot) {
				tpot = append(tpot, guidellmValue{s.tpot, float64(s.output)})
			}
			if !math.IsNaN(s.itl) {
				itl = append(itl, guidellmValue{s.itl, float64(s.output - 1)})
			}
		}
	}
	n := len(lat)
	for _, d := range []struct {
		name string
		xs   []guidellmValue
		all  bool // every successful request has the figure
	}{
		{"request_latency", lat, true},
		{"prompt_token_count", prompt, len(prompt) == n},
		{"output_token_count", output, true},
		{"total_token_count", total, len(total) == n},
		{"time_to_first_token_ms", ttft, true},
		{"time_per_output_token_ms", tpot, len(tpot) == n},
		{"inter_token_latency_ms", itl, len(itl) == n},
	} {
		// GuideLLM counts a missing figure as 0: left out instead.
		if s := guidellmSummary(d.xs); s != nil && d.all {
			m.add(d.name, successful(s))
		}
	}
}

// guidellmRequests are GuideLLM's requests lists: each request's
// GenerativeRequestStats by status (successful, incomplete, errored), its
// times Unix seconds from t0, the run's start.
func (r *vllmRequestsT) guidellmRequests(t0 float64) *vllmObject {
	ok, incomplete, errored := []any{}, []any{}, []any{}
	at := func(d time.Duration) float64 { return t0 + d.Seconds() }
	for _, e := range r.entries {
		id := strconv.FormatUint(e.Seq, 10)
		var req, info, timings, in, out vllmObject
		timings.add("targeted_start", at(e.Scheduled))
		if e.WasSent {
			timings.add("request_start", at(e.Sent))
		}
		if e.Streamed && e.FirstToken >= 0 {
			timings.add("first_token_iteration", at(e.FirstToken))
		}
		if e.Streamed && e.LastToken >= 0 {
			timings.add("last_token_iteration", at(e.LastToken))
		}
		status := "completed"
		switch {
		case r.ok(e):
		case e.Error == "unfinished": // openload's unfinished: counted incomplete in the totals too
			status = "cancelled"
		default:
			status = "errored"
		}
		if status != "cancelled" {
			timings.add("request_end", at(e.Done))
			timings.add("resolve_end", at(e.Done))
		}
		info.add("request_id", id)
		info.add("status", status)
		info.add("timings", &timings)
		if status == "errored" {
			info.add("error", vllmError(e, false))
		}
		s := r.stats(e)
		if s.prompt > 0 {
			in.add("text_tokens", s.prompt)
			in.add("total_tokens", s.prompt)
		}
		if s.output > 0 {
			out.add("text_tokens", s.output)
			out.add("total_tokens", s.output)
		}
		req.add("type_", "generative_request_stats")
		req.add("request_id", id)
		req.add("info", &info)
		req.add("input_metrics", &in)
		req.add("output_metrics", &out)
		if e.WasSent {
			req.add("request_start_time", at(e.Sent))
		}
		if status != "cancelled" {
			req.add("request_end_time", at(e.Done))
		}
		// The computed fields GuideLLM writes, in its order.
		if !math.IsNaN(s.latency) {
			req.add("request_latency", s.latency)
		}
		if s.prompt > 0 {
			req.add("prompt_tokens", s.prompt)
		}
		if s.output > 0 {
			req.add("output_tokens", s.output)
		}
		if s.prompt > 0 && s.output > 0 {
			req.add("total_tokens", s.prompt+s.output)
		}
		for _, f := range []struct {
			k string
			v float64
		}{{"time_to_first_token_ms", s.ttft}, {"time_per_output_token_ms", s.tpot}, {"inter_token_latency_ms", s.itl}} {
			if !math.IsNaN(f.v) {
				req.add(f.k, f.v)
			}
		}
		switch status {
		case "completed":
			ok = append(ok, &req)
		case "cancelled":
			incomplete = append(incomplete, &req)
		default:
			errored = append(errored, &req)
		}
	}
	var o vllmObject
	o.add("successful", ok)
	o.add("errored", errored)
	o.add("incomplete", incomplete)
	return &o
}

// MarshalJSON lets a vllmObject nest in another, its members in order.
func (o *vllmObject) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	if err := o.write(&b); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}
