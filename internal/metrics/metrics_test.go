package metrics_test

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"regexp"
	"strings"

	"sync/atomic"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"go.uber.org/goleak"

	"github.com/openload/openload/internal/engine"
	"github.com/openload/openload/internal/loadtest"
	"github.com/openload/openload/internal/metrics"
	"github.com/openload/openload/internal/metrics/metricstest"
	"github.com/openload/openload/internal/recorder"
	"github.com/openload/openload/result"
	"github.com/openload/openload/schedule"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// scrape gathers e as Prometheus would, parsed from the text format.
func scrape(t *testing.T, e *metrics.Exporter) map[string]*dto.MetricFamily {
	t.Helper()
	w := httptest.NewRecorder()
	e.Handler().ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(w.Body)
	if err != nil {
		t.Fatalf("parsing the exposition: %v\n%s", err, w.Body)
	}
	return fams
}

// value is the sample of family name whose labels include want, and
// whether there is one.
func value(fams map[string]*dto.MetricFamily, name string, want map[string]string) (float64, bool) {
	f := fams[name]
	if f == nil {
		return 0, false
	}
next:
	for _, m := range f.Metric {
		got := map[string]string{}
		for _, l := range m.Label {
			got[l.GetName()] = l.GetValue()
		}
		for k, v := range want {
			if got[k] != v {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue(), true
		case m.Gauge != nil:
			return m.Gauge.GetValue(), true
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount()), true
		}
	}
	return 0, false
}

// mixedServer answers 200, every tenth request 503 and closes every
// tenth other under its request, so that a run has statuses and an error
// kind; each answer carries a class header.
func mixedServer(t *testing.T) *httptest.Server {
	var n atomic.Int64
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		i := n.Add(1)
		switch i % 10 {
		case 3:
			w.Header().Set("X-Class", "b")
			w.WriteHeader(http.StatusServiceUnavailable)
		case 7:
			c, _, err := http.NewResponseController(w).Hijack()
			if err == nil {
				c.Close()
			}
		default:
			w.Header().Set("X-Class", "a")
			fmt.Fprint(w, "ok")
		}
	}))
	t.Cleanup(s.Close)
	return s
}

// TestFinalEqualsResult: after a run, what a scrape reports equals the
// result's counts, statuses, error kinds, wire counts, class counts and
// histogram counts exactly, and the run is marked finished; the hook's
// final call came once, last.
func TestFinalEqualsResult(t *testing.T) {
	s := mixedServer(t)
	u, _ := url.Parse(s.URL)
	e := metrics.New(map[string]string{"run": "test"})
	src := e.Source(map[string]string{"scenario": "one"})
	var calls, finals, afterFinal int
	res, _, err := loadtest.Run(context.Background(), loadtest.Options{
		Config: engine.Config{URL: u, Connections: 4, Timeout: 5 * time.Second, Drain: 5 * time.Second,
			ClassHeaders: []string{"X-Class"}, Lean: true, Resend: engine.ResendNever,
			Observe: func(l engine.Live) {
				calls++
				if finals > 0 {
					afterFinal++
				}
				if l.Final {
					finals++
				}
				src.Observe(l)
			}},
		Schedule: schedule.Spec{Kind: schedule.Constant, Rate: 200, Duration: 1500 * time.Millisecond},
	})
	if err != nil {
		t.Fatal(err)
	}
	if finals != 1 || afterFinal != 0 {
		t.Fatalf("Observe: %d calls, %d final, %d after the final one; want one final call, the last", calls, finals, afterFinal)
	}
	fams := scrape(t, e)
	lab := map[string]string{"run": "test", "scenario": "one"}
	c := res.Counts
	want := metricstest.Finals(res)
	for name, n := range want {
		if got, ok := value(fams, name, lab); !ok || got != float64(n) {
			t.Errorf("%s = %v (present %v), the result has %d", name, got, ok, n)
		}
	}
	if b := res.Wire.Bytes; b.Written == 0 || b.Read == 0 {
		t.Errorf("wire.bytes %+v: the run's bytes not counted", *b)
	}
	if c.Scheduled != 300 || res.Status["503"] == 0 || res.ErrorKinds["reset"] == 0 {
		t.Fatalf("the run lacks what it was to have: counts %+v, status %v, errors %v", c, res.Status, res.ErrorKinds)
	}
	sum := int64(0)
	for code, n := range res.Status {
		sum += n
		if got, _ := value(fams, "openload_responses_total", map[string]string{"code": code}); got != float64(n) {
			t.Errorf("responses_total{code=%q} = %v, the result has %d", code, got, n)
		}
	}
	if got := len(fams["openload_responses_total"].GetMetric()); got != len(res.Status) || sum != c.Completed {
		t.Errorf("%d status series for the result's %d codes (summing to %d of %d completed)", got, len(res.Status), sum, c.Completed)
	}
	for kind, n := range res.ErrorKinds {
		if got, _ := value(fams, "openload_request_errors_total", map[string]string{"kind": kind}); got != float64(n) {
			t.Errorf("request_errors_total{kind=%q} = %v, the result has %d", kind, got, n)
		}
	}
	if got := len(fams["openload_request_errors_total"].GetMetric()); got != len(res.ErrorKinds) {
		t.Errorf("%d error kind series for the result's %d", got, len(res.ErrorKinds))
	}
	for _, ct := range res.Classes {
		for _, v := range ct.Values {
			if got, _ := value(fams, "openload_class_responses_total", map[string]string{"header": ct.Header, "value": v.Value}); got != float64(v.Count) {
				t.Errorf("class_responses_total{%s=%s} = %v, the result has %d", ct.Header, v.Value, got, v.Count)
			}
		}
	}
	hcounts, err := metricstest.HistogramCounts(res)
	if err != nil {
		t.Fatal(err)
	}
	for name, n := range hcounts {
		fam := strings.TrimSuffix(name, "_count")
		if got, _ := value(fams, fam, lab); got != float64(n) {
			t.Errorf("%s = %v, the result's histogram holds %d", name, got, n)
		}
	}
	if _, ok := fams["openload_ttft_seconds"]; ok {
		t.Error("a run that did not stream exports TTFT")
	}
	// The process's figures are not the run's: no run label; and the
	// network namespace's bytes are not openload's: not served.
	for _, name := range []string{"go_goroutines", "process_cpu_seconds_total"} {
		if _, ok := value(fams, name, nil); !ok {
			t.Errorf("%s is missing", name)
		}
		if _, ok := value(fams, name, map[string]string{"run": "test"}); ok {
			t.Errorf("%s carries the run label", name)
		}
	}
	for name := range fams {
		if strings.HasPrefix(name, "process_network_") {
			t.Errorf("%s is served: the namespace's bytes, not openload's", name)
		}
	}
	if got, ok := value(fams, "openload_run_start_time_seconds", lab); !ok || math.Abs(got-float64(res.Started.UnixNano())/1e9) > 1e-3 {
		t.Errorf("run_start_time_seconds = %v (present %v), the run started at %v", got, ok, res.Started)
	}
}

// TestCountsAtTheirMoments: against a server that holds its answers,
// scrapes taken while none has come back already count every request
// due as scheduled and sent, with the offered rate; at the end the
// counts are the result's and were never seen to fall. Before the start
// the series exist at 0 with the start instant.
func TestCountsAtTheirMoments(t *testing.T) {
	release := make(chan struct{})
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-time.After(5 * time.Second):
		}
	}))
	defer s.Close()
	u, _ := url.Parse(s.URL)
	e := metrics.New(map[string]string{"run": "held"})
	src := e.Source(nil)
	const n = 20
	startAt := time.Now().Add(300 * time.Millisecond)
	var before, held map[string]*dto.MetricFamily
	var prev [2]float64
	var fell bool
	res, _, err := loadtest.Run(context.Background(), loadtest.Options{
		Config: engine.Config{URL: u, Method: http.MethodGet, Connections: n, Timeout: 5 * time.Second, Drain: 5 * time.Second, Lean: true,
			StartAt: startAt,
			Observe: func(l engine.Live) {
				src.Observe(l)
				fams := scrape(t, e)
				sched, _ := value(fams, "openload_requests_scheduled_total", nil)
				sent, _ := value(fams, "openload_requests_sent_total", nil)
				fell = fell || sched < prev[0] || sent < prev[1]
				prev = [2]float64{sched, sent}
				switch {
				case before == nil:
					before = fams
				case held == nil && sent == n && !l.Final:
					held = fams
					close(release)
				}
			}},
		Schedule: schedule.Spec{Kind: schedule.Constant, Rate: 100, Duration: n * 10 * time.Millisecond},
	})
	if err != nil {
		t.Fatal(err)
	}
	if before == nil || held == nil {
		t.Fatalf("no scrape before the start (%v) or while the answers were held (%v)", before != nil, held != nil)
	}
	for _, name := range []string{"openload_requests_scheduled_total", "openload_requests_sent_total", "openload_requests_completed_total", "openload_run_finished"} {
		if got, ok := value(before, name, map[string]string{"run": "held"}); !ok || got != 0 {
			t.Errorf("before the start: %s = %v (present %v), want 0", name, got, ok)
		}
	}
	if got, _ := value(before, "openload_run_start_time_seconds", nil); math.Abs(got-float64(startAt.UnixNano())/1e9) > 1e-3 {
		t.Errorf("before the start: run_start_time_seconds = %v, --start-at is %v", got, startAt)
	}
	for name, want := range map[string]float64{
		"openload_requests_scheduled_total": n, "openload_requests_sent_total": n, "openload_requests_in_flight": n,
		"openload_requests_waiting": 0, "openload_requests_completed_total": 0, "openload_schedule_lag_seconds": 0,
	} {
		if got, ok := value(held, name, nil); !ok || got != want {
			t.Errorf("answers held: %s = %v (present %v), want %v", name, got, ok, want)
		}
	}
	if _, ok := value(held, "openload_offered_rate", nil); !ok {
		t.Error("answers held: no offered_rate")
	}
	fams := scrape(t, e)
	for name, want := range map[string]int64{"openload_requests_scheduled_total": res.Counts.Scheduled, "openload_requests_sent_total": res.Counts.Sent, "openload_requests_completed_total": res.Counts.Completed} {
		if got, _ := value(fams, name, nil); got != float64(want) || want != n {
			t.Errorf("final: %s = %v, the result has %d (want %d)", name, got, want, n)
		}
	}
	if fell {
		t.Error("a counter fell between two scrapes")
	}
}

// TestStreamFigures: a run of streamed answers exports TTFT from the
// schedule and from the send, ITL and output tokens, equal to the
// result's.
func TestStreamFigures(t *testing.T) {
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for i := range 3 {
			fmt.Fprintf(w, "data: {\"choices\":[{\"delta\":{\"content\":\"t%d\"}}]}\n\n", i)
			w.(http.Flusher).Flush()
		}
		fmt.Fprint(w, "data: [DONE]\n\n")
	}))
	defer s.Close()
	u, _ := url.Parse(s.URL)
	e := metrics.New(map[string]string{"run": "s"})
	src := e.Source(nil)
	res, _, err := loadtest.Run(context.Background(), loadtest.Options{
		Config:   engine.Config{URL: u, Connections: 2, Timeout: 5 * time.Second, Drain: 5 * time.Second, Stream: true, Observe: src.Observe},
		Schedule: schedule.Spec{Kind: schedule.Constant, Rate: 50, Duration: time.Second},
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Stream == nil || res.Stream.OutputTokens == 0 {
		t.Fatalf("no stream figures in the result: %+v", res.Stream)
	}
	fams := scrape(t, e)
	if got, _ := value(fams, "openload_output_tokens_total", nil); got != float64(res.Stream.OutputTokens) {
		t.Errorf("output_tokens_total = %v, the result has %d", got, res.Stream.OutputTokens)
	}
	for from, enc := range map[string]string{"schedule": res.Histograms.TTFTResponse, "send": res.Histograms.TTFTService} {
		h, err := result.DecodeHistogram(enc)
		if err != nil {
			t.Fatal(err)
		}
		if got, ok := value(fams, "openload_ttft_seconds", map[string]string{"from": from}); !ok || got != float64(h.TotalCount()) || got == 0 {
			t.Errorf("ttft_seconds{from=%q}_count = %v, the result's histogram holds %d", from, got, h.TotalCount())
		}
	}
	// Three content events a stream: two gaps each.
	if got, _ := value(fams, "openload_itl_seconds", nil); got != float64(2*res.Counts.Completed) {
		t.Errorf("itl_seconds_count = %v, want 2 gaps × %d streams", got, res.Counts.Completed)
	}
	// One TPOT a stream of two or more tokens: the result's TPOT histogram.
	if h, err := result.DecodeHistogram(res.Histograms.TPOT); err != nil {
		t.Fatal(err)
	} else if got, ok := value(fams, "openload_tpot_seconds", nil); !ok || got != float64(h.TotalCount()) || got == 0 {
		t.Errorf("tpot_seconds_count = %v, the result's histogram holds %d", got, h.TotalCount())
	}
}

// TestNothingBeforeFirstSnapshot: a source exports nothing until its run
// observed, and a second source's series sit beside the first's.
func TestNothingBeforeFirstSnapshot(t *testing.T) {
	e := metrics.New(map[string]string{"run": "r"})
	e.Source(map[string]string{"point": "1"})
	if _, ok := scrape(t, e)["openload_requests_completed_total"]; ok {
		t.Fatal("a source with no snapshot exported counts")
	}
}

// TestCheckAddr: what --metrics-addr takes and refuses.
func TestCheckAddr(t *testing.T) {
	for addr, ok := range map[string]bool{
		"127.0.0.1:9464": true, ":9464": true, "localhost:0": true, "[::1]:9464": true,
		"9464": false, "127.0.0.1:": false, "127.0.0.1:99999": false, "127.0.0.1:http": false, "a b:1": false,
	} {
		if err := metrics.CheckAddr(addr); (err == nil) != ok {
			t.Errorf("CheckAddr(%q) = %v, want ok %v", addr, err, ok)
		}
	}
}

// TestServe: the server answers on /metrics, refuses a port in use, and
// is gone after Close.
func TestServe(t *testing.T) {
	e := metrics.New(map[string]string{"run": "r"})
	srv, err := metrics.Serve("127.0.0.1:0", e)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := metrics.Serve(srv.Addr(), e); err == nil {
		t.Error("a second server bound the same port")
	}
	resp, err := http.Get("http://" + srv.Addr() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("/metrics: %s", resp.Status)
	}
	if err := srv.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := http.Get("http://" + srv.Addr() + "/metrics"); err == nil {
		t.Error("still serving after Close")
	}
	http.DefaultClient.CloseIdleConnections()
}

// TestDashboardNames: every openload_ series deploy/grafana's dashboard
// queries is one this exporter writes (a histogram's _bucket, _sum and
// _count included), after a streamed run and one with errors, which
// between them have every series.
func TestDashboardNames(t *testing.T) {
	dash, err := os.ReadFile("../../deploy/grafana/openload.json")
	if err != nil {
		t.Fatal(err)
	}
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "data: {\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\n\ndata: {\"choices\":[{\"delta\":{\"content\":\"b\"}}]}\n\ndata: [DONE]\n\n")
	}))
	defer s.Close()
	u, _ := url.Parse(s.URL)
	e := metrics.New(map[string]string{"run": "d"})
	src := e.Source(nil)
	if _, _, err := loadtest.Run(context.Background(), loadtest.Options{
		Config:   engine.Config{URL: u, Connections: 2, Timeout: 5 * time.Second, Drain: 5 * time.Second, Stream: true, Observe: src.Observe},
		Schedule: schedule.Spec{Kind: schedule.Constant, Rate: 20, Duration: 500 * time.Millisecond},
	}); err != nil {
		t.Fatal(err)
	}
	// And a run of refused connections (a port nothing listens on), for
	// the series of error kinds.
	m, _ := url.Parse("http://127.0.0.1:1/")
	mixed := e.Source(map[string]string{"scenario": "mixed"})
	if _, _, err := loadtest.Run(context.Background(), loadtest.Options{
		Config:   engine.Config{URL: m, Connections: 2, Timeout: 5 * time.Second, Drain: 5 * time.Second, Observe: mixed.Observe},
		Schedule: schedule.Spec{Kind: schedule.Constant, Rate: 40, Duration: 500 * time.Millisecond},
	}); err != nil {
		t.Fatal(err)
	}
	fams := scrape(t, e)
	names := map[string]bool{}
	for name, f := range fams {
		names[name] = true
		if f.GetType() == dto.MetricType_HISTOGRAM {
			names[name+"_bucket"], names[name+"_sum"], names[name+"_count"] = true, true, true
		}
	}
	used := regexp.MustCompile(`\bopenload_[a-z_]+\b`).FindAllString(string(dash), -1)
	if len(used) == 0 {
		t.Fatal("the dashboard queries no openload_ series")
	}
	for _, n := range used {
		if !names[n] {
			t.Errorf("the dashboard queries %s, which the exporter does not write", n)
		}
	}
}

// TestFinalScraped: the wait for the last scrape ends with a scrape
// served after every run's final snapshot, and not before: not with
// none, not with one that saw a run still going, and not with one that
// came before a later run's final snapshot.
func TestFinalScraped(t *testing.T) {
	e := metrics.New(map[string]string{"run": "r"})
	done, cancel := context.WithCancel(context.Background())
	cancel() // FinalScraped(done) reports what holds now
	a := e.Source(map[string]string{"point": "1"})
	a.Observe(engine.Live{Rec: recorder.New(nil)})
	scrape(t, e)
	if e.FinalScraped(done) {
		t.Fatal("a scrape of a run still going counted as the last")
	}
	a.Observe(engine.Live{Rec: recorder.New(nil), Final: true})
	if e.FinalScraped(done) {
		t.Fatal("no scrape since the final snapshot, and the wait ended")
	}
	scrape(t, e)
	if !e.FinalScraped(context.Background()) {
		t.Fatal("a scrape after the final snapshot did not end the wait")
	}
	b := e.Source(map[string]string{"point": "2"})
	b.Observe(engine.Live{Rec: recorder.New(nil)})
	b.Observe(engine.Live{Rec: recorder.New(nil), Final: true})
	if e.FinalScraped(done) {
		t.Fatal("a later run's final snapshot was not scraped, and the wait ended")
	}
	waited := make(chan bool)
	go func() { waited <- e.FinalScraped(context.Background()) }()
	scrape(t, e)
	if !<-waited {
		t.Fatal("the waiting FinalScraped did not see the scrape")
	}
}
