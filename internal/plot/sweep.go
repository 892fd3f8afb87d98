package plot

import (
	"fmt"

	"github.com/openload/openload/result"
)

// SweepPoint is one point of a sweep, as its charts draw it: the offered
// rate, the run's result, and its throughput (completed per second).
type SweepPoint struct {
	Offered   float64
	Completed float64
	Result    *result.Result
}

// SweepCharts are a sweep's charts: latency against offered rate (response
// and service time, p50 and p99: the gap between them is the queue the
// schedule exposes, the hockey stick) and throughput against offered rate.
// knee ≥ 0 shades the points from the knee on. Where the server adds no
// queue the p50s lie on each other: service p50 is dotted with a ring at
// each point, response p50 dashed, so both show.
func SweepCharts(points []SweepPoint, knee int, subtitle string) []Chart {
	lat := Chart{ID: "sweep-latency", Title: "Latency against offered rate", Subtitle: []string{subtitle},
		Note:   "response = done − scheduled, service = done − sent: service holds the server's queue, the gap the wait inside openload",
		XLabel: "offered rate (requests/s)", YLabel: "ms", Unit: "ms"}
	thr := Chart{ID: "sweep-throughput", Title: "Throughput against offered rate", Subtitle: []string{subtitle},
		Note:   "completed per second of the run (start to last response); on the dashed line every offered request was served",
		XLabel: "offered rate (requests/s)", YLabel: "requests/s", Unit: "/s"}
	lines := []struct {
		name  string
		style Style
		get   func(r *result.Result) float64
	}{
		{"response p99", under.in(blue), func(r *result.Result) float64 { return r.Response.P99 }},
		{"service p99", solid.in(green), func(r *result.Result) float64 { return r.Service.P99 }},
		{"response p50", dashed.in(blue), func(r *result.Result) float64 { return r.Response.P50 }},
		{"service p50", dotted.in(green).with(ring), func(r *result.Result) float64 { return r.Service.P50 }},
	}
	for _, l := range lines {
		s := Series{Name: l.name, Style: l.style}
		for _, p := range points {
			s.X = append(s.X, p.Offered)
			s.Y = append(s.Y, l.get(p.Result))
		}
		lat.Series = append(lat.Series, s)
	}
	offered := Series{Name: "offered", Style: dashed.in(grey)}
	done := Series{Name: "completed/s", Style: solid.in(blue)}
	for _, p := range points {
		offered.X, offered.Y = append(offered.X, p.Offered), append(offered.Y, p.Offered)
		done.X, done.Y = append(done.X, p.Offered), append(done.Y, p.Completed)
	}
	thr.Series = []Series{done, offered}
	charts := []Chart{lat, thr}
	if tok, ok := tokenChart(points, subtitle); ok {
		// Goodput beside throughput: it peaks and falls where throughput
		// only flattens.
		if g, ok := streamSeries(points, "goodput/s", solid.in(green), func(s *result.StreamResult) (float64, bool) {
			return goodputPerS(s)
		}); ok {
			charts[1].Series = append(charts[1].Series, g)
		}
		charts = append(charts, tok)
	}
	if knee >= 0 && knee < len(points) {
		from := points[knee].Offered
		if knee > 0 {
			from = (points[knee-1].Offered + from) / 2
		}
		span := Span{From: from, To: points[len(points)-1].Offered, Label: fmt.Sprintf("past the knee (%g/s)", points[knee].Offered), Unit: "/s"}
		for i := range charts {
			charts[i].Spans = []Span{span}
		}
	}
	return charts
}

func goodputPerS(s *result.StreamResult) (float64, bool) {
	if s.Goodput == nil {
		return 0, false
	}
	return s.Goodput.PerS, true
}

// tokenChart is a streamed sweep's third chart: ITL p50/p99, TPOT p50 and
// TTFT p99 from the schedule against offered rate; ok is false when no
// point streamed.
func tokenChart(points []SweepPoint, subtitle string) (Chart, bool) {
	c := Chart{ID: "sweep-tokens", Title: "Token latency against offered rate", Subtitle: []string{subtitle},
		Note:   "ITL and TPOT grow with a batching server's occupancy and flatten when its batch is full; TTFT from the schedule then grows with the queue",
		XLabel: "offered rate (requests/s)", YLabel: "ms", Unit: "ms"}
	for _, l := range []struct {
		name  string
		style Style
		get   func(s *result.StreamResult) float64
	}{
		{"ITL p99", under.in(orange), func(s *result.StreamResult) float64 { return s.ITL.P99 }},
		{"ITL p50", solid.in(orange), func(s *result.StreamResult) float64 { return s.ITL.P50 }},
		{"TPOT p50", dashed.in(purple), func(s *result.StreamResult) float64 { return s.TPOT.P50 }},
		{"TTFT p99 (from schedule)", solid.in(blue), func(s *result.StreamResult) float64 { return s.TTFTResponse.P99 }},
	} {
		if s, ok := streamSeries(points, l.name, l.style, func(s *result.StreamResult) (float64, bool) { return l.get(s), true }); ok {
			c.Series = append(c.Series, s)
		}
	}
	return c, len(c.Series) > 0
}

// streamSeries is one stream figure per point that has it; ok is false
// when none has.
func streamSeries(points []SweepPoint, name string, style Style, get func(*result.StreamResult) (float64, bool)) (Series, bool) {
	s := Series{Name: name, Style: style}
	for _, p := range points {
		if p.Result.Stream == nil {
			continue
		}
		if v, ok := get(p.Result.Stream); ok {
			s.X, s.Y = append(s.X, p.Offered), append(s.Y, v)
		}
	}
	return s, len(s.X) > 0
}
