package main

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"github.com/openload/openload/internal/report"
	"github.com/openload/openload/recorder"
)

// reportFormat renders one saved result. A format that shows one histogram
// takes it by metric name; the others ignore it.
type reportFormat struct {
	usesMetric bool
	write      func(w io.Writer, res *recorder.Result, name, metric string) error
}

// reportFormats are the formats of `openload report`, by name; reportOrder
// lists them in the order the help gives them.
var (
	reportFormats = map[string]reportFormat{
		"table": {write: writeTable},
		"json":  {write: func(w io.Writer, res *recorder.Result, _, _ string) error { return recorder.WriteResult(w, res) }},
		"hgrm":  {usesMetric: true, write: writeHGRM},
	}
	reportOrder = []string{"table", "json", "hgrm"}
)

// writeTable is the text report a run prints, and its verdict.
func writeTable(w io.Writer, res *recorder.Result, _, _ string) error {
	if err := report.Text(w, res); err != nil {
		return err
	}
	if _, err := fmt.Fprintf(w, "\nresult: %s\n", report.RunVerdict(res)); err != nil {
		return err
	}
	if _, failed := report.TargetVerdict(res); failed {
		for _, h := range report.TargetHints(res) {
			if _, err := fmt.Fprintf(w, "hint:   %s\n", h); err != nil {
				return err
			}
		}
	}
	return nil
}

// writeHGRM is HdrHistogram's percentile distribution of one histogram.
func writeHGRM(w io.Writer, res *recorder.Result, name, metric string) error {
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
  openload report RESULT.json --html report.html [--svg latency.svg --chart latency]
  openload report [--hlog] RUN.hlog [--format table|hgrm]

Formats:
  table   the text report a run prints (default)
  json    the result itself, re-encoded
  csv     the per-second timeline (scheduled, skipped, sent, completed, errors,
          response p99)
  html    a self-contained page: latency by percentile, the timeline, p99 per
          second, class shares, and the text report (no network needed)
  hgrm    HdrHistogram's percentile distribution of one histogram (--metric),
          values in ms, for HdrHistogram's plotter
          (https://hdrhistogram.github.io/HdrHistogram/plotFiles.html)

Flags:
`

// runReport is `openload report`.
func runReport(args []string, stdout, stderr io.Writer) int {
	fs := pflag.NewFlagSet("openload report", pflag.ContinueOnError)
	fs.SortFlags = false
	fs.SetOutput(io.Discard)
	format := fs.String("format", "table", "output format: "+strings.Join(reportOrder, ", "))
	metric := fs.String("metric", "response", "histogram for --format hgrm: "+strings.Join(recorder.Metrics, ", "))
	htmlPath := fs.String("html", "", "also write the self-contained HTML report (all charts) to this file")
	svgPath := fs.String("svg", "", "also write one chart (--chart) as SVG to this file")
	pngPath := fs.String("png", "", "also write one chart (--chart) as PNG to this file")
	chart := fs.String("chart", "latency", "chart for --svg/--png: latency (alias percentiles), timeline, timeline-p99, class-0 …")
	hlog := fs.String("hlog", "", "read this HdrHistogram interval log (as --hlog writes) instead of a result; a log given as the file is recognised without it")
	help := fs.BoolP("help", "h", false, "show this help")
	if err := fs.Parse(longForm(fs, args)); err != nil {
		return usageError(stderr, "report: %v", err)
	}
	if *hlog != "" && !*help {
		if fs.NArg() != 0 {
			return usageError(stderr, "report: --hlog reads the interval log instead of a result file; drop %q", fs.Arg(0))
		}
		if *htmlPath != "" || *svgPath != "" || *pngPath != "" {
			return usageError(stderr, "report: %s is an interval log: --html, --svg and --png draw a result", *hlog)
		}
		return runReportHlog(*hlog, *format, *metric, stdout, stderr)
	}
	if *help {
		fmt.Fprint(stdout, reportUsage+fs.FlagUsages())
		return exitOK
	}
	f, ok := reportFormats[*format]
	switch {
	case !ok:
		return usageError(stderr, "report: --format %q is unknown (known: %s)", *format, strings.Join(reportOrder, ", "))
	case !slices.Contains(recorder.Metrics, *metric):
		return usageError(stderr, "report: --metric %q is unknown (known: %s)", *metric, strings.Join(recorder.Metrics, ", "))
	case fs.Changed("metric") && !f.usesMetric:
		return usageError(stderr, "report: --metric applies to --format hgrm, not %s", *format)
	case fs.NArg() != 1:
		return usageError(stderr, "report: want one result file, got %d arguments", fs.NArg())
	}
	name := fs.Arg(0)
	if isIntervalLog(name) {
		if *htmlPath != "" || *svgPath != "" || *pngPath != "" {
			return usageError(stderr, "report: %s is an interval log: --html, --svg and --png draw a result", name)
		}
		return runReportHlog(name, *format, *metric, stdout, stderr)
	}
	res, err := readResultFile(name)
	if err != nil {
		return fileError(stderr, "report", err)
	}
	if err := writeFiles(res, name, *htmlPath, *svgPath, *pngPath, *chart); err != nil {
		if ie, ok := err.(inputError); ok {
			return usageError(stderr, "report: %v", ie.error)
		}
		fmt.Fprintf(stderr, "openload: report: %v\n", err)
		return exitRuntime
	}
	if err := f.write(stdout, res, name, *metric); err != nil {
		if ie, ok := err.(inputError); ok {
			return fileError(stderr, "report", ie.error)
		}
		fmt.Fprintf(stderr, "openload: report: %v\n", err)
		return exitRuntime
	}
	return exitOK
}
