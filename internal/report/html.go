package report

import (
	"bytes"
	"fmt"
	"io"
	"strings"

	"github.com/openload/openload/internal/plot"
	"github.com/openload/openload/result"
)

// Charts are drawn by internal/plot; report picks which charts a run, a
// sweep or a diff shows, at what size, and sets them on a page beside the
// text it renders, so that every command (and a saved file read back)
// draws them one way. The caller writes the files.

// Sizes of the charts written as files, in points.
const (
	chartWidth       = 720
	runChartHeight   = 360
	sweepChartHeight = 400
)

// ChartFile is one chart to write as a file: its path and how to render
// it.
type ChartFile struct {
	Path  string
	Write func(io.Writer) error
}

// RunPage is the self-contained HTML report of a run: every chart of res
// and text, the text report the caller rendered. The error is res's: a
// histogram its charts cannot decode.
func RunPage(res *result.Result, text string) (plot.Page, error) {
	charts, err := plot.ReportCharts(res)
	if err != nil {
		return plot.Page{}, err
	}
	return plot.Page{Title: "openload · " + res.Config.Schedule, Subtitle: []string{plot.Identity(res)}, Text: text, Charts: charts}, nil
}

// NoChartError is a chart asked of a result that it does not have.
type NoChartError struct {
	Name string
	Have []string // the charts it has
}

func (e *NoChartError) Error() string {
	return fmt.Sprintf("%q is not in this result (it has: %s)", e.Name, strings.Join(e.Have, ", "))
}

// RunChartFile is one chart of a run, by its ID ("percentiles" is another
// name for the latency chart, HdrHistogram's percentile distribution
// plot), to write to path in format (svg or png). The error is res's: a
// chart it does not have (*NoChartError), or cannot draw.
func RunChartFile(res *result.Result, name, path, format string) (ChartFile, error) {
	if name == "percentiles" {
		name = "latency"
	}
	charts, err := plot.ReportCharts(res)
	if err != nil {
		return ChartFile{}, err
	}
	var ids []string
	for _, c := range charts {
		if c.ID == name {
			return ChartFile{Path: path, Write: func(w io.Writer) error { return c.Render(w, format, chartWidth, runChartHeight) }}, nil
		}
		ids = append(ids, c.ID)
	}
	return ChartFile{}, &NoChartError{Name: name, Have: ids}
}

// DiffPage is the HTML page of a diff: both runs' curves of one metric on
// the same percentile axes, and the comparison table.
func DiffPage(metric string, names [2]string, res [2]*result.Result, p [2]result.Percentiles) (plot.Page, error) {
	c, err := plot.DiffChart(res[0], res[1], names[0], names[1], metric)
	if err != nil {
		return plot.Page{}, err
	}
	var text bytes.Buffer
	if err := Compare(&text, metric, names[0], res[0], p[0], names[1], res[1], p[1]); err != nil {
		return plot.Page{}, err
	}
	return plot.Page{Title: "openload diff · " + names[0] + " vs " + names[1], Subtitle: c.Subtitle, Text: text.String(), Charts: []plot.Chart{c}}, nil
}

// sweepSubtitle names what every point of a sweep ran, from its first
// point's configuration.
func sweepSubtitle(points []result.FilePoint) string {
	cfg := points[0].Result.Config
	if cfg.BuiltinStub != "" {
		return fmt.Sprintf("%s per point · built-in stub (%s)", cfg.Duration, cfg.BuiltinStub)
	}
	return fmt.Sprintf("%s per point · %s %s", cfg.Duration, cfg.Method, cfg.Target)
}

// SweepCharts are the charts of a sweep or a search (ChartPoints): latency
// and throughput against offered rate, and a streamed sweep's tokens;
// none for repeats.
func SweepCharts(f *result.File) []plot.Chart {
	points, knee := ChartPoints(f)
	if len(points) == 0 {
		return nil
	}
	pts := make([]plot.SweepPoint, len(points))
	for i, p := range points {
		pts[i] = plot.SweepPoint{Offered: p.Rate, Completed: p.Completed(), Result: p.Result}
	}
	return plot.SweepCharts(pts, knee, sweepSubtitle(points))
}

// ChartPaths are the files of a sweep's chart path: the latency chart at
// path, the throughput chart beside it (-throughput before the extension)
// and a streamed sweep's token chart (-tokens); none for "".
func ChartPaths(path, format string) []string {
	if path == "" {
		return nil
	}
	ext := "." + format
	base := strings.TrimSuffix(path, ext)
	return []string{path, base + "-throughput" + ext, base + "-tokens" + ext}
}

// SweepChartFiles are the chart files of f at path (ChartPaths) in format
// (svg or png): as many as f has charts.
func SweepChartFiles(f *result.File, path, format string) []ChartFile {
	charts := SweepCharts(f)
	var files []ChartFile
	for i, p := range ChartPaths(path, format) {
		if i >= len(charts) {
			break // the token chart of a streamed sweep only
		}
		c := charts[i]
		files = append(files, ChartFile{Path: p, Write: func(w io.Writer) error { return c.Render(w, format, chartWidth, sweepChartHeight) }})
	}
	return files
}

// SweepPage is the HTML page of a sweep or a search: its charts and the
// table of the points they draw; of repeats, their spread.
func SweepPage(f *result.File) (plot.Page, error) {
	var text bytes.Buffer
	if f.Kind == result.KindRepeats && len(f.Points) > 0 {
		if err := Spread(&text, f.Points); err != nil {
			return plot.Page{}, err
		}
		sub := fmt.Sprintf("%d runs · %s", len(f.Points), plot.Identity(f.Points[0].Result))
		return plot.Page{Title: "openload repeats", Subtitle: []string{sub}, Text: text.String()}, nil
	}
	points, knee := ChartPoints(f)
	if len(points) == 0 {
		return plot.Page{}, fmt.Errorf("the %s holds no point", f.Kind)
	}
	rows, rowKnee := points, knee
	if f.Kind == result.KindSweep {
		rows, rowKnee = f.Points, kneeIndex(f) // a profile's probes too, which the charts leave out
	}
	if err := SweepTable(&text, rows, rowKnee); err != nil {
		return plot.Page{}, err
	}
	return plot.Page{Title: "openload sweep", Subtitle: []string{sweepSubtitle(points)}, Text: text.String(), Charts: SweepCharts(f)}, nil
}
