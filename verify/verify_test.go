package verify

import (
	"strings"
	"testing"
	"time"

	"github.com/openload/openload/result"
)

func good() *result.Result {
	return &result.Result{
		Config:    result.Config{Arrival: "constant", Rate: 10, Duration: "3s"},
		Counts:    result.Counts{Expected: 30, Scheduled: 30, Sent: 30, Completed: 30},
		SendDelay: result.Percentiles{P99: 0.3},
		Limit:     result.Limit{Connections: 8, MaxInFlight: 2},
		Timeline:  []result.Second{sec(10), sec(10), sec(10)},
	}
}

func find(t *testing.T, fs []Finding, check string) Finding {
	t.Helper()
	for _, f := range fs {
		if f.Check == check {
			return f
		}
	}
	t.Fatalf("no %q finding in %+v", check, fs)
	return Finding{}
}

func TestGoodRunPasses(t *testing.T) {
	fs := Run(good(), Options{})
	if w := Worst(fs); w != Pass {
		t.Errorf("worst %s: %+v", w, fs)
	}
}

func TestChecks(t *testing.T) {
	tests := []checkCase{
		{"lost requests", func(r *result.Result) { r.Counts.Completed = 28 }, "accounting", Fail, "2 requests unaccounted for"},
		{"more sent than scheduled", func(r *result.Result) { r.Counts.Sent = 31 }, "accounting", Fail, "sent 31 > scheduled 30"},
		{"short schedule", func(r *result.Result) { r.Counts.Scheduled, r.Counts.Completed, r.Counts.Sent = 29, 29, 29 }, "schedule", Fail, "scheduled 29 ≠ rate × duration = 30"},
		{"fractional expected rounds down", func(r *result.Result) { r.Counts.Expected = 30.5 }, "schedule", Pass, "scheduled 30 = rate × duration"},
		{"poisson compares with its own draw", func(r *result.Result) {
			r.Config.Arrival = "poisson"
			r.Counts.Expected = 33
		}, "schedule", Pass, "poisson draw scheduled 30, expected λ·D = 33 (-0.5 standard deviations)"},
		{"poisson draw a hair short reads +0.0", func(r *result.Result) {
			r.Config.Arrival = "poisson"
			r.Counts.Expected = 30.1
		}, "schedule", Pass, "(+0.0 standard deviations)"},
		{"interrupted", func(r *result.Result) { r.Interrupted = true }, "schedule", Warn, "run interrupted"},
		{"silent second, limit never bound", func(r *result.Result) { r.Timeline[1].Sent = 0 }, "timeline", Fail, "second(s) 1 although due, and the connection limit never bound"},
		{"silent seconds while the limit bound", func(r *result.Result) {
			r.Timeline[1].Sent, r.Timeline[2].Sent = 0, 0
			r.Limit.Waited = 12
		}, "timeline", Warn, "second(s) 1-2 although due: all 8 connections were busy"},
		{"silent seconds before a late start", func(r *result.Result) {
			r.Timeline[0].Sent, r.Timeline[1].Sent = 0, 0
			r.Limit.Waited = 12
			r.Start = &result.StartRecord{LateMs: 1500}
		}, "timeline", Warn, "second(s) 0-1 although due: the run began 1500.000 ms after its start instant"},
		{"late sends after a late start", func(r *result.Result) {
			r.SendDelay.P99 = 1400
			r.Limit.Waited = 12
			r.Start = &result.StartRecord{LateMs: 1500}
		}, "send delay", Warn, "left late: the run began 1500.000 ms after its start instant, and what was due before then left that late, at once, the backlog waiting for one of 8 connections"},
		{"late start under a second blames nothing new", func(r *result.Result) {
			r.Timeline[1].Sent = 0
			r.Limit.Waited = 12
			r.Start = &result.StartRecord{LateMs: 400}
		}, "timeline", Warn, "all 8 connections were busy"},
		{"dip", func(r *result.Result) { r.Timeline[2].Sent = 5 }, "send dips", Warn, "second(s) 2 sent under 90 %"},
		{"late sends", func(r *result.Result) { r.SendDelay.P99 = 4.2 }, "send delay", Warn, "p99 4.200 ms > 1.000 ms: requests left late: the generator fell behind"},
		{"late sends, limit bound", func(r *result.Result) { r.SendDelay.P99 = 4.2; r.Limit.Waited = 3 }, "send delay", Warn, "one of 8 connections (raise the connection limit"},
		{"limit bound", func(r *result.Result) { r.Limit.Waited = 3 }, "connection limit", Warn, "bound: 3 of 30 requests found all 8 connections busy"},
		{"errors", func(r *result.Result) {
			r.Counts.Completed, r.Counts.Errors, r.Counts.Timeouts = 26, 3, 1
			r.ErrorKinds = map[string]int64{"refused": 3, "timeout": 1}
		}, "outcomes", Warn, "4 of 30 requests did not complete (13.3 %: refused 3 (connection refused: nothing listening at the address), timeout 1 (no complete response within the request timeout))"},
		{"clamped", func(r *result.Result) { r.Clamped = 2 }, "histograms", Warn, "2 values above the 1 h histogram range"},
		// Targets read as the run sent them (result.Lazy).
		{"lazy targets ran out", func(r *result.Result) {
			r.Counts.Scheduled, r.Counts.Sent, r.Counts.Completed = 10, 10, 10
			r.Lazy = &result.Lazy{Ended: true, AtS: 0.3}
		}, "schedule", Warn, "the targets ran out: 10 targets, one request each, of the 30 expected requests; scheduling stopped at 0.3 s"},
		{"lazy targets ended at an error", func(r *result.Result) {
			r.Counts.Scheduled, r.Counts.Sent, r.Counts.Completed = 10, 10, 10
			r.Lazy = &result.Lazy{Ended: true, AtS: 0.3, Error: "t.http:4: bad method"}
		}, "schedule", Fail, "the targets ended at an error after 10 of the 30 expected requests, at 0.3 s: t.http:4: bad method"},
		{"silent second waiting for targets", func(r *result.Result) {
			r.Timeline[1].Sent = 0
			r.Lazy = &result.Lazy{Waited: 5}
		}, "timeline", Warn, "second(s) 1 although due: 5 requests waited for their targets to be read"},
		{"late sends waiting for targets", func(r *result.Result) {
			r.SendDelay.P99 = 4.2
			r.Lazy = &result.Lazy{Waited: 5}
		}, "send delay", Warn, "5 requests came due before their target was read, the targets coming slower than the schedule (feed them faster, or lower the rate)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.run(t, good()) })
	}
}

// checkCase is a change to a run and the finding of one check it must
// then give: a severity and a message containing text.
type checkCase struct {
	name   string
	mutate func(*result.Result)
	check  string
	sev    Severity
	text   string
}

// run changes r as tc says, runs the checks and compares tc's check's
// finding; it returns every finding.
func (tc checkCase) run(t *testing.T, r *result.Result) []Finding {
	t.Helper()
	tc.mutate(r)
	fs := Run(r, Options{})
	f := find(t, fs, tc.check)
	if f.Severity != tc.sev || !strings.Contains(f.Message, tc.text) {
		t.Errorf("%s: %s %q, want %s containing %q", tc.check, f.Severity, f.Message, tc.sev, tc.text)
	}
	return fs
}

// Options are valid at their zero values (the defaults) and refuse what
// no default can mean, naming the field.
// TestServerErrorsWarn: a run whose answers are mostly 5xx is valid but
// says so; half or fewer, 429s and fallbacks (200) say nothing.
func TestServerErrorsWarn(t *testing.T) {
	tests := []struct {
		status map[string]int64
		want   string // "" when no warning
	}{
		{map[string]int64{"503": 30}, "30 of 30 answers were 5xx (100.0 %: 503 ×30): the service failed most requests"},
		{map[string]int64{"503": 12, "500": 4, "200": 14}, "16 of 30 answers were 5xx (53.3 %: 503 ×12 · 500 ×4)"},
		{map[string]int64{"503": 15, "200": 15}, ""},
		{map[string]int64{"429": 25, "200": 5}, ""},
		{nil, ""},
	}
	for _, tc := range tests {
		r := good()
		r.Status = tc.status
		fs := Run(r, Options{})
		var got *Finding
		for i := range fs {
			if fs[i].Check == "server errors" {
				got = &fs[i]
			}
		}
		switch {
		case tc.want == "" && got != nil:
			t.Errorf("%v: unexpected %+v", tc.status, *got)
		case tc.want != "" && (got == nil || got.Severity != Warn || !strings.Contains(got.Message, tc.want)):
			t.Errorf("%v: got %+v, want a warning containing %q", tc.status, got, tc.want)
		}
	}
}

func TestOptionsValidate(t *testing.T) {
	if err := (Options{}).Validate(); err != nil {
		t.Errorf("zero options: %v", err)
	}
	for _, c := range []struct {
		o    Options
		want string
	}{
		{Options{SendDelayP99: -time.Millisecond}, "SendDelayP99 must be > 0, got -1ms"},
		{Options{DipRatio: 1.5}, "DipRatio must be between 0 and 1, got 1.5"},
		{Options{DipMin: -1}, "DipMin must be ≥ 0, got -1"},
	} {
		if err := c.o.Validate(); err == nil || err.Error() != c.want {
			t.Errorf("%+v: %v, want %s", c.o, err, c.want)
		}
	}
}

func TestSendDelayBudgetOption(t *testing.T) {
	r := good()
	r.SendDelay.P99 = 4
	if f := find(t, Run(r, Options{SendDelayP99: 5 * time.Millisecond}), "send delay"); f.Severity != Pass {
		t.Errorf("4 ms under a 5 ms budget: %+v", f)
	}
}

func TestRanges(t *testing.T) {
	if got := ranges([]int{1, 2, 3, 7, 9, 10}); got != "1-3, 7, 9-10" {
		t.Errorf("ranges = %q", got)
	}
}

func TestToChecksAndWorst(t *testing.T) {
	fs := []Finding{{"a", Pass, "x"}, {"b", Warn, "y"}}
	if Worst(fs) != Warn {
		t.Error("worst of pass+warn is not warn")
	}
	cs := ToChecks(fs)
	if len(cs) != 2 || cs[1].Severity != "warn" || cs[1].Name != "b" {
		t.Errorf("checks %+v", cs)
	}
}

// sec is a second in which n requests were due, sent and completed.
func sec(n int64) result.Second {
	return result.Second{Scheduled: n, Sent: n, Completed: n}
}
