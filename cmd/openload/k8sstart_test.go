package main

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/openload/openload/internal/golden"
	"github.com/openload/openload/internal/kube"
)

// TestK8sRunBarrier: without --lead the pods wait on their start file;
// once all four run, the runner annotates them (one call) with a start
// startSettle ahead, and follows the Job to its merge as with a lead.
func TestK8sRunBarrier(t *testing.T) {
	pending, running := podsJSON(allPods(4, fakePod{phase: "Pending"})...), podsJSON(allPods(4, fakePod{phase: "Running"})...)
	three := allPods(4, fakePod{phase: "Running"})
	three[2].phase = "Pending"
	f := newFake(t, fakeScenario{
		Job:  []string{jobJSON("", 4, 0, 0), jobJSON("", 4, 0, 0), jobJSON("", 4, 0, 0), jobJSON("", 4, 0, 0), jobJSON("", 0, 4, 0, "SuccessCriteriaMet", "Complete")},
		Pods: []string{pending, podsJSON(three...), running, running, podsJSON(allPods(4, fakePod{phase: "Succeeded"})...)},
		Logs: podLogs(t),
	})
	args := k8sArgs(f)
	i := slices.Index(args, "--lead")
	args = slices.Delete(args, i, i+2)
	before := time.Now()
	code, stdout, stderr := runCLI(args...)
	t.Logf("stderr:\n%s", stderr)
	if code != exitOK {
		t.Fatalf("exit %d\nstdout:\n%s", code, stdout)
	}
	wantLines(t, stderr, "job openload-test: 4 pods share constant 200/s for 1s, starting once all run (at the latest ",
		"all 4 pods running ", "deleted job openload-test")
	wantLines(t, stdout, "scheduled 200 = all 4 shards")
	var annotate []string
	for _, c := range f.calls() {
		if c[0] == "annotate" {
			if annotate != nil {
				t.Errorf("annotated twice: %q", f.calls())
			}
			annotate = c
		}
	}
	if len(annotate) != 6 || annotate[3] != "batch.kubernetes.io/job-name=openload-test" || !strings.HasPrefix(annotate[5], kube.AnnotationStart+"=") {
		t.Fatalf("annotate: %q", annotate)
	}
	// After every pod ran (the third look), at least startSettle ahead.
	at, err := time.Parse(time.RFC3339, strings.TrimPrefix(annotate[5], kube.AnnotationStart+"="))
	if err != nil || at.Before(before.Add(startSettle).Truncate(time.Second)) {
		t.Errorf("start %v, %v: want ≥ %v + %v", at, err, before, startSettle)
	}
	b, err := os.ReadFile(filepath.Join(f.dir, "created.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	// The deploy module decodes it strictly as a batch/v1 Job
	// (deploy/manifest_test.go, TestBarrierJob).
	golden.CheckFile(t, filepath.Join("..", "..", "deploy", "testdata", "job-barrier.yaml"), string(b))
}

// TestStartAtFile: --start-at @FILE waits until FILE holds a start, then
// runs from it, as --start-at with that time would.
func TestStartAtFile(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	path := filepath.Join(t.TempDir(), "at")
	writeFile(t, filepath.Dir(path), "at", "") // empty: the downward API's file before the annotation
	at := time.Now().Add(1500 * time.Millisecond).UTC().Truncate(time.Second).Add(time.Second)
	go func() {
		time.Sleep(300 * time.Millisecond)
		os.WriteFile(path, []byte(at.Format(time.RFC3339)), 0o644)
	}()
	out := filepath.Join(t.TempDir(), "r.json")
	code, _, stderr := runCLI("-r", "50", "-d", "1s", "--shard", "0/2", "--start-at", "@"+path, "-q", "-o", out, srv.URL)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if res := readResult(t, out); res.Config.StartAt != at.Format(time.RFC3339Nano) && res.Config.StartAt != at.Format(time.RFC3339) {
		t.Errorf("start_at %q, want %v", res.Config.StartAt, at)
	}
}

// TestK8sRunEndsOnPods: every shard's pod exited 0 while the Job
// controller has not yet said Complete: the runner collects then,
// without waiting a --poll more for the Job's status.
func TestK8sRunEndsOnPods(t *testing.T) {
	active := jobJSON("", 4, 0, 0)
	f := newFake(t, fakeScenario{
		Job:  []string{active, active, active},
		Pods: []string{podsJSON(allPods(4, fakePod{phase: "Running"})...), podsJSON(allPods(4, fakePod{phase: "Running"})...), podsJSON(allPods(4, fakePod{phase: "Succeeded"})...)},
		Logs: podLogs(t),
	})
	code, stdout, stderr := runCLI(k8sArgs(f)...)
	if code != exitOK {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	wantLines(t, stdout, "scheduled 200 = all 4 shards")
	wantLines(t, stderr, "job openload-test: every pod of its 4 shards exited 0, after ")
	looks := 0
	for _, c := range f.calls() {
		if c[0] == "get" && c[1] == "job" {
			looks++
		}
	}
	if looks != 3 {
		t.Errorf("%d looks at the Job, want 3 (the third sees every pod exited 0)", looks)
	}
}

// TestWatchEvery: a watch asks every watchFast while the start waits for
// the pods and from a second before the shards' end, else every --poll.
func TestWatchEvery(t *testing.T) {
	poll := 2 * time.Second
	now := time.Now()
	for _, c := range []struct {
		name string
		w    watchSpec
		want time.Duration
	}{
		{"waiting for the pods", watchSpec{release: &startRelease{}}, watchFast},
		{"running", watchSpec{startAt: now, runs: time.Minute}, poll},
		{"near the end", watchSpec{startAt: now.Add(-59500 * time.Millisecond), runs: time.Minute}, watchFast},
		{"a fixed start, end unknown", watchSpec{startAt: now}, poll},
	} {
		if got := c.w.every(poll); got != c.want {
			t.Errorf("%s: every %v, want %v", c.name, got, c.want)
		}
	}
	if got := (&watchSpec{release: &startRelease{}}).every(100 * time.Millisecond); got != 100*time.Millisecond {
		t.Errorf("a --poll under watchFast: %v", got)
	}
}
