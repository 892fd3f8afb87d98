package main

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/openload/openload/internal/metrics"
	"github.com/openload/openload/internal/metrics/metricstest"
	"github.com/openload/openload/result"
	"github.com/openload/openload/servers/stub"
)

// The dashboard judged by a real Prometheus: every query of every panel
// of deploy/grafana/openload.json is evaluated through Prometheus's HTTP
// API after a real run it scraped, and each figure is compared with the
// run's result file. A query that answers nothing fails.
//
// Grafana's substitutions, done here as Grafana does them for a
// dashboard opened on the last 15 minutes with a data source whose
// scrape interval is set to the real one (1 s):
//
//	$run                   the run's id (one value; it has no regex characters)
//	$shard $point $scenario All: their allValue, .*
//	$__rate_interval       max($__interval + scrape interval, 4 × scrape interval) = 4s
//	                       ($__interval is at most 1 s for 15 minutes on a panel's width,
//	                       and never below the data source's scrape interval)
//	$__range               the dashboard's range, 15 minutes: 900s
//
// A target with "instant": true is an instant query at the time the test
// asks, just after the run's last scrape (what a stat panel shows then);
// any other is a range query from the run's start to then, at a 1 s step.

const (
	dashRateInterval = 4 * time.Second
	dashRange        = "900s"
)

// substitute replaces the dashboard's variables as Grafana would (above).
func substitute(expr, run string) string {
	return strings.NewReplacer(
		"$__rate_interval", fmt.Sprintf("%ds", int(dashRateInterval.Seconds())),
		"$__range", dashRange,
		"$run", regexp.QuoteMeta(run),
		"$shard", ".*", "$point", ".*", "$scenario", ".*",
	).Replace(expr)
}

// dashTarget is one query of one panel of the dashboard.
type dashTarget struct {
	Panel   string
	RefID   string `json:"refId"`
	Expr    string `json:"expr"`
	Legend  string `json:"legendFormat"`
	Instant bool   `json:"instant"`
}

func dashboardTargets(t *testing.T) []dashTarget {
	t.Helper()
	b, err := os.ReadFile("../../deploy/grafana/openload.json")
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Panels []struct {
			Title   string       `json:"title"`
			Type    string       `json:"type"`
			Targets []dashTarget `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	var out []dashTarget
	for _, p := range d.Panels {
		if p.Type == "row" {
			continue
		}
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, tg := range p.Targets {
			tg.Panel = p.Title
			out = append(out, tg)
		}
	}
	return out
}

// legend renders a legendFormat with a series' labels.
func legend(format string, labels map[string]string) string {
	return regexp.MustCompile(`\{\{\s*(\w+)\s*\}\}`).ReplaceAllStringFunc(format, func(m string) string {
		return labels[strings.Trim(m, "{} ")]
	})
}

// bucketOf is the classic bucket (lo, hi] of bounds holding v seconds;
// above the last bound, histogram_quantile answers the last bound.
func bucketOf(bounds []float64, v float64) (lo, hi float64) {
	for _, b := range bounds {
		if v <= b {
			return lo, b
		}
		lo = b
	}
	return lo, lo
}

// valueAtRank is the k-th smallest value of h in seconds (the highest
// value of its bin, as HdrHistogram's percentiles).
func valueAtRank(h *hdrhistogram.Histogram, k int64) float64 {
	var n int64
	for _, bar := range h.Distribution() {
		if n += bar.Count; n >= k && bar.Count > 0 {
			return float64(bar.To) / 1e6
		}
	}
	return float64(h.Max()) / 1e6
}

// median of the values, NaN for none.
func median(v []float64) float64 {
	v = slices.DeleteFunc(slices.Clone(v), math.IsNaN)
	if len(v) == 0 {
		return math.NaN()
	}
	slices.Sort(v)
	return v[len(v)/2]
}

// faultyProxy passes requests to the stub but fails some of its own, so
// that every panel has something to show: attempt n%10 == 3 gets the
// head and one event of a stream and then a closed connection (an error
// after the answer began, which no client re-sends), n%10 == 7 no answer
// until the client gives up (a timeout). The pattern repeats every ten
// requests, so any window of the run holds the same mix.
func faultyProxy(t *testing.T, target string) *httptest.Server {
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(u)
	rp.FlushInterval = -1
	var n atomic.Int64
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch n.Add(1) % 10 {
		case 3:
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprint(w, "data: {\"choices\":[{\"delta\":{\"content\":\"t\"}}]}\n\n")
			w.(http.Flusher).Flush()
			panic(http.ErrAbortHandler) // the connection closes mid-stream
		case 7:
			select {
			case <-r.Context().Done():
			case <-time.After(5 * time.Second):
			}
			return
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

// TestDashboardQueries: a real Prometheus scrapes a streamed run (and the
// stub it runs against) every second; then every query of the dashboard
// is evaluated and compared with the result file:
//
//   - final figures (last_over_time, instant): counts equal the result's
//     exactly; quantiles lie in the classic bucket that holds the result's
//     own percentile (histogram_quantile interpolates inside it);
//   - rates (range): the median over the seconds whose whole window lies
//     in the run is within tolRate of the result's count ÷ duration. The
//     counters move once a second (the snapshot) and are scraped once a
//     second, unsynchronised: a 4 s window holds 4 samples 3 s apart,
//     whose difference counts 3 ± 1 snapshot seconds, so the rate is off
//     by up to a third of one second's count (plus 2 for the arrivals'
//     phase against the snapshot);
//   - windowed quantiles (range): every window holds the same mix of
//     requests (faultyProxy, the limiter's per-second window), so the
//     median over the run of a window's p50 lies in the buckets of the
//     result's p25 to p75, and of a window's p99 in those of its p90 to
//     its max;
//   - gauges: in flight ends at 0 (every request has its outcome) and is
//     never above the requests scheduled; the stub's slots are its
//     configuration, its queue and sequences within them.
func TestDashboardQueries(t *testing.T) {
	bin := prometheusBinary(t)
	cfg := stub.DefaultConfig()
	cfg.Policy, cfg.BatchSlots = stub.PolicyNone, 64
	cfg.Prefill, cfg.ITL = 5*time.Millisecond, 2*time.Millisecond
	cfg.LimitRPS = 30 // of the 40/s the proxy passes on: about 10/s answered 429
	st, err := stub.NewServer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	proxy := faultyProxy(t, st.URL)
	target := freePort(t)
	prom := startPrometheus(t, bin, target+","+strings.TrimPrefix(st.URL, "http://"))

	const rate, dur, timeout = 50, 10 * time.Second, 300 * time.Millisecond
	bounds := metrics.Bounds(2 * timeout) // what openload serves (metricsflags.go)
	out := filepath.Join(t.TempDir(), "run.json")
	body := `{"model":"stub","messages":[{"role":"user","content":"hi"}],"max_tokens":8,"stream":true,"stream_options":{"include_usage":true}}`
	code, stdout, stderr := runCLI("-r", strconv.Itoa(rate), "-d", dur.String(), "--timeout", timeout.String(), "--stream", "--body", body, "-q",
		"--metrics-addr", target, "--metrics-run", "dash", "--metrics-grace", "3s", "-o", out, proxy.URL+"/v1/chat/completions")
	if _, err := os.Stat(out); err != nil {
		t.Fatalf("no result: exit %d\n%s\n%s", code, stdout, stderr)
	}
	res := readResult(t, out)
	prom.waitFinished(t, "dash", "", 1)
	// A range query's last point is the last step at or before its end,
	// and the steps count from the start: a step past the final scrape
	// reads the final figures.
	time.Sleep(time.Second)
	at := time.Now()
	started := res.Started
	secs := dur.Seconds()

	hist := func(enc string) *hdrhistogram.Histogram {
		h, err := result.DecodeHistogram(enc)
		if err != nil || h.TotalCount() == 0 {
			t.Fatalf("a histogram of the result: %v, %d values", err, h.TotalCount())
		}
		return h
	}
	hs := res.Histograms
	hists := map[string]*hdrhistogram.Histogram{
		"openload_response_time_seconds": hist(hs.Response), "openload_service_time_seconds": hist(hs.Service),
		"openload_send_delay_seconds": hist(hs.SendDelay), `openload_ttft_seconds{from="schedule"}`: hist(hs.TTFTResponse),
		`openload_ttft_seconds{from="send"}`: hist(hs.TTFTService), "openload_itl_seconds": hist(hs.ITL), "openload_tpot_seconds": hist(hs.TPOT),
	}
	counts := metricstest.Finals(res)
	counts["openload_output_tokens_total"] = res.Stream.OutputTokens
	byLabel := map[string]map[string]int64{"code": res.Status, "kind": res.ErrorKinds}
	// The counters the result's timeline also counts second by second.
	timeline := map[string]func(result.Second) int64{
		"openload_requests_scheduled_total": func(s result.Second) int64 { return s.Scheduled },
		"openload_requests_sent_total":      func(s result.Second) int64 { return s.Sent },
		"openload_requests_completed_total": func(s result.Second) int64 { return s.Completed },
	}
	if res.Status["429"] == 0 || res.ErrorKinds["timeout"] == 0 || len(res.ErrorKinds) < 2 || res.Stream.OutputTokens == 0 {
		t.Fatalf("the run lacks a figure some panel shows: status %v, error kinds %v, tokens %d", res.Status, res.ErrorKinds, res.Stream.OutputTokens)
	}
	tokensPerRequest := float64(res.Stream.OutputTokens) / float64(res.Status["200"])
	// Quantiles in seconds of the result's histograms (µs).
	pct := func(h *hdrhistogram.Histogram, q float64) float64 { return float64(h.ValueAtQuantile(q*100)) / 1e6 }
	maxOf := func(h *hdrhistogram.Histogram) float64 { return float64(h.Max()) / 1e6 }
	metricOf := regexp.MustCompile(`((?:openload|stub)_[a-z_]+?)(?:_bucket)?(?:\{[^}]*?(,from="(?:schedule|send)")?\}|[^a-z_])`)
	quantileOf := regexp.MustCompile(`^histogram_quantile\((0\.\d+),`)

	type row struct{ panel, query, figure, want string }
	var table []row
	for _, tg := range dashboardTargets(t) {
		q := substitute(tg.Expr, "dash")
		from := started
		if tg.Instant {
			from = time.Time{}
		}
		series := prom.eval(t, q, from, at)
		fail := func(format string, a ...any) {
			t.Errorf("panel %q %s: %s\n\t%s", tg.Panel, tg.Legend, fmt.Sprintf(format, a...), q)
		}
		if len(series) == 0 || len(series[0].values) == 0 {
			fail("no data")
			continue
		}
		m := metricOf.FindStringSubmatch(q)
		if m == nil {
			fail("names no metric")
			continue
		}
		name, from2 := m[1], m[2]
		if from2 != "" {
			name += "{" + from2[1:] + "}"
		}
		add := func(s promSeries, figure, want string) {
			table = append(table, row{tg.Panel + ": " + legend(tg.Legend, s.labels), tg.Expr, figure, want})
		}
		// middle are a range series' values whose window lies in the run.
		middle := func(s promSeries) []float64 {
			first := float64(started.Add(time.Second+dashRateInterval).UnixMilli()) / 1e3
			last := float64(started.Add(dur).UnixMilli()) / 1e3
			var v []float64
			for i, ts := range s.times {
				if ts >= first && ts <= last {
					v = append(v, s.values[i])
				}
			}
			return v
		}
		rateNear := func(s promSeries, want float64, what string, unit float64) {
			tol := (want + 2*unit) / 3
			got := median(middle(s))
			add(s, fmt.Sprintf("median %.2f/s", got), fmt.Sprintf("%s = %.2f/s ± %.2f", what, want, tol))
			if !(math.Abs(got-want) <= tol) {
				fail("median %.3f/s over %v, the result's %.3f/s ± %.3f (%s)", got, middle(s), want, tol, what)
			}
		}
		checkRate := func(s promSeries, n int64, unit float64) {
			rateNear(s, float64(n)/secs, fmt.Sprintf("%d in %gs", n, secs), unit)
		}
		// checkTimeline holds a rate to the result's own timeline over
		// the seconds middle's windows cover, [1 s, dur): what the run
		// did then. Spread evenly over the run, a figure that slides
		// into the drain on a loaded machine (answers, tokens) reads
		// high: tokens/s once read 163 against an even 253 ± 90.
		checkTimeline := func(s promSeries, f func(result.Second) int64, unit float64) {
			end := min(int(secs), len(res.Timeline))
			var n int64
			for _, sec := range res.Timeline[min(1, end):end] {
				n += f(sec)
			}
			rateNear(s, float64(n)/float64(max(end-1, 1)), fmt.Sprintf("%d in [1 s, %d s) of the timeline", n, end), unit)
		}
		qm := quantileOf.FindStringSubmatch(q)
		switch {
		case qm != nil && tg.Instant: // a whole run's quantile
			qq, _ := strconv.ParseFloat(qm[1], 64)
			h := hists[name]
			if h == nil {
				fail("no histogram of the result for %s", name)
				continue
			}
			// HdrHistogram takes the value of rank q·N rounded to the
			// nearest, histogram_quantile the first bucket whose count
			// reaches q·N: the rank rounded up. When the two ranks fall
			// on either side of a bound, the bucket is the next value's.
			got, own := series[0].values[0], pct(h, qq)
			lo, _ := bucketOf(bounds, own)
			_, hi := bucketOf(bounds, max(own, valueAtRank(h, int64(math.Ceil(qq*float64(h.TotalCount()))))))
			add(series[0], fmt.Sprintf("%.6f s", got), fmt.Sprintf("p%g %.6f s, bucket (%g, %g]", qq*100, own, lo, hi))
			if got < lo || got > hi {
				fail("%g s outside (%g, %g], the bucket of the result's %.6f s", got, lo, hi, own)
			}
		case qm != nil: // a window's quantile, every series (by shard: one)
			qq, _ := strconv.ParseFloat(qm[1], 64)
			h := hists[name]
			if h == nil {
				fail("no histogram of the result for %s", name)
				continue
			}
			var a, b float64
			if qq == 0.5 {
				a, b = pct(h, 0.25), pct(h, 0.75)
			} else {
				a, b = pct(h, 0.90), maxOf(h)
			}
			lo, _ := bucketOf(bounds, a)
			_, hi := bucketOf(bounds, b)
			for _, s := range series {
				got := median(middle(s))
				add(s, fmt.Sprintf("median %.6f s", got), fmt.Sprintf("in (%g, %g] (buckets of %.6f..%.6f s)", lo, hi, a, b))
				if !(got >= lo && got <= hi) {
					fail("median %g s of %v outside (%g, %g]", got, middle(s), lo, hi)
				}
			}
		case strings.Contains(q, "last_over_time") && strings.HasPrefix(q, "sum by ("): // final counts by code or kind
			key := q[len("sum by ("):strings.IndexByte(q, ')')]
			want := byLabel[key]
			got := map[string]int64{}
			for _, s := range series {
				got[s.labels[key]] = int64(s.values[0])
				add(s, fmt.Sprint(s.values[0]), fmt.Sprint(want[s.labels[key]]))
			}
			if !mapsEqualNonZero(got, want) {
				fail("%v, the result's %v", got, want)
			}
		case strings.Contains(q, "last_over_time"): // a final count
			n, ok := counts[name]
			got := series[0].values[0]
			add(series[0], fmt.Sprint(got), fmt.Sprint(n))
			if !ok || got != float64(n) {
				fail("%v, the result's %d (known: %v)", got, n, ok)
			}
		case strings.Contains(q, " - sum(rate("): // due − sent per second
			checkRate(series[0], res.Counts.Scheduled-res.Counts.Sent, 1)
		case strings.Contains(q, " - sum("): // due, not yet sent
			s := series[0]
			got := s.values[len(s.values)-1]
			add(s, fmt.Sprintf("last %v", got), fmt.Sprint(res.Counts.Scheduled-res.Counts.Sent))
			if got != float64(res.Counts.Scheduled-res.Counts.Sent) || slices.Min(s.values) < 0 {
				fail("last %v (min %v), the result's scheduled − sent %d", got, slices.Min(s.values), res.Counts.Scheduled-res.Counts.Sent)
			}
		case name == "openload_requests_in_flight":
			for _, s := range series {
				last, peak := s.values[len(s.values)-1], slices.Max(s.values)
				add(s, fmt.Sprintf("last %v, peak %v", last, peak), fmt.Sprintf("0 unfinished (%d), ≤ %d scheduled", res.Counts.Unfinished, res.Counts.Scheduled))
				if last != float64(res.Counts.Unfinished) || peak < 1 || peak > float64(res.Counts.Scheduled) {
					fail("last %v, peak %v", last, peak)
				}
			}
		case strings.HasPrefix(q, "sum by (") && strings.Contains(q, "rate(openload_"): // rates by code or kind
			key := q[len("sum by ("):strings.IndexByte(q, ')')]
			if len(series) != len(byLabel[key]) {
				fail("%d series, the result has %v", len(series), byLabel[key])
			}
			for _, s := range series {
				checkRate(s, byLabel[key][s.labels[key]], 1)
			}
		case name == "openload_offered_rate": // the schedule's rate, while it runs
			s := series[0]
			got := median(middle(s))
			add(s, fmt.Sprintf("median %g/s", got), fmt.Sprintf("config.rate %g/s", res.Config.Rate))
			if got != res.Config.Rate || slices.Max(s.values) != res.Config.Rate {
				fail("median %g, max %g, the result's rate %g", got, slices.Max(s.values), res.Config.Rate)
			}
		case name == "openload_output_tokens_total":
			checkTimeline(series[0], func(s result.Second) int64 { return s.Tokens }, tokensPerRequest)
		case strings.Contains(q, "rate(openload_") && timeline[name] != nil:
			checkTimeline(series[0], timeline[name], 1)
		case strings.Contains(q, "rate(openload_"):
			checkRate(series[0], counts[name], 1)
		case name == "stub_requests_total": // answers by source and reason
			want := map[string]int64{"model served": res.Status["200"], "limiter rate-limited": res.Status["429"]}
			for _, s := range series {
				checkRate(s, want[legend(tg.Legend, s.labels)], 1)
			}
		case name == "stub_limiter_requests_total":
			want := map[string]int64{"accepted": res.Status["200"], "rejected": res.Status["429"]}
			for _, s := range series {
				checkRate(s, want[s.labels["decision"]], 1)
			}
		case name == "stub_tokens_total": // openload's, less the one token of each stream the proxy broke (within one unit)
			checkTimeline(series[0], func(s result.Second) int64 { return s.Tokens }, tokensPerRequest)
		case name == "stub_model_slots":
			add(series[0], fmt.Sprint(series[0].values[0]), fmt.Sprint(cfg.BatchSlots))
			if slices.Min(series[0].values) != float64(cfg.BatchSlots) || slices.Max(series[0].values) != float64(cfg.BatchSlots) {
				fail("%v, the stub's %d", series[0].values, cfg.BatchSlots)
			}
		case name == "stub_queue_length" || name == "stub_in_model" || name == "stub_sequences_active":
			s := series[0]
			add(s, fmt.Sprintf("peak %v", slices.Max(s.values)), fmt.Sprintf("0..%d slots", cfg.BatchSlots))
			if slices.Min(s.values) < 0 || slices.Max(s.values) > float64(cfg.BatchSlots) {
				fail("%v outside 0..%d", s.values, cfg.BatchSlots)
			}
		default:
			fail("no comparison with the result for this query")
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "run: %d/s for %v, result %s\n| panel | query | figure | result file |\n| --- | --- | --- | --- |\n", rate, dur, fmt.Sprintf("%+v", res.Counts))
	for _, r := range table {
		fmt.Fprintf(&b, "| %s | `%s` | %s | %s |\n", r.panel, r.query, r.figure, r.want)
	}
	t.Log(b.String())
}

// mapsEqualNonZero: the same keys with the same counts, keys of count 0
// aside.
func mapsEqualNonZero(a, b map[string]int64) bool {
	for _, m := range []map[string]int64{a, b} {
		for k, v := range m {
			if v != 0 && a[k] != b[k] {
				return false
			}
		}
	}
	return true
}
