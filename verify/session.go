package verify

import (
	"fmt"
	"strings"

	"github.com/openload/openload/result"
)

// A session run (result.Sessions): the schedule's arrivals are users,
// each walking a scenario's steps, each step a request. The requests are
// checked as every run's (accounting, timeline, send delay, …); what
// belongs to the users is checked here:
//
//	started == expected                      (≤ when the run was interrupted)
//	completed + ended early + unfinished == started
//	Σ ended early at step k == ended early
//	step records == scheduled                every step a session walked has its request
//	the steps' parts add up to the headline  as a mix's targets do
//
// and the schedule check holds the sessions started, not the steps, to
// the schedule (sessionArrivals): rate × duration counts users.

// sessions is the check of a session run; ok is false for a run of
// single requests. A union of scenarios has each of its session
// scenarios checked on its own, and their sum held to the whole's.
func sessions(res *result.Result) (Finding, bool) {
	if res.Sessions == nil {
		return Finding{}, false
	}
	if len(res.Scenarios) > 0 {
		return scenarioSessions(res), true
	}
	return sessionsOf(res), true
}

// sessionsOf checks the sessions of one run.
func sessionsOf(res *result.Result) Finding {
	s := res.Sessions
	f := Finding{Check: "sessions", Severity: Fail}
	var endedAt int64
	for _, n := range s.EndedAt {
		endedAt += n
	}
	ended := s.Completed + s.EndedEarly + s.Unfinished
	steps, stepsOK := partsAddUp(res.Steps, "step", res.Headline().Scheduled) // part.go
	switch {
	case s.Started == 0:
		// Nothing passes on nothing: a run that started no session
		// measured no user.
		f.Message = fmt.Sprintf("no data: no session started (%d expected)", s.Expected)
	case !res.Interrupted && s.Started != s.Expected:
		f.Message = fmt.Sprintf("started %d ≠ expected %d: ", s.Started, s.Expected)
		if d := s.Expected - s.Started; d > 0 {
			f.Message += fmt.Sprintf("%d sessions never started", d)
		} else {
			f.Message += fmt.Sprintf("%d sessions more than the schedule held", -d)
		}
	case res.Interrupted && s.Started > s.Expected:
		f.Message = fmt.Sprintf("started %d > expected %d: %d sessions more than the schedule held", s.Started, s.Expected, s.Started-s.Expected)
	case !s.Balanced():
		f.Message = fmt.Sprintf("completed %d + ended early %d + unfinished %d = %d ≠ started %d: %d sessions unaccounted for",
			s.Completed, s.EndedEarly, s.Unfinished, ended, s.Started, s.Started-ended)
	case endedAt != s.EndedEarly:
		f.Message = fmt.Sprintf("ended early at each step %s = %d ≠ ended early %d: %d sessions at no step",
			fmtCounts(s.EndedAt), endedAt, s.EndedEarly, s.EndedEarly-endedAt)
	case s.StepRecords != res.Counts.Scheduled:
		f.Message = fmt.Sprintf("the sessions walked %d steps ≠ %d requests scheduled: ", s.StepRecords, res.Counts.Scheduled)
		if d := res.Counts.Scheduled - s.StepRecords; d > 0 {
			f.Message += fmt.Sprintf("%d requests in no session", d)
		} else {
			f.Message += fmt.Sprintf("%d steps without a request", -d)
		}
	case !stepsOK:
		f.Message = steps
	default:
		f.Severity = Pass
		of := " = expected"
		if s.Started != s.Expected {
			of = fmt.Sprintf(" of %d expected, before the stop", s.Expected)
		}
		at := ""
		if s.EndedEarly > 0 {
			at = " (by step index " + fmtCounts(s.EndedAt) + ")"
		}
		f.Message = fmt.Sprintf("started %d%s: completed %d + ended early %d%s + unfinished %d; the %d steps they walked = the requests scheduled, every one in its step's figures",
			s.Started, of, s.Completed, s.EndedEarly, at, s.Unfinished, s.StepRecords)
	}
	return f
}

// scenarioSessions is the sessions check of a union of scenarios: each
// session scenario's own, and the whole's counts their sum.
func scenarioSessions(res *result.Result) Finding {
	f := Finding{Check: "sessions", Severity: Pass}
	var sum result.Sessions
	var own []string
	for _, sc := range res.Scenarios {
		s := sc.Result.Sessions
		if s == nil {
			continue
		}
		o := sessionsOf(sc.Result)
		f.Severity = worse(f.Severity, o.Severity)
		own = append(own, sc.Name+": "+o.Message)
		sum.Started += s.Started
		sum.Completed += s.Completed
		sum.EndedEarly += s.EndedEarly
		sum.Unfinished += s.Unfinished
	}
	w := res.Sessions
	if w.Started != sum.Started || w.Completed != sum.Completed || w.EndedEarly != sum.EndedEarly || w.Unfinished != sum.Unfinished {
		f.Severity = Fail
		f.Message = fmt.Sprintf("started %d (completed %d, ended early %d, unfinished %d) ≠ %d (%d, %d, %d), the sum of the %d session scenarios'",
			w.Started, w.Completed, w.EndedEarly, w.Unfinished, sum.Started, sum.Completed, sum.EndedEarly, sum.Unfinished, len(own))
		return f
	}
	f.Message = fmt.Sprintf("started %d = the sum of %d session scenarios, each checked on its own: %s", sum.Started, len(own), strings.Join(own, " · "))
	return f
}

// sessionArrivals is the schedule check of a session run: its arrivals
// are the sessions, so the sessions started, not the steps they walked
// (Counts.Scheduled), are held to the schedule (Counts.Expected, the
// users' ∫λ dt), by the schedule's own rule (its process, its shard's
// share, its replayed file).
func sessionArrivals(res *result.Result) Finding {
	s := res.Sessions
	if res.Interrupted {
		return Finding{Check: "schedule", Severity: Warn,
			Message: fmt.Sprintf("run interrupted: %d of the %s expected sessions started before the stop", s.Started, fmtCount(res.Counts.Expected))}
	}
	users := *res
	users.Sessions = nil
	users.Counts.Scheduled = s.Started
	f := scheduleCount(&users)
	f.Message = "sessions: " + f.Message
	return f
}

// fmtCounts renders counts as [1 0 2].
func fmtCounts(xs []int64) string { return fmt.Sprint(xs) }
