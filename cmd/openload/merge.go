package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/pflag"

	"github.com/openload/openload/internal/report"
	"github.com/openload/openload/result"
	"github.com/openload/openload/verify"
)

const mergeUsage = `openload merge — add the results of the shards of one schedule

Usage:
  openload merge [-o ALL.json] [--slo OBJECTIVE]... SHARD.json...

Each shard ran with --shard i/N (or --shard-from-env) and, to start
together, the same --start-at. merge adds their histograms (losslessly),
counts, statuses, error kinds, classes, Server-Timing metrics and
per-second timelines, checks the whole again (its count must be the whole
schedule's) and prints the report, which lists every shard's own start
and send delay. Every shard must be given exactly once: a missing one, one
given twice, or one of another run (another target, rate, seed, schedule
or start) is refused. The merged result is an ordinary result: report,
diff and --slo work on it, and the exit code is a run's.

Interval logs (--hlog) of the same shards merge the same way, second by
second: openload merge shard-*.hlog -o all.hlog.

Examples:
  # 4 machines, each its shard 0/4 … 3/4, all with one --start-at T (RFC 3339 or Unix s)
  openload -r 4000 -d 60s --shard 0/4 -o shard-0.json http://10.0.0.5:8080/predict
  openload merge shard-*.json -o all.json
  openload merge shard-*.hlog -o all.hlog

`

// mergeGroups are the groups of mergeFlags, in help order.
var mergeGroups = []string{groupFlags, groupEnd}

// mergeOptions are the flags of 'openload merge'.
type mergeOptions struct {
	output  string
	slos    []string
	quiet   bool
	partial bool
	help    bool
	verify  verify.Options
}

func mergeFlags(o *mergeOptions) *pflag.FlagSet {
	fs := newFlagSet("openload merge")
	inGroup(fs, groupFlags, func() {
		fs.StringVarP(&o.output, "output", "o", "", "write the merged JSON result to this `file` ('-' for stdout; the report then goes to stderr)")
		fs.StringArrayVar(&o.slos, "slo", nil, "`objective` checked on the whole, e.g. 'response.p99<=200ms' (repeatable), as a run checks it")
		fs.DurationVar(&o.verify.SendDelayP99, "send-delay-budget", verify.DefaultSendDelayP99, "warn when send delay p99, or a shard's late start, exceeds this")
		fs.BoolVarP(&o.quiet, "quiet", "q", false, "print nothing but errors and failed checks")
		fs.BoolVar(&o.partial, "partial", false, "merge the shards given even if some are missing or were interrupted, which are left out (the result says which; its checks warn)")
	})
	helpFlag(fs, &o.help)
	return fs
}

// runMerge is 'openload merge'.
func runMerge(args []string, stdout, stderr io.Writer) int {
	var o mergeOptions
	fs := mergeFlags(&o)
	if err := parseFlags(fs, args); err != nil {
		return usageErrorIn(stderr, "merge", "%v", err)
	}
	if o.help {
		fmt.Fprint(stdout, mergeUsage+flagHelp(fs, mergeGroups))
		return exitOK
	}
	if fs.NArg() == 0 {
		return usageErrorIn(stderr, "merge", "no shard results given")
	}
	if o.verify.SendDelayP99 <= 0 {
		return usageErrorIn(stderr, "merge", "--send-delay-budget must be > 0, got %v", o.verify.SendDelayP99)
	}
	objs, err := parseObjectives(o.slos)
	if err != nil {
		return usageErrorIn(stderr, "merge", "%v", err)
	}
	if err := checkOutputs(output("--output", o.output)); err != nil {
		return usageErrorIn(stderr, "merge", "%v", err)
	}
	if err := oneKind(fs.Args()); err != nil {
		return usageErrorIn(stderr, "merge", "%v", err)
	}
	if sniffFile(fs.Arg(0)) == kindIntervalLog { // sniff.go
		return mergeIntervalLogs(fs.Args(), o.output, stdout, stderr)
	}
	in := make([]result.MergeInput, fs.NArg())
	for i, name := range fs.Args() {
		res, err := readResultFile(name)
		if err != nil {
			return fileError(stderr, "merge", err)
		}
		in[i] = result.MergeInput{Name: name, Result: res}
	}
	return mergeInputs(in, o, objs, "merge", exitUsage, stdout, stderr)
}

// oneKind refuses files that mix interval logs and results (files sniff
// finds nothing else in: a JSON result, or what its reader judges), which
// would otherwise be refused one file at a time as the wrong kind.
func oneKind(names []string) error {
	var hlog, res string
	for _, name := range names {
		switch k := sniffFile(name); {
		case k == kindIntervalLog && hlog == "":
			hlog = name
		case k == nil && res == "":
			if _, err := os.Stat(name); err == nil {
				res = name
			}
		}
	}
	if hlog != "" && res != "" {
		return fmt.Errorf("%s is an interval log and %s is not: merge takes results or interval logs, not both", hlog, res)
	}
	return nil
}

// mergeInputs is the merge of 'openload merge' and of 'openload k8s
// run' (k8s.go), one code for both: it sets apart the interrupted shards
// (withoutInterrupted), adds the others, refuses a missing shard unless
// o.partial, checks the whole again, prints the report and the verdict,
// writes o.output, and returns the exit code, a run's. A refusal is one
// line, "openload: CMD: …", and returns refused (merge: exitUsage, the
// files given are the input; k8s run: exitRuntime, the run's shards
// could not all be had).
func mergeInputs(in []result.MergeInput, o mergeOptions, objs []verify.Objective, cmd string, refused int, stdout, stderr io.Writer) int {
	names := make([]string, len(in))
	for i, x := range in {
		names[i] = x.Name
	}
	refuse := func(err error) int {
		fmt.Fprintf(stderr, "openload: %s: %v\n", cmd, err)
		return refused
	}
	in, left, err := withoutInterrupted(in, o.partial)
	if err != nil {
		return refuse(err)
	}
	for _, l := range left {
		fmt.Fprintf(stderr, "openload: %s: %s: left out (--partial)\n", cmd, l)
	}
	res, err := result.Merge(in...)
	if err != nil {
		return refuse(flagError(loadFields, err))
	}
	if sc := shardsOf(res); !sc.Complete() && !o.partial {
		return refuse(fmt.Errorf("%s missing: got %s (--partial merges them anyway)", missingShards(sc), strings.Join(names, ", ")))
	}
	findings := verify.Run(res, o.verify)
	res.Checks = verify.ToChecks(findings)
	verdict := exitOf(verify.Judge(res, objs).Class)

	out := stdout
	if o.output == "-" {
		out = stderr
	}
	if !o.quiet {
		if err := report.TextWrapped(out, res, wrapWidth(out)); err != nil {
			fmt.Fprintf(stderr, "openload: %s: report: %v\n", cmd, err)
		}
	}
	writeVerdict(out, stderr, res, verdict, o.quiet, cmd+": ")
	if o.output != "" {
		if err := writeOutput("--output", o.output, stdout, quietNotice(stderr, o.quiet), func(w io.Writer) error { return result.Write(w, res) }); err != nil {
			fmt.Fprintf(stderr, "openload: %s: %v\n", cmd, err)
			return exitRuntime
		}
	}
	return verdict
}

// withoutInterrupted sets apart the shards whose own run was
// interrupted (a pod killed, a ^C): their counts stop where the stop
// came, so the whole would be neither the schedule nor a clean share of
// it. Without partial the first is refused, named; with it they are left
// out, each said in left, and the merge is of the others (missing
// shards, which the result and its checks say).
func withoutInterrupted(in []result.MergeInput, partial bool) (kept []result.MergeInput, left []string, err error) {
	for _, x := range in {
		r := x.Result
		if !r.Interrupted {
			kept = append(kept, x)
			continue
		}
		who := x.Name
		if sc := r.Config.Shard; sc != nil && len(sc.Indexes) == 1 {
			who = fmt.Sprintf("shard %d/%d (%s)", sc.Indexes[0], sc.Of, x.Name)
		}
		msg := fmt.Sprintf("%s was interrupted at %.1f s of its %s: not part of the whole", who, r.Elapsed, r.Config.Duration)
		if !partial {
			return nil, nil, fmt.Errorf("%s (--partial merges the other shards)", msg)
		}
		left = append(left, msg)
	}
	if len(kept) == 0 {
		return nil, nil, fmt.Errorf("every shard given was interrupted: %s", strings.Join(left, "; "))
	}
	return kept, left, nil
}

// shardsOf is the shards res holds: a run of scenarios splits each
// scenario alike (result.Union), so its first scenario's say.
func shardsOf(res *result.Result) *result.ShardConfig {
	if len(res.Scenarios) > 0 {
		return res.Scenarios[0].Result.Config.Shard
	}
	return res.Config.Shard
}

// missingShards names the shards a merge lacks: "shard 2/4", "shards 1, 3 of 4".
func missingShards(sc *result.ShardConfig) string {
	m := sc.Missing()
	if len(m) == 1 {
		return fmt.Sprintf("shard %d/%d", m[0], sc.Of)
	}
	s := make([]string, len(m))
	for i, x := range m {
		s[i] = fmt.Sprint(x)
	}
	return fmt.Sprintf("shards %s of %d", strings.Join(s, ", "), sc.Of)
}

// mergeIntervalLogs is 'openload merge' of interval logs (--hlog): every
// input must be one, and the merged log goes to output.
func mergeIntervalLogs(names []string, output string, stdout, stderr io.Writer) int {
	if output == "" {
		return usageErrorIn(stderr, "merge", "merging interval logs needs -o FILE ('-' for stdout)")
	}
	in := make([]result.IntervalLogInput, len(names))
	for i, name := range names {
		b, err := os.ReadFile(name)
		if err != nil {
			return fileError(stderr, "merge", fmt.Errorf("%s: %v", name, unwrapPath(err)))
		}
		if sniff(b) != kindIntervalLog {
			return fileError(stderr, "merge", fmt.Errorf("%s: not an interval log, but %s is: merge results or interval logs, not both", name, names[0]))
		}
		in[i] = result.IntervalLogInput{Name: name, Log: b}
	}
	var buf bytes.Buffer
	if err := result.MergeIntervalLogs(&buf, in...); err != nil {
		return fileError(stderr, "merge", flagError(loadFields, err))
	}
	if err := writeOutput("--output", output, stdout, stderr, func(w io.Writer) error { _, err := w.Write(buf.Bytes()); return err }); err != nil {
		fmt.Fprintf(stderr, "openload: merge: %v\n", err)
		return exitRuntime
	}
	return exitOK
}
