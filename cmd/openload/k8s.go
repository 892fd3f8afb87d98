package main

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"slices"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/openload/openload/internal/kube"
	"github.com/openload/openload/internal/loadtest"
	"github.com/openload/openload/verify"
)

const k8sUsage = `openload k8s — one schedule sent by N pods of a Kubernetes Indexed Job, merged into one result

Usage:
  openload k8s run --shards N [cluster flags] [a run's flags] URL
  openload k8s manifest --shards N [cluster flags] [a run's flags] URL
  openload k8s collect NAME [--namespace NS] [--partial] [-o FILE]   (k8s collect --help)
  openload k8s status NAME [--namespace NS]

run creates a Job of N pods (a fresh name each time), each running shard k of N of the run
--start-at now + --lead, with the run's flags as given; waits for it to end, in success or
failure; takes every shard's result from its pod's log (kubectl logs: no shared volume); names
each shard that left none (its pod, and why: Failed, exit 137; deleted; unschedulable); merges
the results as 'openload merge' does and prints the merged report, which lists each shard's
start offset. It exits as a run does. Unless --keep, the Job and its pods are deleted at the end,
and at once on ^C (exit 130). It runs kubectl (--kubectl), with its current context: the
cluster KUBECONFIG names.

run --detach creates the Job, prints its name and exits 0: 'openload k8s collect NAME' follows it
to its end and merges as run does, 'openload k8s status NAME' shows its shards.

manifest prints the same Job as YAML for kubectl apply, START_AT_TIME in place of the start
unless --start-at is given: deploy/kubernetes/job.yaml is its output (deploy/README.md).

Each pod requests --cpu and --memory. On the project's 2-core machine a shard used about 120m
of CPU at 1,000 requests/s, 250m at 5,000/s and 370m at 20,000/s (deploy/README.md); a pod short
of CPU sends late, and its send delay says so.

The files a run reads (--body-file, --targets, --values, --dataset, --arrivals, --scenarios and
the files its scenarios name, their paths rewritten in it) go into a ConfigMap created with the
Job, mounted read-only in each pod (at most 1 MiB in all); a file holding a credential header,
and the values of the headers that are credentials (Authorization, Cookie, Proxy-Authorization,
X-Api-Key, and those --redact names), go into a Secret, never into the Job's spec. Both carry
the label openload.dev/run=NAME. --log and --hlog do not apply: the pods cannot write your files.

Examples:
  # 4 pods share 4000 requests/s for 60 s; the merged result to merged.json
  openload k8s run --shards 4 -r 4000 -d 60s -c 512 -o merged.json http://openload-stub:8080/predict

  # a small cluster: a quarter core a pod, 2 minutes for the pods to be pulled and started
  openload k8s run --shards 2 --cpu 250m --lead 2m -r 1000 -d 30s http://svc.ns:8080/predict

  # the Job as YAML, for kubectl apply or review
  openload k8s manifest --shards 4 -r 4000 -d 60s http://openload-stub:8080/predict

`

const groupCluster = "Cluster"

// k8sGroups are the groups of k8sFlags, in help order.
var k8sGroups = append([]string{groupCluster}, loadGroups...)

// k8sOptions are the flags of 'openload k8s run' and 'manifest', besides
// a load run's.
type k8sOptions struct {
	shards      int
	name        string
	namespace   string
	image       string
	pullPolicy  string
	cpu         string
	memory      string
	memoryLimit string
	lead        time.Duration
	grace       time.Duration
	poll        time.Duration
	kubectl     string
	partial     bool
	keep        bool
	k8sRunner   // k8sdetach.go

	// placement and identity of the pods
	nodeSelector   []string
	tolerations    []string
	onePerNode     bool
	pullSecrets    []string
	serviceAccount string
	podLabels      []string
	podAnnotations []string
	priorityClass  string
}

// k8sDefaults: the pod's requests deploy/README.md explains.
const (
	defaultK8sImage  = "openload:dev"
	defaultK8sCPU    = "500m"
	defaultK8sMemory = "256Mi"
	defaultK8sLimit  = "1Gi"
	defaultK8sLead   = 30 * time.Second
	defaultK8sGrace  = 2 * time.Minute
	// defaultManifestName is the static Job's name (deploy/kubernetes/job.yaml).
	defaultManifestName = "openload"
)

// flags defines the cluster's flags; b records the field of kube.Job
// each sets (jobFieldFlags).
func (k *k8sOptions) flags(fs *pflag.FlagSet, b fieldBinding) {
	inGroup(fs, groupCluster, func() {
		fs.IntVar(&k.shards, b.bind("shards", "Shards"), 0, "the number of pods, N (required): pod k sends shard k/N of the schedule")
		fs.StringVar(&k.image, b.bind("image", "Image"), defaultK8sImage, "the `image` whose entrypoint is openload (../Dockerfile), as the cluster pulls it")
		fs.StringVar(&k.pullPolicy, b.bind("image-pull-policy", "PullPolicy"), "", "the pods' imagePullPolicy: Always, IfNotPresent or Never (default: the cluster's)")
		fs.StringVar(&k.cpu, b.bind("cpu", "CPU"), defaultK8sCPU, "CPU each pod requests (`cores`: 250m, 1); no limit is set, since a throttled generator sends late")
		fs.StringVar(&k.memory, b.bind("memory", "Memory"), defaultK8sMemory, "memory each pod requests (`bytes`: 256Mi)")
		fs.StringVar(&k.memoryLimit, b.bind("memory-limit", "MemoryLimit"), defaultK8sLimit, "memory each pod may use (`bytes`; '' none); past it the pod is killed and its shard named")
		fs.StringVar(&k.namespace, b.bind("namespace", "Namespace"), "", "the `namespace` of the Job (default: kubectl's current one)")
		fs.StringVar(&k.name, b.bind("name", "Name"), "", "the Job's `name` (run: default openload- and 5 random characters, fresh each run; manifest: openload)")
		fs.DurationVar(&k.lead, "lead", defaultK8sLead, "run: start the schedule this long after the Job is created, for every pod to be scheduled, pulled and running by then; not given, as soon as every pod runs, at the latest this long after (--detach: this long after)")
		fs.DurationVar(&k.grace, "grace", defaultK8sGrace, "run: give up on the Job this long after its last shard should have ended (lead + duration + drain)")
		fs.DurationVar(&k.poll, "poll", 2*time.Second, "run: ask the cluster for the Job's state this often")
		fs.StringVar(&k.kubectl, "kubectl", "kubectl", "run: the kubectl `command` to run, with its current context")
		fs.BoolVar(&k.partial, "partial", false, "run: merge the shards that left a result even if others did not, or were interrupted (the result says which; its checks warn)")
		fs.BoolVar(&k.keep, "keep", false, "run: keep the Job and its pods at the end and on ^C (default: delete them)")
		fs.StringArrayVar(&k.nodeSelector, b.bind("node-selector", "NodeSelector"), nil, "run the pods only on nodes with this `label`, key=value (repeatable)")
		fs.StringArrayVar(&k.tolerations, b.bind("toleration", "Tolerations"), nil, "let the pods run on nodes with this `taint`, key=value:Effect or key:Effect as kubectl taint writes it (repeatable)")
		fs.BoolVar(&k.onePerNode, b.bind("one-per-node", "OnePerNode"), false, "at most one shard a node: a shard waits unscheduled rather than share a node (default: spread where the nodes allow)")
		fs.StringArrayVar(&k.pullSecrets, b.bind("image-pull-secret", "PullSecrets"), nil, "pull the image with this Secret's `name` (repeatable)")
		fs.StringVar(&k.serviceAccount, b.bind("service-account", "ServiceAccount"), "", "run the pods as this ServiceAccount (`name`; default: the namespace's)")
		fs.StringArrayVar(&k.podLabels, b.bind("pod-label", "PodLabels"), nil, "add this `label` to each pod, key=value (repeatable)")
		fs.StringArrayVar(&k.podAnnotations, b.bind("pod-annotation", "PodAnnotations"), nil, "add this `annotation` to each pod, key=value (repeatable)")
		fs.StringVar(&k.priorityClass, b.bind("priority-class", "PriorityClass"), "", "the pods' PriorityClass (`name`; default: the cluster's)")
	})
}

// k8sRefused are the flags of a load run that a cluster run refuses:
// the runner sets them (--shard, --start-at), or they read or write
// local files the pods cannot reach, or they are no open schedule to
// split. Its help does not show them.
var k8sRefused = map[string]string{
	"shard":          "the Job gives each pod its shard",
	"shard-from-env": "the Job gives each pod its shard",
	"start-at":       "the runner sets it to now + --lead",
	"log":            "a pod's file stays in the pod",
	"hlog":           "a pod's file stays in the pod",
	"closed":         "shards split an open schedule",
	"think":          "it goes with --closed",
	"repeats":        "one Job is one run",
	"lazy":           "the targets file is carried into the pods whole, and each shard picks request i's target from i",
	"import-path":    "its directories are not carried into the pods: give the schema as one --protoset (protoc --include_imports -o FILE)",
}

// k8sOwn are the load run's flags the runner keeps for itself rather
// than pass to the pods: the pods write their results to stdout, quiet,
// and the runner writes the merged one.
var k8sOwn = []string{"output", "quiet", "help"}

// k8sFlags registers the flags of 'openload k8s run|manifest': the
// cluster's, then a load run's, those refused hidden.
func k8sFlags(o *loadOptions, k *k8sOptions) *pflag.FlagSet {
	fs := newFlagSet("openload k8s")
	k.flags(fs, fieldBinding{})
	k.runnerFlags(fs) // k8sdetach.go
	lfs := loadFlags(o)
	lfs.VisitAll(func(f *pflag.Flag) { fs.AddFlag(f) })
	fs.Lookup("output").Usage = "run: write the merged JSON result to this `file` ('-' for stdout; the report then goes to stderr)"
	for name := range k8sRefused {
		if err := fs.MarkHidden(name); err != nil {
			panic(err) // the table names a flag that is gone
		}
	}
	return fs
}

// runK8s is 'openload k8s'.
func runK8s(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		return usageErrorIn(stderr, "k8s", "want run or manifest: openload k8s run --shards 4 -r 4000 URL")
	}
	sub := args[0]
	if sub == "collect" || sub == "status" {
		return runK8sJob(ctx, sub, args[1:], stdout, stderr) // k8sdetach.go
	}
	switch sub {
	case "-h", "--help", "-help", "help":
		fmt.Fprint(stdout, k8sHelp())
		return exitOK
	case "run", "manifest":
	default:
		if strings.HasPrefix(sub, "-") {
			return usageErrorIn(stderr, "k8s", "want run or manifest before the flags: openload k8s run --shards 4 -r 4000 URL")
		}
		return usageErrorIn(stderr, "k8s", "unknown subcommand %q (known: run, manifest, collect, status)", sub)
	}
	cmd := "k8s " + sub
	var o loadOptions
	var k k8sOptions
	fs := k8sFlags(&o, &k)
	if err := parseFlags(fs, args[1:]); err != nil {
		return usageErrorIn(stderr, cmd, "%v", err)
	}
	if o.help {
		fmt.Fprint(stdout, k8sHelp())
		return exitOK
	}
	plan, err := k.plan(fs, args[1:], sub, time.Now())
	if err != nil {
		return usageErrorIn(stderr, cmd, "%v", err)
	}
	if w := plan.job.ImageWarning(); w != "" {
		fmt.Fprintf(stderr, "openload: %s: %s\n", cmd, w)
	}
	if sub == "manifest" {
		_, err := stdout.Write(plan.job.YAML())
		if err != nil {
			fmt.Fprintf(stderr, "openload: %s: %v\n", cmd, err)
			return exitRuntime
		}
		return exitOK
	}
	if err := checkOutputs(output("--output", o.output)); err != nil {
		return usageErrorIn(stderr, cmd, "%v", err)
	}
	if err := k.checkDetach(fs); err != nil {
		return usageErrorIn(stderr, cmd, "%v", err)
	}
	return k.run(ctx, plan, stdout, stderr)
}

// k8sHelp is the help of 'openload k8s'.
func k8sHelp() string {
	var o loadOptions
	var k k8sOptions
	return k8sUsage + flagHelp(k8sFlags(&o, &k), k8sGroups)
}

// k8sPlan is a cluster run, checked: the Job and what the runner needs
// to follow it.
type k8sPlan struct {
	job      kube.Job
	what     string        // what the shards share: the schedule's name, or the scenarios'
	sends    string        // what they send: METHOD URL, or each scenario's
	planned  time.Duration // the schedule's length from the start: the last scenario's end
	objs     []verify.Objective
	budget   time.Duration // --send-delay-budget, judged again on the merge
	startAt  time.Time     // the shared start (run only); with barrier, the latest
	barrier  bool          // run without --lead: the start is set once every pod runs (k8sstart.go)
	end      time.Duration // from the Job's creation to its last shard's end: lead + duration + drain + metrics grace
	output   string        // -o: the merged result
	quiet    bool
	perShard float64 // the mean rate a shard sends, per second
}

// plan checks the command line (the cluster's flags, and the run's as a
// plain run parses them) and renders the Job.
func (k *k8sOptions) plan(fs *pflag.FlagSet, args []string, sub string, now time.Time) (*k8sPlan, error) {
	if err := k.checkFlags(fs, sub); err != nil {
		return nil, err
	}
	pass, err := passThrough(fs, args)
	if err != nil {
		return nil, err
	}
	url := fs.Arg(0)

	// The run's flags as each shard will parse them: the same code as a
	// plain run, with the shard and the start the Job gives it.
	p := &k8sPlan{output: fs.Lookup("output").Value.String()}
	p.quiet, _ = fs.GetBool("quiet")
	start := kube.StartPlaceholder
	check := now.Add(time.Minute) // a start to validate the run with
	switch {
	case sub == "run":
		p.startAt = now.Add(k.lead).Add(time.Second - 1).Truncate(time.Second)
		start = p.startAt.UTC().Format(time.RFC3339)
		check = p.startAt
		if !fs.Changed("lead") && !k.detach { // detached, no runner is there to set it
			start, p.barrier = kube.StartBarrier, true
		}
	case fs.Changed("start-at"):
		start = fs.Lookup("start-at").Value.String()
		check = time.Time{} // as given
	}
	asShard := []string{fmt.Sprintf("--shard=0/%d", k.shards)}
	if !check.IsZero() {
		asShard = append(asShard, "--start-at="+check.UTC().Format(time.RFC3339))
	} else {
		asShard = append(asShard, "--start-at="+start)
	}
	var lo loadOptions
	lfs := loadFlags(&lo)
	shardLine := append(asShard, pass...)
	if url != "" {
		shardLine = append(shardLine, url)
	}
	if err := parseFlags(lfs, shardLine); err != nil {
		return nil, err // cannot happen: the same flags parsed above
	}
	var scs []loadtest.Scenario // the run's, or its scenarios
	if lo.scenarios != "" {
		// Each scenario checked as the shard will run it.
		set, err := buildScenarios(&lo, lfs, shardLine)
		set.close()
		if err != nil {
			return nil, err
		}
		scs, p.objs, p.budget = set.scs, set.objs, lo.run.Verify.SendDelayP99 // the whole's, as runScenarios judges it
	} else {
		if err := lo.validate(lfs); err != nil {
			return nil, err
		}
		if lo.run.URL == nil && lo.targets.file == "" {
			return nil, errors.New("a URL is required")
		}
		p.objs, p.budget = lo.run.Objectives, lo.run.Verify.SendDelayP99
		scs = []loadtest.Scenario{{Options: lo.run}}
	}
	if lo.metrics.addr != "" {
		if err := podMetrics(&lo.metrics, lfs.Changed("metrics-grace")); err != nil {
			return nil, err
		}
		if !lfs.Changed("metrics-grace") {
			pass = append(pass, "--metrics-grace="+lo.metrics.grace.String())
		}
	}
	p.describe(&lo, scs)
	var last time.Duration // the last schedule's end, its drain included
	var redact []string    // the credentials' names, of every scenario
	for _, sc := range scs {
		sched := sc.Options.Schedule
		if d := sched.Duration.Seconds(); d > 0 {
			p.perShard += math.Max(sched.Rate, sched.Expected()/d) / float64(k.shards)
		}
		p.planned = max(p.planned, sc.StartAfter+sched.Duration)
		last = max(last, sc.StartAfter+sched.Duration+sc.Options.Drain)
		redact = append(redact, sc.Options.Redact...)
	}
	p.end = k.lead + last
	port := 0
	if lo.metrics.addr != "" {
		p.end += lo.metrics.grace
		port = portOf(lo.metrics.addr)
	}

	p.job = kube.Job{
		Name: k.jobName(sub), Namespace: k.namespace, Image: k.image, PullPolicy: k.pullPolicy,
		Shards: k.shards, CPU: k.cpu, Memory: k.memory, MemoryLimit: k.memoryLimit,
		StartAt: start, MetricsPort: port, Planned: p.planned,
		NodeSelector: k.nodeSelector, Tolerations: k.tolerations, OnePerNode: k.onePerNode,
		PullSecrets: k.pullSecrets, ServiceAccount: k.serviceAccount, PodLabels: k.podLabels,
		PodAnnotations: k.podAnnotations, PriorityClass: k.priorityClass,
	}
	// The run's files and credentials travel in the Job's ConfigMap and
	// Secret; the pods' arguments name them there.
	carry := newCarrier(redact)
	if pass, err = carry.args(pass); err != nil {
		return nil, err
	}
	p.job.Files, p.job.SecretEnv = carry.files, carry.env
	p.job.Args = append(shardArgs(k.shards), pass...)
	if url != "" {
		p.job.Args = append(p.job.Args, url)
	}
	if sub == "run" {
		p.job.Deadline = p.end + k.grace
	}
	if err := p.job.Validate(); err != nil {
		return nil, flagError(jobFields, err)
	}
	return p, nil
}

// checkFlags refuses what a cluster run cannot take, and the runner's
// own flags out of their range, before the run's flags are read.
func (k *k8sOptions) checkFlags(fs *pflag.FlagSet, sub string) error {
	for name, why := range k8sRefused {
		if fs.Changed(name) && !(sub == "manifest" && name == "start-at") {
			return fmt.Errorf("--%s does not apply to a cluster run: %s", name, why)
		}
	}
	if sub == "manifest" {
		for _, name := range []string{"lead", "grace", "poll", "kubectl", "partial", "keep", "output", "detach"} {
			if fs.Changed(name) {
				return fmt.Errorf("--%s applies to 'openload k8s run' only: manifest prints the Job to stdout", name)
			}
		}
	}
	switch {
	case !fs.Changed("shards"):
		return errors.New("--shards is required: the number of pods that share the schedule, e.g. --shards 4")
	case k.shards < 1 || k.shards > kube.MaxShards:
		return fmt.Errorf("--shards must be 1 to %d, got %d", kube.MaxShards, k.shards)
	case fs.NArg() == 0 && !fs.Changed("targets") && !fs.Changed("scenarios"):
		return errors.New("a URL is required: the pods send to your service (for a rehearsal, deploy/kubernetes/stub.yaml serves http://openload-stub:8080/predict)")
	case fs.NArg() > 1:
		return fmt.Errorf("one URL, got %d arguments: %s", fs.NArg(), strings.Join(fs.Args(), " "))
	case k.lead <= 0 && sub == "run":
		return fmt.Errorf("--lead must be > 0, got %v: the pods need time to start", k.lead)
	case k.grace < 0:
		return fmt.Errorf("--grace must be ≥ 0, got %v", k.grace)
	case k.poll <= 0:
		return fmt.Errorf("--poll must be > 0, got %v", k.poll)
	case k.kubectl == "":
		return errors.New("--kubectl is empty: name the kubectl command")
	}
	return nil
}

// jobName is --name, or manifest's fixed name, or a new one for a run.
func (k *k8sOptions) jobName(sub string) string {
	switch {
	case k.name != "":
		return k.name
	case sub == "manifest":
		return defaultManifestName
	}
	return "openload-" + randomSuffix()
}

// podMetrics checks a shard's metrics flags for a pod scraped by the
// shipped PodMonitor, and sets the grace when it was not given (graced):
// an address on loopback cannot be scraped from outside the pod, and a
// grace not longer than the scrape interval leaves before the last
// scrape.
func podMetrics(m *metricsOptions, graced bool) error {
	host, _, _ := net.SplitHostPort(m.addr) // checked by validate
	if ip := net.ParseIP(host); host == "localhost" || ip != nil && ip.IsLoopback() {
		return fmt.Errorf("--metrics-addr %s is a loopback address: nothing outside the pod can scrape it; give the port alone, e.g. --metrics-addr=:9464", m.addr)
	}
	if !graced {
		m.grace = kube.MetricsGrace
		return nil
	}
	if m.grace <= kube.ScrapeInterval {
		return fmt.Errorf("--metrics-grace %v is not longer than the PodMonitor's scrape interval %v: a shard's final figures would never be scraped (default here %v)", m.grace, kube.ScrapeInterval, kube.MetricsGrace)
	}
	return nil
}

// shardArgs are the arguments every shard runs before the run's own:
// its shard from the Job's index, the shared start from the Job's
// START_AT, and its result as JSON on stdout, where `kubectl logs`
// finds it (no volume to share, no permissions to get right).
// deploy/overlays/shared-volume replaces the fourth, --output=-.
func shardArgs(n int) []string {
	return []string{
		fmt.Sprintf("--shard-from-env=%s/%d", kube.IndexEnv, n),
		"--start-at=$(" + kube.StartEnv + ")",
		"--quiet",
		"--output=-",
	}
}

// randomSuffix is five characters of a pod's alphabet, as Kubernetes
// names generated objects: a fresh Job name per run, so reruns never
// meet the last one's immutable spec.
func randomSuffix() string {
	const alphabet = "bcdfghjklmnpqrstvwxz2456789"
	b := make([]byte, 5)
	_, _ = rand.Read(b)
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return string(b)
}

// passThrough returns the flags of args that go to every shard, each
// as --NAME=VALUE (or --NAME for a bool given bare), with the value as
// typed, in the order typed: every flag but the cluster's, the runner's
// own (k8sOwn) and those it sets or refuses (k8sRefused: a manifest's
// --start-at goes into START_AT). args parse into fs: shorthands (-r 4000,
// -qc4) and one-dash long forms are resolved with fs's own rules.
func passThrough(fs *pflag.FlagSet, args []string) ([]string, error) {
	var out []string
	emit := func(f *pflag.Flag, value string, has bool) {
		if g, _ := groupOf(f); g == groupCluster {
			return
		}
		if _, refused := k8sRefused[f.Name]; refused || slices.Contains(k8sOwn, f.Name) {
			return
		}
		if has {
			out = append(out, "--"+f.Name+"="+value)
		} else {
			out = append(out, "--"+f.Name)
		}
	}
	toks := longForm(fs, args)
	for i := 0; i < len(toks); i++ {
		a := toks[i]
		next := func() (string, error) {
			if i+1 >= len(toks) {
				return "", fmt.Errorf("%s needs a value", a)
			}
			i++
			return toks[i], nil
		}
		switch {
		case a == "--":
			return out, nil
		case strings.HasPrefix(a, "--"):
			name, value, has := strings.Cut(a[2:], "=")
			f := fs.Lookup(name)
			if f == nil {
				return nil, fmt.Errorf("unknown flag --%s", name)
			}
			if !has && f.NoOptDefVal == "" {
				v, err := next()
				if err != nil {
					return nil, err
				}
				value, has = v, true
			}
			emit(f, value, has)
		case len(a) > 1 && a[0] == '-':
			for j := 1; j < len(a); j++ {
				f := fs.ShorthandLookup(a[j : j+1])
				if f == nil {
					return nil, fmt.Errorf("unknown shorthand flag %q in %s", a[j], a)
				}
				if f.NoOptDefVal != "" { // a bool: a bare letter, or -q=false
					if j+1 < len(a) && a[j+1] == '=' {
						emit(f, a[j+2:], true)
						break
					}
					emit(f, "", false)
					continue
				}
				value := strings.TrimPrefix(a[j+1:], "=")
				if j+1 == len(a) {
					v, err := next()
					if err != nil {
						return nil, err
					}
					value = v
				}
				emit(f, value, true)
				break
			}
		}
		// anything else is the URL, which the caller places last
	}
	return out, nil
}

// describe sets what the shards share and send, as the runner says it:
// one run's schedule and METHOD URL, or each scenario's.
func (p *k8sPlan) describe(lo *loadOptions, scs []loadtest.Scenario) {
	if lo.scenarios == "" {
		r := &lo.run
		p.what, p.sends = lo.replay.name(r.Schedule), fmt.Sprintf("%s %s", r.Method, r.URL)
		return
	}
	var names, sends []string
	for _, sc := range scs {
		names = append(names, sc.Name)
		sends = append(sends, fmt.Sprintf("%s: %s %s", sc.Name, sc.Options.Method, sc.Options.URL))
	}
	p.what = fmt.Sprintf("the %d scenarios of %s (%s)", len(scs), lo.scenarios, strings.Join(names, ", "))
	p.sends = strings.Join(sends, "; ")
}
