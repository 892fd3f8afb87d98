package main

import (
	"strings"
	"testing"
	"time"
)

// TestK8sRunProgress: with --metrics-addr the runner reads each running
// pod's /metrics through the API server's pod proxy and prints the
// shards' figures summed, one line a refresh.
func TestK8sRunProgress(t *testing.T) {
	defer func(d time.Duration) { progressEvery = d }(progressEvery)
	progressEvery = 20 * time.Millisecond
	// Running for a dozen looks (each two kubectl calls), then done.
	var jobs, pods []string
	for range 12 {
		jobs = append(jobs, jobJSON("", 4, 0, 0))
		pods = append(pods, podsJSON(allPods(4, fakePod{phase: "Running"})...))
	}
	jobs = append(jobs, jobJSON("", 0, 4, 0, "SuccessCriteriaMet", "Complete"))
	pods = append(pods, podsJSON(allPods(4, fakePod{phase: "Succeeded"})...))
	metrics := "# HELP openload_requests_sent_total x\n# TYPE openload_requests_sent_total counter\n" +
		`openload_requests_sent_total{run="r",shard="0/4"} 40` + "\n" +
		`openload_requests_scheduled_total{run="r",shard="0/4"} 41` + "\n" +
		`openload_requests_failed_total{run="r",shard="0/4"} 1` + "\n" +
		`openload_requests_in_flight{run="r",shard="0/4"} 3` + "\n"
	f := newFake(t, fakeScenario{
		Job:     jobs,
		Pods:    pods,
		Logs:    podLogs(t),
		Metrics: metrics,
	})
	// A grace of minutes: every look execs the fake kubectl (five times
	// with the figures), slow under -race on a busy machine, and the
	// test is of the lines, not of giving up.
	code, stdout, stderr := runCLI(k8sArgs(f, "--metrics-addr", ":9464", "--grace", "5m")...)
	if code != exitOK {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	// Four shards of one pod's figures: in flight 4 × 3, errors 4 × 1;
	// the counters do not move, so the rates are 0.
	wantLines(t, stderr, "/1s · sent 0/s (scheduled 0/s) · in flight 12 · errors 4 · 4 of 4 shards answering")
	if f.called("get", "--raw", "/api/v1/namespaces/default/pods/openload-test-0-abcde:9464/proxy/metrics") == 0 {
		t.Errorf("calls: %q", f.calls())
	}
	lines := strings.Split(stderr, "\n")
	t.Logf("stderr:\n%s", strings.Join(lines[:min(len(lines), 6)], "\n"))
}

// TestParseFigures: the series are summed over their labels; comments,
// other series and a histogram's lines are skipped.
func TestParseFigures(t *testing.T) {
	f := parseFigures([]byte("# TYPE x counter\nopenload_requests_failed_total{kind=\"a\"} 2\nopenload_requests_timed_out_total 3\n" +
		"openload_requests_sent_total 1e3\nopenload_response_time_seconds_bucket{le=\"0.1\"} 7\nopenload_requests_in_flight 5 1700000000000\n"))
	if f != (shardFigures{sent: 1000, failed: 5, inFlight: 5}) {
		t.Errorf("%+v", f)
	}
}
