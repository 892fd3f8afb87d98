package plot

import (
	"bytes"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/openload/openload/internal/recorder"
	"github.com/openload/openload/result"
)

func TestPercentileX(t *testing.T) {
	for p, want := range map[float64]float64{0: 1, 90: 10, 99: 100, 99.9: 1000, 100: maxX, 99.99999: maxX} {
		if got := PercentileX(p); math.Abs(got-want)/want > 1e-9 {
			t.Errorf("PercentileX(%v) = %v, want %v", p, got, want)
		}
	}
}

// result builds a result from records: n fast requests (1 ms) and a stalled
// tail (every request due during a 1 s stall waited up to the stall).
func sampleResult(t *testing.T) *result.Result {
	t.Helper()
	r := recorder.New(nil)
	for i := 0; i < 1000; i++ {
		sched := time.Duration(i) * 10 * time.Millisecond
		sent := sched
		if i >= 500 && i < 600 { // due during a 1 s stall at 5 s
			sent = 6 * time.Second
		}
		rec := recorder.Record{Seq: uint64(i), Scheduled: sched, Sent: sent, Done: sent + time.Millisecond, WasSent: true, Outcome: recorder.Completed, Status: 200}
		rec.Class[0] = "model"
		if i%4 == 0 {
			rec.Class[0] = "fallback"
		}
		r.Add(&rec)
	}
	r.TrackClasses(nil)
	res := &result.Result{}
	if err := r.Fill(res); err != nil {
		t.Fatal(err)
	}
	return res
}

func TestLatencyChartData(t *testing.T) {
	c, err := LatencyChart(sampleResult(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Series) != 3 || c.Series[0].Name != "response time" || !c.LogX {
		t.Fatalf("chart %+v", c)
	}
	resp, svc := c.Series[0], c.Series[1]
	// Non-decreasing in both coordinates, from 0 % to the max.
	for _, s := range c.Series {
		for i := 1; i < len(s.X); i++ {
			if s.X[i] <= s.X[i-1] || s.Y[i] < s.Y[i-1] {
				t.Fatalf("%s not increasing at %d: (%v,%v) after (%v,%v)", s.Name, i, s.X[i], s.Y[i], s.X[i-1], s.Y[i-1])
			}
		}
		if s.X[0] != 1 || s.X[len(s.X)-1] != maxX {
			t.Errorf("%s spans x %v … %v, want 1 … %v", s.Name, s.X[0], s.X[len(s.X)-1], maxX)
		}
	}
	// 10 % of requests waited for the stall: response time at the max is
	// about 1 s, service time stays at 1 ms.
	if y := resp.Y[len(resp.Y)-1]; y < 990 || y > 1010 {
		t.Errorf("response max %v ms, want ≈ 1000", y)
	}
	if y := svc.Y[len(svc.Y)-1]; y > 1.01 {
		t.Errorf("service max %v ms, want 1", y)
	}
}

func TestTimelineAndDiffCharts(t *testing.T) {
	res := sampleResult(t)
	tl := TimelineChart(res)
	if len(tl.Series) != 4 || len(tl.Series[1].Y) != 10 {
		t.Fatalf("timeline %+v", tl)
	}
	if tl.Series[1].Y[5] != 0 || tl.Series[1].Y[6] != 200 || tl.Series[0].Y[5] != 100 {
		t.Errorf("sent per second %v, scheduled %v: want the stall's dip at 5 s and the catch-up at 6 s", tl.Series[1].Y, tl.Series[0].Y)
	}
	d, err := DiffChart(res, res, "a", "b", "service")
	if err != nil || len(d.Series) != 2 || d.Series[1].Name != "b" {
		t.Fatalf("diff %+v %v", d, err)
	}
	if _, err := DiffChart(res, &result.Result{}, "a", "b", "service"); err == nil || !strings.Contains(err.Error(), "b: result has no service histogram") {
		t.Errorf("diff with a result without histograms: %v", err)
	}
}

func TestRender(t *testing.T) {
	res := sampleResult(t)
	c, _ := LatencyChart(res)
	for _, f := range []string{"svg", "png"} {
		var b bytes.Buffer
		if err := c.Render(&b, f, 400, 300); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if b.Len() < 1000 {
			t.Errorf("%s: %d bytes", f, b.Len())
		}
	}
	// Bars: labelled above, or inside the top of a bar that reaches it;
	// a label too wide for its slot loses its count, then goes.
	var b bytes.Buffer
	bars := Chart{Title: "t", Bars: []string{"model", "fallback"}, Series: []Series{{Name: "share", X: []float64{0, 1}, Y: []float64{75, 25},
		Labels: []string{"75.0 % (3)", "25.0 % (1)"}}}}
	if err := bars.Render(&b, "svg", 300, 200); err != nil || !strings.Contains(b.String(), "fallback") ||
		!strings.Contains(b.String(), ">75.0 % (3)<") || !strings.Contains(b.String(), ">25.0 % (1)<") {
		t.Errorf("bar chart: %v\n%s", err, b.String())
	}
	b.Reset()
	many := Chart{Title: "t", Series: []Series{{Name: "share"}}}
	for i := range 6 {
		many.Bars = append(many.Bars, string(rune('a'+i)))
		many.Series[0].X = append(many.Series[0].X, float64(i))
		many.Series[0].Y = append(many.Series[0].Y, 100.0/6)
		many.Series[0].Labels = append(many.Series[0].Labels, "16.7 % (1000)")
	}
	if err := many.Render(&b, "svg", 300, 200); err != nil || strings.Contains(b.String(), "(1000)") || !strings.Contains(b.String(), ">16.7 %<") {
		t.Errorf("6 bars in 300 pt: %v, want shares without counts\n%s", err, b.String())
	}
}

func TestHTMLPage(t *testing.T) {
	res := sampleResult(t)
	lat, _ := LatencyChart(res)
	p := Page{Title: "openload <report>", Text: "counts   expected 1000", Charts: []Chart{lat, TimelineChart(res)}}
	var b bytes.Buffer
	if err := p.Write(&b); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, want := range []string{"<svg", `<figure id="latency">`, `<figure id="timeline">`, "openload &lt;report&gt;", "counts   expected 1000"} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	checkOffline(t, page)
	charts, err := ReadData(b.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if len(charts) != 2 || charts[0].Series[0].Name != "response time" || charts[1].Series[1].Y[5] != 0 {
		t.Errorf("embedded data %+v", charts)
	}
}
