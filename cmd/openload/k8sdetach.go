package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/openload/openload/internal/kube"
	"github.com/openload/openload/verify"
)

// A run that outlives the laptop: 'k8s run --detach' creates the Job and
// names it; 'k8s collect NAME' follows it to its end and merges as 'k8s
// run' does (jobRunner.watch and finish, the same code); 'k8s status
// NAME' says where its shards are.

// k8sRunner are the flags of 'k8s run' defined here, beside k8s.go's.
type k8sRunner struct {
	detach bool
}

// runnerFlags defines them, in the cluster's group.
func (k *k8sOptions) runnerFlags(fs *pflag.FlagSet) {
	inGroup(fs, groupCluster, func() {
		fs.BoolVar(&k.detach, "detach", false, "run: create the Job, print its name and exit 0; 'openload k8s collect NAME' merges it later")
	})
}

// checkDetach refuses what --detach leaves to collect.
func (k *k8sOptions) checkDetach(fs *pflag.FlagSet) error {
	if !k.detach {
		return nil
	}
	for _, name := range []string{"output", "partial", "keep"} {
		if fs.Changed(name) {
			return fmt.Errorf("--%s does not apply with --detach: give it to 'openload k8s collect NAME'", name)
		}
	}
	return nil
}

const k8sJobUsage = `Usage:
  openload k8s collect NAME [--namespace NS] [--partial] [-o FILE] [--keep]
  openload k8s status NAME [--namespace NS]

collect follows the Job NAME ('openload k8s run --detach', or 'k8s manifest' applied) to its end,
takes every shard's result from its pod's log and merges them as 'openload k8s run' does, then
deletes the Job unless --keep; it exits as k8s run does. With --partial it does not wait: it merges
the shards that have left a result, and keeps a Job still running.

status prints the Job's state and each shard's pod: Pending (and why), Running, Succeeded,
Failed with its exit code. While it runs, with --metrics-addr, each running shard's figures read
through the API server's pod proxy (sent, completed, failed), their sums and how far the run is;
once it has ended, how to collect it.

`

// k8sJobOptions are the flags of 'k8s collect' and 'k8s status'.
type k8sJobOptions struct {
	namespace string
	kubectl   string
	poll      time.Duration
	partial   bool
	keep      bool
	output    string
	quiet     bool
	help      bool
}

func k8sJobFlags(sub string, o *k8sJobOptions) *pflag.FlagSet {
	fs := newFlagSet("openload k8s " + sub)
	inGroup(fs, groupCluster, func() {
		fs.StringVarP(&o.namespace, "namespace", "n", "", "the `namespace` of the Job (default: kubectl's current one)")
		fs.StringVar(&o.kubectl, "kubectl", "kubectl", "the kubectl `command` to run, with its current context")
		if sub == "collect" {
			fs.DurationVar(&o.poll, "poll", 2*time.Second, "ask the cluster for the Job's state this often")
			fs.BoolVar(&o.partial, "partial", false, "do not wait: merge the shards that left a result (the result says which; its checks warn)")
			fs.BoolVar(&o.keep, "keep", false, "keep the Job and its pods (default: delete them once collected)")
			fs.StringVarP(&o.output, "output", "o", "", "write the merged JSON result to this `file` ('-' for stdout; the report then goes to stderr)")
			fs.BoolVarP(&o.quiet, "quiet", "q", false, "print only errors and failed checks")
		}
	})
	helpFlag(fs, &o.help)
	return fs
}

// runK8sJob is 'openload k8s collect|status NAME'.
func runK8sJob(ctx context.Context, sub string, args []string, stdout, stderr io.Writer) int {
	cmd := "k8s " + sub
	var o k8sJobOptions
	fs := k8sJobFlags(sub, &o)
	if err := parseFlags(fs, args); err != nil {
		return usageErrorIn(stderr, cmd, "%v", err)
	}
	if o.help {
		fmt.Fprint(stdout, k8sJobUsage+flagHelp(fs, []string{groupCluster, groupEnd}))
		return exitOK
	}
	switch {
	case fs.NArg() != 1:
		return usageErrorIn(stderr, cmd, "want the Job's name, as 'openload k8s run --detach' printed it: openload %s NAME", cmd)
	case o.poll <= 0 && sub == "collect":
		return usageErrorIn(stderr, cmd, "--poll must be > 0, got %v", o.poll)
	case o.kubectl == "":
		return usageErrorIn(stderr, cmd, "--kubectl is empty: name the kubectl command")
	}
	if err := checkOutputs(output("--output", o.output)); err != nil {
		return usageErrorIn(stderr, cmd, "%v", err)
	}
	if _, err := exec.LookPath(o.kubectl); err != nil {
		fmt.Fprintf(stderr, "openload: %s: --kubectl %q: %v\n", cmd, o.kubectl, unwrapPath(err))
		return exitRuntime
	}
	jr := &jobRunner{kc: kubectl{command: o.kubectl, namespace: o.namespace}, cmd: cmd, job: fs.Arg(0), ns: o.namespace,
		quiet: o.quiet, keep: keepWhy(o.keep), poll: o.poll, stderr: stderr}
	st, list, err := jobStatus(ctx, jr.kc, jr.job)
	if err != nil {
		jr.warn("%v", err)
		return exitRuntime
	}
	if st.Shards < 1 {
		jr.warn("job %s has no completions: not a Job openload made", jr.job)
		return exitRuntime
	}
	if sub == "status" {
		pods := make([]shardPod, st.Shards)
		track(pods, list)
		proxy := *jr // the pod proxy's path needs the namespace, named or not
		if proxy.ns == "" {
			proxy.ns = st.Namespace
		}
		live := proxy.readLive(ctx, st, pods) // k8sprogress.go
		fmt.Fprint(stdout, statusText(jr, st, pods, live, time.Now()))
		return exitOK
	}

	// What the merge judges besides the results: the run's objectives
	// and send-delay budget, as the Job passes them to every shard.
	objs, budget, err := mergeFlagsOf(st.Args)
	if err != nil {
		jr.warn("job %s: %v", jr.job, err)
		return exitRuntime
	}
	jr.created("")
	w := watchSpec{n: st.Shards, once: o.partial}
	pods, status, code := jr.watch(ctx, w)
	if code >= 0 {
		return code
	}
	if o.partial && !status.Ended() {
		jr.keep = "it still runs" // do not cut its shards short
		jr.say("job %s has not ended (--partial): merging what is there, leaving it running", jr.job)
	}
	mo := mergeOptions{output: o.output, quiet: o.quiet, partial: o.partial}
	mo.verify.SendDelayP99 = budget
	return jr.finish(ctx, pods, status, mo, objs, stdout)
}

// mergeFlagsOf reads the objectives and the send-delay budget from a
// Job's arguments, as passThrough spells them (--NAME=VALUE).
func mergeFlagsOf(args []string) ([]verify.Objective, time.Duration, error) {
	var slos []string
	budget := verify.DefaultSendDelayP99
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, "--slo="); ok {
			slos = append(slos, v)
		}
		if v, ok := strings.CutPrefix(a, "--send-delay-budget="); ok {
			d, err := time.ParseDuration(v)
			if err != nil {
				return nil, 0, fmt.Errorf("its --send-delay-budget: %v", err)
			}
			budget = d
		}
	}
	if len(args) == 0 {
		return nil, 0, errors.New("no container named " + kube.Container + " with arguments: not a Job openload made")
	}
	objs, err := parseObjectives(slos)
	return objs, budget, err
}

// statusText is 'k8s status': the Job's line, then each shard's with
// its live figures; then, while it runs, their sum and where the run
// is, or once it has ended, how to collect it.
func statusText(jr *jobRunner, st kube.JobStatus, pods []shardPod, live jobLive, now time.Time) string {
	job, inNS := jr.job, jr.inNamespace()
	var b strings.Builder
	state := "running"
	switch {
	case st.Complete:
		state = "complete"
	case st.Failed:
		state = fmt.Sprintf("ended, failed indexes %v (%s)", st.FailedIndexes, st.Reason)
	}
	fmt.Fprintf(&b, "job %s%s: %s: %d shards: %d active, %d succeeded, %d failed", job, inNS, state, st.Shards, st.Active, st.Succeeded, st.FailedPods)
	if at, err := time.Parse(time.RFC3339, st.StartAt); err == nil {
		if d := at.Sub(now).Round(time.Second); d > 0 {
			fmt.Fprintf(&b, "; start at %s (in %v)", st.StartAt, d)
		} else {
			fmt.Fprintf(&b, "; started at %s (%v ago)", st.StartAt, -d)
		}
	}
	b.WriteString("\n")
	for i, sp := range pods {
		fmt.Fprintf(&b, "  %s%s\n", describePod(i, len(pods), sp), live.shard(i))
	}
	if st.Ended() {
		fmt.Fprintf(&b, "finished; merge its shards' results: %s\n", jr.collectCommand())
	} else {
		fmt.Fprintf(&b, "%s\n", live.total(len(pods), now))
	}
	return b.String()
}
