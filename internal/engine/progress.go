package engine

import (
	"time"

	"github.com/openload/openload/internal/recorder"
	"github.com/openload/openload/schedule"
)

// Progress is a snapshot of a running open-model run.
//
// The window figures are counted live, when each request is taken from the
// schedule and when its sending begins, not from the records: a record
// reaches the recorder only once its request is done, so counting sends
// from the records leaves out every request still in flight at the
// snapshot (see docs/MEASUREMENTS.md, “Progress counts”).
type Progress struct {
	Elapsed  time.Duration
	Due      int64 // arrivals taken from the schedule so far
	Sent     int64 // requests whose sending began so far, done or not
	Done     int64 // requests with an outcome
	Failed   int64 // errors, timeouts and unfinished so far
	InFlight int64 // requests a worker is sending or waiting on now
	// Window is the time since the previous snapshot (since the start for
	// the first); WindowSent and WindowDue are the growth of Sent and Due
	// over it, so that WindowSent ÷ Window is the send rate of that span.
	Window     time.Duration
	WindowSent int64
	WindowDue  int64
	// ResponseP99 and SendDelayP99 are over the requests done so far, in ms.
	ResponseP99  float64
	SendDelayP99 float64
}

// Rates returns the window's send rate and the rate at which arrivals came
// due, per second; both 0 for an empty window.
func (p Progress) Rates() (sent, due float64) {
	if p.Window <= 0 {
		return 0, 0
	}
	s := p.Window.Seconds()
	return float64(p.WindowSent) / s, float64(p.WindowDue) / s
}

// progressMark is what the previous snapshot saw: the start of the next
// window.
type progressMark struct {
	at        time.Duration
	sent, due int64
}

// progress takes a snapshot; it runs on the recorder's goroutine, which owns
// rec and g.mark.
func (g *generator) progress(rec *recorder.Recorder) Progress {
	c := rec.Counts()
	// Sent before Due: a request is taken from the schedule before its
	// sending begins, so this order never shows more sent than due.
	sent := g.started.Load()
	p := Progress{
		Elapsed:      g.since(),
		Due:          g.dispatched.Load(),
		Sent:         sent,
		Done:         c.Scheduled,
		Failed:       c.Errors + c.Timeouts + c.Unfinished,
		InFlight:     g.busy.Load(),
		ResponseP99:  float64(rec.Response.ValueAtQuantile(99)) / 1000,
		SendDelayP99: float64(rec.SendDelay.ValueAtQuantile(99)) / 1000,
	}
	p.Window = p.Elapsed - g.mark.at
	p.WindowSent = p.Sent - g.mark.sent
	p.WindowDue = p.Due - g.mark.due
	g.mark = progressMark{at: p.Elapsed, sent: p.Sent, due: p.Due}
	return p
}

// Live is what Config.Observe is handed: the recorder, which it may read
// during the call only, and the engine's own counters, which count each
// request at its own moment rather than when its record arrives.
type Live struct {
	Rec *recorder.Recorder
	// Start is the wall-clock instant of offset 0: in the call made before
	// the run starts, Config.StartAt (zero without it); afterwards
	// Stats.Start.
	Start time.Time
	// Elapsed is the time since Start (0 before the start).
	Elapsed time.Duration
	// Due is the requests that came due so far, each of which has or will
	// have exactly one record: an open run's arrivals as they are taken
	// from the schedule, which the dispatcher does at their scheduled
	// instant (Lag says by how much it is late); a session's step when a
	// worker takes it up; a closed loop's request when its user is ready.
	// In the final call it equals the records' count (Recorder.Counts's
	// Scheduled).
	Due int64
	// Sent is the requests whose sending began, less those whose record
	// says they never left (no request could be made of them): in the
	// final call, the records' Sent.
	Sent int64
	// InFlight is the requests being sent or waited on now; Waiting those
	// due whose sending has not begun (queued for a connection or a
	// worker); both 0 in the final call.
	InFlight, Waiting int64
	// LimitWaited is the requests so far that found every connection busy
	// when due (Stats.LimitWaited at the end).
	LimitWaited int64
	// BytesWritten and BytesRead are the bytes written to connections and
	// read from them so far (Stats's at the end; bytes.go).
	BytesWritten, BytesRead int64
	// Lag is how far the schedule's clock is ahead of the dispatcher: the
	// time since the scheduled instant of the oldest arrival not yet taken
	// from the schedule, 0 when none is overdue. It is the generator's own
	// lateness, which Due alone cannot show.
	Lag time.Duration
	// Offered is the schedule's arrival rate now, per second (a session
	// run's: sessions a second); Rated is false when the schedule has no
	// rate (a replay, a throughput probe, a closed loop).
	Offered float64
	Rated   bool
	// Final is set in the call made after the last record was added.
	Final bool
}

// notDue is generator.nextDue when no arrival is waiting to be taken.
const notDue = int64(1<<63 - 1)

// live takes Config.Observe's snapshot; it runs on the recorder's
// goroutine. In the final call every worker has ended, so nothing is in
// flight; a request never sent (abandoned at the drain's end) has its
// record, and waits no longer.
func (g *generator) live(rec *recorder.Recorder, final bool) Live {
	l := Live{Rec: rec, Start: g.start, Elapsed: g.since(), LimitWaited: g.limitWaited.Load(), Final: final}
	l.BytesWritten, l.BytesRead = g.bytes.written.Load(), g.bytes.read.Load()
	if final {
		l.BytesWritten, l.BytesRead = g.bytes.endW, g.bytes.endR // Stats's
	}
	if g.sched != nil {
		l.Offered, l.Rated = schedule.RateAt(g.sched, l.Elapsed)
		if final {
			l.Offered = 0 // nothing more is offered; the gauge stays, for a panel's last value
		}
	}
	// Started before taken, as in progress: a request is taken before
	// its sending begins, so this order never shows more sent than due.
	started := g.started.Load()
	l.Sent = started - g.unsent.Load()
	l.Due = g.taken.Load()
	if final {
		return l
	}
	l.InFlight = g.busy.Load()
	l.Waiting = max(l.Due-started, 0)
	if next := g.nextDue.Load(); next != notDue {
		l.Lag = max(l.Elapsed-time.Duration(next), 0)
	}
	return l
}
