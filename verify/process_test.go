package verify

import (
	"math"
	"strings"
	"testing"

	"github.com/openload/openload/result"
	"github.com/openload/openload/schedule"
)

// counted is a good run of process kind with Λ = 30 and n scheduled.
func counted(kind string, k float64, stages string, n int64) *result.Result {
	r := good()
	r.Config.Arrival, r.Config.Burstiness, r.Config.Stages = kind, k, stages
	r.Counts.Scheduled, r.Counts.Sent, r.Counts.Completed = n, n, n
	return r
}

// TestCountWording pins the count check's words for each process, as they
// were before the check read them from schedule's table.
func TestCountWording(t *testing.T) {
	for _, tc := range []struct {
		res  *result.Result
		sev  Severity
		want string
	}{
		{counted("constant", 0, "", 30), Pass, "scheduled 30 = rate × duration"},
		{counted("constant", 0, "3s:10", 29), Fail, "scheduled 29 ≠ ⌊∫λ dt⌋ over the stages (30) = 30"},
		{counted("", 0, "", 30), Pass, "scheduled 30 = rate × duration"},
		{counted("poisson", 0, "", 36), Pass, "poisson draw scheduled 36, expected λ·D = 30 (+1.1 standard deviations)"},
		{counted("poisson", 0, "", 60), Warn, "poisson draw scheduled 60, expected λ·D = 30 (+5.5 standard deviations)"},
		{counted("poisson", 0, "3s:10", 30), Pass, "poisson draw scheduled 30, expected ∫λ dt over the stages = 30 (+0.0 standard deviations)"},
		{counted("gamma", 0.25, "", 22), Pass, "gamma draw (k=0.25) scheduled 22, expected ∫λ dt = 30 (-0.7 standard deviations of √(Λ/k))"},
		{counted("gamma", 4, "", 46), Warn, "gamma draw (k=4) scheduled 46, expected ∫λ dt = 30 (+5.8 standard deviations of √(Λ/k))"},
		// gamma without its shape: no spread to measure by.
		{counted("gamma", 0, "", 30), Pass, "scheduled 30 = rate × duration"},
	} {
		f := scheduleCount(tc.res)
		if f.Severity != tc.sev || f.Message != tc.want {
			t.Errorf("%s k=%v %q: %s %q, want %s %q", tc.res.Config.Arrival, tc.res.Config.Burstiness, tc.res.Config.Stages, f.Severity, f.Message, tc.sev, tc.want)
		}
	}
}

// TestEveryProcessCounted: every row of schedule's table is judged by the
// count check from the row alone, and so is a row verify has never seen:
// a count at Λ passes, one far off is a warning (drawn) or a failure
// (exact), and no finding calls the process unknown.
func TestEveryProcessCounted(t *testing.T) {
	weibull := schedule.Process{Name: "weibull", Spread: func(e, _ float64) float64 { return math.Sqrt(e) / 2 }}
	shape := func(p schedule.Process) float64 {
		if p.Takes("Burstiness") {
			return 0.5
		}
		return 0
	}
	check := func(p schedule.Process) {
		at := processCount(counted(p.Name, shape(p), "", 30), p)
		off := processCount(counted(p.Name, shape(p), "", 90), p)
		wantOff := Warn
		if p.Exact() {
			wantOff = Fail
		}
		if at.Severity != Pass || off.Severity != wantOff {
			t.Errorf("%s: %s %q at Λ, %s %q far off; want pass, then %s", p.Name, at.Severity, at.Message, off.Severity, off.Message, wantOff)
		}
		for _, f := range []Finding{at, off} {
			if strings.Contains(f.Message, "unknown") || !p.Exact() && !strings.HasPrefix(f.Message, p.Name+" draw") {
				t.Errorf("%s: %q", p.Name, f.Message)
			}
		}
	}
	for _, p := range schedule.Processes() {
		check(p)
		// The check of a run finds the row by the result's Arrival.
		res := counted(p.Name, shape(p), "", 30)
		if got, want := scheduleCount(res), processCount(res, p); got != want {
			t.Errorf("%s: scheduleCount %+v, the row's %+v", p.Name, got, want)
		}
	}
	check(weibull)
	if f := processCount(counted("weibull", 0, "", 30), weibull); f.Message != "weibull draw scheduled 30, expected ∫λ dt = 30 (+0.0 standard deviations)" {
		t.Errorf("a new row's words: %q", f.Message)
	}
}
