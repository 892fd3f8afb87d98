package main

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"github.com/openload/openload/internal/report"
	"github.com/openload/openload/result"
)

// reportFormat renders one saved result. A format that shows one histogram
// takes it by metric name; the others ignore it.
type reportFormat struct {
	usesMetric bool
	write      func(w io.Writer, res *result.Result, name, metric string) error
}

// reportFormats are the formats of `openload report`, by name; reportOrder
// lists them in the order the help gives them.
var (
	reportFormats = map[string]reportFormat{
		"table": {write: writeTable},
		"json":  {write: func(w io.Writer, res *result.Result, _, _ string) error { return result.Write(w, res) }},
		"hgrm":  {usesMetric: true, write: writeHGRM},
	}
	reportOrder = []string{"table", "json", "hgrm"}
)

// writeTable is the text report a run prints, and its verdict.
func writeTable(w io.Writer, res *result.Result, _, _ string) error {
	if err := report.Text(w, res); err != nil {
		return err
	}
	writeVerdict(w, io.Discard, res, 0, false, "")
	return nil
}

// writeHGRM is HdrHistogram's percentile distribution of one histogram.
func writeHGRM(w io.Writer, res *result.Result, name, metric string) error {
	h, err := res.Histogram(metric)
	if err != nil {
		return inputError{fmt.Errorf("%s: %v", name, err)}
	}
	return report.HGRM(w, h)
}

// inputError marks an error caused by the input file (exit 2), not by
// writing the output.
type inputError struct{ error }

const reportUsage = `openload report — re-render a saved result

Usage:
  openload report [--format F] [--metric M] RESULT.json
  openload report RESULT.json [--html FILE] [--svg FILE] [--png FILE] [--chart C]
  openload report [--format table|hgrm] RUN.hlog

Examples:
  openload -rate 300 -d 20s -o run.json --hlog run.hlog http://127.0.0.1:8080/predict
  openload report run.json                        # the text report again
  openload report --format hgrm --metric service run.json > service.hgrm
  openload report run.json --html run.html --png latency.png
  openload report run.hlog                        # the interval log, read back

Formats:
  table   the text report a run prints (default)
  json    the result itself, re-encoded
  csv     the per-second timeline (scheduled, skipped, sent, completed, errors, response p99)
  html    a self-contained page: latency by percentile, the timeline, p99 per second, class
          shares, and the text report; hover for values, drag to zoom (no network needed)
  hgrm    HdrHistogram's percentile distribution of one histogram (--metric), values in ms,
          for HdrHistogram's plotter
          (https://hdrhistogram.github.io/HdrHistogram/plotFiles.html)

`

// reportGroups are the groups of reportFlags, in help order.
var reportGroups = []string{groupFlags, groupEnd}

// reportOptions are the flags of `openload report`.
type reportOptions struct {
	format, metric, html, svg, png, chart, hlog string
	help                                        bool
}

func reportFlags(o *reportOptions) *pflag.FlagSet {
	fs := newFlagSet("openload report")
	inGroup(fs, groupFlags, func() {
		fs.StringVar(&o.format, "format", "table", "output format: "+strings.Join(reportOrder, ", "))
		fs.StringVar(&o.metric, "metric", "response", "histogram for --format hgrm: "+strings.Join(allMetrics(), ", "))
		fs.StringVar(&o.html, "html", "", "also write the self-contained HTML report (all charts) to this `file`")
		fs.StringVar(&o.svg, "svg", "", "also write one chart (--chart) as SVG to this `file`")
		fs.StringVar(&o.png, "png", "", "also write one chart (--chart) as PNG to this `file`")
		fs.StringVar(&o.chart, "chart", "latency", "chart for --svg/--png: latency (alias percentiles), timeline, timeline-p99, class-0 …, class-0-seconds …")
		fs.StringVar(&o.hlog, "hlog", "", "read this HdrHistogram interval log (as --hlog writes) instead of a result; a log given as the `file` is recognised without it")
	})
	helpFlag(fs, &o.help)
	return fs
}

// runReport is `openload report`.
func runReport(args []string, stdout, stderr io.Writer) int {
	var o reportOptions
	fs := reportFlags(&o)
	if err := fs.Parse(longForm(fs, args)); err != nil {
		return usageErrorIn(stderr, "report", "%v", err)
	}
	if o.hlog != "" && !o.help {
		if fs.NArg() != 0 {
			return usageErrorIn(stderr, "report", "--hlog reads the interval log instead of a result file; drop %q", fs.Arg(0))
		}
		if o.html != "" || o.svg != "" || o.png != "" {
			return usageErrorIn(stderr, "report", "%s is an interval log: --html, --svg and --png draw a result", o.hlog)
		}
		return runReportHlog(o.hlog, o.format, o.metric, stdout, stderr)
	}
	if o.help {
		fmt.Fprint(stdout, reportUsage+flagHelp(fs, reportGroups))
		return exitOK
	}
	f, ok := reportFormats[o.format]
	switch {
	case !ok:
		return usageErrorIn(stderr, "report", "--format %q is unknown (known: %s)", o.format, strings.Join(reportOrder, ", "))
	case !slices.Contains(allMetrics(), o.metric):
		return usageErrorIn(stderr, "report", "--metric %q is unknown (known: %s)", o.metric, strings.Join(allMetrics(), ", "))
	case fs.Changed("metric") && !f.usesMetric:
		return usageErrorIn(stderr, "report", "--metric applies to --format hgrm, not %s", o.format)
	case fs.NArg() != 1:
		return usageErrorIn(stderr, "report", "want one result file, got %d arguments", fs.NArg())
	}
	if err := checkOutputs(output("--html", o.html), output("--svg", o.svg), output("--png", o.png)); err != nil {
		return usageErrorIn(stderr, "report", "%v", err)
	}
	name := fs.Arg(0)
	if isIntervalLog(name) {
		if o.html != "" || o.svg != "" || o.png != "" {
			return usageErrorIn(stderr, "report", "%s is an interval log: --html, --svg and --png draw a result", name)
		}
		return runReportHlog(name, o.format, o.metric, stdout, stderr)
	}
	res, err := readResultFile(name)
	if err != nil {
		return fileError(stderr, "report", err)
	}
	if err := writeFiles(res, name, o.html, o.svg, o.png, o.chart); err != nil {
		if ie, ok := err.(inputError); ok {
			return usageErrorIn(stderr, "report", "%v", ie.error)
		}
		fmt.Fprintf(stderr, "openload: report: %v\n", err)
		return exitRuntime
	}
	if err := f.write(stdout, res, name, o.metric); err != nil {
		if ie, ok := err.(inputError); ok {
			return fileError(stderr, "report", ie.error)
		}
		fmt.Fprintf(stderr, "openload: report: %v\n", err)
		return exitRuntime
	}
	return exitOK
}
