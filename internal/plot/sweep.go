package plot

import (
	"fmt"

	"github.com/openload/openload/recorder"
)

// SweepPoint is one point of a sweep, as its charts draw it: the offered
// rate, the run's result, and its throughput (completed per second).
type SweepPoint struct {
	Offered   float64
	Completed float64
	Result    *recorder.Result
}

// SweepCharts are a sweep's charts: latency against offered rate (response
// and service time, p50 and p99: the gap between them is the queue the
// schedule exposes, the hockey stick) and throughput against offered rate.
// knee ≥ 0 shades the points from the knee on.
func SweepCharts(points []SweepPoint, knee int, subtitle string) []Chart {
	lat := Chart{ID: "sweep-latency", Title: "Latency against offered rate", Subtitle: []string{subtitle},
		Note:   "response = done − scheduled, service = done − sent: service holds the server's queue, the gap the wait inside openload",
		XLabel: "offered rate (requests/s)", YLabel: "ms"}
	thr := Chart{ID: "sweep-throughput", Title: "Throughput against offered rate", Subtitle: []string{subtitle},
		Note:   "completed per second of the run (start to last response); on the dashed line every offered request was served",
		XLabel: "offered rate (requests/s)", YLabel: "requests/s"}
	lines := []struct {
		name  string
		style Style
		get   func(r *recorder.Result) float64
	}{
		{"response p99", under.in(blue), func(r *recorder.Result) float64 { return r.Response.P99 }},
		{"service p99", solid.in(green), func(r *recorder.Result) float64 { return r.Service.P99 }},
		{"response p50", dashed.in(blue), func(r *recorder.Result) float64 { return r.Response.P50 }},
		{"service p50", dotted.in(green), func(r *recorder.Result) float64 { return r.Service.P50 }},
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
	if knee >= 0 && knee < len(points) {
		from := points[knee].Offered
		if knee > 0 {
			from = (points[knee-1].Offered + from) / 2
		}
		span := Span{From: from, To: points[len(points)-1].Offered, Label: fmt.Sprintf("past the knee (%g/s)", points[knee].Offered), Unit: "/s"}
		lat.Spans, thr.Spans = []Span{span}, []Span{span}
	}
	return []Chart{lat, thr}
}
