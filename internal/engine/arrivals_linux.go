package engine

import (
	"context"
	"time"

	"github.com/openload/openload/schedule"
)

// loopArrivals is what both event loops, HTTP/1.1's (epollLoop) and
// HTTP/2's (h2Loop), keep of the schedule: the next arrival, the arrivals
// due and waiting for a connection or a stream, and how the schedule
// ended. One home, so that both take arrivals and count the limit alike.
type loopArrivals struct {
	g          *generator
	stats      *Stats
	dispatched chan<- struct{} // closed when the schedule is spent or ctx cancelled

	s          schedule.Schedule
	off        time.Duration // the next arrival's offset, while scheduling
	seq        uint64
	scheduling bool
	pending    queue // due, waiting for a connection or a stream
}

func (a *loopArrivals) endSchedule(interrupted bool) {
	a.scheduling = false
	a.stats.Interrupted = interrupted
	a.stats.ScheduleEnd = a.g.since()
	close(a.dispatched)
}

// take moves the arrivals due at now from the schedule to the queue,
// inUse being the loop's slots in use (for the limit's count). It
// returns the next arrival's offset, or never when the loop should not
// wake for it.
func (a *loopArrivals) take(ctx context.Context, now time.Duration, inUse int) time.Duration {
	g := a.g
	if a.scheduling && ctx.Err() != nil {
		a.endSchedule(true)
	}
	for a.scheduling && a.off <= now && a.pending.len() < maxPending {
		if inUse+a.pending.len() >= g.cfg.Connections {
			g.limitWaited.Add(1)
		}
		a.pending.push(item{seq: a.seq, off: a.off})
		g.dispatched.Add(1)
		var ok bool
		if a.off, ok = a.s.Next(); !ok {
			a.endSchedule(false)
		}
		a.seq = seqOf(a.s, a.seq+1)
	}
	if !a.scheduling || a.pending.len() >= maxPending {
		return never
	}
	return a.off
}
