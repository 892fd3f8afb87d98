package verify

import (
	"testing"

	"github.com/openload/openload/result"
)

// closedRun is a closed run paced to 10/s for 3 s whose user was held
// through second 1: it sent 21 of the 30 slots and skipped 9.
func closedRun() *result.Result {
	r := good()
	r.Config.Mode, r.Config.Users = result.ModeClosed, 1
	r.Counts = result.Counts{Expected: 30, Scheduled: 21, Sent: 21, Completed: 21, Skipped: 9}
	r.Timeline = []result.Second{sec(10), {Scheduled: 1, Sent: 1, Completed: 0, Skipped: 9}, sec(10)}
	r.Limit = result.Limit{Connections: 1, MaxInFlight: 1}
	return r
}

func TestClosedChecks(t *testing.T) {
	tests := []checkCase{
		{"never sent is coordinated omission", func(*result.Result) {}, "schedule", Warn,
			"the closed loop sent 21 of the 30 requests rate × duration calls for: 9 (30.0 %) were never sent"},
		{"dip listed with what was never sent", func(*result.Result) {}, "send dips", Warn,
			"second(s) 1 sent under 90 % of their schedule; 9 requests due in them were never sent"},
		{"a second with no send is not a generator stall", func(r *result.Result) {
			r.Timeline[1] = result.Second{Skipped: 10}
			r.Counts.Scheduled, r.Counts.Sent, r.Counts.Completed, r.Counts.Skipped = 20, 20, 20, 10
		}, "timeline", Warn, "no request sent in second(s) 1 although the pacing schedule called for them: every closed-loop user was waiting"},
		{"empty seconds are dips too", func(r *result.Result) {
			r.Timeline[1] = result.Second{Skipped: 10}
			r.Counts.Scheduled, r.Counts.Sent, r.Counts.Completed, r.Counts.Skipped = 20, 20, 20, 10
		}, "send dips", Warn, "second(s) 1 sent under 90 % of their schedule (1 sent nothing); 10 requests due in them were never sent"},
		{"slots lost", func(r *result.Result) { r.Counts.Skipped = 8 }, "schedule", Fail, "sent 21 + never sent 8 = 29 ≠ rate × duration = 30"},
		{"every slot sent", func(r *result.Result) {
			r.Counts = result.Counts{Expected: 30, Scheduled: 30, Sent: 30, Completed: 30}
			r.Timeline = []result.Second{sec(10), sec(10), sec(10)}
		}, "schedule", Pass, "the closed loop sent all 30 requests"},
		{"interrupted", func(r *result.Result) { r.Interrupted = true }, "schedule", Warn, "run interrupted"},
		{"users, not a connection limit", func(*result.Result) {}, "connection limit", Pass, "closed loop: 1 user, each waiting for its response"},
		{"unpaced: no schedule", func(r *result.Result) {
			r.Config.Rate, r.Counts.Expected, r.Counts.Skipped = 0, 0, 0
		}, "schedule", Pass, "closed loop without a rate: 1 user sent 21 requests"},
		{"unpaced: silent second named", func(r *result.Result) {
			r.Config.Rate, r.Counts.Expected, r.Counts.Skipped = 0, 0, 0
			r.Timeline[1] = result.Second{}
		}, "timeline", Warn, "no request sent in second(s) 1: every closed-loop user was waiting"},
		{"unpaced: silent last second named", func(r *result.Result) {
			r.Config.Rate, r.Counts.Expected, r.Counts.Skipped = 0, 0, 0
			r.Timeline = r.Timeline[:2]
		}, "timeline", Warn, "no request sent in second(s) 2"},
		{"unpaced: no dips to find", func(r *result.Result) {
			r.Config.Rate, r.Counts.Expected, r.Counts.Skipped = 0, 0, 0
		}, "send dips", Pass, "no schedule to compare"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fs := tc.run(t, closedRun())
			if tc.sev != Fail && Worst(fs) == Fail {
				t.Errorf("a closed run failed: %+v", fs)
			}
		})
	}
}

func TestSendDipsPassIsReported(t *testing.T) {
	f := find(t, Run(good(), Options{}), "send dips")
	if f.Severity != Pass || f.Message != "no second sent under 90 % of its schedule" {
		t.Errorf("%+v", f)
	}
}
