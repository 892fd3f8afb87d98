package report_test

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/openload/openload/internal/report"
	"github.com/openload/openload/internal/sweep"
	"github.com/openload/openload/result"
	"github.com/openload/openload/verify"
)

// streamPoint is a synthetic streamed point: 10 s of rate requests, all
// completed, with the given ITL p50 and, when met ≥ 0, goodput.
func streamPoint(rate, itl float64, met int64) result.FilePoint {
	res := &result.Result{Elapsed: 10, Counts: result.Counts{Scheduled: int64(rate * 10), Completed: int64(rate * 10)},
		Response: result.Percentiles{P50: 400, P99: 480},
		Stream: &result.StreamResult{TTFTResponse: result.Percentiles{P99: 61.5}, ITL: result.Percentiles{P50: itl, P99: itl + 2},
			TPOT: result.Percentiles{P50: itl + 0.25}, TokensPerS: rate * 36}}
	if met >= 0 {
		res.Stream.Goodput = &result.Goodput{Met: met, PerS: float64(met) / 10}
	}
	return result.FilePoint{Rate: rate, Result: res, Pass: true}
}

// TestSweepTableStream: a streamed sweep's table has the stream columns
// with each point's figures, goodput only when it was counted; a sweep
// without streams keeps its columns.
func TestSweepTableStream(t *testing.T) {
	var b bytes.Buffer
	if err := report.SweepTable(&b, []result.FilePoint{streamPoint(10, 12.5, 90), streamPoint(20, 17.25, 150)}, 1); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"goodput/s", "tokens/s", "TTFT p99", "ITL p50", "ITL p99", "TPOT p50", "latencies in ms · p50, p99 = response time",
		"9.0", "15.0", // goodput per second
		"360", "720", // tokens per second
		"61.5", "12.5", "14.5", "17.2", "19.2", "17.5", "← knee"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "p90") {
		t.Errorf("streamed table keeps resp p90:\n%s", out)
	}

	b.Reset()
	if err := report.SweepTable(&b, []result.FilePoint{streamPoint(10, 12.5, -1)}, -1); err != nil {
		t.Fatal(err)
	}
	if out := b.String(); strings.Contains(out, "goodput") || !strings.Contains(out, "ITL") {
		t.Errorf("without objectives: want ITL and no goodput column:\n%s", out)
	}

	b.Reset()
	plain := result.FilePoint{Rate: 10, Pass: true, Result: &result.Result{Response: result.Percentiles{P99: 50}, Counts: result.Counts{Scheduled: 100, Completed: 100}}}
	if err := report.SweepTable(&b, []result.FilePoint{plain}, -1); err != nil {
		t.Fatal(err)
	}
	if out := b.String(); strings.Contains(out, "ITL") || !strings.Contains(out, "│ p90 │") {
		t.Errorf("without streams: want the request columns only:\n%s", out)
	}
}

// judged is a point of rate whose response p99 is p99, judged on objs as
// a run is (verify.Judge stores the objectives in the result); a failed
// check when invalid.
func judged(rate, p99 float64, objs []verify.Objective, invalid bool) sweep.Point {
	res := &result.Result{Elapsed: 1, Response: result.Percentiles{P99: p99}, Counts: result.Counts{Scheduled: 100, Completed: 100}}
	if invalid {
		res.Checks = []result.Check{{Name: "send delay", Severity: string(verify.Fail), Message: "late"}}
	}
	return sweep.Point{Rate: rate, Result: res, Valid: !invalid, SLOs: verify.Judge(res, objs).Objectives}
}

// roundTrip is f written and read back, as `openload report` reads it.
func roundTrip(t *testing.T, f result.File) *result.File {
	t.Helper()
	var b bytes.Buffer
	if err := f.Write(&b); err != nil {
		t.Fatal(err)
	}
	back, ok, err := result.ReadFile(&b, "f.json")
	if !ok || err != nil {
		t.Fatalf("read back: %v %v", ok, err)
	}
	return back
}

func render(t *testing.T, f *result.File) string {
	t.Helper()
	var b bytes.Buffer
	if err := report.SweepText(&b, f); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestSavedRendersAsLive: a sweep, a search whose repeats stopped early
// (figures past any bound, stored as the largest float) and repeats render
// from their file written and read back exactly as from the file built
// live.
func TestSavedRendersAsLive(t *testing.T) {
	slo, err := verify.ParseObjective("response.p99<=200ms")
	if err != nil {
		t.Fatal(err)
	}
	objs := []verify.Objective{slo}
	sw := &sweep.Sweep{Points: []sweep.Point{judged(10, 50, objs, false), judged(20, 60, objs, true), judged(40, 300, objs, false)},
		Knee: 2, KneeWhy: "objective broken", Factor: 2}

	stopped := judged(40, 900, objs, false)
	stopped.Stopped = "requests already waiting"
	probe := func(rate float64, pass bool, pts ...sweep.Point) sweep.Probe {
		p := sweep.Probe{Rate: rate, Points: pts, Pass: pass, Deciding: slo, Lo: math.NaN(), Hi: math.NaN()}
		for _, pt := range pts {
			v := pt.Result.Response.P99
			if pt.Stopped != "" {
				v = math.Inf(1)
			}
			p.Figures = append(p.Figures, v)
		}
		p.Median = p.Figures[len(p.Figures)/2]
		if len(pts) > 1 {
			p.Lo, p.Hi = p.Figures[0], math.Inf(1)
		}
		return p
	}
	s := &sweep.Search{Verdict: sweep.Found, Low: 20, High: 40, Message: "capacity 20/s",
		Probes: []sweep.Probe{probe(20, true, judged(20, 60, objs, false)), probe(40, false, judged(40, 300, objs, false), stopped, stopped)}}
	s.Probes[1].Why = "stopped early: requests already waiting"

	reps := sweep.RepeatsFile([]sweep.Point{judged(20, 50, objs, false), judged(20, 55, objs, false), judged(20, 70, objs, false)})

	for _, f := range []result.File{sweep.SweepFile(sw), sweep.SearchFile(s), reps} {
		live := render(t, &f)
		if saved := render(t, roundTrip(t, f)); saved != live {
			t.Errorf("%s: saved renders\n%s\nlive\n%s", f.Kind, saved, live)
		}
		switch f.Kind {
		case result.KindSweep:
			for _, want := range []string{"← knee", "INVALID (a check failed)", "│ ✗ 300.000 ms  ✓ 0 %  ✓ 0 % │", "objectives, in this order: response.p99<=200ms · errors<=1% · client_errors<=1% (✓ held", "knee: 40/s (point 3): objective broken"} {
				if !strings.Contains(live, want) {
					t.Errorf("sweep lacks %q:\n%s", want, live)
				}
			}
		case result.KindSearch:
			for _, want := range []string{"BREACH (breach stopped stopped)", "│ 300.000 ms – past │", report.PastNote, "— (1 repeat)",
				"why\n  probe 2 (40/s)  stopped early: requests already waiting\n", "search: capacity 20/s"} {
				if !strings.Contains(live, want) {
					t.Errorf("search lacks %q:\n%s", want, live)
				}
			}
		}
	}

	// Without a knee, the factor it was looked for with.
	sw.Knee = -1
	f := sweep.SweepFile(sw)
	if out := render(t, &f); !strings.Contains(out, "knee: none up to 40/s (response p99 stayed within 2 × the lowest rate's") {
		t.Errorf("no knee:\n%s", out)
	}
}

// TestChartPoints: a search's charts draw one run per probe, the one of
// median response p99, in increasing rate; repeats draw none.
func TestChartPoints(t *testing.T) {
	pt := func(rate, p99 float64, probe int) result.FilePoint {
		return result.FilePoint{Rate: rate, Probe: probe, Result: &result.Result{Response: result.Percentiles{P99: p99}}}
	}
	f := &result.File{Kind: result.KindSearch, Search: &result.FileSearch{Probes: make([]result.FileProbe, 2)},
		Points: []result.FilePoint{pt(40, 9, 1), pt(40, 3, 1), pt(40, 5, 1), pt(20, 1, 2), pt(20, 2, 2)}}
	points, knee := report.ChartPoints(f)
	if len(points) != 2 || knee != -1 || points[0].Rate != 20 || points[0].Result.Response.P99 != 2 || points[1].Result.Response.P99 != 5 {
		t.Errorf("chart points %+v, knee %d", points, knee)
	}
	f.Kind = result.KindRepeats
	if points, _ := report.ChartPoints(f); len(points) != 0 || len(report.SweepCharts(f)) != 0 {
		t.Errorf("repeats draw %d points", len(points))
	}
}

// TestSweepProfileRows: a profile sweep's probes are rows of their own,
// marked (sync, inf, and a note); the knee line and the charts keep to the
// open points, and the CSV says which kind each row is.
func TestSweepProfileRows(t *testing.T) {
	pt := func(rate float64, kind string, done int64) result.FilePoint {
		res := &result.Result{Elapsed: 1, Counts: result.Counts{Scheduled: done, Completed: done}, Response: result.Percentiles{P99: 21}}
		res.Limit.Connections = 8
		return result.FilePoint{Rate: rate, Kind: kind, Pass: true, Result: res}
	}
	f := &result.File{SweepVersion: result.FileVersion, Kind: result.KindSweep, KneeFactor: 2, Points: []result.FilePoint{
		pt(0, result.PointSynchronous, 50), pt(100, "", 100), pt(150, "", 150), pt(0, result.PointThroughput, 400)}}
	var b bytes.Buffer
	if err := report.SweepText(&b, f); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"│      sync │", "synchronous point: 1 user, closed loop", "│       inf │", "throughput probe: 400 at once, ≤ 8 in flight",
		"knee: none up to 150/s"} {
		if !strings.Contains(out, want) {
			t.Errorf("lacks %q:\n%s", want, out)
		}
	}
	if pts, _ := report.ChartPoints(f); len(pts) != 2 || pts[0].Rate != 100 {
		t.Errorf("chart points %+v, want the two open ones", pts)
	}
	f.Knee = &result.FileKnee{Point: 3, Rate: 150}
	if _, k := report.ChartPoints(f); k != 1 {
		t.Errorf("chart knee %d, want 1 (150/s among the open points)", k)
	}
	b.Reset()
	if err := report.SweepCSV(&b, f); err != nil {
		t.Fatal(err)
	}
	if lines := strings.Split(b.String(), "\n"); !strings.HasSuffix(lines[0], ",point_kind") || !strings.HasSuffix(lines[1], ",synchronous") || !strings.HasSuffix(lines[2], ",") {
		t.Errorf("csv:\n%s", b.String())
	}
}
