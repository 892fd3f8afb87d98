// Package plot turns a result into charts: latency by percentile in the
// style of HdrHistogram's plotter, the per-second timeline, per-class
// shares, and two runs' curves side by side. A Chart is plain data (named
// series of points), so tests check the data behind a chart, not pixels;
// Render draws it with gonum.org/v1/plot as SVG or PNG, and HTML embeds the
// SVGs in one self-contained page that needs no network.
//
// # The percentile axis
//
// HdrHistogram's plotter puts percentile p on a logarithmic axis of
//
//	x = 1 / (1 − p/100)
//
// so 0 % is x = 1, 90 % is x = 10, 99 % is x = 100, 99.9 % is x = 1000 and
// every further nine takes the same width: the tail, where stalls live, gets
// as much room as the body. The 100 % point (the max) would be at infinity;
// it is drawn at 99.9999 % (x = 10⁶).
package plot

import (
	"fmt"
	"io"
	"math"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"

	"github.com/openload/openload/recorder"
)

// Series is one named line (or, for bar charts, one bar per point).
type Series struct {
	Name   string    `json:"name"`
	Dashed bool      `json:"dashed,omitempty"` // drawn dashed, so a line it covers stays visible
	X      []float64 `json:"x"`
	Y      []float64 `json:"y"`
}

// Chart is the data of one chart.
type Chart struct {
	ID     string   `json:"id"`
	Title  string   `json:"title"`
	XLabel string   `json:"x_label"`
	YLabel string   `json:"y_label"`
	LogX   bool     `json:"log_x,omitempty"` // the percentile axis
	Bars   []string `json:"bars,omitempty"`  // bar labels: a bar chart of Series[0].Y
	Series []Series `json:"series"`
}

// maxX is where the 100 % point is drawn: 99.9999 %.
const maxX = 1e6

// PercentileX maps a percentile (0–100) to the plotter's axis.
func PercentileX(p float64) float64 {
	if p >= 100 {
		return maxX
	}
	return math.Min(1/(1-p/100), maxX)
}

// PercentileSeries is the latency-by-percentile curve of h (values in µs),
// in ms, at HdrHistogram's percentile ticks (5 per half distance).
func PercentileSeries(name string, h *hdrhistogram.Histogram) Series {
	s := Series{Name: name}
	if h.TotalCount() == 0 {
		return s
	}
	for _, b := range h.CumulativeDistributionWithTicks(5) {
		x := PercentileX(b.Quantile)
		y := float64(b.ValueAt) / 1000
		if n := len(s.X); n > 0 && s.X[n-1] == x {
			s.Y[n-1] = y
			continue
		}
		s.X = append(s.X, x)
		s.Y = append(s.Y, y)
	}
	return s
}

// LatencyChart is response time, service time and send delay by percentile.
func LatencyChart(res *recorder.Result) (Chart, error) {
	c := Chart{ID: "latency", Title: "Latency by percentile", XLabel: "percentile", YLabel: "ms", LogX: true}
	for _, m := range []struct{ metric, name string }{
		{"response", "response time"}, {"service", "service time"}, {"send_delay", "send delay"},
	} {
		h, err := res.Histogram(m.metric)
		if err != nil {
			return c, err
		}
		s := PercentileSeries(m.name, h)
		s.Dashed = m.metric == "send_delay"
		c.Series = append(c.Series, s)
	}
	return c, nil
}

// DiffChart is one metric of two runs by percentile on the same axes.
func DiffChart(a, b *recorder.Result, nameA, nameB, metric string) (Chart, error) {
	c := Chart{ID: "diff", Title: metric + " by percentile", XLabel: "percentile", YLabel: "ms", LogX: true}
	for _, r := range []struct {
		res  *recorder.Result
		name string
	}{{a, nameA}, {b, nameB}} {
		h, err := r.res.Histogram(metric)
		if err != nil {
			return c, fmt.Errorf("%s: %v", r.name, err)
		}
		c.Series = append(c.Series, PercentileSeries(r.name, h))
	}
	return c, nil
}

// TimelineChart is requests per second: scheduled, sent, completed and
// errors, by second of the run.
func TimelineChart(res *recorder.Result) Chart {
	c := Chart{ID: "timeline", Title: "Requests per second", XLabel: "second of the run", YLabel: "requests"}
	names := []string{"scheduled", "sent", "completed", "errors"}
	for _, n := range names {
		c.Series = append(c.Series, Series{Name: n})
	}
	for i, s := range res.Timeline {
		x := float64(i)
		for j, v := range []int64{s.Scheduled, s.Sent, s.Completed, s.Errors} {
			c.Series[j].X = append(c.Series[j].X, x)
			c.Series[j].Y = append(c.Series[j].Y, float64(v))
		}
	}
	return c
}

// ClassCharts is one bar chart per class header: the share of requests per
// value, in percent.
func ClassCharts(res *recorder.Result) []Chart {
	var out []Chart
	for i, t := range res.Classes {
		c := Chart{ID: fmt.Sprintf("class-%d", i), Title: "Share of requests by " + t.Header, XLabel: t.Header, YLabel: "% of requests"}
		s := Series{Name: "share"}
		for j, v := range t.Values {
			c.Bars = append(c.Bars, v.Value)
			s.X = append(s.X, float64(j))
			s.Y = append(s.Y, 100*v.Share)
		}
		c.Series = []Series{s}
		out = append(out, c)
	}
	return out
}

// percentileTicks label the percentile axis.
var percentileTicks = gplot.ConstantTicks{
	{Value: 1, Label: "0%"}, {Value: 10, Label: "90%"}, {Value: 100, Label: "99%"},
	{Value: 1e3, Label: "99.9%"}, {Value: 1e4, Label: "99.99%"}, {Value: 1e5, Label: "99.999%"}, {Value: 1e6, Label: "max"},
}

// Plot builds the gonum plot of c.
func (c Chart) Plot() (*gplot.Plot, error) {
	p := gplot.New()
	p.Title.Text = c.Title
	p.X.Label.Text = c.XLabel
	p.Y.Label.Text = c.YLabel
	p.Add(plotter.NewGrid())
	p.Legend.Top = true
	p.Legend.Left = true
	if len(c.Bars) > 0 && len(c.Series) > 0 {
		bars, err := plotter.NewBarChart(plotter.Values(c.Series[0].Y), vg.Points(30))
		if err != nil {
			return nil, err
		}
		bars.Color = plotutil.Color(0)
		p.Add(bars)
		p.NominalX(c.Bars...)
		return p, nil
	}
	if c.LogX {
		p.X.Scale = gplot.LogScale{}
		p.X.Tick.Marker = percentileTicks
		p.X.Min, p.X.Max = 1, maxX
	}
	top := 0.0
	for i, s := range c.Series {
		if len(s.X) == 0 {
			continue
		}
		for _, y := range s.Y {
			top = math.Max(top, y)
		}
		xys := make(plotter.XYs, len(s.X))
		for j := range s.X {
			xys[j].X, xys[j].Y = s.X[j], s.Y[j]
		}
		l, err := plotter.NewLine(xys)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", s.Name, err)
		}
		l.Color = plotutil.Color(i)
		l.Width = vg.Points(2)
		if s.Dashed {
			l.Dashes = []vg.Length{vg.Points(6), vg.Points(4)}
		}
		p.Add(l)
		p.Legend.Add(s.Name, l)
	}
	if top > 0 {
		// Headroom above the lines for the legend.
		p.Y.Min, p.Y.Max = 0, top*1.35
	}
	return p, nil
}

// Render draws c as "svg" or "png" of the given size in points.
func (c Chart) Render(w io.Writer, format string, width, height vg.Length) error {
	p, err := c.Plot()
	if err != nil {
		return err
	}
	wt, err := p.WriterTo(width, height, format)
	if err != nil {
		return err
	}
	_, err = wt.WriteTo(w)
	return err
}

// TimelineP99Chart is the response-time p99 of each second of the run (by
// completion), so a stall shows as a spike.
func TimelineP99Chart(res *recorder.Result) Chart {
	c := Chart{ID: "timeline-p99", Title: "Response time p99 per second", XLabel: "second of the run", YLabel: "ms"}
	s := Series{Name: "response p99"}
	for i, sec := range res.Timeline {
		s.X = append(s.X, float64(i))
		s.Y = append(s.Y, sec.ResponseP99)
	}
	c.Series = []Series{s}
	return c
}

// ReportCharts are the charts of a run's report, in order: latency by
// percentile, requests per second, p99 per second, and class shares.
func ReportCharts(res *recorder.Result) ([]Chart, error) {
	lat, err := LatencyChart(res)
	if err != nil {
		return nil, err
	}
	out := []Chart{lat, TimelineChart(res), TimelineP99Chart(res)}
	return append(out, ClassCharts(res)...), nil
}
