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
// Each counter counts at its own moment. Scheduled counts a request when
// it comes due: an open run's arrival when it is taken from the schedule,
// which the dispatcher does at its scheduled instant (a session's step
// when a worker takes it up, a closed loop's request when its user is
// ready); sent when its sending begins; the outcomes when their records
// arrive, which is when they happen. They are the engine's own counters,
// not the records', so a request answered in 4 s is scheduled and sent
// the second it is due, and requests_waiting (due, not sent) shows a
// generator holding them back. Due is not counted by the schedule's
// clock: a run stopped early never records the arrivals the dispatcher
// had not taken, so such a count would fall at the end; the dispatcher's
// own lateness shows as schedule_lag_seconds instead. A counter never
// falls: at the end they equal the result's counts, statuses, error kinds,
// wire counts and limit.waited exactly. The time histograms are the
// result's HdrHistograms in classic buckets about 10 % wide
// (LatencyBounds, buckets.go). Native histograms are not emitted:
// Prometheus 2.x reads them only with --enable-feature=native-histograms
// (from 2.40) and a protobuf scrape, and the exact distribution is in the
// result file anyway.
//
// One Exporter serves one process: its labels (run, and shard when
// sharded) are on every series of its runs. The Go runtime's and the
// process's series carry none: they are the process's, which may hold
// several runs, not a run's; process_network_* is left out, being the
// whole network namespace's bytes (a pod's, a host's), not openload's.
// Each run in it (one, a scenario each, a sweep point each) is a
// Source with labels of its own (scenario; point and rate), so the
// sources of one exporter must all have the same label names.
package metrics

import (
	"context"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"

	"github.com/openload/openload/internal/engine"
	"github.com/openload/openload/result"
)

// Exporter holds the sources of one process and the registry they are
// scraped from; it is safe for concurrent use.
type Exporter struct {
	reg    *prometheus.Registry
	labels prometheus.Labels
	mu     sync.Mutex
	srcs   []*Source
	// finals counts the final snapshots published; seen is finals as a
	// served scrape saw it with every run final; waiters are closed when
	// seen catches up with finals (FinalScraped).
	finals, seen int64
	waiters      []chan struct{}
	// nBounds is how many LatencyBounds its sources serve
	// (SetMaxLatency), all when 0.
	nBounds int
}

// New returns an exporter whose series all carry labels (run, shard): a
// private registry with its sources, the Go runtime's collector and the
// process collector (CPU seconds, memory, file descriptors).
func New(labels map[string]string) *Exporter {
	e := &Exporter{reg: prometheus.NewRegistry(), labels: maps.Clone(labels)}
	e.reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	e.reg.MustRegister(collector{e})
	return e
}

// Handler serves the registry in Prometheus's text format (or what the
// scraper negotiates), without process_network_*. A scrape served while
// every run's figures were final counts for FinalScraped.
func (e *Exporter) Handler() http.Handler {
	h := promhttp.HandlerFor(prometheus.GathererFunc(e.gather), promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Read before the gathering: the snapshots it reads are these or
		// newer, so final still.
		finals, all := e.allFinal()
		h.ServeHTTP(w, r)
		if all {
			e.scraped(finals)
		}
	})
}

// gather is what a scrape serves and a push sends: the registry without
// process_network_*.
func (e *Exporter) gather() ([]*dto.MetricFamily, error) {
	fams, err := e.reg.Gather()
	return slices.DeleteFunc(fams, func(f *dto.MetricFamily) bool {
		return strings.HasPrefix(f.GetName(), "process_network_")
	}), err
}

// allFinal is the count of final snapshots, and whether every run that
// observed anything is final (at least one).
func (e *Exporter) allFinal() (int64, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	some := false
	for _, s := range e.srcs {
		if snap := s.snap.Load(); snap != nil {
			if !snap.Final {
				return e.finals, false
			}
			some = true
		}
	}
	return e.finals, some
}

// scraped notes a scrape served with every run final, finals of them.
func (e *Exporter) scraped(finals int64) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.seen = max(e.seen, finals)
	if e.seen == e.finals {
		for _, w := range e.waiters {
			close(w)
		}
		e.waiters = nil
	}
}

// FinalScraped returns when a scrape has been served since the last final
// snapshot, every run then final, or when ctx ends; it reports which.
// Call it once the runs have ended: a run still going has no final
// snapshot, and a scrape during it does not count.
func (e *Exporter) FinalScraped(ctx context.Context) bool {
	e.mu.Lock()
	if e.finals > 0 && e.seen == e.finals {
		e.mu.Unlock()
		return true
	}
	w := make(chan struct{})
	e.waiters = append(e.waiters, w)
	e.mu.Unlock()
	select {
	case <-w:
		return true
	case <-ctx.Done():
		return false
	}
}

// Source adds a run with these labels besides the exporter's; give it to
// the run as its engine.Config.Observe (Source.Observe). Until its first
// snapshot it exports nothing.
func (e *Exporter) Source(labels map[string]string) *Source {
	all := maps.Clone(e.labels)
	maps.Copy(all, labels)
	s := &Source{d: newDescs(all), e: e}
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
	e       *Exporter
	nBounds int // the exporter's, when it was added
}

// Observe takes a snapshot of l and publishes it; it has the signature of
// engine.Config.Observe. Live, sent is held at its last value should it
// fall: a request whose sending began and whose record then says it never
// left is counted out of it, and a snapshot taken in between saw it.
func (s *Source) Observe(l engine.Live) {
	n := Take(l)
	if p := s.snap.Load(); p != nil && !n.Final {
		n.Scheduled, n.Sent = max(n.Scheduled, p.Scheduled), max(n.Sent, p.Sent)
	}
	s.snap.Store(n)
	if n.Final {
		s.e.mu.Lock()
		s.e.finals++
		s.e.mu.Unlock()
	}
}

// Snapshot is the latest snapshot, nil before the first.
func (s *Source) Snapshot() *Snapshot { return s.snap.Load() }

// descs are one source's metric descriptions, its labels constant.
type descs struct {
	scheduled, sent, completed, failed, timedOut, unfinished *prometheus.Desc
	errors, responses, attempts, resends                     *prometheus.Desc
	grpc                                                     *prometheus.Desc
	inFlight, waiting, limitWaited, finished                 *prometheus.Desc
	bytesWritten, bytesRead                                  *prometheus.Desc
	startTime, lag, offered                                  *prometheus.Desc
	response, service, sendDelay                             *prometheus.Desc
	ttft, itl, tpot, outputTokens, streams, classes          *prometheus.Desc
}

func newDescs(l prometheus.Labels) descs {
	d := func(name, help string, vars ...string) *prometheus.Desc {
		return prometheus.NewDesc("openload_"+name, help, vars, l)
	}
	return descs{
		scheduled:    d("requests_scheduled_total", "Requests that came due, counted when taken from the schedule at their scheduled instant (a session's step when a worker takes it up); at the end the result's counts.scheduled."),
		sent:         d("requests_sent_total", "Requests whose sending began, counted then; at the end the result's counts.sent."),
		completed:    d("requests_completed_total", "Requests answered in full, any status; at the end the result's counts.completed."),
		failed:       d("requests_failed_total", "Requests that ended in an error other than a timeout (counts.errors)."),
		timedOut:     d("requests_timed_out_total", "Requests that timed out (counts.timeouts)."),
		unfinished:   d("requests_unfinished_total", "Requests abandoned at the drain's end or an interruption (counts.unfinished)."),
		errors:       d("request_errors_total", "Requests that did not complete, by error kind (the result's error_kinds).", "kind"),
		responses:    d("responses_total", "Completed responses by status code (the result's status; other: outside 100-599).", "code"),
		grpc:         d("grpc_responses_total", "Completed gRPC calls by grpc-status, its name in lower case (the result's grpc; other: outside the spec's codes).", "code"),
		attempts:     d("attempts_total", "Attempts written to a connection, re-sends and retries included (wire.attempts)."),
		resends:      d("resends_total", "Re-sends on a new connection after a kept-alive one failed (wire.resends)."),
		bytesWritten: d("bytes_written_total", "Bytes openload wrote to its connections (over TLS the TCP connection's), re-sends and connection setup included (wire.bytes.written)."),
		bytesRead:    d("bytes_read_total", "Bytes openload read from its connections (over TLS the TCP connection's), connection setup included (wire.bytes.read)."),
		inFlight:     d("requests_in_flight", "Requests being sent or waited on now."),
		waiting:      d("requests_waiting", "Requests due whose sending has not begun (scheduled - sent, live): waiting for a connection or a worker, which is send delay."),
		limitWaited:  d("requests_limit_waited_total", "Requests that found every connection busy when due (limit.waited)."),
		finished:     d("run_finished", "1 once the run's last request has its outcome and these figures are final, else 0."),
		startTime:    d("run_start_time_seconds", "The run's offset 0 in Unix seconds: the start instant it waits for, while it waits."),
		lag:          d("schedule_lag_seconds", "How late the generator takes arrivals from the schedule: the time since the oldest arrival not yet taken was due, 0 when none is overdue."),
		offered:      d("offered_rate", "The schedule's arrival rate now, requests a second (a session run's: sessions a second); 0 once the run has ended; absent for a schedule without one (a replay)."),
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
	for _, st := range s.GRPC {
		counter(d.grpc, st.N, result.GRPCKey(st.Code))
	}
	counter(d.attempts, s.Attempts)
	counter(d.resends, s.Resends)
	counter(d.bytesWritten, s.BytesWritten)
	counter(d.bytesRead, s.BytesRead)
	counter(d.limitWaited, s.LimitWaited)
	gauge(d.inFlight, s.InFlight)
	gauge(d.waiting, s.Waiting)
	finished := int64(0)
	if s.Final {
		finished = 1
	}
	gauge(d.finished, finished)
	if !s.Start.IsZero() {
		ch <- prometheus.MustNewConstMetric(d.startTime, prometheus.GaugeValue, float64(s.Start.UnixNano())/1e9)
	}
	ch <- prometheus.MustNewConstMetric(d.lag, prometheus.GaugeValue, s.Lag.Seconds())
	if s.Rated {
		ch <- prometheus.MustNewConstMetric(d.offered, prometheus.GaugeValue, s.Offered)
	}
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
