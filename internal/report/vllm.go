package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/openload/openload/internal/recorder"
	"github.com/openload/openload/result"
)

// VLLM writes res as the JSON object `vllm bench serve --save-result`
// writes, so that the tools that read vLLM's result files read openload's.
//
// The fields and their meaning are read from vllm-project/vllm
// vllm/benchmarks/serve.py @009e6d4a (main_async's result_json, benchmark's
// result dict and process_one_metric, calculate_metrics) and
// vllm/benchmarks/lib/endpoint_request_func.py @02cfb534 (a request
// succeeds on status 200 with at least one chunk; ttft and latency start
// at the send). docs/REFERENCE.md maps each field onto openload's figure.
//
// A field openload has no figure for is left out, never written as 0.
// The per-request arrays come only from o.Log, whose requests must be
// the result's.
func VLLM(w io.Writer, res *result.Result, opt VLLMOptions) error {
	var o vllmObject
	head := res.Headline()
	c := res.Config

	o.add("date", res.Started.Format("20060102-150405"))
	if b := vllmBackend(c.Target); b != "" {
		o.add("endpoint_type", b)
		o.add("backend", b)
	}
	if c.Request != nil && c.Request.Model != "" {
		o.add("model_id", c.Request.Model)
	}
	o.add("num_prompts", head.Scheduled)
	if r, ok := vllmRate(c); ok {
		o.add("request_rate", r)
	}
	if b, ok := vllmBurstiness(c); ok {
		o.add("burstiness", b)
	}
	if n := vllmConcurrency(c); n > 0 {
		o.add("max_concurrency", n)
	}

	o.add("duration", res.Elapsed)
	reqs, err := vllmRequests(res, opt.Log)
	if err != nil {
		return err
	}
	t := vllmTotals(res, reqs)
	if t.completedOK {
		o.add("completed", t.completed)
		o.add("failed", head.Scheduled-t.completed)
	}
	if t.inputOK {
		o.add("total_input_tokens", t.input)
	}
	if t.outputOK {
		o.add("total_output_tokens", t.output)
	}
	if res.Elapsed > 0 {
		if t.completedOK {
			o.add("request_throughput", float64(t.completed)/res.Elapsed)
		}
		if res.Stream != nil && res.Stream.Goodput != nil {
			o.add("request_goodput", res.Stream.Goodput.PerS)
		} else {
			o.add("request_goodput", nil) // as vLLM writes it without --goodput
		}
		if t.outputOK {
			o.add("output_throughput", float64(t.output)/res.Elapsed)
		}
		if t.inputOK && t.outputOK {
			o.add("total_token_throughput", float64(t.input+t.output)/res.Elapsed)
		}
	}
	if reqs != nil {
		reqs.add(&o)
	}
	if res.Stream != nil {
		var peak int64
		for _, s := range res.Timeline {
			peak = max(peak, s.Tokens)
		}
		if peak > 0 {
			o.add("max_output_tokens_per_s", float64(peak))
		}
	}
	if res.Limit.MaxInFlight > 0 {
		o.add("max_concurrent_requests", res.Limit.MaxInFlight)
	}

	// The statistics of each metric vLLM reports, from the histograms:
	// vLLM's name, openload's histogram.
	response := "response"
	if res.Answered != nil {
		response = "answered"
	}
	for _, m := range [...]struct{ vllm, metric string }{
		{"ttft", "ttft_service"}, {"tpot", "tpot"}, {"itl", "itl"}, {"e2el", "service"},
		{"client_queue_time", "send_delay"}, {"e2el_including_client_queue", response},
	} {
		h, err := res.Histogram(m.metric)
		if err != nil || h.TotalCount() == 0 {
			continue // no such figure in this run
		}
		vllmStats(&o, m.vllm, h, opt.percentiles())
	}
	return o.write(w)
}

// VLLMOptions are what VLLM writes beyond the result.
type VLLMOptions struct {
	// Log is the run's per-request log, for the per-request arrays; nil
	// without one.
	Log []recorder.LogEntry
	// Percentiles are those written of each metric, as vLLM's
	// --metric-percentiles (0 to 100); nil: vLLM's default, 99.
	Percentiles []float64
}

func (opt VLLMOptions) percentiles() []float64 {
	if opt.Percentiles == nil {
		return []float64{99}
	}
	return opt.Percentiles
}

// vllmStats adds mean, median, std and each of ps of h (µs) in ms, under
// vLLM's names for metric (p99_ttft_ms, p99.9_ttft_ms).
func vllmStats(o *vllmObject, metric string, h *hdrhistogram.Histogram, ps []float64) {
	ms := func(us float64) float64 { return us / 1000 }
	o.add("mean_"+metric+"_ms", ms(h.Mean()))
	o.add("median_"+metric+"_ms", ms(float64(h.ValueAtQuantile(50))))
	o.add("std_"+metric+"_ms", ms(h.StdDev()))
	for _, p := range ps {
		o.add("p"+strconv.FormatFloat(p, 'f', -1, 64)+"_"+metric+"_ms", ms(float64(h.ValueAtQuantile(p))))
	}
}

// vllmBackend is vLLM's --backend for the target's API: openai-chat for
// chat completions, openai for completions; "" for any other path.
func vllmBackend(target string) string {
	u, err := url.Parse(target)
	if err != nil {
		return ""
	}
	switch {
	case strings.HasSuffix(u.Path, "/chat/completions"):
		return "openai-chat"
	case strings.HasSuffix(u.Path, "/completions"):
		return "openai"
	}
	return ""
}

// vllmRate is vLLM's request_rate: the rate (the string "inf" for an
// infinite one, as vLLM writes it), or an unpaced closed run's "inf"
// (every user sends at once, as vLLM's default rate with
// --max-concurrency); none for a ramp, which vLLM's constant rate does
// not describe.
func vllmRate(c result.Config) (any, bool) {
	switch {
	case c.Stages != "":
		return nil, false
	case math.IsInf(c.Rate, 1), c.Mode == result.ModeClosed && c.Rate == 0:
		return "inf", true
	case c.Rate > 0:
		return c.Rate, true
	}
	return nil, false
}

// vllmBurstiness is vLLM's burstiness, the shape of its gamma gaps:
// 1 for Poisson arrivals, k for gamma ones. Constant arrivals are vLLM's
// infinite burstiness, which Python writes as Infinity, not JSON: none.
func vllmBurstiness(c result.Config) (float64, bool) {
	switch {
	case c.Mode == result.ModeClosed || c.Stages != "":
		return 0, false
	case strings.HasPrefix(c.Arrival, "poisson"):
		return 1, true
	case strings.HasPrefix(c.Arrival, "gamma") && c.Burstiness > 0:
		return c.Burstiness, true
	}
	return 0, false
}

// vllmConcurrency is vLLM's max_concurrency, the bound on requests in
// flight: a closed run's users, an HTTP/1.1 run's connections (one
// request each); 0 when unknown (HTTP/2 multiplexes).
func vllmConcurrency(c result.Config) int {
	switch {
	case c.Mode == result.ModeClosed:
		return c.Users
	case c.Protocol == "" || c.Protocol == "http/1.1":
		return c.Connections
	}
	return 0
}

// vllmTotals are vLLM's counts: completed (the successful requests) and
// the prompt and output tokens of those requests, each with whether
// openload knows it.
type vllmCounts struct {
	completed, input, output       int64
	completedOK, inputOK, outputOK bool
}

// vllmTotals counts from the log when there is one (exactly as vLLM
// does), else from the result: completed is the 200 answers when the
// warm-up, whose statuses are not apart, cannot blur them, and the token
// sums are the result's when every request sent succeeded (vLLM sums the
// successful ones only).
func vllmTotals(res *result.Result, reqs *vllmRequestsT) vllmCounts {
	if reqs != nil {
		return reqs.totals()
	}
	var t vllmCounts
	head := res.Headline()
	ok200 := res.Status["200"]
	switch {
	case res.Warmup == nil:
		t.completed, t.completedOK = ok200, true
	case ok200 == sumCounts(res.Status):
		t.completed, t.completedOK = head.Completed, true // every answer was a 200
	}
	all := t.completedOK && t.completed == head.Sent && head.Sent == head.Scheduled
	if s := res.Stream; s != nil && all {
		t.output, t.outputOK = s.OutputTokens, true
		if p := s.PromptTokens; p != nil && p.Requests == head.Sent {
			t.input, t.inputOK = p.Sum, true
		}
	}
	return t
}

func sumCounts(m map[string]int64) int64 {
	var n int64
	for _, v := range m {
		n += v
	}
	return n
}

// vllmRequestsT are the headline's requests of a per-request log, in
// request order, with whether the run streamed.
type vllmRequestsT struct {
	entries  []recorder.LogEntry
	streamed bool
}

// vllmRequests reads log's headline requests (those scheduled after the
// warm-up) in request order; nil without a log. A log that does not hold
// the result's requests is an error.
func vllmRequests(res *result.Result, log []recorder.LogEntry) (*vllmRequestsT, error) {
	if log == nil {
		return nil, nil
	}
	var until time.Duration
	if res.Warmup != nil {
		d, err := time.ParseDuration(res.Warmup.Until)
		if err != nil {
			return nil, fmt.Errorf("warm-up %q: %v", res.Warmup.Until, err)
		}
		until = d
	}
	r := &vllmRequestsT{streamed: res.Stream != nil}
	for _, e := range log {
		if e.Scheduled >= until {
			r.entries = append(r.entries, e)
		}
	}
	if n := res.Headline().Scheduled; int64(len(r.entries)) != n {
		return nil, fmt.Errorf("the log holds %d requests after the warm-up, the result %d: not this run's log", len(r.entries), n)
	}
	slices.SortFunc(r.entries, func(a, b recorder.LogEntry) int {
		switch {
		case a.Seq < b.Seq:
			return -1
		case a.Seq > b.Seq:
			return 1
		}
		return 0
	})
	return r, nil
}

// ok is vLLM's success: a 200 answer and, for a stream, a first token.
func (r *vllmRequestsT) ok(e recorder.LogEntry) bool {
	return e.Error == "" && e.Status == 200 && (!r.streamed || e.Streamed && e.FirstToken >= 0)
}

// totals counts as calculate_metrics does: the successful requests, and
// their prompt and output tokens (unknown when one lacks its count).
func (r *vllmRequestsT) totals() vllmCounts {
	t := vllmCounts{completedOK: true, inputOK: true, outputOK: r.streamed}
	for _, e := range r.entries {
		if !r.ok(e) {
			continue
		}
		t.completed++
		t.input += int64(e.PromptTokens)
		t.output += int64(e.Tokens)
		t.inputOK = t.inputOK && e.PromptTokens > 0
	}
	t.inputOK = t.inputOK && t.completed > 0
	return t
}

// add adds vLLM's per-request arrays (--save-detailed's, and the two it
// keeps without), in seconds as vLLM writes them; a request without the
// figure (never sent, or failed where vLLM writes 0) has null. itls and
// generated_texts are left out: the log keeps a stream's first and last
// token, not each gap, and openload keeps no text.
func (r *vllmRequestsT) add(o *vllmObject) {
	n := len(r.entries)
	sec := func(d time.Duration) float64 { return d.Seconds() }
	var inputs, outputs, ttfts, latencies, starts, queues []any
	errs := make([]string, 0, n)
	prompts := true
	for _, e := range r.entries {
		ok := r.ok(e)
		prompts = prompts && e.PromptTokens > 0
		inputs = append(inputs, e.PromptTokens)
		outputs = append(outputs, nil)
		ttfts = append(ttfts, nil)
		latencies = append(latencies, nil)
		starts = append(starts, nil)
		queues = append(queues, nil)
		i := len(outputs) - 1
		if e.WasSent {
			starts[i], queues[i] = sec(e.Sent), sec(e.Sent-e.Scheduled)
		}
		if ok {
			if r.streamed {
				outputs[i] = e.Tokens
				ttfts[i] = sec(e.FirstToken - e.Sent)
				latencies[i] = sec(e.LastToken - e.Sent) // vLLM's latency ends at the last chunk
			} else {
				latencies[i] = sec(e.Done - e.Sent)
			}
		}
		errs = append(errs, vllmError(e, ok))
	}
	if prompts {
		o.add("input_lens", inputs)
	}
	if r.streamed {
		o.add("output_lens", outputs)
		o.add("ttfts", ttfts)
	}
	o.add("latencies", latencies)
	o.add("start_times", starts)
	o.add("queue_times", queues)
	o.add("errors", errs)
}

// vllmError is a request's entry in vLLM's errors: empty for a success,
// the status's reason phrase for another answer (vLLM writes
// response.reason), else openload's error kind.
func vllmError(e recorder.LogEntry, ok bool) string {
	switch {
	case ok:
		return ""
	case e.Error != "":
		return e.Error
	case e.Status != 200:
		if t := http.StatusText(e.Status); t != "" {
			return t
		}
		return "HTTP " + strconv.Itoa(e.Status)
	}
	return "no token event"
}

// vllmObject is a JSON object whose members keep the order they were
// added in, vLLM's order.
type vllmObject struct {
	keys []string
	vals []any
}

func (o *vllmObject) add(k string, v any) { o.keys, o.vals = append(o.keys, k), append(o.vals, v) }

// write writes the object on one line, as Python's json.dump does, and
// a newline.
func (o *vllmObject) write(w io.Writer) error {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range o.keys {
		if i > 0 {
			b.WriteString(", ")
		}
		kb, _ := json.Marshal(k)
		vb, err := json.Marshal(o.vals[i])
		if err != nil {
			return fmt.Errorf("%s: %v", k, err)
		}
		b.Write(kb)
		b.WriteString(": ")
		b.Write(vb)
	}
	b.WriteString("}\n")
	_, err := w.Write(b.Bytes())
	return err
}
