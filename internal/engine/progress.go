package engine

import (
	"time"

	"github.com/openload/openload/internal/recorder"
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
// during the call only, and the engine's own counters of the requests
// that have no record yet.
type Live struct {
	Rec *recorder.Recorder
	// InFlight is the requests being sent or waited on now; Waiting those
	// taken from the schedule whose sending has not begun (queued for a
	// connection or a worker); both 0 in the final call.
	InFlight, Waiting int64
	// LimitWaited is the requests so far that found every connection busy
	// when due (Stats.LimitWaited at the end).
	LimitWaited int64
	// Final is set in the call made after the last record was added.
	Final bool
}

// live takes Config.Observe's snapshot; it runs on the recorder's
// goroutine. In the final call every worker has ended, so nothing is in
// flight; a request never sent (abandoned at the drain's end) has its
// record, and waits no longer.
func (g *generator) live(rec *recorder.Recorder, final bool) Live {
	l := Live{Rec: rec, LimitWaited: g.limitWaited.Load(), Final: final}
	if final {
		return l
	}
	l.InFlight = g.busy.Load()
	// Started before dispatched, as in progress: a request is taken from
	// the schedule before its sending begins, so this order never shows a
	// negative queue; a closed loop takes nothing from a queue.
	started := g.started.Load()
	l.Waiting = max(g.dispatched.Load()-started, 0)
	return l
}
