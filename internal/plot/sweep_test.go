package plot

import (
	"bytes"
	"strings"
	"testing"

	"github.com/openload/openload/recorder"
)

// TestSweepCharts checks the data behind a sweep's charts: one x per
// point (the offered rate), response and service p50/p99 from each
// result, throughput against the offered diagonal, and the shading from
// halfway before the knee to the last point.
func TestSweepCharts(t *testing.T) {
	var pts []SweepPoint
	for i, rate := range []float64{20, 60, 100} {
		res := &recorder.Result{Response: recorder.Percentiles{P50: 50, P99: float64(60 + 500*i)}, Service: recorder.Percentiles{P50: 50, P99: float64(55 + 100*i)}}
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
