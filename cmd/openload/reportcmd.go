package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/openload/openload/internal/recorder"
	"github.com/openload/openload/internal/report"
	"github.com/openload/openload/result"
	"github.com/openload/openload/verify"
)

// reportFormat is one --format of `openload report`: how it renders a
// saved result, and a saved sweep, search or repeats file (nil: a sweep
// file needs one of its points named). A format that shows one histogram
// takes it by metric name, vllm and guidellm take the per-request log,
// and vllm the percentiles given; the others ignore them.
type reportFormat struct {
	name                          string
	usesMetric, usesVLLM, usesLog bool
	run                           func(w io.Writer, res *result.Result, name string, o reportOptions) error
	sweep                         func(w io.Writer, f *result.File) error
}

// reportFormats are the formats of `openload report`, in the order the
// help gives them; every renderer is internal/report's but the run's
// table and page, whose verdict names the flags that would help.
var reportFormats = []reportFormat{
	{name: "table", run: writeTable, sweep: report.SweepText},
	{name: "json", run: func(w io.Writer, res *result.Result, _ string, _ reportOptions) error { return result.Write(w, res) }, sweep: writeSweepJSON},
	{name: "hgrm", usesMetric: true, run: writeHGRM},
	{name: "csv", run: func(w io.Writer, res *result.Result, _ string, _ reportOptions) error {
		return report.TimelineCSV(w, res)
	}, sweep: report.SweepCSV},
	{name: "html", run: writeHTML, sweep: writeSweepHTML},
	{name: "vllm", usesVLLM: true, usesLog: true, run: writeVLLM},
	{name: "guidellm", usesLog: true, run: writeGuideLLM, sweep: writeSweepGuideLLM},
}

// reportFormatNames are the names of reportFormats, in order.
func reportFormatNames() []string {
	names := make([]string, len(reportFormats))
	for i, f := range reportFormats {
		names[i] = f.name
	}
	return names
}

// lookupFormat is the format named name.
func lookupFormat(name string) (reportFormat, bool) {
	i := slices.IndexFunc(reportFormats, func(f reportFormat) bool { return f.name == name })
	if i < 0 {
		return reportFormat{}, false
	}
	return reportFormats[i], true
}

// writeTable is the text report a run prints, and its verdict.
func writeTable(w io.Writer, res *result.Result, _ string, _ reportOptions) error {
	if err := report.TextWrapped(w, res, wrapWidth(w)); err != nil {
		return err
	}
	writeVerdict(w, io.Discard, res, 0, false, "")
	return nil
}

// writeHGRM is HdrHistogram's percentile distribution of one histogram.
func writeHGRM(w io.Writer, res *result.Result, name string, o reportOptions) error {
	h, err := res.Histogram(o.metric)
	if err != nil {
		return inputError{fmt.Errorf("%s: %v", name, err)}
	}
	return report.HGRM(w, h)
}

// writeHTML writes the self-contained HTML report of a run: every chart
// and the text report.
func writeHTML(w io.Writer, res *result.Result, name string, _ reportOptions) error {
	var text bytes.Buffer
	if err := writeTable(&text, res, name, reportOptions{}); err != nil {
		return err
	}
	page, err := report.RunPage(res, text.String())
	if err != nil {
		return inputError{fmt.Errorf("%s: %v", name, err)}
	}
	return page.Write(w)
}

// writeVLLM is the result as vLLM's `bench serve --save-result` writes
// one, with the per-request arrays of --log's requests when given.
func writeVLLM(w io.Writer, res *result.Result, name string, o reportOptions) error {
	entries, err := readReportLog(o.log)
	if err != nil {
		return err
	}
	// Into a buffer: an error is the input's (a log not of this run), never
	// half an object on stdout.
	var b bytes.Buffer
	if err := report.VLLM(&b, res, report.VLLMOptions{Log: entries, Percentiles: o.percentiles}); err != nil {
		return inputError{fmt.Errorf("%s, --log %s: %v", name, o.log, err)}
	}
	_, err = w.Write(b.Bytes())
	return err
}

// readReportLog reads --log, the run's per-request log; nil without one.
func readReportLog(name string) ([]recorder.LogEntry, error) {
	if name == "" {
		return nil, nil
	}
	f, err := os.Open(name)
	if err != nil {
		return nil, inputError{fmt.Errorf("--log %s: %v", name, unwrapPath(err))}
	}
	defer f.Close()
	var entries []recorder.LogEntry
	lr := recorder.NewLogReader(f, name)
	for lr.Scan() {
		entries = append(entries, lr.Entry())
	}
	if err := lr.Err(); err != nil {
		return nil, inputError{fmt.Errorf("--log %v", err)}
	}
	return entries, nil
}

// writeGuideLLM is the run as GuideLLM's benchmarks.json of one
// benchmark, with its requests lists from --log's requests when given.
func writeGuideLLM(w io.Writer, res *result.Result, name string, o reportOptions) error {
	entries, err := readReportLog(o.log)
	if err != nil {
		return err
	}
	var b bytes.Buffer // an error is the input's: never half a file on stdout
	if err := report.GuideLLM(&b, []report.GuideLLMRun{{Result: res, Log: entries}}); err != nil {
		return inputError{fmt.Errorf("%s, --log %s: %v", name, o.log, err)}
	}
	_, err = w.Write(b.Bytes())
	return err
}

// writeSweepGuideLLM is a sweep, search or repeats file as GuideLLM's
// benchmarks.json, a benchmark for each point, a profile sweep's
// synchronous and throughput points under GuideLLM's strategies of
// those names.
func writeSweepGuideLLM(w io.Writer, f *result.File) error {
	runs := make([]report.GuideLLMRun, len(f.Points))
	for i, p := range f.Points {
		runs[i] = report.GuideLLMRun{Result: p.Result, Kind: p.Kind}
	}
	return report.GuideLLM(w, runs)
}

// percentileList is the value of --percentiles: percentiles from
// 0 to 100, comma-separated, as vLLM's flag of that name takes them.
type percentileList struct{ ps *[]float64 }

func (l percentileList) String() string {
	if l.ps == nil || *l.ps == nil {
		return ""
	}
	s := make([]string, len(*l.ps))
	for i, p := range *l.ps {
		s[i] = strconv.FormatFloat(p, 'f', -1, 64)
	}
	return strings.Join(s, ",")
}

func (l percentileList) Set(v string) error {
	var ps []float64
	for _, f := range strings.Split(v, ",") {
		p, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil || !(p >= 0 && p <= 100) {
			return errors.New("want percentiles from 0 to 100, comma-separated, e.g. 50,90,99")
		}
		ps = append(ps, p)
	}
	*l.ps = ps
	return nil
}

func (percentileList) Type() string { return "percentiles" }

// writeSweepJSON is a sweep file, re-encoded.
func writeSweepJSON(w io.Writer, f *result.File) error { return f.Write(w) }

// writeSweepHTML writes the HTML page of a sweep file, as the sweep's
// --html does.
func writeSweepHTML(w io.Writer, f *result.File) error {
	page, err := report.SweepPage(f)
	if err != nil {
		return inputError{err}
	}
	return page.Write(w)
}

// inputError marks an error caused by the input file (exit 2), not by
// writing the output.
type inputError struct{ error }

const reportUsage = `openload report — re-render a saved result, or a saved sweep

Usage:
  openload report [--format F] [--metric M] RESULT.json
  openload report RESULT.json [--html FILE] [--svg FILE] [--png FILE] [--chart C]
  openload report SWEEP.json [--format F] [--html FILE] [--svg FILE] [--png FILE]
  openload report [--format table|hgrm] RUN.hlog
  openload report --format vllm [--log RUN.csv] [--percentiles LIST] RESULT.json
  openload report --format guidellm [--log RUN.csv] RESULT.json|SWEEP.json

Examples:
  openload -rate 300 -d 20s -o run.json --hlog run.hlog http://127.0.0.1:8080/predict
  openload report run.json                        # the text report again
  openload report --format hgrm --metric service run.json > service.hgrm
  openload report run.json --html run.html --png latency.png
  openload report run.hlog                        # the interval log, read back
  openload report sweep.json --svg sweep.svg      # a saved sweep's table, knee and charts again
  openload report sweep.json#3                    # point 3 of a sweep, as a run's report
  openload report --format vllm --log run.csv run.json > v.json  # vLLM's --save-result file

A sweep's, a search's or repeats' -o file renders as the command printed it: a sweep's table
and knee, a search's probes and answer, the spread of repeats (csv: a row per run; html: the
sweep's page); --svg and --png write every chart of the sweep, as 'openload sweep' does.
FILE#N renders its point N as a result.

Formats:
  table   the text report a run prints (default)
  json    the result itself, re-encoded
  csv     the per-second timeline (scheduled, skipped, sent, completed, errors, response p99)
  html    a self-contained page: latency by percentile, the timeline, p99 per second, class
          shares, and the text report; hover for values, drag to zoom (no network needed)
  hgrm    HdrHistogram's percentile distribution of one histogram (--metric), values in ms,
          for HdrHistogram's plotter
          (https://hdrhistogram.github.io/HdrHistogram/plotFiles.html)
  vllm    the JSON object vLLM's 'vllm bench serve --save-result' writes (TTFT from the send,
          TPOT, ITL, E2EL: mean, median, std, p99); its per-request arrays only with --log,
          the run's per-request log; a field openload has no figure for is left out
  guidellm GuideLLM's benchmarks.json (schema version 2): a benchmark for the run, or for
          each point of a sweep file (a profile sweep's synchronous and throughput points
          under those strategies): request counts and rate, latency, TTFT from the send,
          token counts; each request's figures and the requests lists only with --log; a
          field openload has no figure for is left out, so GuideLLM itself does not load it

`

// reportGroups are the groups of reportFlags, in help order.
var reportGroups = []string{groupFlags, groupEnd}

// reportOptions are the flags of `openload report`.
type reportOptions struct {
	format, metric, html, svg, png, chart, hlog, log string
	percentiles                                      []float64 // --percentiles
	help                                             bool
}

func reportFlags(o *reportOptions) *pflag.FlagSet {
	fs := newFlagSet("openload report")
	inGroup(fs, groupFlags, func() {
		fs.StringVar(&o.format, "format", "table", "output format: "+strings.Join(reportFormatNames(), ", "))
		fs.StringVar(&o.metric, "metric", "response", "histogram for --format hgrm: "+strings.Join(result.HistogramNames(), ", "))
		fs.StringVar(&o.html, "html", "", "also write the self-contained HTML report (all charts) to this `file`")
		fs.StringVar(&o.svg, "svg", "", "also write one chart (--chart) as SVG to this `file`")
		fs.StringVar(&o.png, "png", "", "also write one chart (--chart) as PNG to this `file`")
		fs.StringVar(&o.chart, "chart", "latency", "chart for --svg/--png: latency (alias percentiles), timeline, timeline-p99, class-0 …, class-0-seconds …")
		fs.StringVar(&o.log, "log", "", "for --format vllm and guidellm: read each request's figures from the run's per-request log `file` (as --log wrote it)")
		fs.Var(percentileList{&o.percentiles}, "percentiles", "for --format vllm: the percentiles written of each metric, a `list` from 0 to 100, as vLLM's --metric-percentiles (default 99)")
		fs.StringVar(&o.hlog, "hlog", "", "read this HdrHistogram interval log (as --hlog writes) instead of a result; a log given as the `file` is recognised without it")
	})
	helpFlag(fs, &o.help)
	return fs
}

// runReport is `openload report`.
func runReport(args []string, stdout, stderr io.Writer) int {
	var o reportOptions
	fs := reportFlags(&o)
	if err := parseFlags(fs, args); err != nil {
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
	f, ok := lookupFormat(o.format)
	switch {
	case !ok:
		return usageErrorIn(stderr, "report", "--format %q is unknown (known: %s)", o.format, strings.Join(reportFormatNames(), ", "))
	case !slices.Contains(result.HistogramNames(), o.metric):
		return usageErrorIn(stderr, "report", "--metric %q is unknown (known: %s)", o.metric, strings.Join(result.HistogramNames(), ", "))
	case fs.Changed("metric") && !f.usesMetric:
		return usageErrorIn(stderr, "report", "--metric applies to --format hgrm, not %s", o.format)
	case o.log != "" && !f.usesLog:
		return usageErrorIn(stderr, "report", "--log applies to --format vllm and guidellm, not %s", o.format)
	case fs.Changed("percentiles") && !f.usesVLLM:
		return usageErrorIn(stderr, "report", "--percentiles applies to --format vllm, not %s", o.format)
	case fs.NArg() != 1:
		return usageErrorIn(stderr, "report", "want one result file, got %d arguments", fs.NArg())
	}
	if err := checkOutputs(output("--html", o.html), output("--svg", o.svg), output("--png", o.png)); err != nil {
		return usageErrorIn(stderr, "report", "%v", err)
	}
	name := fs.Arg(0)
	if sniffFile(name) == kindIntervalLog {
		if o.html != "" || o.svg != "" || o.png != "" {
			return usageErrorIn(stderr, "report", "%s is an interval log: --html, --svg and --png draw a result", name)
		}
		return runReportHlog(name, o.format, o.metric, stdout, stderr)
	}
	res, sf, err := readReportInput(name)
	if err != nil {
		return fileError(stderr, "report", err)
	}
	if sf != nil {
		return reportSweep(sf, name, f, o, fs, stdout, stderr)
	}
	verify.Recheck(res) // the stamps, checked again
	if err := writeFiles(res, name, o.html, o.svg, o.png, o.chart, stderr); err != nil {
		if ie, ok := err.(inputError); ok {
			return usageErrorIn(stderr, "report", "%v", ie.error)
		}
		fmt.Fprintf(stderr, "openload: report: %v\n", err)
		return exitRuntime
	}
	if err := f.run(stdout, res, name, o); err != nil {
		if ie, ok := err.(inputError); ok {
			return fileError(stderr, "report", ie.error)
		}
		fmt.Fprintf(stderr, "openload: report: %v\n", err)
		return exitRuntime
	}
	return exitOK
}

// readReportInput reads what `openload report` renders: a result (a
// result file, or FILE#N of a sweep file) or a whole sweep file.
func readReportInput(name string) (*result.Result, *result.File, error) {
	if res, sf, ok, err := readSweep(name); ok {
		return res, sf, err
	}
	res, err := readPlainResult(name)
	return res, nil, err
}

// reportSweep is `openload report` of a whole sweep, search or repeats
// file: the format's rendering to stdout, and --html, --svg and --png as
// the live command writes them.
func reportSweep(sf *result.File, name string, f reportFormat, o reportOptions, fs *pflag.FlagSet, stdout, stderr io.Writer) int {
	switch {
	case f.sweep == nil:
		return usageErrorIn(stderr, "report", "%s is a %s file of %d runs: --format %s renders one run; name one, e.g. %s#1", name, sf.Kind, len(sf.Points), f.name, name)
	case o.log != "":
		return usageErrorIn(stderr, "report", "%s is a %s file of %d runs: --log is one run's log; name its run, e.g. %s#1", name, sf.Kind, len(sf.Points), name)
	case fs.Changed("chart"):
		return usageErrorIn(stderr, "report", "%s is a %s file: --chart picks a chart of one run; --svg and --png write every chart of the %s", name, sf.Kind, sf.Kind)
	}
	if err := sf.Whole(name); err != nil {
		return fileError(stderr, "report", err)
	}
	if (o.svg != "" || o.png != "") && len(report.SweepCharts(sf)) == 0 {
		return usageErrorIn(stderr, "report", "%s: the %s file has no charts to write (charts draw a sweep's or a search's rates; name a run for its charts, e.g. %s#1)", name, sf.Kind, name)
	}
	if err := checkOutputs(sweepChartOutputs(o.html, o.svg, o.png)...); err != nil {
		return usageErrorIn(stderr, "report", "%v", err)
	}
	if err := writeSweepCharts(sf, o.html, o.svg, o.png, stderr); err != nil {
		if ie, ok := err.(inputError); ok {
			return usageErrorIn(stderr, "report", "%v", ie.error)
		}
		fmt.Fprintf(stderr, "openload: report: %v\n", err)
		return exitRuntime
	}
	if err := f.sweep(stdout, sf); err != nil {
		fmt.Fprintf(stderr, "openload: report: %v\n", err)
		return exitRuntime
	}
	return exitOK
}

// writeFiles writes the --html, --svg and --png outputs of `openload
// report` of a run; each names its file in errors, and notice where it
// was written.
func writeFiles(res *result.Result, name, htmlPath, svgPath, pngPath, chart string, notice io.Writer) error {
	if err := writeOutput("--html", htmlPath, io.Discard, notice, func(w io.Writer) error { return writeHTML(w, res, name, reportOptions{}) }); err != nil {
		return err
	}
	for _, f := range []struct{ path, format string }{{svgPath, "svg"}, {pngPath, "png"}} {
		if f.path == "" {
			continue
		}
		c, err := report.RunChartFile(res, chart, f.path, f.format)
		if nc := (*report.NoChartError)(nil); errors.As(err, &nc) {
			err = fmt.Errorf("--chart %v", err)
		}
		if err != nil {
			return inputError{err}
		}
		if err := writeOutput("--"+f.format, c.Path, io.Discard, notice, c.Write); err != nil {
			return err
		}
	}
	return nil
}

// runReportHlog is `openload report --hlog FILE` (or FILE alone, when it is
// an interval log): the log read back, each tag's merged histogram as a
// table row (or --format hgrm of --metric).
func runReportHlog(path, format, metric string, stdout, stderr io.Writer) int {
	f, err := os.Open(path)
	if err != nil {
		return fileError(stderr, "report", fmt.Errorf("%s: %v", path, unwrapPath(err)))
	}
	defer f.Close()
	il, err := result.ReadIntervalLog(f, filepath.Base(path))
	if err != nil {
		return fileError(stderr, "report", err)
	}
	switch format {
	case "table":
		err = report.IntervalLog(stdout, il, path)
	case "hgrm":
		h := il.Total[metric]
		if h == nil {
			return fileError(stderr, "report", fmt.Errorf("%s: no %s intervals", path, metric))
		}
		err = report.HGRM(stdout, h)
	default:
		return usageErrorIn(stderr, "report", "an interval log takes --format table or hgrm, not %s", format)
	}
	if err != nil {
		fmt.Fprintf(stderr, "openload: report: %v\n", err)
		return exitRuntime
	}
	return exitOK
}
