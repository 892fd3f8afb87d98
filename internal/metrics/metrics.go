// Package metrics exports a run's live figures to Prometheus.
//
// Nothing is added per request. The engine calls a Source's Observe on the
// recorder's goroutine once a second and once at the end
// (engine.Config.Observe); Observe reads the recorder into a Snapshot
// (Take) and publishes it with an atomic pointer swap. A scrape reads the
// latest snapshot of every source and emits it as const metrics, so a
// scrape never touches the recorder and the recorder never waits for a
// scrape.
//
// The counters are the result's counts as of the snapshot: at the end they
// equal the result's counts, statuses, error kinds, wire counts and
// limit.waited exactly. The time histograms are the result's HdrHistograms
// in classic buckets about 10 % wide (LatencyBounds, buckets.go). Native
// histograms are not emitted: Prometheus 2.x reads them only with
// --enable-feature=native-histograms (from 2.40) and a protobuf scrape,
// and the exact distribution is in the result file anyway.
//
// One Exporter serves one process: its labels (run, and shard when
// sharded) are on every series, the Go runtime's and the process's
// included. Each run in it (one, a scenario each, a sweep point each) is a
// Source with labels of its own (scenario; point and rate), so the
// sources of one exporter must all have the same label names.
package metrics

import (
	"maps"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/openload/openload/internal/engine"
)

// Exporter holds the sources of one process and the registry they are
// scraped from; it is safe for concurrent use.
type Exporter struct {
	reg    *prometheus.Registry
	labels prometheus.Labels
	mu     sync.Mutex
	srcs   []*Source
	// nBounds is how many LatencyBounds its sources serve
	// (SetMaxLatency), all when 0.
	nBounds int
}

// New returns an exporter whose series all carry labels (run, shard): a
// private registry with its sources, the Go runtime's collector and the
// process collector (CPU seconds, memory, file descriptors).
func New(labels map[string]string) *Exporter {
	e := &Exporter{reg: prometheus.NewRegistry(), labels: maps.Clone(labels)}
	wrapped := prometheus.WrapRegistererWith(e.labels, e.reg)
	wrapped.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	e.reg.MustRegister(collector{e})
	return e
}

// Handler serves the registry in Prometheus's text format (or what the
// scraper negotiates).
func (e *Exporter) Handler() http.Handler {
	return promhttp.HandlerFor(e.reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
}

// Source adds a run with these labels besides the exporter's; give it to
// the run as its engine.Config.Observe (Source.Observe). Until its first
// snapshot it exports nothing.
func (e *Exporter) Source(labels map[string]string) *Source {
	all := maps.Clone(e.labels)
	maps.Copy(all, labels)
	s := &Source{d: newDescs(all)}
	e.mu.Lock()
	s.nBounds = e.nBounds
	e.srcs = append(e.srcs, s)
	e.mu.Unlock()
	return s
}

// Source is one run's latest snapshot.
type Source struct {
	snap    atomic.Pointer[Snapshot]
	d       descs
	nBounds int // the exporter's, when it was added
}

// Observe takes a snapshot of l and publishes it; it has the signature of
// engine.Config.Observe.
func (s *Source) Observe(l engine.Live) { s.snap.Store(Take(l)) }

// Snapshot is the latest snapshot, nil before the first.
func (s *Source) Snapshot() *Snapshot { return s.snap.Load() }

// descs are one source's metric descriptions, its labels constant.
type descs struct {
	scheduled, sent, completed, failed, timedOut, unfinished *prometheus.Desc
	errors, responses, attempts, resends                     *prometheus.Desc
	inFlight, waiting, limitWaited, finished                 *prometheus.Desc
	response, service, sendDelay                             *prometheus.Desc
	ttft, itl, tpot, outputTokens, streams, classes          *prometheus.Desc
}

func newDescs(l prometheus.Labels) descs {
	d := func(name, help string, vars ...string) *prometheus.Desc {
		return prometheus.NewDesc("openload_"+name, help, vars, l)
	}
	return descs{
		scheduled:    d("requests_scheduled_total", "Requests of the schedule with an outcome (completed, failed, timed out or unfinished); at the end the result's counts.scheduled."),
		sent:         d("requests_sent_total", "Requests sent, counted with their outcome; at the end the result's counts.sent."),
		completed:    d("requests_completed_total", "Requests answered in full, any status; at the end the result's counts.completed."),
		failed:       d("requests_failed_total", "Requests that ended in an error other than a timeout (counts.errors)."),
		timedOut:     d("requests_timed_out_total", "Requests that timed out (counts.timeouts)."),
		unfinished:   d("requests_unfinished_total", "Requests abandoned at the drain's end or an interruption (counts.unfinished)."),
		errors:       d("request_errors_total", "Requests that did not complete, by error kind (the result's error_kinds).", "kind"),
		responses:    d("responses_total", "Completed responses by status code (the result's status; other: outside 100-599).", "code"),
		attempts:     d("attempts_total", "Attempts written to a connection, re-sends and retries included (wire.attempts)."),
		resends:      d("resends_total", "Re-sends on a new connection after a kept-alive one failed (wire.resends)."),
		inFlight:     d("requests_in_flight", "Requests being sent or waited on now."),
		waiting:      d("requests_waiting", "Requests due whose sending has not begun: waiting for a connection, which is send delay."),
		limitWaited:  d("requests_limit_waited_total", "Requests that found every connection busy when due (limit.waited)."),
		finished:     d("run_finished", "1 once the run's last request has its outcome and these figures are final, else 0."),
		response:     d("response_time_seconds", "Response time, done - scheduled, of the requests after any warm-up."),
		service:      d("service_time_seconds", "Service time, done - sent, of the requests sent after any warm-up."),
		sendDelay:    d("send_delay_seconds", "Send delay, sent - scheduled, of the requests sent after any warm-up."),
		ttft:         d("ttft_seconds", "Time to first token of streamed answers, from the schedule or from the send.", "from"),
		itl:          d("itl_seconds", "Inter-token latency: every gap between two content events of a stream."),
		tpot:         d("tpot_seconds", "Time per output token of streamed answers: (last token - first token) / (tokens - 1), one value a request."),
		outputTokens: d("output_tokens_total", "Output tokens of streamed answers."),
		streams:      d("stream_requests_total", "Requests whose answer was a stream."),
		classes:      d("class_responses_total", "Requests by the value of a class response header (the result's classes).", "header", "value"),
	}
}

// collector emits every source's latest snapshot. It is unchecked
// (Describe sends nothing): sources come and go with the runs of one
// process, each with label values of its own.
type collector struct{ e *Exporter }

func (collector) Describe(chan<- *prometheus.Desc) {}

func (c collector) Collect(ch chan<- prometheus.Metric) {
	c.e.mu.Lock()
	srcs := slices.Clone(c.e.srcs)
	c.e.mu.Unlock()
	for _, s := range srcs {
		if snap := s.snap.Load(); snap != nil {
			s.d.emit(ch, snap.upTo(s.nBounds))
		}
	}
}

func (d *descs) emit(ch chan<- prometheus.Metric, s *Snapshot) {
	counter := func(desc *prometheus.Desc, n int64, lv ...string) {
		ch <- prometheus.MustNewConstMetric(desc, prometheus.CounterValue, float64(n), lv...)
	}
	gauge := func(desc *prometheus.Desc, n int64) {
		ch <- prometheus.MustNewConstMetric(desc, prometheus.GaugeValue, float64(n))
	}
	counter(d.scheduled, s.Scheduled)
	counter(d.sent, s.Sent)
	counter(d.completed, s.Completed)
	counter(d.failed, s.Failed)
	counter(d.timedOut, s.TimedOut)
	counter(d.unfinished, s.Unfinished)
	for _, k := range s.Kinds {
		counter(d.errors, k.N, k.Kind)
	}
	for _, st := range s.Statuses {
		code := "other"
		if st.Code != 0 {
			code = strconv.Itoa(st.Code)
		}
		counter(d.responses, st.N, code)
	}
	counter(d.attempts, s.Attempts)
	counter(d.resends, s.Resends)
	counter(d.limitWaited, s.LimitWaited)
	gauge(d.inFlight, s.InFlight)
	gauge(d.waiting, s.Waiting)
	finished := int64(0)
	if s.Final {
		finished = 1
	}
	gauge(d.finished, finished)
	hist(ch, d.response, s.Response)
	hist(ch, d.service, s.Service)
	hist(ch, d.sendDelay, s.SendDelay)
	if st := s.Stream; st != nil {
		hist(ch, d.ttft, st.TTFTSchedule, "schedule")
		hist(ch, d.ttft, st.TTFTSend, "send")
		hist(ch, d.itl, st.ITL)
		hist(ch, d.tpot, st.TPOT)
		counter(d.outputTokens, st.OutputTokens)
		counter(d.streams, st.Requests)
	}
	for _, cl := range s.Classes {
		counter(d.classes, cl.N, cl.Header, cl.Value)
	}
}

func hist(ch chan<- prometheus.Metric, desc *prometheus.Desc, h Histogram, lv ...string) {
	b := make(map[float64]uint64, len(h.Cumulative))
	for i, n := range h.Cumulative { // the bounds the source serves (upTo)
		b[LatencyBounds[i]] = n
	}
	ch <- prometheus.MustNewConstHistogram(desc, h.Count, h.Sum, b, lv...)
}
