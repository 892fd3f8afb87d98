package loadtest

import (
	"github.com/openload/openload/internal/recorder"
	"github.com/openload/openload/schedule"
)

// resolveSchedule returns the schedule of an open run: o.Sched when set,
// else the one o.Schedule describes. With a replay (*schedule.ReplaySchedule)
// it rewrites o.Schedule to describe the replay, for the result and the
// achieved rate:
//
//	Kind     = schedule.Replay ("replay")
//	Duration = the replay's span: the offset of its last arrival, after
//	           --speed (0 for a file whose arrivals are all at 0)
//	Rate     = arrivals ÷ span, the mean rate (0 when the span is 0)
//
// The count check then compares the run with the file's count, exactly. Any
// other ready schedule keeps o.Schedule as the caller set it.
func (o *Options) resolveSchedule() (schedule.Schedule, error) {
	if o.Sched == nil {
		return schedule.New(o.Schedule)
	}
	if r, ok := o.Sched.(*schedule.ReplaySchedule); ok {
		o.Schedule = schedule.Spec{Kind: schedule.Replay, Duration: r.Span()}
		if s := r.Span().Seconds(); s > 0 {
			o.Schedule.Rate = float64(r.Len()) / s
		}
	}
	return o.Sched, nil
}

// boundDwell sets up the dwell-bound count when o.DwellBound is given.
func (o *Options) boundDwell(rec *recorder.Recorder) {
	if o.DwellBound > 0 {
		rec.BoundDwell(o.DwellBound)
	}
}
