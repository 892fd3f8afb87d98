// Package plot turns a result into charts: latency by percentile in the
// style of HdrHistogram's plotter, the per-second timeline, per-class
// shares, and two runs' curves side by side. A Chart is plain data (named,
// styled series of points and the run's identity), so tests check the data
// behind a chart, not pixels; Render draws it with gonum.org/v1/plot as SVG
// or PNG, and Page puts every chart in one self-contained HTML page that
// needs no network.
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
//
// # Lines that lie on each other
//
// Response time equals service time wherever send delay is zero, and sent
// equals scheduled wherever the generator keeps up, so a chart's series
// often coincide. Series are drawn in order, each in one of three layers:
// the first wide and pale, the next solid and narrow, the last dashed or
// dotted on top. Where they coincide the pale band shows around the solid
// line and the dashes show on it, so no series hides another.
package plot

import (
	"fmt"
	"math"
	"time"
	"unicode/utf8"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/openload/openload/result"
)

// Style is how a series is drawn: its colour ("#rrggbb"), opacity (0–1),
// line width and dash pattern (on, off, … lengths), both in points, and
// the marker drawn at each of its points ("" none, "ring" a hollow
// circle).
type Style struct {
	Color   string    `json:"color"`
	Opacity float64   `json:"opacity"`
	Width   float64   `json:"width"`
	Dash    []float64 `json:"dash,omitempty"`
	Marker  string    `json:"marker,omitempty"`
}

// The layers, in drawing order (see the package comment).
var (
	// under is wide and pale: drawn first, it shows as a band around any
	// line drawn on it.
	under = Style{Opacity: 0.35, Width: 7}
	// solid is the middle layer.
	solid = Style{Opacity: 1, Width: 2.2}
	// dashed and dotted go on top.
	dashed = Style{Opacity: 1, Width: 1.6, Dash: []float64{6, 3.5}}
	dotted = Style{Opacity: 1, Width: 1.8, Dash: []float64{1.6, 2.6}}
)

// ring is the marker of a series whose line may lie on another's with a
// dash pattern of its own (a sweep's p50s): the rings show at its points
// wherever the dashes would merge.
const ring = "ring"

func (s Style) with(marker string) Style { s.Marker = marker; return s }

// Colours from Okabe and Ito's palette, which stays distinct for readers
// with the common colour-vision deficiencies.
const (
	blue       = "#0072B2"
	orange     = "#E69F00"
	vermillion = "#D55E00"
	green      = "#009E73"
	purple     = "#CC79A7"
	grey       = "#555555"
)

func (s Style) in(color string) Style { s.Color = color; return s }

// Series is one named line (or, for bar charts, one bar per point).
//
// A series with Step > 0 is per-second data: value Y[i] holds from X[i] to
// the next point when that is at most Step away, else for Step (no data
// follows: a gap); the last value holds to End. Other series join their
// points with straight lines.
type Series struct {
	Name string `json:"name"`
	Style
	Step float64   `json:"step,omitempty"`
	End  float64   `json:"end,omitempty"`
	X    []float64 `json:"x"`
	Y    []float64 `json:"y"`
	// Labels, if any, are drawn at the points, one each: a bar chart's
	// values.
	Labels []string `json:"labels,omitempty"`
}

// Span is a range of the x axis shaded and named in the legend, such as
// the drain after the schedule's end.
type Span struct {
	From  float64 `json:"from"`
	To    float64 `json:"to"`
	Label string  `json:"label"`
	Unit  string  `json:"unit,omitempty"` // of From and To in the page's note; empty: " s"
}

// Chart is the data of one chart. Subtitle holds the runs' identities,
// one line each (Identity).
type Chart struct {
	ID       string   `json:"id"`
	Title    string   `json:"title"`
	Subtitle []string `json:"subtitle,omitempty"`
	// Note is one line on how to read the chart.
	Note   string `json:"note,omitempty"`
	XLabel string `json:"x_label"`
	YLabel string `json:"y_label"`
	// Unit is the y values' unit as a legend writes it after a value
	// ("ms", "/s", "%").
	Unit string `json:"unit,omitempty"`
	LogX bool   `json:"log_x,omitempty"` // the percentile axis
	// XMin and XMax fix the x range; both zero: the data's.
	XMin   float64  `json:"x_min,omitempty"`
	XMax   float64  `json:"x_max,omitempty"`
	Bars   []string `json:"bars,omitempty"` // bar labels: a bar chart of Series[0].Y
	Series []Series `json:"series"`
	Spans  []Span   `json:"spans,omitempty"`
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

// maxTarget is how much of a target URL a chart's subtitle shows.
const maxTarget = 72

// Identity names a run in one line: its schedule (rate and shape, closed
// loop or replay), method and target, and start time in UTC.
func Identity(res *result.Result) string {
	cfg := res.Config
	id := cfg.Schedule
	if id == "" {
		id = "unknown schedule"
	}
	target := cfg.Target
	what := res.Sends()
	if utf8.RuneCountInString(what) > maxTarget {
		what = string([]rune(what)[:maxTarget-1]) + "…"
	}
	if utf8.RuneCountInString(target) > maxTarget {
		target = string([]rune(target)[:maxTarget-1]) + "…"
	}
	switch {
	case cfg.BuiltinStub != "":
		id += " · built-in stub at " + target
	case target != "":
		id += " · " + what
	}
	if !res.Started.IsZero() {
		id += " · started " + res.Started.UTC().Format("2006-01-02 15:04:05") + " UTC"
	}
	if res.Interrupted {
		id += " · interrupted"
	}
	return id
}

// LatencyChart is response time, service time and send delay by
// percentile, and the corrected response time of a closed run paced to a
// rate: HdrHistogram's percentile distribution plot.
func LatencyChart(res *result.Result) (Chart, error) {
	c := Chart{ID: "latency", Title: "Latency by percentile", Subtitle: []string{Identity(res)},
		XLabel: "percentile", YLabel: "ms", Unit: "ms", LogX: true, XMin: 1, XMax: maxX}
	type line struct {
		metric, name string
		style        Style
	}
	metrics := []line{
		{"response", "response time", under.in(blue)},
		{"service", "service time", solid.in(green)},
		{"send_delay", "send delay", dashed.in(vermillion)},
	}
	if res.Histograms.Corrected != "" {
		metrics = append(metrics, line{"corrected", "corrected for coordinated omission", dotted.in(purple)})
	}
	for _, m := range metrics {
		h, err := res.Histogram(m.metric)
		if err != nil {
			return c, err
		}
		s := PercentileSeries(m.name, h)
		s.Style = m.style
		c.Series = append(c.Series, s)
	}
	return c, nil
}

// DiffChart is one metric of two runs by percentile on the same axes.
func DiffChart(a, b *result.Result, nameA, nameB, metric string) (Chart, error) {
	c := Chart{ID: "diff", Title: metric + " by percentile", XLabel: "percentile", YLabel: "ms", Unit: "ms", LogX: true, XMin: 1, XMax: maxX}
	for i, r := range []struct {
		res   *result.Result
		name  string
		style Style
	}{{a, nameA, under.in(blue)}, {b, nameB, solid.in(vermillion)}} {
		h, err := r.res.Histogram(metric)
		if err != nil {
			return c, fmt.Errorf("%s: %v", r.name, err)
		}
		s := PercentileSeries(r.name, h)
		s.Style = r.style
		c.Series = append(c.Series, s)
		c.Subtitle = append(c.Subtitle, string(rune('A'+i))+": "+Identity(r.res))
	}
	return c, nil
}

// Ends returns where, in seconds from the start, the run's schedule ended
// and where the run itself did (its last request's end; at least the
// schedule's, since nothing could happen after the last request but
// nothing more was due before the schedule's end either). An interrupted
// run's schedule ends with it. A result that says neither (hand-made, or
// written before the timeline existed) ends after its timeline's last
// second.
func Ends(res *result.Result) (schedule, run float64) {
	n := float64(len(res.Timeline))
	d, err := time.ParseDuration(res.Config.Duration)
	schedule = d.Seconds()
	if err != nil || d <= 0 {
		schedule = res.Elapsed
	}
	if schedule <= 0 {
		return n, n
	}
	if res.Interrupted && res.Elapsed > 0 {
		schedule = math.Min(schedule, res.Elapsed)
	}
	return schedule, math.Max(schedule, res.Elapsed)
}

// perSecond turns the counts of a timeline's seconds into rates: second i
// covers [i, i+1) up to end, and its rate is its count over the part it
// covers. A last second that the series covers only in part (the schedule
// ended, or the run did, within it) is merged with the second before it,
// so the last rate is taken over one to two seconds: a partial second's
// count is never drawn as a whole second's (a plunge towards zero), and a
// few events in a sliver of a second never as a spike. Counts in seconds
// that start after end move end there (the data wins over the bound).
func perSecond(counts []int64, end float64) Series {
	n := int(math.Ceil(end))
	for i := len(counts) - 1; i >= n; i-- {
		if counts[i] != 0 {
			n = i + 1
			end = math.Max(end, float64(i))
			break
		}
	}
	if n == 0 {
		return Series{}
	}
	at := func(i int) float64 {
		if i < len(counts) {
			return float64(counts[i])
		}
		return 0
	}
	s := Series{Step: 1, End: end}
	for i := 0; i < n; i++ {
		s.X = append(s.X, float64(i))
		s.Y = append(s.Y, at(i))
	}
	if span := end - float64(n-1); span < 1 {
		if n == 1 {
			if span > 0 {
				s.Y[0] /= span
			}
			return s
		}
		s.X, s.Y = s.X[:n-1], s.Y[:n-1]
		s.Y[n-2] = (at(n-2) + at(n-1)) / (end - float64(n-2))
	}
	return s
}

// sentEnd is where the sent line ends: with the schedule, unless requests
// were still sent in a second that starts after it (a backlog sent late,
// during the drain), then with the run. A second the schedule ends in
// counts its sends over the schedule's part of it.
func sentEnd(timeline []result.Second, sched, end float64) float64 {
	for i := int(math.Ceil(sched)); i < len(timeline); i++ {
		if timeline[i].Sent > 0 {
			return end
		}
	}
	return sched
}

// TimelineChart is requests per second: scheduled, sent, completed and
// errors, by second of the run, and for a closed run paced to a rate the
// slots its users never sent. Scheduled, never sent and (unless a backlog
// was sent late) sent end with the schedule; completed and errors go on
// through the drain, shaded, to the run's end.
func TimelineChart(res *result.Result) Chart {
	sched, end := Ends(res)
	c := Chart{ID: "timeline", Title: "Requests per second", Subtitle: []string{Identity(res)},
		XLabel: "seconds from the start", YLabel: "requests per second", Unit: "/s", XMin: 0, XMax: end}
	col := func(f func(result.Second) int64) []int64 {
		out := make([]int64, len(res.Timeline))
		for i, s := range res.Timeline {
			out[i] = f(s)
		}
		return out
	}
	for _, l := range []struct {
		name  string
		style Style
		f     func(result.Second) int64
		end   float64
	}{
		{"scheduled", under.in(grey), func(s result.Second) int64 { return s.Scheduled }, sched},
		{"sent", solid.in(orange), func(s result.Second) int64 { return s.Sent }, sentEnd(res.Timeline, sched, end)},
		{"completed", dashed.in(blue), func(s result.Second) int64 { return s.Completed }, end},
		{"errors", dotted.in(vermillion), func(s result.Second) int64 { return s.Errors }, end},
	} {
		s := perSecond(col(l.f), l.end)
		s.Name, s.Style = l.name, l.style
		c.Series = append(c.Series, s)
	}
	if res.Counts.Skipped > 0 {
		s := perSecond(col(func(s result.Second) int64 { return s.Skipped }), sched)
		s.Name, s.Style = "never sent (closed loop)", dotted.in(purple)
		c.Series = append(c.Series, s)
	}
	if end > sched {
		c.Spans = append(c.Spans, Span{From: sched, To: end, Label: "drain (schedule over)"})
	}
	return c
}

// TimelineP99Chart is the response-time p99 of each second of the run (of
// the requests that ended in it), so a stall shows as a spike. A second in
// which no request ended has no p99: the line breaks there rather than
// dropping to zero.
func TimelineP99Chart(res *result.Result) Chart {
	sched, end := Ends(res)
	c := Chart{ID: "timeline-p99", Title: "Response time p99 per second", Subtitle: []string{Identity(res)},
		XLabel: "seconds from the start", YLabel: "ms", Unit: "ms", XMin: 0, XMax: end}
	c.Note = "No line over a second: no request ended in it."
	s := Series{Name: "response p99", Style: solid.in(blue), Step: 1}
	for i, sec := range res.Timeline {
		if sec.Completed+sec.Errors == 0 {
			continue
		}
		s.X = append(s.X, float64(i))
		s.Y = append(s.Y, sec.ResponseP99)
	}
	if n := len(s.X); n > 0 {
		// The last second drawn holds to the run's end if that falls
		// inside it, else for the whole second.
		last := s.X[n-1]
		s.End = last + 1
		if end > last {
			s.End = math.Min(s.End, end)
		}
	}
	c.Series = []Series{s}
	if end > sched {
		c.Spans = append(c.Spans, Span{From: sched, To: end, Label: "drain (schedule over)"})
	}
	return c
}

// ClassCharts is one bar chart per class header: the share of requests per
// value, in percent of 0–100, each bar labelled with its share and count.
func ClassCharts(res *result.Result) []Chart {
	var out []Chart
	for i, t := range res.Classes {
		c := Chart{ID: fmt.Sprintf("class-%d", i), Title: "Share of requests by " + t.Header, Subtitle: []string{Identity(res)},
			XLabel: t.Header, YLabel: "% of requests", Unit: "%"}
		s := Series{Name: "share", Style: solid.in(blue)}
		for j, v := range t.Values {
			c.Bars = append(c.Bars, v.Value)
			s.X = append(s.X, float64(j))
			s.Y = append(s.Y, 100*v.Share)
			s.Labels = append(s.Labels, shareLabel(100*v.Share, v.Count))
		}
		c.Series = []Series{s}
		out = append(out, c)
	}
	return out
}

// shareLabel is a bar's label: its share to one decimal and its count,
// "67.8 % (244)"; a share that rounds to 0 or 100 but is neither reads
// "<0.1 %" or ">99.9 %".
func shareLabel(pct float64, count int64) string {
	share := fmt.Sprintf("%.1f %%", pct)
	switch {
	case pct > 0 && pct < 0.05:
		share = "<0.1 %"
	case pct > 99.95 && pct < 100:
		share = ">99.9 %"
	case pct == 100:
		share = "100 %"
	}
	return fmt.Sprintf("%s (%d)", share, count)
}

// ReportCharts are the charts of a run's report, in order: latency by
// percentile, requests per second, p99 per second, class shares, and
// class values per second (classes.go).
func ReportCharts(res *result.Result) ([]Chart, error) {
	lat, err := LatencyChart(res)
	if err != nil {
		return nil, err
	}
	out := []Chart{lat, TimelineChart(res), TimelineP99Chart(res)}
	out = append(out, ClassCharts(res)...)
	return append(out, ClassTimelineCharts(res)...), nil
}
