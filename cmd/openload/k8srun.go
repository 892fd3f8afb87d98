package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/openload/openload/internal/kube"
	"github.com/openload/openload/result"
	"github.com/openload/openload/verify"
)

// shardCPU are the cores openload used at a few rates (requests per
// second) on the project's 2-core machine, its whole run included
// (10 s runs against bench/target, -c 64, the result's generator CPU;
// deploy/README.md): a run's fixed costs dominate at low rates.
var shardCPU = [][2]float64{{0, 0.06}, {250, 0.07}, {1000, 0.12}, {5000, 0.25}, {20000, 0.37}, {36745, 0.46}}

// cpuSecondsPer1000 is openload's CPU per 1,000 requests at half its
// ceiling (docs/BENCHMARKS.md, run 17): the slope past shardCPU's end.
const cpuSecondsPer1000 = 0.0125

// cpuNeed is the cores a shard sending rate per second used, read off
// shardCPU (linear between its points).
func cpuNeed(rate float64) float64 {
	for i := 1; i < len(shardCPU); i++ {
		if a, b := shardCPU[i-1], shardCPU[i]; rate <= b[0] {
			return a[1] + (rate-a[0])/(b[0]-a[0])*(b[1]-a[1])
		}
	}
	last := shardCPU[len(shardCPU)-1]
	return last[1] + (rate-last[0])*cpuSecondsPer1000/1000
}

// kubectlTimeout bounds one kubectl call: a cluster that does not answer
// in this long is said so rather than waited for.
const kubectlTimeout = time.Minute

// kubectl runs the --kubectl command against the Job's namespace.
type kubectl struct {
	command   string
	namespace string
}

// run runs kubectl with args (and -n NAMESPACE), stdin as its input,
// and returns its stdout; an error carries its stderr's last line.
func (k kubectl) run(ctx context.Context, stdin []byte, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, kubectlTimeout)
	defer cancel()
	what := "kubectl " + strings.Join(args[:min(len(args), 3)], " ")
	if k.namespace != "" {
		args = append([]string{"--namespace", k.namespace}, args...)
	}
	cmd := exec.CommandContext(ctx, k.command, args...)
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if cause, ok := noCluster(msg); ok {
			return stdout.Bytes(), fmt.Errorf("%s: no cluster is reachable (%s): point kubectl at one: KUBECONFIG=FILE, or kubectl config use-context NAME", what, cause)
		}
		if i := strings.LastIndexByte(msg, '\n'); i >= 0 {
			msg = msg[i+1:]
		}
		if msg == "" {
			msg = err.Error()
		}
		return stdout.Bytes(), fmt.Errorf("%s: %s", what, msg)
	}
	return stdout.Bytes(), nil
}

// noCluster reports whether kubectl's stderr says it reached no cluster,
// and the short cause: "dial tcp 127.0.0.1:8080: connect: connection
// refused" rather than kubectl's paragraph (a create with no cluster
// first fails to download the OpenAPI schema, and suggests
// --validate=false, which would not help).
func noCluster(msg string) (cause string, ok bool) {
	if i := strings.Index(msg, "dial tcp "); i >= 0 {
		cause, _, _ = strings.Cut(msg[i:], ";")
		cause, _, _ = strings.Cut(cause, "\n")
		return strings.TrimSpace(cause), true
	}
	for _, s := range []string{"Unable to connect to the server", "The connection to the server", "no configuration has been provided", "current-context is not set"} {
		if i := strings.Index(msg, s); i >= 0 {
			cause, _, _ = strings.Cut(msg[i:], "\n")
			return strings.TrimSuffix(strings.TrimSpace(cause), "."), true
		}
	}
	return "", false
}

// shardPod is what the runner knows of shard i's pod: the last state
// seen, and whether it has gone from the cluster.
type shardPod struct {
	pod  kube.Pod
	seen bool
	gone bool // listed once, then no more: deleted
}

// run is 'openload k8s run': create the Job, follow it to its end,
// collect and merge; with --detach, create it and say how to collect it.
func (k *k8sOptions) run(ctx context.Context, p *k8sPlan, stdout, stderr io.Writer) int {
	stderr = &lockedWriter{w: stderr} // the live progress writes beside the runner
	const cmd = "k8s run"
	if _, err := exec.LookPath(k.kubectl); err != nil {
		fmt.Fprintf(stderr, "openload: %s: --kubectl %q: %v\n", cmd, k.kubectl, unwrapPath(err))
		return exitRuntime
	}
	jr := &jobRunner{kc: kubectl{command: k.kubectl, namespace: k.namespace}, cmd: cmd, job: p.job.Name,
		quiet: p.quiet, keep: keepWhy(k.keep), poll: k.poll, stderr: stderr}
	ns, err := jr.kc.run(ctx, p.job.YAML(), "create", "-f", "-", "-o", "jsonpath={.metadata.namespace}")
	if err != nil {
		jr.warn("%v", err)
		if ctx.Err() != nil {
			return exitInterrupted
		}
		return exitRuntime
	}
	jr.created(strings.TrimSpace(string(ns)))
	created := time.Now()
	if k.detach {
		// The name alone on stdout, for a script: job=$(openload k8s run --detach …).
		fmt.Fprintln(stdout, jr.job)
		jr.say("job %s created: %d pods share %s, starting at %s → %s; collect it with: %s; its state: %s",
			jr.job, p.job.Shards, p.what, p.startAt.UTC().Format(time.RFC3339), p.sends, jr.collectCommand(), jr.statusCommand())
		noteLeft("")
		return exitOK
	}
	w := watchSpec{n: p.job.Shards, startAt: p.startAt, runs: p.end - k.lead, giveUp: created.Add(p.end + k.grace), grace: k.grace, fit: func(msg string) string { return k.fitHint(msg, p.perShard) }}
	if p.barrier {
		jr.say("job %s: %d pods share %s, starting once all run (at the latest %s, in %v) → %s",
			jr.job, p.job.Shards, p.what, p.startAt.UTC().Format(time.RFC3339), time.Until(p.startAt).Round(time.Second), p.sends)
		w.startAt, w.release = time.Time{}, &startRelease{latest: p.startAt, created: created}
	} else {
		jr.say("job %s: %d pods share %s, starting at %s (in %v) → %s",
			jr.job, p.job.Shards, p.what, p.startAt.UTC().Format(time.RFC3339), time.Until(p.startAt).Round(time.Second), p.sends)
	}
	stopProgress := func() {}
	if p.job.MetricsPort > 0 && !p.quiet { // k8sprogress.go: the shards' figures, summed
		w.progress = &liveProgress{n: p.job.Shards}
		stopProgress = w.progress.run(ctx, jr, p.job.MetricsPort, p.planned, stderr)
	}
	pods, status, code := jr.watch(ctx, w)
	stopProgress()
	if code >= 0 {
		return code
	}
	switch {
	case status.Complete:
		jr.say("job %s complete: %d of %d shards succeeded, after %v", jr.job, status.Succeeded, w.n, time.Since(created).Round(time.Second))
	case succeeded(pods): // before the Job controller says so (watch)
		jr.say("job %s: every pod of its %d shards exited 0, after %v", jr.job, w.n, time.Since(created).Round(time.Second))
	}
	mo := mergeOptions{output: p.output, quiet: p.quiet, partial: k.partial}
	mo.verify.SendDelayP99 = p.budget
	return jr.finish(ctx, pods, status, mo, p.objs, stdout)
}

// jobRunner is one command's dealings with one Job: how it speaks, and
// how it leaves the Job (deleted, or kept and named).
type jobRunner struct {
	kc     kubectl
	cmd    string // "k8s run", "k8s collect"
	job    string
	ns     string // the Job's namespace as the cluster named it; "" unknown
	quiet  bool
	keep   string // why the Job is kept at the end ("--keep"); "" deleted
	poll   time.Duration
	stderr io.Writer
}

func (jr *jobRunner) say(format string, a ...any) {
	if !jr.quiet {
		jr.warn(format, a...)
	}
}

func (jr *jobRunner) warn(format string, a ...any) {
	fmt.Fprintf(jr.stderr, "openload: "+jr.cmd+": "+format+"\n", a...)
}

// created notes the Job made in namespace ns ("" kubectl's current), so
// that a second ^C names what it leaves.
func (jr *jobRunner) created(ns string) {
	if ns != "" {
		jr.ns = ns
	}
	noteLeft(fmt.Sprintf("job %s%s and its pods: %s", jr.job, jr.inNamespace(), jr.deleteCommand()))
}

func (jr *jobRunner) inNamespace() string {
	if jr.ns == "" {
		return ""
	}
	return " in namespace " + jr.ns
}

// nsFlag is " --namespace NS", or "" when the namespace is kubectl's
// current one and the cluster did not name it.
func (jr *jobRunner) nsFlag() string {
	if jr.ns == "" {
		return ""
	}
	return " --namespace " + jr.ns
}

func (jr *jobRunner) deleteCommand() string {
	return "kubectl delete job,configmap,secret -l " + kube.LabelRun + "=" + jr.job + jr.nsFlag()
}
func (jr *jobRunner) collectCommand() string { return "openload k8s collect " + jr.job + jr.nsFlag() }
func (jr *jobRunner) statusCommand() string  { return "openload k8s status " + jr.job + jr.nsFlag() }

// del deletes the Job and its pods, or with --keep says how to collect
// and delete it.
func (jr *jobRunner) del() {
	if jr.keep != "" {
		jr.warn("job %s kept (%s): collect it with: %s; delete it with: %s", jr.job, jr.keep, jr.collectCommand(), jr.deleteCommand())
		noteLeft("")
		return
	}
	// Not the run's context: ^C is why it may be done.
	dctx, cancel := context.WithTimeout(context.Background(), kubectlTimeout)
	defer cancel()
	// By the run's label: its Job, and the ConfigMap and Secret that carry
	// its files and credentials (kube.LabelRun), which the Job cannot own.
	if _, err := jr.kc.run(dctx, nil, "delete", "job,configmap,secret", "-l", kube.LabelRun+"="+jr.job, "--ignore-not-found", "--wait=false"); err != nil {
		jr.warn("%v: delete it yourself: %s", err, jr.deleteCommand())
		return
	}
	noteLeft("")
	jr.say("deleted job %s and its pods", jr.job)
}

// keepWhy is jobRunner.keep for --keep.
func keepWhy(keep bool) string {
	if keep {
		return "--keep"
	}
	return ""
}

// watchSpec is what a watch of a Job checks besides its end.
type watchSpec struct {
	n        int
	startAt  time.Time     // the shared start: whose pods were not running by then is said; zero: not checked
	giveUp   time.Time     // past it the Job is given up; zero: never (its own deadline ends it)
	grace    time.Duration // --grace, for the message
	once     bool          // one look, no wait: what is there now
	release  *startRelease // the start to set once every pod runs (k8sstart.go); nil: fixed
	runs     time.Duration // from the start to the last shard's end (drain and metrics grace in); 0: not known
	progress *liveProgress // fed the pods and the start (k8sprogress.go); nil: none
	fit      func(msg string) string
}

// watch follows the Job every --poll until it ends (or once, with
// w.once). It returns the pods and the Job's last state, and an exit
// code ≥ 0 when the command stops here: a pod that cannot be placed or
// pulled, the Job gone, or not ended in time, or ^C (the Job deleted or
// kept, and said); -1 to collect.
func (jr *jobRunner) watch(ctx context.Context, w watchSpec) ([]shardPod, kube.JobStatus, int) {
	n := w.n
	pods := make([]shardPod, n)
	startChecked := false
	var status kube.JobStatus
	lastErr := "" // the last error said, said once
	for first := true; ; first = false {
		if !first {
			select {
			case <-ctx.Done():
				jr.warn("interrupted: the shards' results are not collected")
				jr.del()
				return nil, status, exitInterrupted
			case <-time.After(w.every(jr.poll)):
			}
		}
		if ctx.Err() != nil {
			continue // the select above says so
		}
		st, list, err := jobStatus(ctx, jr.kc, jr.job)
		switch {
		case err != nil && ctx.Err() != nil:
		case err != nil && strings.Contains(err.Error(), "NotFound") && strings.Contains(err.Error(), "get job"):
			jr.warn("%v: the Job is gone (deleted by someone else?); its shards' results with it", err)
			noteLeft("")
			return nil, status, exitRuntime
		case err != nil:
			if msg := err.Error(); msg != lastErr {
				jr.warn("%v (asking again every %v)", err, jr.poll)
				lastErr = msg
			}
		default:
			lastErr = ""
			status = st
			track(pods, list)
		}
		if err == nil {
			if i, msg := unschedulable(pods); msg != "" {
				hint := ""
				if w.fit != nil {
					hint = w.fit(msg)
				}
				jr.warn("shard %d/%d: pod %s: %s%s", i, n, pods[i].pod.Name, strings.TrimSuffix(msg, "."), hint)
				jr.del()
				return nil, status, exitRuntime
			}
			if i := pullFailed(pods); i >= 0 {
				jr.warn("shard %d/%d: pod %s: the node cannot pull the image: %s (--image names it as the cluster pulls it; --image-pull-policy)",
					i, n, pods[i].pod.Name, pods[i].pod.Waiting)
				jr.del()
				return nil, status, exitRuntime
			}
		}
		if w.release != nil && err == nil {
			if at := jr.release(ctx, w.release, pods); !at.IsZero() {
				w.startAt = at
			}
		}
		if w.progress != nil && err == nil {
			w.progress.seen(pods, w.startAt)
		}
		if !startChecked && !w.startAt.IsZero() && !time.Now().Before(w.startAt) && err == nil {
			startChecked = true
			var late []string
			for i, sp := range pods {
				if !sp.pod.Running() {
					late = append(late, describePod(i, n, sp))
				}
			}
			if len(late) > 0 {
				jr.warn("at the start, %d of %d shards were not running: %s: they start late, and their send delay says by how much (a longer --lead gives them time)",
					len(late), n, strings.Join(late, "; "))
			} else {
				jr.say("all %d pods running at the start", n)
			}
		}
		if status.Ended() || succeeded(pods) || w.once && err == nil {
			return pods, status, -1
		}
		if !w.giveUp.IsZero() && time.Now().After(w.giveUp) {
			var states []string
			for i, sp := range pods {
				states = append(states, describePod(i, n, sp))
			}
			jr.warn("job %s has not ended %v after its last shard should have (--grace): %s", jr.job, w.grace, strings.Join(states, "; "))
			jr.del()
			return nil, status, exitRuntime
		}
	}
}

// watchFast is how often a watch asks while an event is due any moment:
// every pod running (the start is set then), and the shards' ends. Each
// --poll of delay there adds to the run's time end to end.
const watchFast = 500 * time.Millisecond

// every is the wait before the next look at the Job: watchFast while
// the start waits for the pods, and from a second before the last
// shard's planned end; poll otherwise.
func (w *watchSpec) every(poll time.Duration) time.Duration {
	waiting := w.release != nil && w.startAt.IsZero()
	ending := !w.startAt.IsZero() && w.runs > 0 && time.Now().After(w.startAt.Add(w.runs-time.Second))
	if waiting || ending {
		return min(poll, watchFast)
	}
	return poll
}

// succeeded reports whether every shard's pod exited 0: the run is over
// before the Job controller says the Job is complete, and its results
// are in the pods' logs. A failure waits for the Job's own status, which
// names the failed indexes.
func succeeded(pods []shardPod) bool {
	for _, sp := range pods {
		if !sp.seen || sp.gone || !sp.pod.Terminated || sp.pod.ExitCode != 0 {
			return false
		}
	}
	return len(pods) > 0
}

// finish says how the Job ended, takes each shard's result from its
// pod's log, deletes (or keeps) the Job, and merges as 'openload merge'
// does: k8s run's and k8s collect's one ending.
func (jr *jobRunner) finish(ctx context.Context, pods []shardPod, status kube.JobStatus, mo mergeOptions, objs []verify.Objective, stdout io.Writer) int {
	if status.Failed {
		if judged := judgedShards(pods, status.FailedIndexes); judged != "" {
			// Every failed index left its result and failed only its own
			// verdict: no cluster failure; the merged verdict says more.
			jr.say("job %s ended: every shard left its result; %s: the merged verdict follows", jr.job, judged)
		} else {
			why := status.Reason
			if status.Message != "" {
				why += ": " + status.Message
			}
			jr.say("job %s failed (%s): failed indexes %v", jr.job, why, status.FailedIndexes)
		}
	}
	in, problems := collectResults(ctx, jr.kc, pods)
	for _, pr := range problems {
		jr.warn("%s", pr)
	}
	jr.del()
	if ctx.Err() != nil {
		jr.warn("interrupted while collecting the results")
		return exitInterrupted
	}
	if len(in) == 0 {
		jr.warn("no shard left a result: nothing to merge")
		return exitRuntime
	}
	return mergeInputs(in, mo, objs, jr.cmd, exitRuntime, stdout, jr.stderr)
}

// judgedShards says which shards exited with a failed verdict of their
// own (a check 1, an objective 4, an error target 5) when those are all
// the failed indexes: "shard 1/4 exit 4 (an objective breached on its
// share)"; "" when any failed otherwise, or left no pod.
func judgedShards(pods []shardPod, failed []int) string {
	if len(failed) == 0 {
		return ""
	}
	var out []string
	for _, i := range failed {
		if i < 0 || i >= len(pods) {
			return ""
		}
		sp := pods[i]
		if !sp.seen || sp.gone || !sp.pod.Terminated {
			return ""
		}
		var what string
		switch sp.pod.ExitCode {
		case exitSLOBreached:
			what = "an objective breached on its share"
		case exitTargetFailed:
			what = "its error target failed on its share"
		case exitCheckFailed:
			what = "a check failed on its share"
		default:
			return ""
		}
		out = append(out, fmt.Sprintf("shard %d/%d exit %d (%s)", i, len(pods), sp.pod.ExitCode, what))
	}
	return strings.Join(out, ", ")
}

// pullFailed returns the first shard whose pod waits for an image its
// node could not pull; -1 when there is none.
func pullFailed(pods []shardPod) int {
	for i, sp := range pods {
		if sp.seen && !sp.gone && sp.pod.PullFailed() {
			return i
		}
	}
	return -1
}

// jobStatus asks the cluster for the Job's status and its pods.
func jobStatus(ctx context.Context, kc kubectl, job string) (kube.JobStatus, []kube.Pod, error) {
	b, err := kc.run(ctx, nil, "get", "job", job, "-o", "json")
	if err != nil {
		return kube.JobStatus{}, nil, err
	}
	st, err := kube.ParseJob(b)
	if err != nil {
		return kube.JobStatus{}, nil, err
	}
	b, err = kc.run(ctx, nil, "get", "pods", "-l", kube.LabelJobName+"="+job, "-o", "json")
	if err != nil {
		return kube.JobStatus{}, nil, err
	}
	list, err := kube.ParsePods(b)
	if err != nil {
		return kube.JobStatus{}, nil, err
	}
	return st, list, nil
}

// track records the pods listed: each shard's pod by its index (the
// newest, should the Job ever make two), and a pod seen before and not
// listed now as gone.
func track(pods []shardPod, list []kube.Pod) {
	listed := make([]bool, len(pods))
	for _, p := range list {
		if p.Index < 0 || p.Index >= len(pods) {
			continue
		}
		listed[p.Index] = true
		pods[p.Index] = shardPod{pod: p, seen: true}
	}
	for i := range pods {
		if pods[i].seen && !listed[i] {
			pods[i].gone = true
		}
	}
}

// unschedulable returns the first shard whose pod the scheduler cannot
// place, and its message; "" when there is none.
func unschedulable(pods []shardPod) (int, string) {
	for i, sp := range pods {
		if sp.seen && !sp.gone && sp.pod.Unschedulable != "" && !sp.pod.Running() {
			return i, sp.pod.Unschedulable
		}
	}
	return -1, ""
}

// fitHint is what to change when the scheduler says the pods do not
// fit: --cpu, and what a shard needs, for want of CPU; --memory for want
// of memory.
func (k *k8sOptions) fitHint(msg string, perShard float64) string {
	switch {
	case strings.Contains(msg, "Insufficient cpu"):
		return fmt.Sprintf(": lower --cpu (%s a pod now; a shard of %.0f/s used about %.0fm on the project's machine, deploy/README.md) or --shards (%d now)",
			k.cpu, perShard, math.Ceil(cpuNeed(perShard)*1000), k.shards)
	case strings.Contains(msg, "Insufficient memory"):
		return fmt.Sprintf(": lower --memory (%s a pod now) or --shards (%d now)", k.memory, k.shards)
	}
	return ""
}

// describePod names shard i's pod and its state: "shard 2/4 (pod
// openload-x7k2-2-abcde): Failed, exit 137 (OOMKilled)", "… deleted",
// "shard 1/4: no pod".
func describePod(i, n int, sp shardPod) string {
	switch {
	case !sp.seen:
		return fmt.Sprintf("shard %d/%d: no pod", i, n)
	case sp.gone:
		return fmt.Sprintf("shard %d/%d (pod %s): deleted", i, n, sp.pod.Name)
	}
	return fmt.Sprintf("shard %d/%d (pod %s): %s", i, n, sp.pod.Name, sp.pod.State())
}

// resultExit reports whether a shard's exit code is one a run writes its
// result with: valid, a check failed, a target or objective failed, or
// interrupted (the result then says so, and merge sets it apart).
func resultExit(code int) bool {
	switch code {
	case exitOK, exitCheckFailed, exitSLOBreached, exitTargetFailed, exitInterrupted:
		return true
	}
	return false
}

// collect takes each shard's result from its pod's log, and says, for
// each shard that has none, why: its pod and its state.
func collectResults(ctx context.Context, kc kubectl, pods []shardPod) (in []result.MergeInput, problems []string) {
	n := len(pods)
	logs, errs := fetchLogs(ctx, kc, pods)
	for i, sp := range pods {
		if !sp.seen || sp.gone {
			problems = append(problems, describePod(i, n, sp)+": no result")
			continue
		}
		log, err := logs[i], errs[i]
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s: no result: %v", describePod(i, n, sp), err))
			continue
		}
		var res *result.Result
		b, err := kube.ResultJSON(log)
		if err == nil {
			res, err = result.Read(bytes.NewReader(b), "pod "+sp.pod.Name)
		}
		if err != nil {
			msg := describePod(i, n, sp) + ": " + err.Error()
			if errors.Is(err, kube.ErrNoResult) {
				if last := lastLine(log); last != "" {
					msg += fmt.Sprintf(" (it ends %q)", last)
				}
			}
			problems = append(problems, msg)
			continue
		}
		if sp.pod.Terminated && !resultExit(sp.pod.ExitCode) {
			problems = append(problems, describePod(i, n, sp)+": its result is kept, merge decides")
		}
		in = append(in, result.MergeInput{Name: "pod " + sp.pod.Name, Result: res})
	}
	return in, problems
}

// logFetches bounds the kubectl logs run at once: one pod's log after
// another took most of the time from a Job's end to its merge (each a
// process and a round trip), growing with the shards.
const logFetches = 8

// fetchLogs reads the openload container's log of each pod there is, up
// to logFetches at once; logs[i] and errs[i] are pods[i]'s.
func fetchLogs(ctx context.Context, kc kubectl, pods []shardPod) (logs [][]byte, errs []error) {
	logs, errs = make([][]byte, len(pods)), make([]error, len(pods))
	sem := make(chan struct{}, logFetches)
	var wg sync.WaitGroup
	for i, sp := range pods {
		if !sp.seen || sp.gone {
			continue
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			logs[i], errs[i] = kc.run(ctx, nil, "logs", sp.pod.Name, "-c", kube.Container)
		}()
	}
	wg.Wait()
	return logs, errs
}

// lastLine is the last non-empty line of b, shortened.
func lastLine(b []byte) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	l := strings.TrimSpace(lines[len(lines)-1])
	if len(l) > 200 {
		l = l[:200] + "…"
	}
	return l
}

// lockedWriter serialises the writes of several goroutines to w, each
// line whole.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
