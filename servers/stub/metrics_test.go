package stub

import (
	"context"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// scrape reads url (a /metrics) with Prometheus' own text parser.
func scrape(t *testing.T, c *http.Client, url string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := c.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s", url, resp.Status)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		t.Errorf("Content-Type %q, want the text exposition format", ct)
	}
	p := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("parsing %s: %v", url, err)
	}
	return fams
}

// value is the value of the sample of family name whose labels are
// exactly labels (name=value pairs); ok is false when there is none.
func value(fams map[string]*dto.MetricFamily, name string, labels ...string) (v float64, ok bool) {
	f := fams[name]
	if f == nil {
		return 0, false
	}
	for _, m := range f.Metric {
		if len(m.Label) != len(labels)/2 {
			continue
		}
		match := true // in any order: the exposition sorts labels by name
		for _, l := range m.Label {
			match = match && slices.ContainsFunc(pairs(labels), func(p [2]string) bool {
				return p == [2]string{l.GetName(), l.GetValue()}
			})
		}
		if !match {
			continue
		}
		switch f.GetType() {
		case dto.MetricType_COUNTER:
			return m.Counter.GetValue(), true
		case dto.MetricType_GAUGE:
			return m.Gauge.GetValue(), true
		}
	}
	return 0, false
}

func pairs(kv []string) [][2]string {
	var out [][2]string
	for i := 0; i+1 < len(kv); i += 2 {
		out = append(out, [2]string{kv[i], kv[i+1]})
	}
	return out
}

// TestMetricsAfterLoad sends a known mix of requests (model answers,
// token answers streamed and not, 429s from a two-shard limiter, deadline
// drops) and checks that /metrics, parsed by Prometheus' own parser,
// counts what the client received and what /stats says.
func TestMetricsAfterLoad(t *testing.T) {
	cfg := testConfig(func(c *Config) {
		c.Workers, c.Latency, c.Policy = 2, time.Millisecond, PolicyNone
		c.Prefill, c.ITL = time.Millisecond, time.Millisecond
		// 10 requests per shard per window; the limiter's clock is frozen
		// below, so the window never turns over however slow the machine.
		c.LimitRPS, c.LimitShards, c.LimitWindow = 20, 2, time.Second
		c.LimitRouting = RoutingRoundRobin
		c.Deadline, c.ArrivalStamp = time.Hour, "header:X-Arrival"
	})
	s := startServer(t, cfg, func(s *Server) {
		now := time.Now()
		s.limitClock = func() time.Time { return now }
	})
	c := newClient(t)

	// seen counts the answers by X-Stub-Source and X-Stub-Reason.
	seen := map[[2]string]int{}
	send := func(path, body string, stamp bool) {
		t.Helper()
		req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, s.URL+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		if stamp {
			req.Header.Set("X-Arrival", strconv.FormatInt(time.Now().UnixNano(), 10))
		}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		seen[[2]string{resp.Header.Get("X-Stub-Source"), resp.Header.Get("X-Stub-Reason")}]++
	}
	// Limiter shards, round-robin: requests 0..19 take the 20 places, the
	// rest are rejected; the last 3 carry no stamp, so the deadline gate
	// drops their 429s (no-stamp).
	send("/v1/completions", `{"model":"m","prompt":"hi","max_tokens":3}`, true)
	send("/v1/completions", `{"model":"m","prompt":"hi","max_tokens":4,"stream":true}`, true)
	for range 22 {
		send("/predict", "", true)
	}
	for range 3 {
		send("/predict", "", false)
	}
	const sent = 27
	want := map[[2]string]int{
		{"model", "served"}:         20,
		{"limiter", "rate-limited"}: 4,
		{"deadline", "deadline"}:    3,
	}
	for k, n := range want {
		if seen[k] != n {
			t.Fatalf("client saw %d answers %v, want %d (all: %v)", seen[k], k, n, seen)
		}
	}
	st := waitFor(t, s, "no request in flight", func(st Stats) bool { return st.InFlight == 0 })
	checkAccounting(t, st)

	fams := scrape(t, c, s.URL+"/metrics")
	after := s.Stats()
	if after.Total != sent {
		t.Fatalf("scraping counted as a model request: total %d, sent %d", after.Total, sent)
	}

	check := func(name string, want float64, labels ...string) {
		t.Helper()
		got, ok := value(fams, name, labels...)
		if !ok || got != want {
			t.Errorf("%s%v = %v (present %v), want %v", name, labels, got, ok, want)
		}
	}
	check("stub_requests_received_total", sent)
	check("stub_requests_received_total", float64(st.Total))
	var answered float64
	for _, m := range fams["stub_requests_total"].Metric {
		answered += m.Counter.GetValue()
		var src, reason string
		for _, l := range m.Label {
			switch l.GetName() {
			case "source":
				src = l.GetValue()
			case "reason":
				reason = l.GetValue()
			}
		}
		if got, want := m.Counter.GetValue(), float64(seen[[2]string{src, reason}]); got != want {
			t.Errorf("stub_requests_total{source=%q,reason=%q} = %v, the client saw %v", src, reason, got, want)
		}
	}
	if answered != sent {
		t.Errorf("sum of stub_requests_total = %v, sent %d", answered, sent)
	}
	check("stub_requests_total", float64(st.Sources.Model), "source", "model", "reason", "served")
	check("stub_requests_total", float64(st.Sources.Limiter), "source", "limiter", "reason", "rate-limited")
	check("stub_requests_total", float64(st.Deadline.Dropped.Total), "source", "deadline", "reason", "deadline")
	check("stub_requests_in_flight", 0)
	check("stub_queue_length", 0)
	check("stub_in_model", 0)
	check("stub_model_slots", 2)
	check("stub_deadline_sent_total", 24)
	check("stub_deadline_dropped_total", 3, "reason", "no-stamp")
	check("stub_deadline_dropped_total", 0, "reason", "late")
	check("stub_deadline_seconds", 3600)
	check("stub_limiter_allowance_requests", 10)
	check("stub_limiter_shards", 2)
	// Requests 20..26 are rejected: shards 0,1,0,1,0,1,0.
	check("stub_limiter_requests_total", 10, "limiter_shard", "0", "decision", "accepted")
	check("stub_limiter_requests_total", 10, "limiter_shard", "1", "decision", "accepted")
	check("stub_limiter_requests_total", 4, "limiter_shard", "0", "decision", "rejected")
	check("stub_limiter_requests_total", 3, "limiter_shard", "1", "decision", "rejected")
	check("stub_tokens_total", 7)
	check("stub_streams_total", 1)
	check("stub_streams_completed_total", 1)
	check("stub_sequences_active", 0)
	check("stub_total_time_seconds", st.TotalTime.Max/1000, "stat", "max")

	// Every counter, whatever it is, is /stats' figure: at rest nothing
	// moves between the scrape and the snapshot after it.
	for _, m := range stubMetrics {
		if m.kind != counter {
			continue
		}
		for _, smp := range m.read(&after, &s.Config) {
			var labels []string
			for i, l := range m.labels {
				labels = append(labels, l, smp.labels[i])
			}
			check(m.name, smp.v, labels...)
		}
	}
}

// TestMetricsLint: the names, types and help pass client_golang's
// promlint (units, _total on counters, no reserved suffixes), and every
// family is exposed, each with the type it declares.
func TestMetricsLint(t *testing.T) {
	s := startServer(t, testConfig(func(c *Config) {
		c.LimitRPS = 10
		c.ShadowShare, c.HealthEvery = 0.5, time.Millisecond
		c.PrefixCacheTokens = 1024 // its families are absent when it is off
	}), nil)
	problems, err := testutil.CollectAndLint(s.Collector())
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("%s: %s", p.Metric, p.Text)
	}
	fams := scrape(t, newClient(t), s.URL+"/metrics")
	for _, m := range stubMetrics {
		f := fams[m.name]
		switch {
		case f == nil && m.name == "stub_fence_health_age_seconds":
			// absent until the plane's first health sample: allowed
		case f == nil:
			t.Errorf("%s missing from /metrics", m.name)
		case (m.kind == counter) != (f.GetType() == dto.MetricType_COUNTER):
			t.Errorf("%s is exposed as %v", m.name, f.GetType())
		}
	}
	if len(fams) > len(stubMetrics) {
		t.Errorf("%d families exposed, %d declared", len(fams), len(stubMetrics))
	}
}

// TestMetricsNotModelRequests: scraping neither counts as a model request
// nor starts the stall clock.
func TestMetricsNotModelRequests(t *testing.T) {
	s := startServer(t, testConfig(func(c *Config) { c.StallFor = time.Second }), nil)
	c := newClient(t)
	for range 3 {
		scrape(t, c, s.URL+"/metrics")
	}
	st := s.Stats()
	if st.Total != 0 {
		t.Errorf("3 scrapes counted %d model requests", st.Total)
	}
	s.mu.Lock()
	first := s.first
	s.mu.Unlock()
	if !first.IsZero() {
		t.Error("a scrape started the stall clock")
	}
	fams := scrape(t, c, s.URL+"/metrics")
	if v, ok := value(fams, "stub_requests_received_total"); !ok || v != 0 {
		t.Errorf("stub_requests_received_total = %v (present %v) after scrapes only", v, ok)
	}
}
