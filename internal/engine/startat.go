package engine

import (
	"context"
	"time"
)

// startLead is how long before a start instant startClock stops waiting
// in an open run: Go's runtime timers fire about a millisecond late, and
// the dispatcher's own sleep reaches offset 0 on time from there, as it
// reaches every later offset (see docs/MEASUREMENTS.md, “startLead”).
const startLead = 2 * time.Millisecond

// startClock returns the instant of the schedule's offset 0 when at is
// set (Config.StartAt, the shared start of several shards): the instant at
// on this machine's wall clock, after waiting until lead before it. The
// instant is carried on the monotonic clock (now + (at − now)), so that
// offsets are measured as in any run, not re-read from a wall clock that
// may step.
//
// A late start (at already past, or the wait overslept) is not shifted:
// the schedule still runs from at, so the first arrivals leave late and
// their send delay shows by how much; late is how far past at the wait
// ended (negative when it ended in time, up to lead before at). A
// cancelled ctx ends the wait at once.
func startClock(ctx context.Context, at time.Time, lead time.Duration) (start time.Time, late time.Duration) {
	if at.IsZero() {
		return time.Time{}, 0
	}
	now := time.Now()
	start = now.Add(at.Sub(now))
	if wait := time.Until(start) - lead; wait > 0 {
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
		}
	}
	return start, time.Since(start)
}

// waitUntil waits until d before at (at set; ctx cancelled ends it), so
// that what is done before a shared start is done just before it: the
// connections opened before the start are opened then, not when the
// command began, minutes ahead, and a server's timeout for an idle new
// connection (Go's ReadHeaderTimeout, nginx's client_header_timeout)
// has not closed them when the first requests go out.
func waitUntil(ctx context.Context, at time.Time, d time.Duration) {
	if at.IsZero() {
		return
	}
	if wait := time.Until(at) - d; wait > 0 {
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
		}
	}
}
