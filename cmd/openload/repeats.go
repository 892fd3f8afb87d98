package main

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/pflag"

	"github.com/openload/openload/internal/loadtest"
	"github.com/openload/openload/internal/report"
	"github.com/openload/openload/internal/sweep"
	"github.com/openload/openload/verify"
)

// runRepeats runs a load run's schedule o.stages.repeats times and prints
// each run's verdict, then every headline figure's median and spread. -o
// writes every run's full result (report FILE#N reads run N). The exit code
// is the worst run's, by runLoad's precedence.
func runRepeats(ctx context.Context, o *loadOptions, fs *pflag.FlagSet, stdout, stderr io.Writer) int {
	s, err := loadtest.Start(ctx, o.setup(fs, stderr))
	if err != nil {
		return startFailed(stderr, "", err)
	}
	defer s.Close()
	n := 0
	base := sweep.Options{Base: s.Options, OnPoint: func(p sweep.Point) {
		n++
		if !o.quiet {
			fmt.Fprintf(stderr, "openload: run %d of %d: %s · response p99 %.3f ms · %s\n", n, o.stages.repeats, p.Result.Config.Schedule, p.Result.Response.P99, report.RunVerdict(p.Result))
		}
	}, Run: s.Point} // each run a series of its own in the live metrics
	points, err := sweep.Repeat(ctx, base, o.stages.repeats)
	f := sweep.RepeatsFile(points)
	if !o.quiet {
		if werr := report.SweepText(stdout, &f); werr != nil {
			fmt.Fprintf(stderr, "openload: %v\n", werr)
		}
	}
	if werr := writeSweepFiles(o, sweepOptions{}, f, quietNotice(stderr, o.quiet)); werr != nil {
		fmt.Fprintf(stderr, "openload: %v\n", werr)
		return exitRuntime
	}
	if err != nil {
		fmt.Fprintf(stderr, "openload: %v\n", err)
		return exitRuntime
	}
	worst := verify.ClassValid
	for _, p := range points {
		if c := verify.ClassOf(p.Result); verify.Worse(c, worst) {
			worst = c
		}
	}
	return exitOf(worst)
}
