package main

import (
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/openload/openload/internal/metrics/metricstest"
)

// A real Prometheus judges --metrics-push: Debian's 2.42 started with its
// remote-write receiver (--web.enable-remote-write-receiver, in 2.42
// without a feature flag), which scrapes nothing of openload's; openload
// pushes to it every second and once at the end, and Prometheus's HTTP
// API is asked what it stored. Skips without the binary, fails instead
// under OPENLOAD_INTEROP (prometheusBinary).

// mixedAnswers answers 200, every tenth request 503, closes every
// seventeenth other connection under its request (a re-send) and keeps
// the twenty-third waiting until the client gives up (a timeout: 1 of
// 150 is within the default objective errors<=1 %), so that a run has
// two status codes, re-sends and an error kind.
func mixedAnswers(t *testing.T) *httptest.Server {
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		i := n.Add(1)
		switch {
		case i%10 == 0:
			w.WriteHeader(http.StatusServiceUnavailable)
		case i%17 == 0:
			if c, _, err := w.(http.Hijacker).Hijack(); err == nil {
				c.Close()
			}
		case i == 23:
			select {
			case <-r.Context().Done():
			case <-time.After(time.Minute): // a bound on a client that never gives up
			}
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestPrometheusRemoteWrite: a 3 s run at 50/s pushed every second.
// What Prometheus holds at the end equals the result file exactly: every
// counter, each status code and error kind, the histograms' counts, and
// the run marked finished; at least one push came before the end (a
// sample with openload_run_finished 0); the series carry job "openload"
// and the host's name as instance.
func TestPrometheusRemoteWrite(t *testing.T) {
	bin := prometheusBinary(t)
	prom := startPrometheus(t, bin, freePort(t), "--web.enable-remote-write-receiver")
	srv := mixedAnswers(t)
	out := filepath.Join(t.TempDir(), "push.json")
	push := "http://" + prom.addr + "/api/v1/write"
	_, stderr := runOK(t, "-r", "50", "-d", "3s", "--timeout", "300ms", "--metrics-push", push, "--metrics-push-interval", "1s",
		"--metrics-push-header", "X-Scope-OrgID: openload", "--metrics-run", "push", "-o", out, srv.URL+"/push")
	res := readResult(t, out)
	// The final push has landed before openload exits, so nothing is
	// waited for here.
	if !strings.Contains(stderr, "metrics push to "+push+": ") || !strings.Contains(stderr, "pushes landed, the final one included") {
		t.Errorf("stderr does not say every push landed:\n%s", stderr)
	}
	last := func(name, key string) map[string]float64 {
		return prom.query(t, fmt.Sprintf(`last_over_time(%s{run="push"}[5m])`, name), key)
	}
	c := res.Counts
	want := metricstest.Finals(res)
	counts, err := metricstest.HistogramCounts(res)
	if err != nil {
		t.Fatal(err)
	}
	maps.Copy(want, counts)
	var table strings.Builder
	for _, name := range slices.Sorted(maps.Keys(want)) {
		n := want[name]
		got := last(name, "")
		if len(got) != 1 || got[""] != float64(n) {
			t.Errorf("%s: Prometheus %v, the result %d", name, got, n)
		}
		fmt.Fprintf(&table, "\n  %-40s Prometheus %v, result %d", name, got[""], n)
	}
	for _, by := range []struct {
		name, key string
		want      map[string]int64
	}{
		{"openload_responses_total", "code", res.Status},
		{"openload_request_errors_total", "kind", res.ErrorKinds},
	} {
		got := last(by.name, by.key)
		for k, n := range by.want {
			if got[k] != float64(n) {
				t.Errorf("%s{%s=%q}: Prometheus %v, the result %d", by.name, by.key, k, got[k], n)
			}
		}
		if len(got) != len(by.want) {
			t.Errorf("%s: Prometheus %v, the result %v", by.name, got, by.want)
		}
		fmt.Fprintf(&table, "\n  %-40s Prometheus %v, result %v", by.name, got, by.want)
	}
	if c.Scheduled != 150 || res.Status["503"] == 0 || res.ErrorKinds["timeout"] == 0 || res.Wire.Resends == 0 {
		t.Errorf("the run lacks what it was to have: counts %+v, status %v, errors %v", c, res.Status, res.ErrorKinds)
	}
	if mid := prom.query(t, `min_over_time(openload_run_finished{run="push"}[5m])`, ""); mid[""] != 0 {
		t.Errorf("no push before the end: min_over_time(openload_run_finished) = %v", mid)
	}
	samples := prom.samples(t, `openload_requests_completed_total{run="push"}[5m]`)
	if len(samples) == 0 || samples[len(samples)-1] != float64(c.Completed) {
		t.Errorf("samples of completed %v: the last is not the result's %d", samples, c.Completed)
	}
	host, _ := os.Hostname()
	for key, v := range map[string]string{"job": "openload", "instance": host} {
		got := prom.query(t, `count by (`+key+`) (last_over_time(openload_requests_completed_total{run="push"}[5m]))`, key)
		if len(got) != 1 || got[v] != 1 {
			t.Errorf("label %s: %v, want %q", key, got, v)
		}
	}
	t.Logf("pushed every 1 s: Prometheus holds %d samples of openload_requests_completed_total, %v (the result: %d); at the end:%s",
		len(samples), samples, c.Completed, table.String())
}

// samples are the values, in time order, of the one series a range
// selector q matches.
func (p *promServer) samples(t *testing.T, q string) []float64 {
	t.Helper()
	series := p.eval(t, q, time.Time{}, time.Time{})
	if len(series) != 1 {
		t.Fatalf("query %s: %d series, want 1", q, len(series))
	}
	return series[0].values
}

// TestMetricsPushErrors: a bad --metrics-push value is a one-line error,
// exit 2, before anything is sent; an endpoint that refuses every push
// leaves the run's outcome alone, and stderr says, -q or not, that the
// final push did not land, without the URL's password.
func TestMetricsPushErrors(t *testing.T) {
	var c pathCounter
	srv := c.server(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--metrics-push", "prometheus:9090/api/v1/write"}, "--metrics-push URL"},
		{[]string{"--metrics-push", "ftp://h/api/v1/write"}, "--metrics-push URL"},
		{[]string{"--metrics-push", "http://h/api/v1/write", "--metrics-push-interval", "500ms"}, "--metrics-push-interval must be ≥ 1s"},
		{[]string{"--metrics-push", "http://h/api/v1/write", "--metrics-push-header", "Bearer x"}, "--metrics-push-header \"Bearer x\": want 'Name: value'"},
		{[]string{"--metrics-push", "http://h/api/v1/write", "--metrics-push-header", "A: b\nC: d"}, "--metrics-push-header"},
		{[]string{"--metrics-push-interval", "5s"}, "--metrics-push-interval applies with --metrics-push only"},
		{[]string{"--metrics-push-header", "A: b"}, "--metrics-push-header applies with --metrics-push only"},
		{[]string{"--metrics-run", "x"}, "--metrics-run applies with --metrics-addr or --metrics-push only"},
	} {
		code, _, stderr := runCLI(append(tc.args, "-r", "10", "-d", "1s", srv.URL+"/x")...)
		first, _, _ := strings.Cut(stderr, "\n")
		if code != exitUsage || !strings.Contains(first, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 with %q", tc.args, code, stderr, tc.want)
		}
	}
	if n := c.count("/x"); n != 0 {
		t.Errorf("%d requests sent by runs that should not have started", n)
	}

	refuse := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "remote write receiver needs to be enabled", http.StatusNotFound)
	}))
	defer refuse.Close()
	out := filepath.Join(t.TempDir(), "r.json")
	withPassword := strings.Replace(refuse.URL, "://", "://u:s3cret@", 1) + "/api/v1/write"
	_, stderr := runOK(t, "-q", "-r", "20", "-d", "1s", "--metrics-push", withPassword, "-o", out, srv.URL+"/y")
	if res := readResult(t, out); res.Counts.Completed != 20 || c.count("/y") != 20 {
		t.Errorf("completed %d, the server read %d; want 20 of 20", res.Counts.Completed, c.count("/y"))
	}
	if !strings.Contains(stderr, "the final push did not land (404 Not Found: remote write receiver needs to be enabled)") {
		t.Errorf("stderr does not say the final push failed:\n%s", stderr)
	}
	if strings.Contains(stderr, "s3cret") || !strings.Contains(stderr, "u:xxxxx@") {
		t.Errorf("stderr shows the URL's password, or no URL:\n%s", stderr)
	}
	t.Logf("stderr: %s", stderr)
}
