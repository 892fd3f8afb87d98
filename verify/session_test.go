package verify

import (
	"strings"
	"testing"
	"time"

	"github.com/openload/openload/internal/recorder"
	"github.com/openload/openload/result"
)

// sessionRun is a session run of five users at a constant rate (∫λ dt =
// 5), three steps each at most, recorded as a run records it: two
// completed, two ended early (at steps 0 and 1), one cut at the end.
func sessionRun(t *testing.T) *result.Result {
	t.Helper()
	r := recorder.New(nil)
	r.TrackSessions([]string{"login", "browse", "checkout"})
	ends := []struct {
		steps   int
		outcome recorder.SessionOutcome
		at      int
	}{{3, recorder.SessionCompleted, -1}, {1, recorder.SessionEndedEarly, 0}, {2, recorder.SessionEndedEarly, 1}, {2, recorder.SessionUnfinished, -1}, {3, recorder.SessionCompleted, -1}}
	seq := uint64(0)
	for i, e := range ends {
		arrival := time.Duration(i) * time.Second
		due := arrival
		for k := range e.steps {
			rec := recorder.Record{Seq: seq, Scheduled: due, Sent: due, WasSent: true, Done: due + 100*time.Millisecond, Outcome: recorder.Completed, Status: 200, Target: uint32(k)}
			switch {
			case k == e.at:
				rec.Outcome, rec.Status, rec.Kind = recorder.Failed, 0, recorder.KindReset
			case e.outcome == recorder.SessionUnfinished && k == e.steps-1:
				rec.Outcome, rec.Status, rec.Kind = recorder.Unfinished, 0, recorder.KindUnfinished
			}
			if err := r.Add(&rec); err != nil {
				t.Fatal(err)
			}
			seq++
			due = rec.Done + 200*time.Millisecond
		}
		r.AddSession(&recorder.SessionRecord{Seq: uint64(i), Arrival: arrival, End: due - 200*time.Millisecond, Steps: e.steps, Outcome: e.outcome, EndedAt: e.at})
	}
	res := &result.Result{Config: result.Config{Arrival: "constant", Rate: 1, Duration: "5s"},
		Counts: result.Counts{Expected: 5}, Sessions: &result.Sessions{Expected: 5}}
	if err := r.Fill(res); err != nil {
		t.Fatal(err)
	}
	return res
}

// TestSessionsCheck: a session run passes when its users are accounted
// for, and fails naming the relation that broke and by how much.
func TestSessionsCheck(t *testing.T) {
	tests := []checkCase{
		{"balanced", func(*result.Result) {}, "sessions", Pass,
			"started 5 = expected: completed 2 + ended early 2 (by step index [1 1 0]) + unfinished 1; the 11 steps they walked = the requests scheduled"},
		{"a session never started", func(r *result.Result) { r.Sessions.Expected = 6 }, "sessions", Fail, "started 5 ≠ expected 6: 1 sessions never started"},
		{"a session too many", func(r *result.Result) { r.Sessions.Expected = 3 }, "sessions", Fail, "started 5 ≠ expected 3: 2 sessions more than the schedule held"},
		{"interrupted before every session started", func(r *result.Result) { r.Sessions.Expected, r.Interrupted = 8, true }, "sessions", Pass,
			"started 5 of 8 expected, before the stop: completed 2"},
		{"interrupted, more than expected", func(r *result.Result) { r.Sessions.Expected, r.Interrupted = 4, true }, "sessions", Fail, "started 5 > expected 4: 1 sessions more"},
		{"a session in no outcome", func(r *result.Result) { r.Sessions.Completed-- }, "sessions", Fail,
			"completed 1 + ended early 2 + unfinished 1 = 4 ≠ started 5: 1 sessions unaccounted for"},
		{"ended early at no step", func(r *result.Result) { r.Sessions.EndedAt[0] = 0 }, "sessions", Fail,
			"ended early at each step [0 1 0] = 1 ≠ ended early 2: 1 sessions at no step"},
		{"requests in no session", func(r *result.Result) { r.Sessions.StepRecords = 9 }, "sessions", Fail,
			"the sessions walked 9 steps ≠ 11 requests scheduled: 2 requests in no session"},
		{"steps without a request", func(r *result.Result) { r.Sessions.StepRecords = 12 }, "sessions", Fail,
			"the sessions walked 12 steps ≠ 11 requests scheduled: 1 steps without a request"},
		{"a step unbalanced", func(r *result.Result) { r.Steps[1].Counts.Errors-- }, "sessions", Fail,
			`step "browse": completed 2 + errors 0 + timeouts 0 + unfinished 1 = 3 ≠ scheduled 4: 1 requests unaccounted for`},
		{"requests in no step", func(r *result.Result) { r.Steps = r.Steps[:2] }, "sessions", Fail,
			"the 2 steps hold 9 of the 11 requests scheduled: 2 in no step"},
		{"no session started", func(r *result.Result) { *r.Sessions = result.Sessions{Expected: 5, EndedAt: []int64{0, 0, 0}} }, "sessions", Fail,
			"no data: no session started (5 expected)"},
		{"nothing expected, nothing started", func(r *result.Result) { *r.Sessions = result.Sessions{} }, "sessions", Fail, "no data: no session started (0 expected)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.run(t, sessionRun(t)) })
	}
	for _, f := range Run(resultOf(t, 10, 200), Options{}) {
		if f.Check == "sessions" {
			t.Errorf("a run of single requests has the check: %+v", f)
		}
	}
	// The check follows the accounting of the requests, before the
	// schedule's.
	fs := Run(sessionRun(t), Options{})
	var names []string
	for _, f := range fs[:3] {
		names = append(names, f.Check)
	}
	if strings.Join(names, ",") != "accounting,sessions,schedule" {
		t.Errorf("checks in the order %v", names)
	}
}

// TestSessionSchedule: in a session run the schedule's arrivals are the
// users, so the schedule check holds the sessions started, not the steps
// they walked, to rate × duration.
func TestSessionSchedule(t *testing.T) {
	tests := []checkCase{
		{"11 steps of 5 sessions", func(*result.Result) {}, "schedule", Pass, "sessions: scheduled 5 = rate × duration"},
		{"a session short", func(r *result.Result) { r.Counts.Expected = 6 }, "schedule", Fail, "sessions: scheduled 5 ≠ rate × duration = 6"},
		{"poisson", func(r *result.Result) { r.Config.Arrival, r.Counts.Expected = "poisson", 6 }, "schedule", Pass,
			"sessions: poisson draw scheduled 5, expected λ·D = 6"},
		{"interrupted", func(r *result.Result) { r.Interrupted, r.Counts.Expected = true, 9 }, "schedule", Warn,
			"run interrupted: 5 of the 9 expected sessions started before the stop"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.run(t, sessionRun(t)) })
	}
	// A shard of a session run holds its share of the whole's users.
	res := sessionRun(t)
	res.Config.Shard = &result.ShardConfig{Of: 2, Indexes: []int{1}, Whole: "constant 2/s for 5s", WholeExpected: 10, WholeScheduled: 10}
	if f := find(t, Run(res, Options{}), "schedule"); f.Severity != Pass || f.Message != "sessions: scheduled 5 = shard 1/2's share of the 10 arrivals of constant 2/s for 5s" {
		t.Errorf("shard: %s %q", f.Severity, f.Message)
	}
}

// TestScenarioSessions: a union's session scenarios are each checked,
// and the whole's sessions must be their sum.
func TestScenarioSessions(t *testing.T) {
	a, b := sessionRun(t), sessionRun(t)
	plain := resultOf(t, 10, 200)
	u, err := result.Union([]result.Scenario{{Name: "shop", Result: a}, {Name: "api", Result: plain}, {Name: "shop2", Result: b}})
	if err != nil {
		t.Fatal(err)
	}
	f := find(t, Run(u, Options{}), "sessions")
	if f.Severity != Pass || !strings.HasPrefix(f.Message, "started 10 = the sum of 2 session scenarios, each checked on its own: shop: started 5 = expected") {
		t.Errorf("union: %s %q", f.Severity, f.Message)
	}
	if s := find(t, Run(u, Options{}), "schedule"); s.Severity != Pass || !strings.Contains(s.Message, "shop: sessions: scheduled 5 = rate × duration") {
		t.Errorf("union's schedule: %s %q", s.Severity, s.Message)
	}
	b.Sessions.Expected = 7
	if f := find(t, Run(u, Options{}), "sessions"); f.Severity != Fail || !strings.Contains(f.Message, "shop2: started 5 ≠ expected 7") {
		t.Errorf("a scenario short: %s %q", f.Severity, f.Message)
	}
	b.Sessions.Expected = 5
	u.Sessions.Unfinished--
	if f := find(t, Run(u, Options{}), "sessions"); f.Severity != Fail ||
		f.Message != "started 10 (completed 4, ended early 4, unfinished 1) ≠ 10 (4, 4, 2), the sum of the 2 session scenarios'" {
		t.Errorf("whole not the sum: %s %q", f.Severity, f.Message)
	}
}
