package engine

import (
	"time"

	"github.com/openload/openload/recorder"
)

// Progress is a snapshot of a running open-model run.
type Progress struct {
	Elapsed      time.Duration
	Due          int64   // arrivals handed to the workers so far
	Sent         int64   // requests that left the generator and have an outcome
	Done         int64   // requests with an outcome
	Failed       int64   // errors, timeouts and unfinished so far
	InFlight     int64   // requests a worker is sending or waiting on now
	LastSent     int64   // sends in the last full second
	LastDue      int64   // arrivals the schedule had in that second
	ResponseP99  float64 // ms, over the requests done so far
	SendDelayP99 float64 // ms
}

// progress takes a snapshot; it runs on the recorder's goroutine, which owns
// rec.
func (e *run) progress(rec *recorder.Recorder) Progress {
	c := rec.Counts()
	p := Progress{
		Elapsed:      e.since(),
		Due:          e.dispatched.Load(),
		Sent:         c.Sent,
		Done:         c.Scheduled,
		Failed:       c.Errors + c.Timeouts + c.Unfinished,
		InFlight:     e.busy.Load(),
		ResponseP99:  float64(rec.Response.ValueAtQuantile(99)) / 1000,
		SendDelayP99: float64(rec.SendDelay.ValueAtQuantile(99)) / 1000,
	}
	if i := int(p.Elapsed/time.Second) - 1; i >= 0 && i < len(rec.Timeline()) {
		s := rec.Timeline()[i]
		p.LastSent, p.LastDue = s.Sent, s.Scheduled
	}
	return p
}
