package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/openload/openload/internal/golden"
	"github.com/openload/openload/internal/kube"
)

// The fake kubectl: the test binary itself, run as --kubectl through a
// small script that sets OPENLOAD_FAKE_KUBECTL to a directory holding a
// scenario (scenario.json). It appends each call's arguments to calls
// (one line, tab-separated), keeps what create reads as created.yaml,
// and answers from the scenario: the Job's and the pods' JSON in turn
// (the last one repeated), each pod's log.

const fakeKubectlEnv = "OPENLOAD_FAKE_KUBECTL"

// fakeScenario is what the fake kubectl plays back.
type fakeScenario struct {
	Job     []string          // `get job NAME -o json`, one answer per call, the last repeated
	Pods    []string          // `get pods -l … -o json`, likewise
	Logs    map[string]string // `logs POD`, by pod name; a pod not here: an error
	Create  string            // create's error on stderr, exit 1; "" it succeeds
	Metrics string            // `get --raw …/proxy/metrics`: every pod's /metrics
	// PodMetrics, when given, are the pods' /metrics by pod name instead;
	// a pod not here does not answer.
	PodMetrics map[string]string
}

// fakeKubectl is main() for the fake: it runs in the test binary (see
// TestMain) and exits.
func fakeKubectl(dir string) {
	args := os.Args[1:]
	fail := func(msg string) {
		fmt.Fprintln(os.Stderr, msg)
		os.Exit(1)
	}
	f, err := os.OpenFile(filepath.Join(dir, "calls"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		fail(err.Error())
	}
	fmt.Fprintln(f, strings.Join(args, "\t"))
	f.Close()
	b, err := os.ReadFile(filepath.Join(dir, "scenario.json"))
	if err != nil {
		fail(err.Error())
	}
	var sc fakeScenario
	if err := json.Unmarshal(b, &sc); err != nil {
		fail(err.Error())
	}
	if len(args) > 1 && args[0] == "--namespace" {
		args = args[2:]
	}
	next := func(key string, answers []string) string {
		path := filepath.Join(dir, "count-"+key)
		b, _ := os.ReadFile(path)
		n, _ := strconv.Atoi(string(b))
		os.WriteFile(path, []byte(strconv.Itoa(n+1)), 0o644)
		if len(answers) == 0 {
			fail("Error from server (NotFound): " + key + " not found")
		}
		return answers[min(n, len(answers)-1)]
	}
	switch {
	case len(args) >= 3 && args[0] == "create" && args[1] == "-f" && args[2] == "-":
		var in bytes.Buffer
		in.ReadFrom(os.Stdin)
		os.WriteFile(filepath.Join(dir, "created.yaml"), in.Bytes(), 0o644)
		if sc.Create != "" {
			fail(sc.Create)
		}
		if slices.Contains(args, "jsonpath={.metadata.namespace}") {
			fmt.Print("default") // the namespace the Job was created in
		} else {
			fmt.Println("job.batch/created")
		}
	case len(args) >= 3 && args[0] == "get" && args[1] == "--raw" && strings.HasSuffix(args[2], "/proxy/metrics"):
		if sc.PodMetrics == nil {
			fmt.Print(sc.Metrics)
			break
		}
		pod, _, _ := strings.Cut(strings.TrimSuffix(args[2][strings.Index(args[2], "/pods/")+len("/pods/"):], "/proxy/metrics"), ":")
		m, ok := sc.PodMetrics[pod]
		if !ok {
			fail("Error from server (ServiceUnavailable): no endpoints available for pod " + pod)
		}
		fmt.Print(m)
	case len(args) >= 2 && args[0] == "get" && args[1] == "job":
		fmt.Print(next("job", sc.Job))
	case len(args) >= 2 && args[0] == "get" && args[1] == "pods":
		fmt.Print(next("pods", sc.Pods))
	case len(args) >= 2 && args[0] == "logs":
		l, ok := sc.Logs[args[1]]
		if !ok {
			fail(fmt.Sprintf("Error from server (NotFound): pods %q not found", args[1]))
		}
		fmt.Print(l)
	case len(args) >= 1 && args[0] == "annotate":
		fmt.Println("pod/x annotated")
	case len(args) >= 1 && args[0] == "delete":
		fmt.Println("job.batch \"x\" deleted")
	default:
		fail("fake kubectl: unexpected call " + strings.Join(args, " "))
	}
	os.Exit(0)
}

// fake is a fake kubectl for one test: its command and its directory.
type fake struct {
	t       *testing.T
	dir     string
	command string
}

func newFake(t *testing.T, sc fakeScenario) *fake {
	t.Helper()
	dir := t.TempDir()
	b, err := json.Marshal(sc)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, dir, "scenario.json", string(b))
	script := fmt.Sprintf("#!/bin/sh\n%s=%s exec %s \"$@\"\n", fakeKubectlEnv, shellQuote(dir), shellQuote(os.Args[0]))
	cmd := writeFile(t, dir, "kubectl", script)
	if err := os.Chmod(cmd, 0o755); err != nil {
		t.Fatal(err)
	}
	return &fake{t: t, dir: dir, command: cmd}
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// calls are the fake's calls so far, each as its arguments.
func (f *fake) calls() [][]string {
	b, _ := os.ReadFile(filepath.Join(f.dir, "calls"))
	var out [][]string
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if l != "" {
			out = append(out, strings.Split(l, "\t"))
		}
	}
	return out
}

// called counts the calls whose arguments start with prefix.
func (f *fake) called(prefix ...string) int {
	n := 0
	for _, c := range f.calls() {
		if len(c) >= len(prefix) && slices.Equal(c[:len(prefix)], prefix) {
			n++
		}
	}
	return n
}

// jobJSON is `kubectl get job -o json` of a Job with the conditions
// given True ("Complete", "Failed") and its failed indexes.
func jobJSON(failedIndexes string, active, succeeded, failed int, conditions ...string) string {
	var conds []map[string]string
	for _, c := range conditions {
		reason := map[string]string{"Complete": "", "Failed": "FailedIndexes", "SuccessCriteriaMet": "CompletionsReached", "FailureTarget": "FailedIndexes"}[c]
		conds = append(conds, map[string]string{"type": c, "status": "True", "reason": reason, "message": ""})
	}
	status := map[string]any{"active": active, "succeeded": succeeded, "failed": failed, "conditions": conds}
	if failedIndexes != "" {
		status["failedIndexes"] = failedIndexes
	}
	b, _ := json.Marshal(map[string]any{"apiVersion": "batch/v1", "kind": "Job", "metadata": map[string]any{"name": "openload-test"}, "status": status})
	return string(b)
}

// fakePod is one pod of podsJSON.
type fakePod struct {
	index         int
	phase         string // Pending, Running, Succeeded, Failed
	exit          int
	reason        string // the terminated container's
	waiting       string // the waiting container's reason
	unschedulable string // PodScheduled False's message
}

func (p fakePod) name() string { return fmt.Sprintf("openload-test-%d-abcde", p.index) }

func podsJSON(pods ...fakePod) string {
	var items []any
	for _, p := range pods {
		var conds []any
		var state map[string]any
		switch {
		case p.unschedulable != "":
			conds = append(conds, map[string]string{"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": p.unschedulable})
		case p.phase == "Pending":
			state = map[string]any{"waiting": map[string]string{"reason": cmp(p.waiting, "ContainerCreating")}}
		case p.phase == "Running":
			state = map[string]any{"running": map[string]string{"startedAt": "2026-12-01T15:00:00Z"}}
		default:
			state = map[string]any{"terminated": map[string]any{"exitCode": p.exit, "reason": cmp(p.reason, map[bool]string{true: "Completed", false: "Error"}[p.exit == 0])}}
		}
		st := map[string]any{"phase": p.phase, "conditions": conds}
		if state != nil {
			st["containerStatuses"] = []any{map[string]any{"name": "openload", "state": state}}
		}
		items = append(items, map[string]any{
			"kind": "Pod",
			"metadata": map[string]any{
				"name":        p.name(),
				"labels":      map[string]string{kube.LabelJobName: "openload-test", kube.AnnotationIndex: strconv.Itoa(p.index)},
				"annotations": map[string]string{kube.AnnotationIndex: strconv.Itoa(p.index)},
			},
			"status": st,
		})
	}
	b, _ := json.Marshal(map[string]any{"apiVersion": "v1", "kind": "List", "items": items})
	return string(b)
}

func cmp(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// allPods is every index of n in one state.
func allPods(n int, p fakePod) []fakePod {
	out := make([]fakePod, n)
	for i := range out {
		out[i] = p
		out[i].index = i
	}
	return out
}

// shardLogs runs the n shards of one small schedule, as the pods would,
// and returns what each wrote to stdout with -q -o -: the result a pod's
// log holds, once for the whole test binary.
var shardLogs = sync.OnceValues(func() ([]string, error) {
	const n = 4
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	at := time.Now().Add(time.Second).UTC().Format(time.RFC3339Nano)
	logs := make([]string, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			code, stdout, stderr := runCLI("-r", "200", "-d", "1s", "-c", "8", "--send-delay-budget", "1s",
				"--shard", fmt.Sprintf("%d/%d", i, n), "--start-at", at, "-q", "-o", "-", srv.URL+"/predict")
			if code != exitOK {
				errs[i] = fmt.Errorf("shard %d: exit %d: %s", i, code, stderr)
			}
			logs[i] = stdout
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return logs, nil
})

// podLogs are the shards' logs by pod name, stderr's lines around each
// result and inside it, as kubectl logs interleaves them.
func podLogs(t *testing.T) map[string]string {
	t.Helper()
	logs, err := shardLogs()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for i, l := range logs {
		lines := strings.SplitAfter(l, "\n")
		mid := len(lines) / 2
		l = strings.Join(lines[:mid], "") + "openload: a line from stderr, in the middle\n" + strings.Join(lines[mid:], "")
		out[fakePod{index: i}.name()] = "openload: shard starting\n" + l + "openload: serving metrics for 30s more\n"
	}
	return out
}

// interrupted is a shard's log whose result says its run was
// interrupted (its pod deleted), as openload writes it on SIGTERM.
func interrupted(t *testing.T, log string) string {
	t.Helper()
	i := strings.Index(log, "\n{\n")
	if i < 0 {
		t.Fatal("no result in the log")
	}
	return log[:i] + "\n{\n  \"interrupted\": true," + log[i+2:]
}

// k8sArgs are a cluster run's arguments against the fake, fast: short
// lead and poll.
func k8sArgs(f *fake, extra ...string) []string {
	return append([]string{"k8s", "run", "--shards", "4", "--name", "openload-test", "--kubectl", f.command,
		"--lead", "1s", "--poll", "20ms", "--grace", "5s", "-r", "200", "-d", "1s", "-c", "8", "--send-delay-budget", "1s"},
		append(extra, "http://openload-stub:8080/predict")...)
}

// TestK8sRun: a Job whose pods start, run and succeed: the runner
// creates it, follows it, takes every shard's result from its log
// (stderr's lines around and inside it), merges, writes -o, deletes the
// Job, and exits as the merge does.
func TestK8sRun(t *testing.T) {
	f := newFake(t, fakeScenario{
		Job: []string{jobJSON("", 0, 0, 0), jobJSON("", 4, 0, 0), jobJSON("", 4, 0, 0), jobJSON("", 0, 4, 0, "SuccessCriteriaMet", "Complete")},
		Pods: []string{podsJSON(allPods(4, fakePod{phase: "Pending"})...), podsJSON(allPods(4, fakePod{phase: "Running"})...),
			podsJSON(allPods(4, fakePod{phase: "Running"})...), podsJSON(allPods(4, fakePod{phase: "Succeeded"})...)},
		Logs: podLogs(t),
	})
	out := filepath.Join(t.TempDir(), "merged.json")
	before := time.Now()
	code, stdout, stderr := runCLI(k8sArgs(f, "-o", out, "-H", "X-Run: it's \"one\"")...)
	after := time.Now()
	if code != exitOK {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	t.Logf("stderr:\n%s", stderr)
	wantLines(t, stdout, "scheduled 200 = all 4 shards", "shards   all 4 shards of constant 200/s for 1s")
	wantLines(t, stderr, "openload: k8s run: job openload-test: 4 pods share constant 200/s for 1s, starting at ",
		"job openload-test complete: 4 of 4 shards succeeded", "deleted job openload-test and its pods", "wrote "+out)
	if res := readResult(t, out); res.Counts.Scheduled != 200 || res.Config.Shard == nil || !res.Config.Shard.Complete() {
		t.Errorf("merged result: scheduled %d, shard %+v", res.Counts.Scheduled, res.Config.Shard)
	}
	if f.called("create", "-f", "-") != 1 || f.called("logs") != 4 || f.called("delete", "job,configmap,secret", "-l", "openload.dev/run=openload-test") != 1 {
		t.Errorf("calls: %q", f.calls())
	}
	// The Job created is the one 'k8s manifest' prints, with this run's
	// start, and its pods get the run's flags as typed, after the shard's.
	b, err := os.ReadFile(filepath.Join(f.dir, "created.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	// The deploy module's test decodes this Job strictly as a batch/v1
	// Job (deploy/manifest_test.go): the start made fixed.
	golden.CheckFile(t, filepath.Join("..", "..", "deploy", "testdata", "job-run.yaml"),
		regexp.MustCompile(`value: "[0-9T:Z-]+"`).ReplaceAllString(string(b), `value: "2026-12-01T15:00:00Z"`))
	var job struct {
		Spec struct {
			ActiveDeadlineSeconds int `yaml:"activeDeadlineSeconds"`
			Template              struct {
				Spec struct {
					Containers []struct {
						Args []string
						Env  []struct{ Name, Value string }
					}
				}
			}
		}
	}
	if err := yaml.Unmarshal(b, &job); err != nil {
		t.Fatal(err)
	}
	c := job.Spec.Template.Spec.Containers[0]
	want := []string{"--shard-from-env=JOB_COMPLETION_INDEX/4", "--start-at=$(START_AT)", "--quiet", "--output=-",
		"--rate=200", "--duration=1s", "--connections=8", "--send-delay-budget=1s", "--header=X-Run: it's \"one\"", "http://openload-stub:8080/predict"}
	if !slices.Equal(c.Args, want) {
		t.Errorf("args %q\nwant %q", c.Args, want)
	}
	// The start is the lead (1 s) after the command ran, rounded up to a
	// whole second for RFC 3339: between before + lead and after + lead
	// + 1 s, however long the command took.
	if at, err := time.Parse(time.RFC3339, c.Env[0].Value); c.Env[0].Name != "START_AT" || err != nil ||
		at.Before(before.Add(time.Second)) || !at.Before(after.Add(2*time.Second)) {
		t.Errorf("env %+v: want START_AT from %v + 1 s to %v + 2 s", c.Env, before.UTC(), after.UTC())
	}
	// lead 1s + duration 1s + drain 10s + grace 5s
	if job.Spec.ActiveDeadlineSeconds != 17 {
		t.Errorf("activeDeadlineSeconds %d, want 17", job.Spec.ActiveDeadlineSeconds)
	}
}

// TestK8sRunFailedShards: one pod killed (exit 137, no result), one
// deleted mid-run, one interrupted (its result says so): each is named by
// shard and pod, the merge is refused (exit 3, never 130), and with
// --partial the others are merged.
func TestK8sRunFailedShards(t *testing.T) {
	logs := podLogs(t)
	logs[fakePod{index: 1}.name()] = "openload: shard starting\n" // killed before it wrote anything
	logs[fakePod{index: 3}.name()] = interrupted(t, logs[fakePod{index: 3}.name()])
	running := allPods(4, fakePod{phase: "Running"})
	ended := []fakePod{{index: 0, phase: "Succeeded"}, {index: 1, phase: "Failed", exit: 137, reason: "OOMKilled"}, {index: 3, phase: "Failed", exit: 130}}
	sc := fakeScenario{
		Job:  []string{jobJSON("", 4, 0, 0), jobJSON("", 4, 0, 0), jobJSON("1-3", 0, 1, 3, "FailureTarget", "Failed")},
		Pods: []string{podsJSON(running...), podsJSON(running...), podsJSON(ended...)},
		Logs: logs,
	}
	f := newFake(t, sc)
	code, stdout, stderr := runCLI(k8sArgs(f)...)
	t.Logf("stderr:\n%s", stderr)
	if code != exitRuntime {
		t.Errorf("exit %d, want %d\nstdout:\n%s", code, exitRuntime, stdout)
	}
	wantLines(t, stderr,
		"job openload-test failed (FailedIndexes): failed indexes [1 2 3]",
		`shard 1/4 (pod openload-test-1-abcde): Failed, exit 137 (OOMKilled): no result in its log (it ends "openload: shard starting")`,
		"shard 2/4 (pod openload-test-2-abcde): deleted: no result",
		"openload: k8s run: shard 3/4 (pod openload-test-3-abcde) was interrupted at ",
		"(--partial merges the other shards)")
	if f.called("delete", "job,configmap,secret", "-l", "openload.dev/run=openload-test") != 1 {
		t.Errorf("the Job was not deleted: %q", f.calls())
	}

	// With --partial, the shards that left a whole result are merged,
	// the interrupted one left out, said; the exit is the merge's.
	logs = podLogs(t)
	logs[fakePod{index: 3}.name()] = interrupted(t, logs[fakePod{index: 3}.name()])
	ended = []fakePod{{index: 0, phase: "Succeeded"}, {index: 1, phase: "Succeeded"}, {index: 2, phase: "Succeeded"}, {index: 3, phase: "Failed", exit: 130}}
	f = newFake(t, fakeScenario{Job: []string{jobJSON("3", 0, 3, 1, "FailureTarget", "Failed")}, Pods: []string{podsJSON(ended...)}, Logs: logs})
	code, stdout, stderr = runCLI(k8sArgs(f, "--partial")...)
	t.Logf("--partial: exit %d, stderr:\n%s", code, stderr)
	if code == exitInterrupted || code == exitRuntime || code == exitUsage {
		t.Errorf("--partial: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	wantLines(t, stderr, "shard 3/4 (pod openload-test-3-abcde) was interrupted at", "left out (--partial)")
	wantLines(t, stdout, "3 of 4 shards")
}

// TestK8sRunUnschedulable: a pod the scheduler cannot place for want of
// CPU stops the run at once, with what to lower, and the Job deleted.
func TestK8sRunUnschedulable(t *testing.T) {
	pods := allPods(4, fakePod{phase: "Pending"})
	pods[1].unschedulable = "0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod."
	f := newFake(t, fakeScenario{Job: []string{jobJSON("", 4, 0, 0)}, Pods: []string{podsJSON(pods...)}})
	code, _, stderr := runCLI(k8sArgs(f, "--cpu", "2")...)
	if code != exitRuntime {
		t.Errorf("exit %d, want %d", code, exitRuntime)
	}
	wantLines(t, stderr, "openload: k8s run: shard 1/4: pod openload-test-1-abcde: 0/1 nodes are available: 1 Insufficient cpu. preemption",
		": lower --cpu (2 a pod now; a shard of 50/s used about 62m on the project's machine, deploy/README.md) or --shards (4 now)")
	t.Logf("stderr:\n%s", stderr)
	if f.called("delete", "job,configmap,secret", "-l", "openload.dev/run=openload-test") != 1 || f.called("logs") != 0 {
		t.Errorf("calls: %q", f.calls())
	}
}

// TestK8sRunInterrupt: ^C (the run's context cancelled) deletes the Job
// and exits 130; with --keep the Job stays.
func TestK8sRunInterrupt(t *testing.T) {
	for _, keep := range []bool{false, true} {
		f := newFake(t, fakeScenario{Job: []string{jobJSON("", 4, 0, 0)}, Pods: []string{podsJSON(allPods(4, fakePod{phase: "Running"})...)}})
		ctx, cancel := context.WithCancel(context.Background())
		go func() {
			for f.called("get", "pods") < 3 {
				time.Sleep(10 * time.Millisecond)
			}
			cancel()
		}()
		args := k8sArgs(f)
		if keep {
			args = append([]string{args[0], args[1], "--keep"}, args[2:]...)
		}
		var stdout, stderr bytes.Buffer
		code := run(ctx, args, &stdout, &stderr)
		cancel()
		if code != exitInterrupted {
			t.Errorf("keep %v: exit %d, want %d: %s", keep, code, exitInterrupted, stderr.String())
		}
		wantLines(t, stderr.String(), "interrupted: the shards' results are not collected")
		deleted := f.called("delete", "job,configmap,secret", "-l", "openload.dev/run=openload-test")
		if keep {
			wantLines(t, stderr.String(), "job openload-test kept (--keep): collect it with: openload k8s collect openload-test --namespace default; delete it with: kubectl delete job,configmap,secret -l openload.dev/run=openload-test --namespace default")
		}
		if (deleted == 1) == keep {
			t.Errorf("keep %v: %d deletes: %q", keep, deleted, f.calls())
		}
	}
}

// TestK8sRunLateAndTimeout: pods still pending at the start are named
// (they start late); a Job that never ends is given up past lead +
// duration + drain + grace, its pods' states said, and deleted.
//
// When it gives up is a relation to those inputs, not a bound on the
// machine: at lead 1 s + duration 1 s + drain 0 s + grace 0 s after the
// Job was created (so at least 2 s after the command began), and before
// the 10 s of the default --drain had passed besides: a runner that left
// out --drain 0s would give up no earlier than 12 s, one that left out
// --grace 0s says so in its message (5 s, k8sArgs'). The 10 s between is
// for a busy machine's polls of kubectl, each a process start.
func TestK8sRunLateAndTimeout(t *testing.T) {
	pods := allPods(4, fakePod{phase: "Running"})
	pods[2] = fakePod{index: 2, phase: "Pending", waiting: "ContainerCreating"}
	f := newFake(t, fakeScenario{Job: []string{jobJSON("", 3, 0, 0)}, Pods: []string{podsJSON(pods...)}})
	start := time.Now()
	code, _, stderr := runCLI(k8sArgs(f, "--grace", "0s", "--drain", "0s")...)
	if code != exitRuntime {
		t.Errorf("exit %d, want %d", code, exitRuntime)
	}
	if d, end := time.Since(start), 2*time.Second; d < end || d >= end+10*time.Second {
		t.Errorf("gave up %v after the command began: want at least lead + duration + drain + grace = %v, and under the %v the default --drain would add", d, end, 10*time.Second)
	}
	t.Logf("stderr:\n%s", stderr)
	wantLines(t, stderr,
		"at the start, 1 of 4 shards were not running: shard 2/4 (pod openload-test-2-abcde): Pending (ContainerCreating): they start late",
		"job openload-test has not ended 0s after its last shard should have (--grace): shard 0/4 (pod openload-test-0-abcde): Running;",
		"deleted job openload-test")
}

// TestK8sUsage: the command line is checked as a run's before anything
// is created: a bad flag is one line and exit 2, and kubectl is not run.
func TestK8sUsage(t *testing.T) {
	f := newFake(t, fakeScenario{})
	url := "http://openload-stub:8080/predict"
	var b strings.Builder
	for _, args := range [][]string{
		{"k8s"},
		{"k8s", "go"},
		{"k8s", "--shards", "4", "run"},
		{"k8s", "run", "-r", "10", url},
		{"k8s", "run", "--shards", "0", "-r", "10", url},
		{"k8s", "run", "--shards", "4", "-r", "10"},
		{"k8s", "run", "--shards", "4", "-r", "abc", url},
		{"k8s", "run", "--shards", "4", "-d", "1s", url},
		{"k8s", "run", "--shards", "4", "-r", "10", "--slo", "latency.p99<=1ms", url},
		{"k8s", "run", "--shards", "4", "-r", "10", "--body-file", "b.json", url},
		{"k8s", "run", "--shards", "4", "-r", "10", "--shard", "1/4", url},
		{"k8s", "run", "--shards", "4", "-r", "10", "--start-at", "2030-01-01T00:00:00Z", url},
		{"k8s", "run", "--shards", "4", "-r", "10", "--cpu", "two", url},
		{"k8s", "run", "--shards", "4", "-r", "10", "--memory", "2Gi", "--memory-limit", "1Gi", url},
		{"k8s", "run", "--shards", "4", "-r", "10", "--name", "Bad_Name", url},
		{"k8s", "run", "--shards", "4", "-r", "10", "--lead", "0s", url},
		{"k8s", "run", "--shards", "4", "-r", "10", "--closed", url},
		{"k8s", "run", "--shards", "4", "-r", "10", "ftp://x/", url},
		{"k8s", "run", "--shards", "4", "-r", "10", "ftp://x/"},
		{"k8s", "manifest", "--shards", "4", "-r", "10", "--keep", url},
		{"k8s", "manifest", "--shards", "4", "-r", "10", "-o", "x.yaml", url},
		{"k8s", "manifest", "--shards", "4", "-r", "10", "--metrics-addr", "127.0.0.1:9464", url},
		{"k8s", "manifest", "--shards", "4", "-r", "10", "--metrics-addr", "[::1]:9464", url},
		{"k8s", "run", "--shards", "4", "-r", "10", "--metrics-addr", "localhost:9464", url},
		{"k8s", "manifest", "--shards", "4", "-r", "10", "--metrics-addr", ":9464", "--metrics-grace", "10s", url},
		{"k8s", "run", "--shards", "4", "-r", "10", "--node-selector", "pool", url},
		{"k8s", "run", "--shards", "4", "-r", "10", "--node-selector", "pool=a b", url},
		{"k8s", "run", "--shards", "4", "-r", "10", "--toleration", "dedicated=load", url},
		{"k8s", "run", "--shards", "4", "-r", "10", "--toleration", "dedicated=load:NoRun", url},
		{"k8s", "manifest", "--shards", "4", "-r", "10", "--pod-label", "Bad_Prefix.x/y=z", url},
		{"k8s", "manifest", "--shards", "4", "-r", "10", "--pod-label", "batch.kubernetes.io/job-name=x", url},
		{"k8s", "manifest", "--shards", "4", "-r", "10", "--pod-annotation", "-x=1", url},
		{"k8s", "manifest", "--shards", "4", "-r", "10", "--image-pull-secret", "Reg_Cred", url},
		{"k8s", "manifest", "--shards", "4", "-r", "10", "--service-account", "my account", url},
		{"k8s", "manifest", "--shards", "4", "-r", "10", "--priority-class", "High", url},
		{"k8s", "run", "--shards", "4", "-r", "10", "--targets", "missing.http"},
		{"k8s", "run", "--shards", "4", "-r", "10", "--detach", "-o", "x.json", url},
		{"k8s", "manifest", "--shards", "4", "-r", "10", "--detach", url},
		{"k8s", "collect"},
		{"k8s", "status", "a", "b"},
		{"k8s", "collect", "openload-x", "--poll", "0s"},
	} {
		shown := strings.Join(args, " ")
		if len(args) > 1 && args[1] == "run" {
			args = append(args, "--kubectl", f.command)
		}
		code, stdout, stderr := runCLI(args...)
		if code != exitUsage || stdout != "" || strings.Count(stderr, "\n") != 2 {
			t.Errorf("%q: exit %d, stdout %q, stderr %q", args, code, stdout, stderr)
		}
		fmt.Fprintf(&b, "$ openload %s\n%s", shown, stderr)
	}
	if len(f.calls()) != 0 {
		t.Errorf("kubectl was run: %q", f.calls())
	}
	golden.Check(t, "k8s-usage-errors.golden", b.String())

	code, _, stderr := runCLI("k8s", "run", "--shards", "2", "--kubectl", filepath.Join(t.TempDir(), "nokubectl"), "-r", "10", url)
	if code != exitRuntime || !strings.Contains(stderr, "nokubectl") {
		t.Errorf("no kubectl: exit %d: %s", code, stderr)
	}
}

// TestK8sPassThrough: the run's flags reach the pods as typed, each as
// --NAME=VALUE, whatever spelling was used; the cluster's and the
// runner's own do not.
func TestK8sPassThrough(t *testing.T) {
	for _, c := range []struct{ in, want []string }{
		{[]string{"-rate", "10", "-qc4", "--shards=2", "URL"}, []string{"--rate=10", "--connections=4"}},
		{[]string{"-r10", "-H", "-rate", "--slo", "response.p99<=1s", "-o", "m.json", "URL"}, []string{"--rate=10", "--header=-rate", "--slo=response.p99<=1s"}},
		{[]string{"-c=4", "-q=false", "--yes", "--cpu", "1", "URL", "--http2"}, []string{"--connections=4", "--yes", "--http2"}},
		{[]string{"-r", "10", "--", "-URL"}, []string{"--rate=10"}},
	} {
		var o loadOptions
		var k k8sOptions
		fs := k8sFlags(&o, &k)
		if err := parseFlags(fs, c.in); err != nil {
			t.Fatal(err)
		}
		got, err := passThrough(fs, c.in)
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("%q: %q, %v; want %q", c.in, got, err, c.want)
		}
	}
}

// TestK8sManifestGolden: deploy/kubernetes/job.yaml is what 'openload
// k8s manifest' prints for the documented defaults (go test -update
// rewrites it), so the runner's Job and the static one are one; the
// deploy module's test decodes it strictly as a batch/v1 Job.
func TestK8sManifestGolden(t *testing.T) {
	stdout, _ := runOK(t, strings.Fields(manifestDefaults)...)
	golden.CheckFile(t, filepath.Join("..", "..", "deploy", "kubernetes", "job.yaml"), stdout)
	var doc map[string]any
	if err := yaml.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatal(err)
	}
}

// TestK8sMetricsGrace: a Job that serves metrics without a
// --metrics-grace gets one from the shipped PodMonitor's interval, which
// is kube.ScrapeInterval; the Job's deadline counts it.
func TestK8sMetricsGrace(t *testing.T) {
	pm, err := os.ReadFile(filepath.Join("..", "..", "deploy", "kubernetes", "podmonitor.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^\s+interval: (\S+)$`).FindSubmatch(pm)
	if m == nil {
		t.Fatal("podmonitor.yaml has no interval")
	}
	if d, err := time.ParseDuration(string(m[1])); err != nil || d != kube.ScrapeInterval {
		t.Errorf("podmonitor.yaml's interval %s, kube.ScrapeInterval %v: keep them one", m[1], kube.ScrapeInterval)
	}
	stdout, _ := runOK(t, "k8s", "manifest", "--shards", "2", "-r", "10", "--metrics-addr=:9464", "http://openload-stub:8080/predict")
	want := fmt.Sprintf("- \"--metrics-grace=%v\"", kube.MetricsGrace)
	if !strings.Contains(stdout, want) || kube.MetricsGrace <= kube.ScrapeInterval {
		t.Errorf("the manifest lacks %s (longer than the interval %v):\n%s", want, kube.ScrapeInterval, stdout)
	}
	stdout, _ = runOK(t, "k8s", "manifest", "--shards", "2", "-r", "10", "http://openload-stub:8080/predict")
	if strings.Contains(stdout, "metrics-grace") {
		t.Errorf("a Job without metrics got a grace:\n%s", stdout)
	}
}

// manifestDefaults is the command line of deploy/kubernetes/job.yaml;
// deploy/README.md gives it.
const manifestDefaults = "k8s manifest --shards 4 -r 4000 -d 60s -c 512 --metrics-addr=:9464 --metrics-grace=30s http://openload-stub:8080/predict"

// withSpec is a Job's JSON (jobJSON) with the spec a runner that did not
// create it reads: its completions, its shard container's args and start.
func withSpec(t *testing.T, job string, n int, args ...string) string {
	t.Helper()
	var j map[string]any
	if err := json.Unmarshal([]byte(job), &j); err != nil {
		t.Fatal(err)
	}
	j["spec"] = map[string]any{"completions": n, "template": map[string]any{"spec": map[string]any{"containers": []any{
		map[string]any{"name": "openload", "args": args, "env": []any{map[string]string{"name": "START_AT", "value": "2026-12-01T15:00:00Z"}}},
	}}}}
	b, _ := json.Marshal(j)
	return string(b)
}

// TestK8sRunImagePull: a pod whose image the node cannot pull stops the
// run at once with the kubelet's reason, and the Job is deleted; a pod
// still being created is waited for.
func TestK8sRunImagePull(t *testing.T) {
	pods := allPods(4, fakePod{phase: "Pending"})
	pending := podsJSON(pods...)
	pods[3].waiting = "ImagePullBackOff"
	f := newFake(t, fakeScenario{Job: []string{jobJSON("", 4, 0, 0)}, Pods: []string{pending, podsJSON(pods...)}})
	code, _, stderr := runCLI(k8sArgs(f, "--image", "registry.invalid/openload:dev")...)
	t.Logf("stderr:\n%s", stderr)
	if code != exitRuntime {
		t.Errorf("exit %d, want %d", code, exitRuntime)
	}
	wantLines(t, stderr, "openload: k8s run: shard 3/4: pod openload-test-3-abcde: the node cannot pull the image: ImagePullBackOff (--image names it")
	if f.called("get", "pods") != 2 || f.called("delete", "job,configmap,secret", "-l", "openload.dev/run=openload-test") != 1 || f.called("logs") != 0 {
		t.Errorf("calls: %q", f.calls())
	}
}

// TestK8sRunObjectiveBreached: every shard left its result and exited 4
// (its share breached an objective), so the Job failed its indexes: the
// runner says so as a verdict, not as a cluster failure, and exits 4 as
// the merged verdict says.
func TestK8sRunObjectiveBreached(t *testing.T) {
	f := newFake(t, fakeScenario{
		Job:  []string{jobJSON("", 4, 0, 0), jobJSON("0-3", 0, 0, 4, "FailureTarget", "Failed")},
		Pods: []string{podsJSON(allPods(4, fakePod{phase: "Running"})...), podsJSON(allPods(4, fakePod{phase: "Failed", exit: exitSLOBreached})...)},
		Logs: podLogs(t),
	})
	code, stdout, stderr := runCLI(k8sArgs(f, "--slo", "response.p50<=1ns")...)
	t.Logf("stderr:\n%s", stderr)
	if code != exitSLOBreached {
		t.Errorf("exit %d, want %d\nstdout:\n%s", code, exitSLOBreached, stdout)
	}
	wantLines(t, stderr, "job openload-test ended: every shard left its result; shard 0/4 exit 4 (an objective breached on its share), shard 1/4 exit 4")
	if strings.Contains(stderr, "failed (FailedIndexes)") {
		t.Errorf("a breached objective reads as a cluster failure:\n%s", stderr)
	}
	wantLines(t, stdout, "FAIL  response.p50 <= 0.000 ms: measured", "objectives: BREACHED: response.p50<=1ns (exit 4)")
}

// TestK8sDetachCollect: --detach creates the Job, prints its name and
// exits 0 without following it; collect reads the Job's shards and
// objectives from its spec, waits for its end and merges as run does;
// with --partial it merges what is there and leaves a running Job; status
// names each shard's state.
func TestK8sDetachCollect(t *testing.T) {
	f := newFake(t, fakeScenario{})
	code, stdout, stderr := runCLI(k8sArgs(f, "--detach")...)
	t.Logf("detach: stderr:\n%s", stderr)
	if code != exitOK || stdout != "openload-test\n" {
		t.Errorf("detach: exit %d, stdout %q", code, stdout)
	}
	wantLines(t, stderr, "job openload-test created: 4 pods share constant 200/s for 1s", "collect it with: openload k8s collect openload-test --namespace default")
	if f.called("create", "-f", "-") != 1 || len(f.calls()) != 1 {
		t.Errorf("detach: calls %q", f.calls())
	}
	if s := secondSignal(); strings.Contains(s, "left running") {
		t.Errorf("a detached Job is left on purpose, yet a second signal would say %q", s)
	}

	args := []string{"--shard-from-env=JOB_COMPLETION_INDEX/4", "--start-at=$(START_AT)", "--quiet", "--output=-", "--rate=200", "--slo=response.p50<=1ns", "--send-delay-budget=1s", "http://x/"}
	f = newFake(t, fakeScenario{
		Job:  []string{withSpec(t, jobJSON("", 4, 0, 0), 4, args...), withSpec(t, jobJSON("", 0, 4, 0, "SuccessCriteriaMet", "Complete"), 4, args...)},
		Pods: []string{podsJSON(allPods(4, fakePod{phase: "Running"})...), podsJSON(allPods(4, fakePod{phase: "Succeeded"})...)},
		Logs: podLogs(t),
	})
	out := filepath.Join(t.TempDir(), "merged.json")
	code, stdout, stderr = runCLI("k8s", "collect", "openload-test", "-n", "ns1", "--kubectl", f.command, "--poll", "20ms", "-o", out)
	t.Logf("collect: stderr:\n%s", stderr)
	if code != exitSLOBreached {
		t.Errorf("collect: exit %d, want the objective's %d\nstdout:\n%s", code, exitSLOBreached, stdout)
	}
	wantLines(t, stdout, "scheduled 200 = all 4 shards", "FAIL  response.p50 <= 0.000 ms: measured")
	wantLines(t, stderr, "deleted job openload-test and its pods", "wrote "+out)
	if res := readResult(t, out); res.Counts.Scheduled != 200 {
		t.Errorf("collect: scheduled %d", res.Counts.Scheduled)
	}
	if f.called("--namespace", "ns1", "logs") != 4 || f.called("--namespace", "ns1", "delete", "job,configmap,secret", "-l", "openload.dev/run=openload-test") != 1 {
		t.Errorf("collect: calls %q", f.calls())
	}

	// --partial: two shards done, two running: merged, the Job kept.
	logs := podLogs(t)
	pods := []fakePod{{index: 0, phase: "Succeeded"}, {index: 1, phase: "Succeeded"}, {index: 2, phase: "Running"}, {index: 3, phase: "Running"}}
	delete(logs, pods[2].name())
	logs[pods[3].name()] = "openload: shard starting\n"
	f = newFake(t, fakeScenario{Job: []string{withSpec(t, jobJSON("", 2, 2, 0), 4, args[:5]...)}, Pods: []string{podsJSON(pods...)}, Logs: logs})
	code, stdout, stderr = runCLI("k8s", "collect", "openload-test", "--kubectl", f.command, "--partial")
	t.Logf("collect --partial: exit %d, stderr:\n%s", code, stderr)
	if code != exitOK && code != exitCheckFailed {
		t.Errorf("collect --partial: exit %d\nstdout:\n%s", code, stdout)
	}
	wantLines(t, stdout, "2 of 4 shards")
	wantLines(t, stderr, "has not ended (--partial): merging what is there, leaving it running", "job openload-test kept")
	if f.called("delete") != 0 || f.called("get", "job") != 2 {
		t.Errorf("collect --partial: calls %q", f.calls())
	}

	code, stdout, stderr = runCLI("k8s", "status", "openload-test", "--kubectl", f.command)
	if code != exitOK {
		t.Errorf("status: exit %d: %s", code, stderr)
	}
	wantLines(t, stdout, "job openload-test: running: 4 shards: 2 active, 2 succeeded, 0 failed; started at 2026-12-01T15:00:00Z",
		"  shard 0/4 (pod openload-test-0-abcde): Succeeded", "  shard 3/4 (pod openload-test-3-abcde): Running")
	t.Logf("status:\n%s", stdout)
}

// TestK8sSecondSignal: from the Job's creation to its deletion, a second
// ^C names what it leaves running and how to delete it.
func TestK8sSecondSignal(t *testing.T) {
	defer noteLeft("")
	jr := &jobRunner{job: "openload-x7k2q"}
	jr.created("ns1")
	want := "openload: second signal: exiting now; left running: job openload-x7k2q in namespace ns1 and its pods: kubectl delete job,configmap,secret -l openload.dev/run=openload-x7k2q --namespace ns1"
	if got := secondSignal(); got != want {
		t.Errorf("%q\nwant %q", got, want)
	}
}

// TestK8sNoCluster: kubectl with no cluster to reach (as it answers with
// no KUBECONFIG: the default localhost:8080 refuses) is one line saying
// so and how to point kubectl at one, exit 3, not kubectl's paragraph.
func TestK8sNoCluster(t *testing.T) {
	for _, answer := range []string{
		`error: error validating "STDIN": error validating data: failed to download openapi: Get "http://localhost:8080/openapi/v2?timeout=32s": dial tcp 127.0.0.1:8080: connect: connection refused; if you choose to ignore these errors, turn validation off with --validate=false`,
		"The connection to the server localhost:8080 was refused - did you specify the right host or port?",
	} {
		f := newFake(t, fakeScenario{Create: answer})
		code, _, stderr := runCLI(k8sArgs(f)...)
		lines := strings.Split(strings.TrimSpace(stderr), "\n")
		last := lines[len(lines)-1]
		if code != exitRuntime || !strings.Contains(last, "no cluster is reachable") || !strings.Contains(last, "KUBECONFIG") || strings.Contains(stderr, "validate=false") {
			t.Errorf("exit %d, %q", code, stderr)
		}
	}
}
