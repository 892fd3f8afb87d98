package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/openload/openload/internal/metrics"
)

// A real Prometheus judges --metrics-addr: Debian's prometheus package
// (2.42 on bookworm), installed by .ci/run. The test starts it on
// loopback with a storage of its own, scraping openload's endpoint every
// second, runs openload, and asks Prometheus's HTTP API what it stored.
// It skips without the binary, and fails instead under OPENLOAD_INTEROP.

// prometheusBinary finds Prometheus, or says why it cannot.
func prometheusBinary(t *testing.T) string {
	t.Helper()
	if p, err := exec.LookPath("prometheus"); err == nil {
		return p
	}
	if _, err := os.Stat("/usr/bin/prometheus"); err == nil {
		return "/usr/bin/prometheus"
	}
	if os.Getenv(interopRequired) != "" {
		t.Fatalf("prometheus is not installed (apt-get install prometheus) and %s is set", interopRequired)
	}
	t.Skip("prometheus is not installed (apt-get install prometheus)")
	return ""
}

// freePort (nginx_test.go): Prometheus takes no port 0, and its scrape
// target must be known before openload starts.

// promServer is a Prometheus started by startPrometheus.
type promServer struct{ addr string }

// startPrometheus starts Prometheus scraping target (HOST:PORT, or several
// separated by commas) every second, with flags added to its command
// line, and waits until it is ready; it is stopped when the test ends.
func startPrometheus(t *testing.T, bin, target string, flags ...string) *promServer {
	t.Helper()
	dir := t.TempDir()
	targets := strings.Split(target, ",")
	quoted := make([]string, len(targets))
	for i, tg := range targets {
		quoted[i] = strconv.Quote(tg)
	}
	cfg := writeFile(t, dir, "prometheus.yml", fmt.Sprintf(`global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: openload
    static_configs:
      - targets: [%s]
`, strings.Join(quoted, ", ")))
	addr := freePort(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // a bound on a hung Prometheus
	cmd := exec.CommandContext(ctx, bin, append([]string{"--config.file=" + cfg, "--storage.tsdb.path=" + filepath.Join(dir, "data"),
		"--web.listen-address=" + addr, "--log.level=warn"}, flags...)...)
	log, err := os.Create(filepath.Join(dir, "prometheus.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
		cancel()
		log.Close()
		if t.Failed() {
			b, _ := os.ReadFile(log.Name())
			t.Logf("prometheus's log:\n%s", b)
		}
	})
	for range 300 { // 30 s
		if resp, err := http.Get("http://" + addr + "/-/ready"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return &promServer{addr: addr}
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatal("prometheus was not ready within 30 s")
	return nil
}

// promSeries is one series of a query's answer: its labels, and its
// values in time order (one for an instant query).
type promSeries struct {
	labels map[string]string
	times  []float64 // Unix seconds
	values []float64
}

// eval asks Prometheus an instant query at (now when at is zero), or a
// range query over [from, at] at a 1 s step when from is not zero. It is
// the tests' one reader of Prometheus' query API; query and samples are
// views of it.
func (p *promServer) eval(t *testing.T, q string, from, at time.Time) []promSeries {
	t.Helper()
	v := url.Values{"query": {q}}
	path := "/api/v1/query"
	if !at.IsZero() {
		v.Set("time", strconv.FormatFloat(float64(at.UnixMilli())/1e3, 'f', 3, 64))
	}
	if !from.IsZero() {
		path = "/api/v1/query_range"
		v.Del("time")
		v.Set("start", strconv.FormatFloat(float64(from.UnixMilli())/1e3, 'f', 3, 64))
		v.Set("end", strconv.FormatFloat(float64(at.UnixMilli())/1e3, 'f', 3, 64))
		v.Set("step", "1")
	}
	resp, err := http.Get("http://" + p.addr + path + "?" + v.Encode())
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var r struct {
		Status string
		Error  string
		Data   struct {
			Result []struct {
				Metric map[string]string
				Value  []any
				Values [][]any
			}
		}
	}
	if err := json.Unmarshal(body, &r); err != nil || r.Status != "success" {
		t.Fatalf("query %s: %v %s: %s", q, err, r.Error, body)
	}
	var out []promSeries
	for _, s := range r.Data.Result {
		pts := s.Values
		if s.Value != nil {
			pts = [][]any{s.Value}
		}
		ps := promSeries{labels: s.Metric}
		for _, pt := range pts {
			str, _ := pt[1].(string)
			f, err := strconv.ParseFloat(str, 64)
			if err != nil {
				t.Fatalf("query %s: value %v", q, pt[1])
			}
			ts, _ := pt[0].(float64)
			ps.times, ps.values = append(ps.times, ts), append(ps.values, f)
		}
		out = append(out, ps)
	}
	return out
}

// query asks an instant query and returns the values of the vector it
// answers, by the series' label named key (all under "" when key is "").
func (p *promServer) query(t *testing.T, q, key string) map[string]float64 {
	t.Helper()
	out := map[string]float64{}
	for _, s := range p.eval(t, q, time.Time{}, time.Time{}) {
		out[s.labels[key]] = s.values[len(s.values)-1]
	}
	return out
}

// waitFinished waits until Prometheus holds a scrape that saw the end of
// every run with this run label (want of them), by the label key.
func (p *promServer) waitFinished(t *testing.T, run, key string, want int) {
	t.Helper()
	q := fmt.Sprintf(`max_over_time(openload_run_finished{run=%q}[5m])`, run)
	for range 100 { // 10 s past the run's grace
		done := 0
		for _, v := range p.query(t, q, key) {
			if v == 1 {
				done++
			}
		}
		if done == want {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("no scrape saw the end of %d runs of %s (%s)", want, run, q)
}

// TestPrometheusScrapesRun: what Prometheus stored of a run equals the
// run's result: the last completed count exactly, and
// histogram_quantile(0.99) of the response time buckets lies in the
// bucket that holds openload's own p99 (histogram_quantile interpolates
// linearly inside that bucket, so the bucket is its resolution). Then a
// run of two scenarios on the same endpoint: a series each, each equal
// to its scenario's result.
func TestPrometheusScrapesRun(t *testing.T) {
	bin := prometheusBinary(t)
	var c pathCounter
	srv := c.server(t)
	target := freePort(t)
	prom := startPrometheus(t, bin, target)
	dir := t.TempDir()

	out := filepath.Join(dir, "run.json")
	// The default grace (30 s): openload leaves once a scrape has read
	// the final figures, a second or so at a 1 s interval.
	runOK(t, "-r", "200", "-d", "3s", "-q", "--metrics-addr", target, "--metrics-run", "one", "-o", out, srv.URL+"/run")
	res := readResult(t, out)
	prom.waitFinished(t, "one", "", 1)
	completed := prom.query(t, `last_over_time(openload_requests_completed_total{run="one"}[5m])`, "")
	if completed[""] != float64(res.Counts.Completed) || res.Counts.Completed != 600 {
		t.Errorf("Prometheus's last openload_requests_completed_total %v, the result's completed %d (of 600)", completed, res.Counts.Completed)
	}
	p99 := prom.query(t, `histogram_quantile(0.99, last_over_time(openload_response_time_seconds_bucket{run="one"}[5m]))`, "")[""]
	own := res.Response.P99 / 1e3 // ms → s
	lo, hi := 0.0, 0.0
	for _, b := range metrics.LatencyBounds {
		if own <= b {
			hi = b
			break
		}
		lo = b
	}
	if hi == 0 || p99 < lo || p99 > hi {
		t.Errorf("histogram_quantile(0.99) = %g s, outside (%g, %g], the bucket of openload's p99 %g s", p99, lo, hi, own)
	}
	t.Logf("completed: Prometheus %v, result %d; p99: histogram_quantile %.6f s, openload %.6f s, bucket (%g, %g] s", completed[""], res.Counts.Completed, p99, own, lo, hi)

	file := writeFile(t, dir, "two.yaml", fmt.Sprintf(`scenarios:
  - name: browse
    rate: 100
    url: %[1]s/browse
  - name: search
    rate: 40
    url: %[1]s/search
`, srv.URL))
	out = filepath.Join(dir, "two.json")
	runOK(t, "--scenarios", file, "-d", "2s", "-q", "--metrics-addr", target, "--metrics-run", "two", "--metrics-grace", "3s", "-o", out)
	res = readResult(t, out)
	prom.waitFinished(t, "two", "scenario", 2)
	got := prom.query(t, `last_over_time(openload_requests_completed_total{run="two"}[5m])`, "scenario")
	for _, sc := range res.Scenarios {
		if got[sc.Name] != float64(sc.Result.Counts.Completed) || sc.Result.Counts.Completed == 0 {
			t.Errorf("scenario %s: Prometheus %v, the result's completed %d", sc.Name, got[sc.Name], sc.Result.Counts.Completed)
		}
	}
	if len(got) != 2 {
		t.Errorf("series by scenario: %v, want browse and search", got)
	}
	t.Logf("scenarios: Prometheus %v", got)
}

// TestMetricsAddrErrors: a bad address and a port in use are one-line
// errors, exit 2, before anything is sent.
func TestMetricsAddrErrors(t *testing.T) {
	var c pathCounter
	srv := c.server(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	for _, tc := range []struct{ args []string }{
		{[]string{"--metrics-addr", "9464"}},
		{[]string{"--metrics-addr", "127.0.0.1:70000"}},
		{[]string{"--metrics-grace", "1s"}},
		{[]string{"--metrics-addr", ln.Addr().String()}},
	} {
		code, _, stderr := runCLI(append(tc.args, "-r", "10", "-d", "1s", srv.URL+"/x")...)
		first, _, _ := strings.Cut(stderr, "\n")
		if code != exitUsage || !strings.Contains(first, "--metrics-") {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 naming the flag", tc.args, code, stderr)
		}
	}
	if n := c.count("/x"); n != 0 {
		t.Errorf("%d requests sent by runs that should not have started", n)
	}
}

// TestPrometheusSeesSendsBeforeAnswers: against a server that holds every
// answer, Prometheus already stores every request as scheduled and sent
// while none is completed (they are counted when due and when sent, not
// when they end); released, the run's last counts equal its result.
func TestPrometheusSeesSendsBeforeAnswers(t *testing.T) {
	bin := prometheusBinary(t)
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-time.After(60 * time.Second): // a guard: the test fails first
		}
	}))
	defer srv.Close()
	target := freePort(t)
	prom := startPrometheus(t, bin, target)
	out := filepath.Join(t.TempDir(), "held.json")
	ran := make(chan string, 1)
	go func() {
		code, _, stderr := runCLI("-r", "50", "-d", "1s", "-c", "60", "-q", "--metrics-addr", target, "--metrics-run", "held", "-o", out, srv.URL)
		ran <- fmt.Sprintf("exit %d %s", code, stderr)
	}()
	seen := false
	for range 300 { // 30 s
		sent := prom.query(t, `openload_requests_sent_total{run="held"}`, "")
		sched := prom.query(t, `openload_requests_scheduled_total{run="held"}`, "")
		done := prom.query(t, `openload_requests_completed_total{run="held"}`, "")
		if sent[""] == 50 && sched[""] == 50 && len(done) == 1 && done[""] == 0 {
			seen = true
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	close(release)
	if got := <-ran; !strings.HasPrefix(got, "exit 0") {
		t.Fatalf("the run: %s", got)
	}
	if !seen {
		t.Fatal("Prometheus never stored 50 requests scheduled and sent with none completed")
	}
	res := readResult(t, out)
	prom.waitFinished(t, "held", "", 1)
	for name, want := range map[string]int64{"scheduled": res.Counts.Scheduled, "sent": res.Counts.Sent, "completed": res.Counts.Completed} {
		got := prom.query(t, fmt.Sprintf(`last_over_time(openload_requests_%s_total{run="held"}[5m])`, name), "")
		if got[""] != float64(want) || want != 50 {
			t.Errorf("%s: Prometheus's last %v, the result's %d (of 50)", name, got, want)
		}
	}
}
