package plot

import (
	"bytes"
	"strings"
	"testing"

	"github.com/openload/openload/result"
)

// TestSweepCharts checks the data behind a sweep's charts: one x per
// point (the offered rate), response and service p50/p99 from each
// result, throughput against the offered diagonal, and the shading from
// halfway before the knee to the last point.
func TestSweepCharts(t *testing.T) {
	var pts []SweepPoint
	for i, rate := range []float64{20, 60, 100} {
		res := &result.Result{Response: result.Percentiles{P50: 50, P99: float64(60 + 500*i)}, Service: result.Percentiles{P50: 50, P99: float64(55 + 100*i)}}
		pts = append(pts, SweepPoint{Offered: rate, Completed: min(rate, 80), Result: res})
	}
	cs := SweepCharts(pts, 2, "test")
	if len(cs) != 2 {
		t.Fatalf("%d charts", len(cs))
	}
	lat, thr := cs[0], cs[1]
	byName := map[string]Series{}
	for _, s := range append(lat.Series, thr.Series...) {
		byName[s.Name] = s
	}
	if s := byName["response p99"]; len(s.X) != 3 || s.X[2] != 100 || s.Y[2] != 1060 {
		t.Errorf("response p99 %+v", s)
	}
	if s := byName["service p99"]; s.Y[1] != 155 {
		t.Errorf("service p99 %+v", s)
	}
	if s := byName["completed/s"]; s.Y[2] != 80 || byName["offered"].Y[2] != 100 {
		t.Errorf("throughput %+v, offered %+v", s, byName["offered"])
	}
	if len(lat.Spans) != 1 || lat.Spans[0].From != 80 || lat.Spans[0].To != 100 || len(thr.Spans) != 1 {
		t.Errorf("knee spans %+v %+v", lat.Spans, thr.Spans)
	}
	if cs := SweepCharts(pts, -1, "test"); len(cs[0].Spans) != 0 {
		t.Errorf("no knee, spans %+v", cs[0].Spans)
	}
	for _, c := range cs {
		var b bytes.Buffer
		if err := c.Render(&b, "svg", 400, 300); err != nil || !strings.Contains(b.String(), "<svg") {
			t.Errorf("%s: render: %v", c.ID, err)
		}
	}
}

// TestSweepChartsStream: streamed points add goodput to the throughput
// chart and a token chart with ITL, TPOT and TTFT per point.
func TestSweepChartsStream(t *testing.T) {
	var pts []SweepPoint
	for i, rate := range []float64{10, 20, 30} {
		res := &result.Result{Stream: &result.StreamResult{ITL: result.Percentiles{P50: float64(10 + 5*i), P99: float64(12 + 5*i)},
			TPOT: result.Percentiles{P50: float64(11 + 5*i)}, TTFTResponse: result.Percentiles{P99: float64(30 + 100*i)},
			Goodput: &result.Goodput{PerS: []float64{10, 20, 2}[i]}}}
		pts = append(pts, SweepPoint{Offered: rate, Completed: rate, Result: res})
	}
	cs := SweepCharts(pts, 2, "test")
	if len(cs) != 3 || cs[2].ID != "sweep-tokens" || len(cs[2].Spans) != 1 {
		t.Fatalf("charts %d, want 3 with the token chart shaded past the knee", len(cs))
	}
	byName := map[string]Series{}
	for _, s := range append(cs[1].Series, cs[2].Series...) {
		byName[s.Name] = s
	}
	if s := byName["goodput/s"]; len(s.Y) != 3 || s.Y[1] != 20 || s.Y[2] != 2 {
		t.Errorf("goodput %+v", s)
	}
	if s := byName["ITL p50"]; len(s.Y) != 3 || s.Y[2] != 20 || byName["ITL p99"].Y[0] != 12 || byName["TPOT p50"].Y[1] != 16 {
		t.Errorf("ITL %+v", s)
	}
	if s := byName["TTFT p99 (from schedule)"]; len(s.Y) != 3 || s.Y[2] != 230 {
		t.Errorf("TTFT %+v", s)
	}
	var b bytes.Buffer
	if err := cs[2].Render(&b, "svg", 400, 300); err != nil || !strings.Contains(b.String(), "<svg") {
		t.Errorf("render: %v", err)
	}
	for i := range pts {
		pts[i].Result = &result.Result{}
	}
	if cs := SweepCharts(pts, -1, "test"); len(cs) != 2 {
		t.Errorf("without streams: %d charts, want 2", len(cs))
	}
}
