package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/openload/openload/internal/kube"
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
	wantLines(t, stderr, "/1s · sent 0/s of 0/s · in flight 12 · errors 4 · 4 of 4 shards answering")
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

// TestK8sStatusLive: while the Job runs, 'k8s status' reads each running
// shard's /metrics through the pod proxy (the live progress's reader, in
// the Job's namespace) and shows each shard's sent, completed and failed,
// their sums and how far the run is of the Job's planned length; a shard
// that does not answer shows its state alone. Once the Job has ended it
// says how to collect it; a run without --metrics-addr says it has no
// figures.
func TestK8sStatusLive(t *testing.T) {
	args := []string{"--shard-from-env=JOB_COMPLETION_INDEX/4", "--start-at=$(START_AT)", "--quiet", "--output=-", "--rate=200", "--duration=20s", "--metrics-addr=:9464", "http://x/"}
	job := func(j string, args []string) string {
		var m map[string]any
		if err := json.Unmarshal([]byte(withSpec(t, j, 4, args...)), &m); err != nil {
			t.Fatal(err)
		}
		m["metadata"] = map[string]any{"name": "openload-test", "namespace": "load", "annotations": map[string]string{kube.AnnotationPlanned: "20s"}}
		b, _ := json.Marshal(m)
		return string(b)
	}
	shard := func(i, sent, completed, failed, timedOut, inFlight int, start float64) string {
		l := fmt.Sprintf(`{run="r",shard="%d/4"}`, i)
		return fmt.Sprintf("# TYPE openload_requests_sent_total counter\nopenload_requests_sent_total%s %d\nopenload_requests_completed_total%s %d\n"+
			"openload_requests_failed_total%s %d\nopenload_requests_timed_out_total%s %d\nopenload_requests_in_flight%s %d\nopenload_run_start_time_seconds%s %g\n",
			l, sent, l, completed, l, failed, l, timedOut, l, inFlight, l, start)
	}
	start := float64(time.Now().Add(-5 * time.Second).Unix())
	pods := []fakePod{{index: 0, phase: "Running"}, {index: 1, phase: "Running"}, {index: 2, phase: "Pending"}, {index: 3, phase: "Running"}}
	f := newFake(t, fakeScenario{
		Job:  []string{job(jobJSON("", 3, 0, 0), args)},
		Pods: []string{podsJSON(pods...)},
		PodMetrics: map[string]string{ // shard 3 does not answer
			pods[0].name(): shard(0, 480, 470, 2, 1, 8, start),
			pods[1].name(): shard(1, 500, 495, 0, 0, 5, start),
		},
	})
	code, stdout, stderr := runCLI("k8s", "status", "openload-test", "--kubectl", f.command)
	t.Logf("status:\n%s", stdout)
	if code != exitOK || stderr != "" {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	wantLines(t, stdout, "job openload-test: running: 4 shards: 3 active, 0 succeeded, 0 failed",
		"  shard 0/4 (pod openload-test-0-abcde): Running · sent 480 · completed 470 · failed 3\n",
		"  shard 1/4 (pod openload-test-1-abcde): Running · sent 500 · completed 495 · failed 0\n",
		"  shard 2/4 (pod openload-test-2-abcde): Pending (ContainerCreating)\n",
		"  shard 3/4 (pod openload-test-3-abcde): Running\n",
		"s of 20s · sent 980 · completed 965 · failed 3 · in flight 13 · 2 of 4 shards answering\n")
	if n := f.called("get", "--raw"); n != 3 || f.called("get", "--raw", "/api/v1/namespaces/load/pods/openload-test-0-abcde:9464/proxy/metrics") != 1 {
		t.Errorf("%d reads of the pods' metrics (want the 3 running ones', in the Job's namespace): %q", n, f.calls())
	}

	// Ended: no figures read, how to collect it.
	f = newFake(t, fakeScenario{
		Job:  []string{job(jobJSON("", 0, 4, 0, "SuccessCriteriaMet", "Complete"), args)},
		Pods: []string{podsJSON(allPods(4, fakePod{phase: "Succeeded"})...)},
	})
	stdout, _ = runOK(t, "k8s", "status", "openload-test", "-n", "load", "--kubectl", f.command)
	wantLines(t, stdout, "job openload-test in namespace load: complete: 4 shards: 0 active, 4 succeeded, 0 failed",
		"finished; merge its shards' results: openload k8s collect openload-test --namespace load\n")
	if f.called("get", "--raw") != 0 {
		t.Errorf("an ended Job's metrics read: %q", f.calls())
	}

	// No --metrics-addr: nothing to read, and said.
	f = newFake(t, fakeScenario{
		Job:  []string{job(jobJSON("", 4, 0, 0), args[:6])},
		Pods: []string{podsJSON(allPods(4, fakePod{phase: "Running"})...)},
	})
	stdout, _ = runOK(t, "k8s", "status", "openload-test", "--kubectl", f.command)
	wantLines(t, stdout, "live figures: none, the run serves no --metrics-addr to read them from (a run given --metrics-addr :9464 serves them)\n")
	if f.called("get", "--raw") != 0 {
		t.Errorf("metrics read without a port: %q", f.calls())
	}
}

// TestJobLiveTotal: where the run is, from the shards' start (or the
// Job's, before any answers) and the planned length.
func TestJobLiveTotal(t *testing.T) {
	now := time.Date(2026, 12, 1, 15, 0, 30, 0, time.UTC)
	start := float64(now.Add(-12 * time.Second).Unix())
	for _, c := range []struct {
		live jobLive
		want string
	}{
		{jobLive{port: 9464, planned: 20 * time.Second, figs: []*shardFigures{{sent: 3, completed: 2, failed: 1, inFlight: 1, start: start}, nil}},
			"live: 12s of 20s · sent 3 · completed 2 · failed 1 · in flight 1 · 1 of 2 shards answering"},
		{jobLive{port: 9464, startAt: now.Add(4 * time.Second), figs: []*shardFigures{nil, nil}},
			"live: starts in 4s · no shard's figures yet (0 of 2 shards answering)"},
		{jobLive{port: 9464, figs: []*shardFigures{nil, nil}}, "live: start not set yet · no shard's figures yet (0 of 2 shards answering)"},
	} {
		if got := c.live.total(2, now); got != c.want {
			t.Errorf("got  %q\nwant %q", got, c.want)
		}
	}
}
