package engine

import (
	"context"
	"time"
)

// startClock returns the instant of the schedule's offset 0 when at is
// set (Config.StartAt, the shared start of several shards): the instant at on this machine's wall clock, after waiting for it. The
// instant is carried on the monotonic clock (now + (at − now)), so that
// offsets are measured as in any run, not re-read from a wall clock that
// may step.
//
// A late start (at already past, or the wait overslept) is not shifted:
// the schedule still runs from at, so the first arrivals leave late and
// their send delay shows by how much; late is how far past at the wait
// ended. A cancelled ctx ends the wait at once.
func startClock(ctx context.Context, at time.Time) (start time.Time, late time.Duration) {
	if at.IsZero() {
		return time.Time{}, 0
	}
	now := time.Now()
	start = now.Add(at.Sub(now))
	if wait := time.Until(start); wait > 0 {
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
		}
	}
	return start, max(time.Since(start), 0)
}
