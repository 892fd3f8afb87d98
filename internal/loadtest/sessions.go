package loadtest

import (
	"context"

	"github.com/openload/openload/field"
	"github.com/openload/openload/internal/engine"
	"github.com/openload/openload/result"
	"github.com/openload/openload/verify"
)

// Sessions are a session run's users (engine.RunSessions): the source of
// each arrival's session, and the names of the steps they walk, by index.
type Sessions interface {
	engine.SessionSource
	StepNames() []string
}

// validateSessions refuses what a session run cannot do: its requests
// are its steps', made as it walks, and a step's failure is its
// session's to handle.
func (o *Options) validateSessions() error {
	if o.Sessions == nil {
		return nil
	}
	switch {
	case o.Closed:
		return field.Errorf("Closed", o.Closed, "{Closed}: sessions arrive open; a session is closed within itself")
	case len(o.Targets) > 0:
		return field.Errorf("Targets", len(o.Targets), "{Targets} with sessions: the steps are the requests")
	case len(o.Bodies) > 0:
		return field.Errorf("Bodies", len(o.Bodies), "{Bodies} with sessions: each step has its own body")
	case o.Retry.Enabled():
		return field.Errorf("Retry", o.Retry.String(), "{Retry} with sessions: a failed step is its session's to handle (on-failure)")
	case o.Warmup > 0:
		return field.Errorf("Warmup", o.Warmup, "{Warmup} with sessions: a session's steps are reported whole")
	}
	return nil
}

// runSessions is Run for a session run: the schedule's arrivals are
// sessions, each step a record, each session a session record.
func runSessions(ctx context.Context, o Options) (*result.Result, []verify.Finding, error) {
	sched, err := o.resolveSchedule()
	if err != nil {
		return nil, nil, err
	}
	sched = o.shardSchedule(sched) // shard.go: sessions are sharded whole, by arrival
	res := o.newResult(sched.Name())
	res.Counts.Expected = sched.Expected() // of users: the schedule check counts sessions
	rec := o.newRecorder()
	rec.TrackSessions(o.Sessions.StepNames())
	stats, err := engine.RunSessions(ctx, o.engineConfig(), sched, o.Sessions, rec)
	if err != nil {
		return nil, nil, err
	}
	// The arrivals the dispatcher walked: each must have become a
	// session that gave its account (the sessions check).
	res.Sessions = &result.Sessions{Expected: stats.Dispatched}
	return finish(o, res, rec, stats, sched)
}
