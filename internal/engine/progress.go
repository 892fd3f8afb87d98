package engine

import (
	"time"

	"github.com/openload/openload/recorder"
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
