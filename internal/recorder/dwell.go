package recorder

import (
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/openload/openload/result"
)

// dwellCount is the recorder's side of DwellBound.
type dwellCount struct {
	bound                             time.Duration
	answers, over, unreported, others int64
	max                               time.Duration // largest dwell of an answer
	hist                              *hdrhistogram.Histogram
}

// BoundDwell makes the recorder count, for every answer (see IsAnswer),
// whether the Server-Timing dwell it reported exceeds bound, and keep a
// histogram of the dwell of answers. Records carry their Server-Timing
// metrics only when the engine parses them (engine.Config.ServerTiming).
// Call it before the first Add.
func (r *Recorder) BoundDwell(bound time.Duration) {
	r.dwell = &dwellCount{bound: bound, hist: result.NewHistogram()}
}

// addDwell counts one record; r.dwell is not nil.
func (r *Recorder) addDwell(rec *Record) {
	d := r.dwell
	var dwell time.Duration
	found := false
	for i := 0; i < rec.NTimings && i < MaxTimings; i++ {
		if rec.Timings[i].Name == result.DwellMetric {
			dwell, found = rec.Timings[i].Dur, true
			break
		}
	}
	switch {
	case !result.IsAnswer(rec.Status):
		if found {
			d.others++
		}
	case !found:
		d.unreported++
	default:
		if d.answers == 0 || dwell > d.max {
			d.max = dwell
		}
		d.answers++
		if dwell > d.bound {
			d.over++
		}
		r.record(d.hist, dwell)
	}
}

// dwellResult is the DwellBound of the result, nil without BoundDwell.
func (r *Recorder) dwellResult() *result.DwellBound {
	d := r.dwell
	if d == nil {
		return nil
	}
	dwell := result.Summarize(d.hist)
	if d.answers > 0 {
		dwell.Max = float64(d.max) / float64(time.Millisecond)
	}
	return &result.DwellBound{
		Bound:      d.bound.String(),
		BoundMs:    float64(d.bound) / float64(time.Millisecond),
		Answers:    d.answers,
		Over:       d.over,
		Unreported: d.unreported,
		Others:     d.others,
		Dwell:      dwell,
	}
}
