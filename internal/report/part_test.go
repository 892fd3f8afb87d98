package report_test

import (
	"strings"
	"testing"
	"time"

	"github.com/openload/openload/internal/golden"
	"github.com/openload/openload/internal/recorder"
	"github.com/openload/openload/internal/report"
	"github.com/openload/openload/result"
	"github.com/openload/openload/verify"
)

// mixResult is a run of a mix of three targets, through a Recorder: 60
// to "GET http://t/a" (200 in base, one in ten 503), 30 to
// "checkout, v2" (200 in 2 × base, every fifth refused), none to "idle";
// judged with one objective scoped to checkout.
func mixResult(t *testing.T, base time.Duration) *result.Result {
	t.Helper()
	r := recorder.New(nil)
	r.TrackTargets([]string{"GET http://t/a", "checkout, v2", "idle"})
	for i := range 90 {
		at := time.Duration(i) * 10 * time.Millisecond
		rec := recorder.Record{Seq: uint64(i), Scheduled: at, Sent: at + 100*time.Microsecond, WasSent: true, Outcome: recorder.Completed, Status: 200}
		rec.Done = rec.Sent + base + time.Duration(i%10)*100*time.Microsecond
		switch {
		case i%3 == 2:
			rec.Target = 1
			rec.Done += base
			if i%5 == 0 {
				rec.Outcome, rec.Status, rec.Kind = recorder.Failed, 0, recorder.KindRefused
			}
		case i%10 == 0:
			rec.Status = 503
		}
		if err := r.Add(&rec); err != nil {
			t.Fatal(err)
		}
	}
	res := &result.Result{Tool: "openload", Started: time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC), Counts: result.Counts{Expected: 90},
		Config: result.Config{Target: "http://t/a", Method: "GET", Arrival: "constant", Rate: 100, Duration: "900ms", Schedule: "constant 100/s for 900ms",
			Connections: 64, Timeout: "30s", Drain: "5s"}, Elapsed: 0.9, SendRate: 100, Limit: result.Limit{Connections: 64, MaxInFlight: 2}}
	if err := r.Fill(res); err != nil {
		t.Fatal(err)
	}
	res.Checks = verify.ToChecks(verify.Run(res, verify.Options{}))
	o, err := verify.ParseObjective("checkout, v2:response.p99<=6ms")
	if err != nil {
		t.Fatal(err)
	}
	verify.Judge(res, []verify.Objective{o})
	return res
}

// TestTargetsGolden: the text report's table by target, the per-target
// accounting check and a scoped objective; and a diff's comparison by
// target.
func TestTargetsGolden(t *testing.T) {
	a, b := mixResult(t, 2*time.Millisecond), mixResult(t, 3*time.Millisecond)
	var out strings.Builder
	out.WriteString("== report A\n")
	if err := report.Text(&out, a); err != nil {
		t.Fatal(err)
	}
	out.WriteString("\n== diff A B\n")
	pa, pb := a.Response, b.Response
	if err := report.Compare(&out, "response", "a.json", a, pa, "b.json", b, pb); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "targets.golden", out.String())
	for _, want := range []string{
		"by target",
		"PASS  target accounting  each of 3 targets",
		"PASS  checkout, v2:response.p99 <= 6.000 ms: measured 5.003 ms",
		"200 ×54 · 503 ×6",
		"by target · response time p99 (ms)",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("lacks %q", want)
		}
	}
	// Different targets: said in a line, no table.
	b.Targets = b.Targets[:2]
	out.Reset()
	if err := report.Compare(&out, "response", "a.json", a, pa, "b.json", b, pb); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "A and B had different targets (3 and 2)") || strings.Contains(out.String(), "by target ·") {
		t.Errorf("different targets:\n%s", out.String())
	}
}
