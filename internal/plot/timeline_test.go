package plot

import (
	"bytes"
	"image/png"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/openload/openload/internal/recorder"
	"github.com/openload/openload/result"
)

func TestPerSecond(t *testing.T) {
	for _, c := range []struct {
		name   string
		counts []int64
		end    float64
		x, y   []float64
		last   float64
	}{
		{"whole seconds", []int64{100, 100, 100}, 3, []float64{0, 1, 2}, []float64{100, 100, 100}, 3},
		// 50 requests in the half second the schedule covers of its
		// last second: merged with the second before, 150 over 1.5 s.
		{"half a last second", []int64{100, 100, 50}, 2.5, []float64{0, 1}, []float64{100, 100}, 2.5},
		// One completion 10 ms into a second: no spike to 100/s.
		{"a sliver", []int64{100, 100, 100, 1}, 3.01, []float64{0, 1, 2}, []float64{100, 100, 101 / 1.01}, 3.01},
		// A replay's last arrival exactly at its span's end falls in the
		// second that starts there: it joins the second before.
		{"an event at the end", []int64{100, 100, 100, 2}, 3, []float64{0, 1, 2}, []float64{100, 100, 102}, 3},
		// Seconds without events are true zeros up to the end.
		{"quiet seconds", []int64{100}, 3, []float64{0, 1, 2}, []float64{100, 0, 0}, 3},
		{"shorter than a second", []int64{50}, 0.5, []float64{0}, []float64{100}, 0.5},
		// Counts past the end move it (the data wins over the bound).
		{"counts past the end", []int64{100, 100, 100, 100, 100}, 3, []float64{0, 1, 2, 3}, []float64{100, 100, 100, 200}, 4},
		{"nothing", nil, 0, nil, nil, 0},
	} {
		s := perSecond(c.counts, c.end)
		if !reflect.DeepEqual(s.X, c.x) || len(s.Y) != len(c.y) || (len(c.x) > 0 && s.End != c.last) {
			t.Errorf("%s: x %v y %v end %v, want x %v y %v end %v", c.name, s.X, s.Y, s.End, c.x, c.y, c.last)
			continue
		}
		for i := range c.y {
			if math.Abs(s.Y[i]-c.y[i]) > 1e-9 {
				t.Errorf("%s: y %v, want %v", c.name, s.Y, c.y)
				break
			}
		}
	}
}

// partialResult is a run of 100/s for 2.5 s against a 400 ms service, so
// that its schedule ends half-way through a second and completions go on
// through the drain until 2.9 s, plus one straggler 20 ms into second 3.
func partialResult(t *testing.T) *result.Result {
	t.Helper()
	r := recorder.New(nil)
	n := 250
	for i := 0; i < n; i++ {
		sched := time.Duration(i) * 10 * time.Millisecond
		done := sched + 400*time.Millisecond
		if i == n-1 {
			done = 3020 * time.Millisecond
		}
		rec := recorder.Record{Seq: uint64(i), Scheduled: sched, Sent: sched, Done: done, WasSent: true, Outcome: recorder.Completed, Status: 200}
		if err := r.Add(&rec); err != nil {
			t.Fatal(err)
		}
	}
	res := &result.Result{Started: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Elapsed: 3.02,
		Config: result.Config{Schedule: "constant 100/s for 2.5s", Duration: "2.5s", Method: "GET", Target: "http://127.0.0.1:1/predict"}}
	if err := r.Fill(res); err != nil {
		t.Fatal(err)
	}
	return res
}

func TestTimelinePartialLastSecond(t *testing.T) {
	res := partialResult(t)
	if len(res.Timeline) != 4 || res.Timeline[2].Scheduled != 50 {
		t.Fatalf("timeline %+v: want 4 seconds, the third with 50 scheduled", res.Timeline)
	}
	sched, end := Ends(res)
	if sched != 2.5 || end != 3.02 {
		t.Fatalf("Ends = %v, %v; want 2.5, 3.02", sched, end)
	}
	c := TimelineChart(res)
	byName := map[string]Series{}
	for _, s := range c.Series {
		byName[s.Name] = s
	}
	// Scheduled and sent end with the schedule, at 100/s to the end: the
	// half second is not drawn as a drop to 50.
	for _, name := range []string{"scheduled", "sent"} {
		s := byName[name]
		if s.End != 2.5 || len(s.Y) != 2 || s.Y[0] != 100 || s.Y[1] != 100 {
			t.Errorf("%s: x %v y %v end %v; want 100/s up to 2.5 s", name, s.X, s.Y, s.End)
		}
	}
	// Completed goes on through the drain to the run's end; the last
	// rate is second 2 with the straggler, over 1.02 s, not a fall to 1/s
	// nor a spike.
	done := byName["completed"]
	if done.End != 3.02 || len(done.X) != 3 {
		t.Fatalf("completed: x %v y %v end %v", done.X, done.Y, done.End)
	}
	if want := float64(res.Timeline[2].Completed+res.Timeline[3].Completed) / 1.02; math.Abs(done.Y[2]-want) > 1e-9 {
		t.Errorf("completed's last rate %v, want %v", done.Y[2], want)
	}
	// What the rates add up to over their spans is what was counted.
	for _, s := range c.Series {
		total := 0.0
		for i := range s.X {
			to := s.End
			if i+1 < len(s.X) {
				to = s.X[i+1]
			}
			total += s.Y[i] * (to - s.X[i])
		}
		if want := map[string]float64{"scheduled": 250, "sent": 250, "completed": 250, "errors": 0}[s.Name]; math.Abs(total-want) > 1e-6 {
			t.Errorf("%s: rates × spans = %v, want %v", s.Name, total, want)
		}
	}
	if len(c.Spans) != 1 || c.Spans[0].From != 2.5 || c.Spans[0].To != 3.02 || c.XMax != 3.02 {
		t.Errorf("spans %+v, x max %v: want the drain shaded from 2.5 to 3.02 s", c.Spans, c.XMax)
	}
	if want := "constant 100/s for 2.5s · GET http://127.0.0.1:1/predict · started 2026-01-02 03:04:05 UTC"; len(c.Subtitle) != 1 || c.Subtitle[0] != want {
		t.Errorf("subtitle %q, want %q", c.Subtitle, want)
	}
}

func TestEnds(t *testing.T) {
	for _, c := range []struct {
		name      string
		res       result.Result
		sched, to float64
	}{
		{"the run ends before the schedule", result.Result{Elapsed: 99.99, Config: result.Config{Duration: "1m40s"}}, 100, 100},
		{"a drain", result.Result{Elapsed: 104.5, Config: result.Config{Duration: "1m40s"}}, 100, 104.5},
		{"interrupted", result.Result{Elapsed: 12.3, Interrupted: true, Config: result.Config{Duration: "1m40s"}}, 12.3, 12.3},
		{"no duration", result.Result{Elapsed: 7.5}, 7.5, 7.5},
		{"neither", result.Result{Timeline: make([]result.Second, 10)}, 10, 10},
	} {
		if s, e := Ends(&c.res); s != c.sched || e != c.to {
			t.Errorf("%s: Ends = %v, %v; want %v, %v", c.name, s, e, c.sched, c.to)
		}
	}
}

// TestLayers checks that no series can hide one drawn before it: each is
// narrower than every earlier one, or dashed; the first is translucent.
func TestLayers(t *testing.T) {
	res := sampleResult(t)
	lat, err := LatencyChart(res)
	if err != nil {
		t.Fatal(err)
	}
	diff, err := DiffChart(res, res, "a", "b", "response")
	if err != nil {
		t.Fatal(err)
	}
	closed := partialResult(t)
	closed.Counts.Skipped, closed.Timeline[1].Skipped = 3, 3
	for _, c := range []Chart{lat, diff, TimelineChart(res), TimelineChart(closed)} {
		if s := c.Series[0]; s.Opacity <= 0 || s.Opacity >= 1 {
			t.Errorf("%s: the bottom series %q has opacity %v, want translucent", c.ID, s.Name, s.Opacity)
		}
		for j, later := range c.Series {
			if later.Color == "" || later.Width <= 0 {
				t.Errorf("%s: %q has no style", c.ID, later.Name)
			}
			for _, earlier := range c.Series[:j] {
				if later.Width >= earlier.Width && len(later.Dash) == 0 {
					t.Errorf("%s: %q (width %v, solid) can hide %q (width %v) drawn before it", c.ID, later.Name, later.Width, earlier.Name, earlier.Width)
				}
				if later.Color == earlier.Color {
					t.Errorf("%s: %q and %q share a colour", c.ID, later.Name, earlier.Name)
				}
			}
		}
	}
	names := func(c Chart) (out []string) {
		for _, s := range c.Series {
			out = append(out, s.Name)
		}
		return out
	}
	if got := names(TimelineChart(closed)); strings.Join(got, ",") != "scheduled,sent,completed,errors,never sent (closed loop)" {
		t.Errorf("closed timeline's series %v", got)
	}
	if got := names(lat); strings.Join(got, ",") != "response time,service time,send delay" {
		t.Errorf("latency series %v", got)
	}
}

func TestTimelineP99Gaps(t *testing.T) {
	res := sampleResult(t) // requests due during the stall at 5 s all end at 6 s
	c := TimelineP99Chart(res)
	s := c.Series[0]
	if !reflect.DeepEqual(s.X, []float64{0, 1, 2, 3, 4, 6, 7, 8, 9}) || s.End != 10 {
		t.Fatalf("p99 seconds %v end %v: want second 5, in which nothing ended, left out", s.X, s.End)
	}
	lines := s.polylines()
	if len(lines) != 2 || lines[0][len(lines[0])-1].X != 5 || lines[1][0].X != 6 || lines[1][len(lines[1])-1].X != 10 {
		t.Errorf("p99 drawn as %v: want two step lines, 0–5 s and 6–10 s", lines)
	}
	if c.Note == "" {
		t.Error("the p99 chart does not say what a gap means")
	}
}

func TestRenderLayout(t *testing.T) {
	c := TimelineChart(partialResult(t))
	var svg bytes.Buffer
	if err := c.Render(&svg, "svg", 720, 360); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`viewBox="0 0 720 360"`, ">Requests per second<", ">constant 100/s for 2.5s · GET http://127.0.0.1:1/predict · started 2026-01-02 03:04:05 UTC<",
		">drain (schedule over)<", ">completed<", "font-family:Liberation Sans,Arial,Helvetica,sans-serif;"} {
		if !strings.Contains(svg.String(), want) {
			t.Errorf("SVG lacks %q", want)
		}
	}
	var pngb bytes.Buffer
	if err := c.Render(&pngb, "png", 720, 360); err != nil {
		t.Fatal(err)
	}
	cfg, err := png.DecodeConfig(&pngb)
	if err != nil || cfg.Width != 1440 || cfg.Height != 720 {
		t.Errorf("PNG %dx%d (%v), want 1440x720: 2 pixels a point", cfg.Width, cfg.Height, err)
	}
	if err := c.Render(&pngb, "gif", 720, 360); err == nil {
		t.Error("gif rendered")
	}
}
