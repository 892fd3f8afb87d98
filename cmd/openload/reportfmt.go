package main

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/openload/openload/internal/plot"
	"github.com/openload/openload/internal/report"
	"github.com/openload/openload/result"
)

func init() {
	reportFormats["csv"] = reportFormat{write: writeTimelineCSV}
	reportFormats["html"] = reportFormat{write: writeHTML}
	reportOrder = append(reportOrder, "csv", "html")
}

// writeTimelineCSV writes the per-second timeline as CSV.
func writeTimelineCSV(w io.Writer, res *result.Result, _, _ string) error {
	cw := csv.NewWriter(w)
	if err := cw.Write([]string{"second", "scheduled", "skipped", "sent", "completed", "errors", "response_p99_ms"}); err != nil {
		return err
	}
	for i, s := range res.Timeline {
		if err := cw.Write([]string{strconv.Itoa(i), i64(s.Scheduled), i64(s.Skipped), i64(s.Sent), i64(s.Completed), i64(s.Errors),
			strconv.FormatFloat(s.ResponseP99, 'f', 3, 64)}); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

func i64(v int64) string { return strconv.FormatInt(v, 10) }

// writeHTML writes the self-contained HTML report: every chart and the text
// report.
func writeHTML(w io.Writer, res *result.Result, name, _ string) error {
	charts, err := plot.ReportCharts(res)
	if err != nil {
		return inputError{fmt.Errorf("%s: %v", name, err)}
	}
	var text bytes.Buffer
	if err := writeTable(&text, res, name, ""); err != nil {
		return err
	}
	return plot.Page{Title: "openload · " + res.Config.Schedule, Subtitle: []string{plot.Identity(res)}, Text: text.String(), Charts: charts}.Write(w)
}

// chartByName picks one chart of a result for --svg / --png;
// "percentiles" is another name for the latency chart, HdrHistogram's
// percentile distribution plot.
func chartByName(res *result.Result, name string) (plot.Chart, error) {
	if name == "percentiles" {
		name = "latency"
	}
	charts, err := plot.ReportCharts(res)
	if err != nil {
		return plot.Chart{}, err
	}
	var ids []string
	for _, c := range charts {
		if c.ID == name {
			return c, nil
		}
		ids = append(ids, c.ID)
	}
	return plot.Chart{}, fmt.Errorf("--chart %q is not in this result (it has: %s)", name, strings.Join(ids, ", "))
}

// writeFiles writes the --html, --svg and --png outputs of `openload
// report`; each names its file in errors.
func writeFiles(res *result.Result, name, htmlPath, svgPath, pngPath, chart string) error {
	if err := writeOutput("--html", htmlPath, io.Discard, func(w io.Writer) error { return writeHTML(w, res, name, "") }); err != nil {
		return err
	}
	for _, f := range []struct{ path, format string }{{svgPath, "svg"}, {pngPath, "png"}} {
		if f.path == "" {
			continue
		}
		c, err := chartByName(res, chart)
		if err != nil {
			return inputError{err}
		}
		if err := writeOutput("--"+f.format, f.path, io.Discard, func(w io.Writer) error { return c.Render(w, f.format, 720, 360) }); err != nil {
			return err
		}
	}
	return nil
}

// isIntervalLog reports whether the file at path starts like an HdrHistogram
// interval log; a file that cannot be read is left to the result reader,
// which says why.
func isIntervalLog(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	head := make([]byte, 4096)
	n, _ := io.ReadFull(f, head)
	return result.LooksLikeIntervalLog(head[:n])
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
		var rows []report.Row
		for _, tag := range result.IntervalTags {
			if h := il.Total[tag]; h != nil {
				rows = append(rows, report.Row{Name: tag, P: result.Summarize(h)})
			}
		}
		fmt.Fprintf(stdout, "openload report · %s · %d intervals of %s\n\n", path, len(il.Intervals[result.IntervalTags[0]]), strings.Join(result.IntervalTags, ", "))
		if err := report.LatencyTable(stdout, rows); err != nil {
			fmt.Fprintf(stderr, "openload: report: %v\n", err)
			return exitRuntime
		}
	case "hgrm":
		h := il.Total[metric]
		if h == nil {
			return fileError(stderr, "report", fmt.Errorf("%s: no %s intervals", path, metric))
		}
		if err := report.HGRM(stdout, h); err != nil {
			fmt.Fprintf(stderr, "openload: report: %v\n", err)
			return exitRuntime
		}
	default:
		return usageErrorIn(stderr, "report", "an interval log takes --format table or hgrm, not %s", format)
	}
	return exitOK
}

// writeDiffHTML writes `openload diff A B --html`: both runs' curves of one
// metric on the same percentile axes, and the comparison table.
func writeDiffHTML(path, metric string, names [2]string, res [2]*result.Result, p [2]result.Percentiles) error {
	c, err := plot.DiffChart(res[0], res[1], names[0], names[1], metric)
	if err != nil {
		return err
	}
	var text bytes.Buffer
	if err := report.Compare(&text, metric, names[0], res[0], p[0], names[1], res[1], p[1]); err != nil {
		return err
	}
	page := plot.Page{Title: "openload diff · " + names[0] + " vs " + names[1], Subtitle: c.Subtitle, Text: text.String(), Charts: []plot.Chart{c}}
	return writeOutput("--html", path, io.Discard, page.Write)
}
