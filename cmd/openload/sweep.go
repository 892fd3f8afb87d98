package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/openload/openload/internal/loadtest"
	"github.com/openload/openload/internal/outfile"
	"github.com/openload/openload/internal/report"
	"github.com/openload/openload/internal/sweep"
	"github.com/openload/openload/result"
	"github.com/openload/openload/schedule"
	"github.com/openload/openload/verify"
)

const sweepUsage = `openload sweep: one open run per offered rate, or a search for the highest rate
that meets the objectives.

Usage:
  openload sweep --rates 20,40,60,80,100 -d 20s [flags] [URL]
  openload sweep --from 10 --to 200 --steps 10 [--geometric] [flags] [URL]
  openload sweep --search --slo 'response.p99<=200ms' --from 10 --to 400 [--precision 2%]
                 [--repeats N] [flags] [URL]
  openload sweep --profile sweep [--points 8] [--requests N] -d 20s [flags] [URL]

Every point is a full open run with its own checks; every flag of a load run shown below
applies to each point (the sweep sets --rate; --stages, --closed, --arrivals, --log and --hlog
do not apply). -o writes every point's full result to one JSON file:
'openload report FILE' prints the table (or the search) again and redraws --html, --svg and
--png; 'openload report FILE#N' and 'openload diff FILE#1 FILE#5' read point N.

The knee is the first point whose response p99 exceeds --knee × the lowest point's, or that
breaks an objective. A search brackets (from --from, doubling up to --to) then bisects to
--precision; a probe passes when, for every objective, the median over its --repeats runs meets
the bound and no run failed a check or stopped early; a run stops early once a breach is
certain (requests already waiting longer than the bound, or failed, beyond the objective's
share of the run).

--profile sweep finds its own rates, as GuideLLM's sweep profile does: first the synchronous
point (one request at a time: a closed loop of 1 user for -d), then the throughput probe
(--requests at once, bounded by -c; by default what -c synchronous users would complete in -d),
then --points open runs of -d at rates evenly spaced between their two completed rates. The
table shows all of them by rate, the probes marked; the knee is named among the open points.

Examples:
  # five rates, 20 s each, against the built-in stub; keep every point's result
  openload sweep --rates 20,40,60,80,100 -d 20s -o sweep.json
  openload report sweep.json#3                   # point 3 (60/s) as a run's report

  # ten rates from 10/s to 400/s in a constant ratio, with the charts on one page
  openload sweep --from 10 --to 400 --steps 10 --geometric --html sweep.html \
      http://127.0.0.1:8080/predict

  # the synchronous and throughput points first, then 8 rates between them
  openload sweep --profile sweep --points 8 -d 20s -c 32 http://127.0.0.1:8080/predict

  # the highest rate whose p99 response time stays within 200 ms, 3 runs a probe
  openload sweep --search --slo 'response.p99<=200ms' --from 10 --to 400 --repeats 3 \
      http://127.0.0.1:8080/predict

Exit codes: 0 the sweep ran (a search: found the capacity, or --to still passes); 1 a point's
check failed; 2 bad input (an objective the results cannot measure included); 3 the runs could
not be carried out or the files not written; 4 a search whose --from already breaches;
5 the target failed at the lowest rate (a search: at --from, in every run); 130 interrupted.

`

const groupSweep = "Sweep"

// sweepOptions are the flags of 'openload sweep', besides a load run's.
type sweepOptions struct {
	rates     []float64
	from, to  float64
	steps     int
	geometric bool
	pause     time.Duration
	knee      float64
	search    bool
	precision string
	html, svg string
	png       string
	profile   string // "sweep": the rates are found (sweep.RunProfile)
	points    int
	requests  int64 // --requests, the throughput probe's count (0: sweep.ProbeCount)
}

// profileSweep is --profile's one value.
const profileSweep = "sweep"

// defaultPoints is --points': with the two probes, ten runs, as
// GuideLLM's sweep of --rate 10 (whose count includes the probes).
const defaultPoints = 8

func (s *sweepOptions) flags(fs *pflag.FlagSet) {
	inGroup(fs, groupSweep, func() {
		fs.Float64SliceVar(&s.rates, "rates", nil, "the offered `RATES` to sweep, requests per second, comma-separated, e.g. 20,40,60")
		fs.Lookup("rates").DefValue = "" // not pflag's "[]" in the help
		fs.Float64Var(&s.from, "from", 0, "lowest `rate` of --steps, or of a --search")
		fs.Float64Var(&s.to, "to", 0, "highest `rate` of --steps, or of a --search")
		fs.IntVar(&s.steps, "steps", 0, "number of rates from --from to --to, both included")
		fs.BoolVar(&s.geometric, "geometric", false, "with --steps: rates in a constant ratio instead of evenly spaced")
		fs.DurationVar(&s.pause, "pause", 2*time.Second, "pause between points, so one point's backlog does not leak into the next")
		fs.Float64Var(&s.knee, "knee", sweep.DefaultKnee, "the knee is the first point whose response p99 exceeds this × the lowest point's")
		fs.BoolVar(&s.search, "search", false, "search for the highest rate in --from..--to at which every --slo holds")
		fs.StringVar(&s.precision, "precision", "2%", "with --search: stop bisecting when the bracket is this narrow, a `share` of its low end")
		fs.StringVar(&s.html, "html", "", "write the charts (latency and throughput against offered rate) and the table as one HTML `file`")
		fs.StringVar(&s.svg, "svg", "", "write the latency chart as SVG to this `file` (the throughput chart beside it, -throughput before .svg; a streamed sweep's token chart, -tokens)")
		fs.StringVar(&s.png, "png", "", "write the charts --svg writes as PNG, the latency chart to this `file`")
		fs.StringVar(&s.profile, "profile", "", "find the rates (the one profile, `sweep`): the synchronous point (1 user, closed loop), the throughput probe (--requests at once), then --points rates between")
		fs.IntVar(&s.points, "points", defaultPoints, "with --profile sweep: the number of open rates between the synchronous and the throughput rate")
	})
}

// parsePrecision reads "2%" or 0.02.
func parsePrecision(v string) (float64, error) {
	s := strings.TrimSpace(v)
	pct := strings.HasSuffix(s, "%")
	f, err := strconv.ParseFloat(strings.TrimSuffix(s, "%"), 64)
	if err != nil {
		return 0, fmt.Errorf("--precision %q: want a share such as 2%% or 0.02", v)
	}
	if pct {
		f /= 100
	}
	if math.IsNaN(f) || f <= 0 || f >= 1 {
		return 0, fmt.Errorf("--precision %q: want a share above 0 and below 100%%", v)
	}
	return f, nil
}

// validate checks the sweep's flags and returns its rates (none for a
// search).
func (s *sweepOptions) validate(fs *pflag.FlagSet, repeats int) ([]float64, error) {
	if fs.Changed("rate") {
		return nil, errors.New("--rate: a sweep sets each point's rate; use --rates, or --from, --to and --steps")
	}
	for _, name := range []string{"stages", "closed", "arrivals", "log", "hlog", "scenarios"} {
		if fs.Changed(name) {
			return nil, fmt.Errorf("--%s does not apply to a sweep: each point is one %s run at one rate", name, joinWords(schedule.NamesOf(func(schedule.Process) bool { return true }), "or"))
		}
	}
	if fs.Changed("profile") {
		if err := s.validateProfile(fs); err != nil {
			return nil, err
		}
	} else if fs.Changed("points") {
		return nil, errors.New("--points applies to --profile sweep only")
	}
	if s.search {
		return nil, s.validateSearch(fs, repeats)
	}
	for _, name := range []string{"precision", "repeats"} {
		if fs.Changed(name) {
			return nil, fmt.Errorf("--%s applies to --search only", name)
		}
	}
	if s.knee <= 1 || math.IsNaN(s.knee) || math.IsInf(s.knee, 0) {
		return nil, fmt.Errorf("--knee must be a finite number > 1, got %v", s.knee)
	}
	if s.pause < 0 {
		return nil, fmt.Errorf("--pause must be ≥ 0, got %v", s.pause)
	}
	if s.profile != "" {
		return nil, nil // the profile finds them
	}
	rates, err := s.sweepRates(fs)
	if err != nil {
		return nil, err
	}
	if fs.Changed("geometric") && !fs.Changed("steps") {
		return nil, errors.New("--geometric applies to --steps only")
	}
	return rates, nil
}

// validateProfile checks --profile and --points: the profile finds its
// own rates, so the flags that give them do not apply.
func (s *sweepOptions) validateProfile(fs *pflag.FlagSet) error {
	if s.profile != profileSweep {
		return fmt.Errorf("--profile %q: the one profile is %s (the synchronous point, the throughput probe, then --points rates between)", s.profile, profileSweep)
	}
	for _, name := range []string{"rates", "from", "to", "steps", "geometric", "search"} {
		if fs.Changed(name) {
			return fmt.Errorf("--%s does not apply to --profile sweep: it finds its own rates between the synchronous and the throughput point", name)
		}
	}
	for _, name := range []string{"shard", "shard-from-env"} {
		if fs.Changed(name) {
			return fmt.Errorf("--%s does not apply to --profile sweep: its synchronous point is one user's closed loop, no schedule to split", name)
		}
	}
	if s.points < 1 || s.points > 1000 {
		return fmt.Errorf("--points must be 1 to 1000, got %d", s.points)
	}
	return nil
}

// validateSearch checks a search's flags: its range, repeats and
// precision.
func (s *sweepOptions) validateSearch(fs *pflag.FlagSet, repeats int) error {
	switch {
	case fs.Changed("rates") || fs.Changed("steps") || fs.Changed("geometric"):
		return errors.New("--search picks its own rates between --from and --to: --rates, --steps and --geometric do not apply")
	case !fs.Changed("from") || !fs.Changed("to"):
		return errors.New("--search needs --from and --to, e.g. --from 10 --to 400")
	}
	if err := s.validateRange(); err != nil {
		return err
	}
	if repeats < 1 {
		return fmt.Errorf("--repeats must be ≥ 1, got %d", repeats)
	}
	_, err := parsePrecision(s.precision)
	return err
}

// validateRange checks --from and --to, a search's range or a sweep's
// steps' ends.
func (s *sweepOptions) validateRange() error {
	switch {
	case math.IsNaN(s.from) || s.from <= 0:
		return fmt.Errorf("--from must be > 0, got %v", s.from)
	case math.IsNaN(s.to) || s.to <= s.from:
		return fmt.Errorf("--from %v must be below --to %v", s.from, s.to)
	case s.to > maxRate:
		return fmt.Errorf("--to %v is absurd: at most %d per second", s.to, maxRate)
	}
	return nil
}

// sweepRates are a sweep's rates, given one way: --rates (sorted, each
// once), or --from, --to and --steps.
func (s *sweepOptions) sweepRates(fs *pflag.FlagSet) ([]float64, error) {
	ranged := fs.Changed("from") || fs.Changed("to") || fs.Changed("steps")
	switch {
	case fs.Changed("rates") && ranged:
		return nil, errors.New("--rates and --from/--to/--steps are exclusive: give the rates one way")
	case fs.Changed("rates"):
		rates := slices.Clone(s.rates)
		for _, r := range rates {
			if math.IsNaN(r) || math.IsInf(r, 0) || r <= 0 {
				return nil, fmt.Errorf("--rates: %v is not a rate > 0", r)
			}
			if r > maxRate {
				return nil, fmt.Errorf("--rates: %v is absurd: at most %d per second", r, maxRate)
			}
		}
		slices.Sort(rates)
		return slices.Compact(rates), nil
	case ranged:
		if !fs.Changed("from") || !fs.Changed("to") || !fs.Changed("steps") {
			return nil, errors.New("--from, --to and --steps go together, e.g. --from 10 --to 200 --steps 10")
		}
		if err := s.validateRange(); err != nil {
			return nil, err
		}
		if s.steps < 2 || s.steps > 1000 {
			return nil, fmt.Errorf("--steps must be 2 to 1000, got %d", s.steps)
		}
		return sweep.Rates(s.from, s.to, s.steps, s.geometric)
	}
	return nil, errors.New("a sweep needs rates: --rates 20,40,60, or --from 10 --to 200 --steps 10, or --search")
}

// sweepRefused are the flags of a load run that a sweep refuses
// (sweepOptions.validate; --lazy, readLazily) or that need one of
// those: its help does not show them.
var sweepRefused = []string{"rate", "stages", "closed", "think", "arrivals", "arrivals-column", "speed", "log", "hlog", "lazy"}

// sweepFlags registers the flags of 'openload sweep': a load run's, but
// those it refuses hidden, and its own.
func sweepFlags(o *loadOptions, so *sweepOptions) *pflag.FlagSet {
	fs := loadFlags(o)
	fs.Lookup("output").Usage = "write every point's full result to this JSON `file` ('openload report FILE#N' reads point N)"
	for _, name := range sweepRefused {
		if err := fs.MarkHidden(name); err != nil {
			panic(err) // the table names a flag that is gone
		}
	}
	so.flags(fs)
	return fs
}

// sweepGroups are the groups of sweepFlags, in help order.
var sweepGroups = append([]string{groupSweep}, loadGroups...)

// check validates the sweep's flags and the load run's they apply to each
// point, and returns the sweep's rates (none for a search).
func (so *sweepOptions) check(fs *pflag.FlagSet, o *loadOptions) ([]float64, error) {
	rates, err := so.validate(fs, o.stages.repeats)
	if err != nil {
		return nil, err
	}
	// The load run's checks, at the highest rate the sweep may offer:
	// the request-count guard then covers every point.
	top := so.to
	if len(rates) > 0 {
		top = rates[len(rates)-1]
	}
	if so.profile != "" {
		// Its rates are measured; --requests is the throughput probe's
		// count, not the open points'.
		if err := so.checkRequests(fs, o); err != nil {
			return nil, err
		}
		top = 1
	}
	// The bodies made are taken on from point to point (internal/sweep,
	// bodies.go): made for every point, so that none re-sends another's.
	var plan sweep.Plan // a profile's: not known ahead, its rates are found as it runs
	switch prec, _ := parsePrecision(so.precision); {
	case so.search:
		plan = sweep.PlanSearch(o.run.Schedule, so.from, so.to, prec, o.stages.repeats)
	case so.profile == "":
		plan = sweep.PlanSweep(o.run.Schedule, rates)
	}
	o.plan = &plan
	if err := fs.Set("rate", strconv.FormatFloat(top, 'g', -1, 64)); err != nil {
		return nil, err
	}
	if err := o.validate(fs); err != nil {
		return nil, err
	}
	if so.search && len(o.run.Objectives) == 0 {
		return nil, errors.New("--search needs an objective to search for: --slo 'response.p99<=200ms'")
	}
	return rates, nil
}

// checkRequests takes --requests out of the load run's options into the
// profile's throughput probe.
func (so *sweepOptions) checkRequests(fs *pflag.FlagSet, o *loadOptions) error {
	so.requests, o.run.Schedule.Count = o.run.Schedule.Count, 0
	switch {
	case !fs.Changed("requests"):
		return nil
	case so.requests < 1:
		return fmt.Errorf("--requests must be ≥ 1, got %d", so.requests)
	case so.requests > maxRequests && !o.yes:
		return fmt.Errorf("--requests %d is more than %d: add --yes if you mean it", so.requests, maxRequests)
	}
	return nil
}

func runSweep(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	var o loadOptions
	var so sweepOptions
	fs := sweepFlags(&o, &so)
	if err := parseFlags(fs, args); err != nil {
		return usageErrorIn(stderr, "sweep", "%v", err)
	}
	if o.help {
		fmt.Fprint(stdout, sweepUsage+flagHelp(fs, sweepGroups))
		return exitOK
	}
	if fs.NArg() > 1 {
		return usageErrorIn(stderr, "sweep", "one URL at most, got %d arguments: %s", fs.NArg(), strings.Join(fs.Args(), " "))
	}
	rates, err := so.check(fs, &o)
	if err != nil {
		return usageErrorIn(stderr, "sweep", "%v", err)
	}
	if o.output == "-" {
		return usageErrorIn(stderr, "sweep", "--output -: the table goes to stdout; give a file")
	}
	if err := checkOutputs(sweepOutputs(&o, so)...); err != nil {
		return usageErrorIn(stderr, "sweep", "%v", err)
	}
	s, err := loadtest.Start(ctx, o.setup(fs, stderr))
	if err != nil {
		return startFailed(stderr, "sweep: ", err)
	}
	defer s.Close()
	r := &s.Options
	base := sweep.Options{Base: *r, Pause: so.pause, Knee: so.knee, Run: s.Point} // each run a series of its own in the live metrics
	n := 0
	base.OnPoint = func(p sweep.Point) {
		n++
		if o.quiet {
			return
		}
		at := fmt.Sprintf("at %g/s", p.Rate)
		if p.Kind != "" {
			at = p.Label()[len("the "):]
		}
		line := fmt.Sprintf("openload sweep: run %d %s: completed %.1f/s, response p99 %.3f ms, service p99 %.3f ms",
			n, at, p.Completed(), p.Result.Response.P99, p.Result.Service.P99)
		if p.Stopped != "" {
			line += " · stopped early: " + p.Stopped
		}
		fmt.Fprintln(stderr, line)
	}
	if so.search {
		return runSearch(ctx, &o, so, base, stdout, stderr)
	}
	var sw *sweep.Sweep
	if so.profile != "" {
		sw, err = runProfile(ctx, &o, so, base, stderr)
	} else {
		base.Rates = rates
		if !o.quiet {
			fmt.Fprintf(stderr, "openload sweep: %d points, %s each, → %s %s\n", len(rates), r.Schedule.Duration, r.Method, r.URL)
		}
		sw, err = sweep.Run(ctx, base)
	}
	if sw == nil {
		fmt.Fprintf(stderr, "openload: sweep: %v\n", err)
		return exitRuntime
	}
	code := exitOK
	if err != nil {
		fmt.Fprintf(stderr, "openload: sweep: %v\n", err)
		code = exitRuntime
	}
	f := sweep.SweepFile(sw)
	if err := report.SweepText(stdout, &f); err != nil {
		fmt.Fprintf(stderr, "openload: sweep: %v\n", err)
	}
	if err := writeSweepFiles(&o, so, f, quietNotice(stderr, o.quiet)); err != nil {
		fmt.Fprintf(stderr, "openload: sweep: %v\n", err)
		return exitRuntime
	}
	if code != exitOK {
		return code
	}
	return sweepVerdict(stdout, "sweep", sw.Outcome(ctx.Err() != nil))
}

// runProfile runs --profile sweep (sweep.RunProfile), saying on stderr
// what the probes found.
func runProfile(ctx context.Context, o *loadOptions, so sweepOptions, base sweep.Options, stderr io.Writer) (*sweep.Sweep, error) {
	r := &base.Base
	opt := sweep.ProfileOptions{Options: base, Points: so.points, Requests: so.requests}
	if !o.quiet {
		fmt.Fprintf(stderr, "openload sweep --profile sweep: the synchronous point, the throughput probe, then %d rates between, %s each → %s %s\n",
			so.points, r.Schedule.Duration, r.Method, r.URL)
		opt.OnProbe = func(n int64, rSync float64) {
			how := "--requests"
			if so.requests == 0 {
				how = fmt.Sprintf("⌈%.1f/s × %s⌉ × -c %d; --requests sets it", rSync, r.Schedule.Duration, r.Connections)
			}
			fmt.Fprintf(stderr, "openload sweep: the throughput probe: %d requests at once, at most %d in flight (%s)\n", n, r.Connections, how)
		}
		opt.OnRates = func(rSync, rMax float64, rates []float64) {
			fmt.Fprintf(stderr, "openload sweep: rates between %.1f/s and %.1f/s: %s\n", rSync, rMax, joinRates(rates))
		}
	}
	return sweep.RunProfile(ctx, opt)
}

// joinRates writes rates as --rates takes them.
func joinRates(rates []float64) string {
	s := make([]string, len(rates))
	for i, v := range rates {
		s[i] = fmtG(v)
	}
	return strings.Join(s, ",")
}

// sweepVerdict prints what decided a sweep's or a search's outcome, when
// it is not valid (a target that failed, in the report's words), and
// returns its exit code.
func sweepVerdict(w io.Writer, name string, oc sweep.Outcome) int {
	why := oc.Why
	if oc.Class == verify.ClassTargetFailed && oc.At != nil {
		line, _ := report.TargetVerdict(oc.At.Result)
		why += ": " + line
	}
	if why != "" && oc.Class != verify.ClassValid {
		fmt.Fprintf(w, "%s: %s (exit %d)\n", name, why, exitOf(oc.Class))
	}
	return exitOf(oc.Class)
}

// runSearch runs a capacity search and prints its probes and answer.
func runSearch(ctx context.Context, o *loadOptions, so sweepOptions, base sweep.Options, stdout, stderr io.Writer) int {
	prec, _ := parsePrecision(so.precision) // checked by validate
	base.EarlyStop = true
	opt := sweep.SearchOptions{Options: base, From: so.from, To: so.to, Precision: prec, Repeats: o.stages.repeats}
	if !o.quiet {
		fmt.Fprintf(stderr, "openload sweep --search: %s to %s/s, %s per run, %d run(s) per probe → %s %s\n",
			fmtG(so.from), fmtG(so.to), base.Base.Schedule.Duration, o.stages.repeats, base.Base.Method, base.Base.URL)
	}
	s, err := sweep.RunSearch(ctx, opt)
	if s == nil {
		fmt.Fprintf(stderr, "openload: sweep: %v\n", err)
		return exitRuntime
	}
	f := sweep.SearchFile(s)
	if werr := report.SweepText(stdout, &f); werr != nil {
		fmt.Fprintf(stderr, "openload: sweep: %v\n", werr)
	}
	if werr := writeSweepFiles(o, so, f, quietNotice(stderr, o.quiet)); werr != nil {
		fmt.Fprintf(stderr, "openload: sweep: %v\n", werr)
		return exitRuntime
	}
	if err != nil {
		fmt.Fprintf(stderr, "openload: sweep: %v\n", err)
		return exitRuntime
	}
	oc := s.Outcome()
	if oc.Why == s.Message {
		oc.Why = "" // report.SweepText printed it
	}
	return sweepVerdict(stdout, "search", oc)
}

func fmtG(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// sweepChartOutputs are the files a sweep's --html, --svg and --png may
// write, for checkOutputs.
func sweepChartOutputs(html, svg, png string) []outfile.Output {
	outs := []outfile.Output{output("--html", html)}
	for _, c := range []struct{ path, format string }{{svg, "svg"}, {png, "png"}} {
		for _, p := range report.ChartPaths(c.path, c.format) {
			outs = append(outs, output("--"+c.format, p))
		}
	}
	return outs
}

// sweepOutputs are every file a sweep may write, for checkOutputs.
func sweepOutputs(o *loadOptions, so sweepOptions) []outfile.Output {
	return append([]outfile.Output{output("--output", o.output)}, sweepChartOutputs(so.html, so.svg, so.png)...)
}

// writeSweepFiles writes -o, and --html, --svg and --png when the file has
// points to draw; notice is told where each went.
func writeSweepFiles(o *loadOptions, so sweepOptions, f result.File, notice io.Writer) error {
	if err := writeOutput("--output", o.output, io.Discard, notice, f.Write); err != nil {
		return err
	}
	if points, _ := report.ChartPoints(&f); len(points) == 0 {
		return nil
	}
	return writeSweepCharts(&f, so.html, so.svg, so.png, notice)
}

// writeSweepCharts writes a sweep file's page (html) and charts (svg,
// png: report.ChartPaths), for a live sweep and a saved one alike.
func writeSweepCharts(f *result.File, html, svg, png string, notice io.Writer) error {
	for _, c := range []struct{ path, format string }{{svg, "svg"}, {png, "png"}} {
		for _, cf := range report.SweepChartFiles(f, c.path, c.format) {
			if err := writeOutput("--"+c.format, cf.Path, io.Discard, notice, cf.Write); err != nil {
				return err
			}
		}
	}
	return writeOutput("--html", html, io.Discard, notice, func(w io.Writer) error { return writeSweepHTML(w, f) })
}

// readSweep reads name as a sweep file: point N of FILE#N, or the whole
// file (sf) when name names no point; ok is false for anything else.
func readSweep(name string) (res *result.Result, sf *result.File, ok bool, err error) {
	file, n, hasPoint := result.SplitPoint(name)
	if _, err := os.Stat(name); hasPoint && err == nil { // a file named so: no point of another
		file, hasPoint = name, false
	}
	f, oerr := os.Open(file)
	if oerr != nil {
		if hasPoint {
			return nil, nil, true, fmt.Errorf("%s: %v", file, unwrapPath(oerr))
		}
		return nil, nil, false, nil
	}
	defer f.Close()
	sf, isSweep, err := result.ReadFile(f, file)
	switch {
	case !isSweep && hasPoint:
		// FILE#N of a file that is no sweep: say what FILE is.
		if _, err := readPlainResult(file); err != nil {
			return nil, nil, true, err
		}
		return nil, nil, true, fmt.Errorf("%s is one run's result, not a sweep: drop #%d", file, n)
	case !isSweep:
		return nil, nil, false, nil
	case err != nil:
		return nil, nil, true, err
	case !hasPoint:
		return nil, sf, true, nil
	}
	res, err = sf.Point(file, n)
	return res, nil, true, err
}

// readSweepPoint reads FILE#N, point N of a sweep file, or says that FILE
// is a sweep file read without a point; ok is false for anything else.
func readSweepPoint(name string) (res *result.Result, ok bool, err error) {
	res, sf, ok, err := readSweep(name)
	if sf != nil {
		return nil, true, fmt.Errorf("%s is a %s file of %d runs: name one, e.g. %s#1", name, sf.Kind, len(sf.Points), name)
	}
	return res, ok, err
}
