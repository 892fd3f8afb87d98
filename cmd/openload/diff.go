package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"github.com/openload/openload/internal/report"
	"github.com/openload/openload/result"
)

const diffUsage = `openload diff — compare latency percentile by percentile

Usage:
  openload diff RESULT.json
      service time (done − sent, what a closed-loop tool reports) next to response time
      (done − scheduled, what users waited), p50 … p99.99, max and mean, with the difference
      and the ratio, and a verdict saying what share of the response time at p99 is waiting
      before the send
  openload diff [--metric M] [--html FILE] A.json B.json
      two runs side by side on the same rows (B − A, B ÷ A), e.g. before and after a server
      change, or a closed run next to an open one

Examples:
  openload -rate 300 -d 20s -o open.json http://127.0.0.1:8080/predict
  openload diff open.json
  openload --closed -c 16 -d 20s -o closed.json http://127.0.0.1:8080/predict
  openload diff closed.json open.json --html diff.html

`

// diffGroups are the groups of diffFlags, in help order.
var diffGroups = []string{groupFlags, groupEnd}

// diffOptions are the flags of `openload diff`.
type diffOptions struct {
	metric, html string
	help         bool
}

func diffFlags(o *diffOptions) *pflag.FlagSet {
	fs := newFlagSet("openload diff")
	inGroup(fs, groupFlags, func() {
		fs.StringVar(&o.metric, "metric", "response", "with two results: the histogram compared: "+strings.Join(result.HistogramNames(), ", "))
		fs.StringVar(&o.html, "html", "", "with two results: also write both runs' percentile curves and the table to this `file`, a self-contained HTML page")
	})
	helpFlag(fs, &o.help)
	return fs
}

// runDiff is `openload diff`. A file that cannot be read, is not a result
// of this version or lacks the metric is bad input: one line naming the
// file, exit 2.
func runDiff(args []string, stdout, stderr io.Writer) int {
	var o diffOptions
	fs := diffFlags(&o)
	if err := parseFlags(fs, args); err != nil {
		return usageErrorIn(stderr, "diff", "%v", err)
	}
	if o.help {
		fmt.Fprint(stdout, diffUsage+flagHelp(fs, diffGroups))
		return exitOK
	}
	if err := checkOutputs(output("--html", o.html)); err != nil {
		return usageErrorIn(stderr, "diff", "%v", err)
	}
	// On a terminal, its lines wrapped at 100 columns as a report's are.
	wrapped := report.NewLineWrapper(stdout, wrapWidth(stdout))
	defer wrapped.Flush()
	stdout = wrapped
	switch fs.NArg() {
	case 1:
		if fs.Changed("metric") {
			return usageErrorIn(stderr, "diff", "--metric compares two results; with one, diff shows its service and response time")
		}
		if o.html != "" {
			return usageErrorIn(stderr, "diff", "--html draws two results; give two files")
		}
		name := fs.Arg(0)
		res, err := readResultFile(name)
		if err != nil {
			return fileError(stderr, "diff", err)
		}
		svc, err := summary(res, name, "service")
		if err != nil {
			return fileError(stderr, "diff", err)
		}
		resp, err := summary(res, name, "response")
		if err != nil {
			return fileError(stderr, "diff", err)
		}
		if err := report.ServiceVsResponse(stdout, name, res, svc, resp); err != nil {
			fmt.Fprintf(stderr, "openload: diff: %v\n", err)
			return exitRuntime
		}
		if res.Stream != nil {
			return diffTTFT(stdout, stderr, name, res) // streamflags.go
		}
		return exitOK
	case 2:
		if !slices.Contains(result.HistogramNames(), o.metric) {
			return usageErrorIn(stderr, "diff", "--metric %q is unknown (known: %s)", o.metric, strings.Join(result.HistogramNames(), ", "))
		}
		names := [2]string{fs.Arg(0), fs.Arg(1)}
		var res [2]*result.Result
		var p [2]result.Percentiles
		for i, name := range names {
			var err error
			if res[i], err = readResultFile(name); err != nil {
				return fileError(stderr, "diff", err)
			}
			if p[i], err = summary(res[i], name, o.metric); err != nil {
				return fileError(stderr, "diff", err)
			}
		}
		if err := report.Compare(stdout, o.metric, names[0], res[0], p[0], names[1], res[1], p[1]); err != nil {
			fmt.Fprintf(stderr, "openload: diff: %v\n", err)
			return exitRuntime
		}
		if o.html != "" {
			if err := writeDiffHTML(o.html, o.metric, names, res, p, stderr); err != nil {
				fmt.Fprintf(stderr, "openload: diff: %v\n", err)
				return exitRuntime
			}
		}
		return exitOK
	}
	return usageErrorIn(stderr, "diff", "want one or two result files, got %d arguments", fs.NArg())
}

// readResultFile reads a JSON result, or point N of a sweep file named
// FILE#N (readSweepPoint, sweep.go); errors name the file.
func readResultFile(name string) (*result.Result, error) {
	if res, ok, err := readSweepPoint(name); ok {
		return res, err
	}
	return readPlainResult(name)
}

// readPlainResult reads a JSON result file; errors name the file.
func readPlainResult(name string) (*result.Result, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", name, unwrapPath(err))
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.IsDir() {
		return nil, fmt.Errorf("%s: is a directory, not a result file", name)
	}
	br := bufio.NewReaderSize(f, sniffLen)
	head, _ := br.Peek(sniffLen)
	if k := sniff(head); k != nil {
		return nil, notAResult(name, k) // sniff.go
	}
	return result.Read(br, name)
}

// summary decodes one histogram of res and reads its percentiles; errors
// name the file. Decoding, rather than reading the stored percentiles,
// checks that the histogram is there and intact.
func summary(res *result.Result, name, metric string) (result.Percentiles, error) {
	h, err := res.Histogram(metric)
	if err != nil {
		return result.Percentiles{}, fmt.Errorf("%s: %v", name, err)
	}
	return result.Summarize(h), nil
}

// fileError prints a one-line error about an input file and returns the
// bad-input exit code.
func fileError(stderr io.Writer, cmd string, err error) int {
	fmt.Fprintf(stderr, "openload: %s: %v\n", cmd, err)
	return exitUsage
}

// writeDiffHTML writes `openload diff A B --html`: both runs' curves of one
// metric on the same percentile axes, and the comparison table.
func writeDiffHTML(path, metric string, names [2]string, res [2]*result.Result, p [2]result.Percentiles, notice io.Writer) error {
	page, err := report.DiffPage(metric, names, res, p)
	if err != nil {
		return err
	}
	return writeOutput("--html", path, io.Discard, notice, page.Write)
}
