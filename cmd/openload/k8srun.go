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
	"time"

	"github.com/openload/openload/internal/kube"
	"github.com/openload/openload/result"
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
// collect and merge.
func (k *k8sOptions) run(ctx context.Context, p *k8sPlan, stdout, stderr io.Writer) int {
	const cmd = "k8s run"
	kc := kubectl{command: k.kubectl, namespace: k.namespace}
	if _, err := exec.LookPath(k.kubectl); err != nil {
		fmt.Fprintf(stderr, "openload: %s: --kubectl %q: %v\n", cmd, k.kubectl, unwrapPath(err))
		return exitRuntime
	}
	say := func(format string, a ...any) {
		if !p.quiet {
			fmt.Fprintf(stderr, "openload: "+cmd+": "+format+"\n", a...)
		}
	}
	warn := func(format string, a ...any) { fmt.Fprintf(stderr, "openload: "+cmd+": "+format+"\n", a...) }
	job := p.job.Name
	del := func() {
		if k.keep {
			warn("job %s kept (--keep): kubectl logs -l %s=%s; kubectl delete job %s", job, kube.LabelJobName, job, job)
			return
		}
		// Not the run's context: ^C is why it may be done.
		dctx, cancel := context.WithTimeout(context.Background(), kubectlTimeout)
		defer cancel()
		if _, err := kc.run(dctx, nil, "delete", "job", job, "--ignore-not-found", "--wait=false"); err != nil {
			warn("%v: delete it yourself: kubectl delete job %s", err, job)
			return
		}
		say("deleted job %s and its pods", job)
	}

	if _, err := kc.run(ctx, p.job.YAML(), "create", "-f", "-"); err != nil {
		warn("%v", err)
		if ctx.Err() != nil {
			return exitInterrupted
		}
		return exitRuntime
	}
	created := time.Now()
	r := &p.run.run
	name := p.run.replay.name(r.Schedule)
	say("job %s: %d pods share %s, starting at %s (in %v) → %s %s",
		job, p.job.Shards, name, p.startAt.UTC().Format(time.RFC3339), time.Until(p.startAt).Round(time.Second), r.Method, r.URL)

	n := p.job.Shards
	pods := make([]shardPod, n)
	giveUp := created.Add(p.end + k.grace)
	startChecked := false
	var status kube.JobStatus
	lastErr := "" // the last error said, said once
	tick := time.NewTicker(k.poll)
	defer tick.Stop()
	for first := true; ; first = false {
		if !first {
			select {
			case <-ctx.Done():
				warn("interrupted: the shards' results are not collected")
				del()
				return exitInterrupted
			case <-tick.C:
			}
		}
		if ctx.Err() != nil {
			continue // the select above says so
		}
		st, list, err := k.status(ctx, kc, job)
		switch {
		case err != nil && ctx.Err() != nil:
		case err != nil && strings.Contains(err.Error(), "NotFound") && strings.Contains(err.Error(), "get job"):
			warn("%v: the Job is gone (deleted by someone else?); its shards' results with it", err)
			return exitRuntime
		case err != nil:
			if msg := err.Error(); msg != lastErr {
				warn("%v (asking again every %v)", err, k.poll)
				lastErr = msg
			}
		default:
			lastErr = ""
			status = st
			k.track(pods, list)
		}
		if err == nil {
			if i, msg := unschedulable(pods); msg != "" {
				warn("shard %d/%d: pod %s: %s%s", i, n, pods[i].pod.Name, strings.TrimSuffix(msg, "."), k.fitHint(msg, p.perShard))
				del()
				return exitRuntime
			}
		}
		if !startChecked && !time.Now().Before(p.startAt) && err == nil {
			startChecked = true
			var late []string
			for i, sp := range pods {
				if !sp.pod.Running() {
					late = append(late, describePod(i, n, sp))
				}
			}
			if len(late) > 0 {
				warn("at the start, %d of %d shards were not running: %s: they start late, and their send delay says by how much (a longer --lead gives them time)",
					len(late), n, strings.Join(late, "; "))
			} else {
				say("all %d pods running at the start", n)
			}
		}
		if status.Ended() {
			break
		}
		if time.Now().After(giveUp) {
			var states []string
			for i, sp := range pods {
				states = append(states, describePod(i, n, sp))
			}
			warn("job %s has not ended %v after its last shard should have (--grace): %s", job, k.grace, strings.Join(states, "; "))
			del()
			return exitRuntime
		}
	}
	if status.Complete {
		say("job %s complete: %d of %d shards succeeded, after %v", job, status.Succeeded, n, time.Since(created).Round(time.Second))
	} else {
		why := status.Reason
		if status.Message != "" {
			why += ": " + status.Message
		}
		say("job %s failed (%s): failed indexes %v", job, why, status.FailedIndexes)
	}

	in, problems := k.collect(ctx, kc, pods)
	for _, pr := range problems {
		warn("%s", pr)
	}
	del()
	if ctx.Err() != nil {
		warn("interrupted while collecting the results")
		return exitInterrupted
	}
	if len(in) == 0 {
		warn("no shard left a result: nothing to merge")
		return exitRuntime
	}
	mo := mergeOptions{output: p.output, quiet: p.quiet, partial: k.partial}
	mo.verify.SendDelayP99 = r.Verify.SendDelayP99
	return mergeInputs(in, mo, p.run.run.Objectives, cmd, exitRuntime, stdout, stderr)
}

// status asks the cluster for the Job's status and its pods.
func (k *k8sOptions) status(ctx context.Context, kc kubectl, job string) (kube.JobStatus, []kube.Pod, error) {
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
func (k *k8sOptions) track(pods []shardPod, list []kube.Pod) {
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
func (k *k8sOptions) collect(ctx context.Context, kc kubectl, pods []shardPod) (in []result.MergeInput, problems []string) {
	n := len(pods)
	for i, sp := range pods {
		if !sp.seen || sp.gone {
			problems = append(problems, describePod(i, n, sp)+": no result")
			continue
		}
		log, err := kc.run(ctx, nil, "logs", sp.pod.Name, "-c", kube.Container)
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

// lastLine is the last non-empty line of b, shortened.
func lastLine(b []byte) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	l := strings.TrimSpace(lines[len(lines)-1])
	if len(l) > 200 {
		l = l[:200] + "…"
	}
	return l
}
