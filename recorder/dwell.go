package recorder

import (
	"net/http"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// DwellMetric is the Server-Timing metric the dwell bound reads [--dwell-bound]:
// the time an answer spent between its arrival and the moment it was
// written, as the server measured it (targets/stub reports it when its
// deadline gate is on). With an arrival stamped by openload
// (--stamp-header), the arrival is the request's scheduled time.
const DwellMetric = "dwell"

// IsAnswer reports whether a response of this status carries an answer:
// 2xx, except 204 No Content. A deadline gate that drops a late answer
// answers 503 or 204 without a payload (as ad bidders answer "no bid"), so
// the age of such a response harms no one; only answers are held to the
// bound.
func IsAnswer(status int) bool {
	return status >= 200 && status < 300 && status != http.StatusNoContent
}

// DwellBound is the dwell-bound count of a run [--dwell-bound D]: how many
// answers reported a Server-Timing dwell above D. It describes the server,
// not the measurement: a gate that promises "nothing leaves older than D"
// kept its promise when Over is 0.
//
//	Answers + Unreported = responses with IsAnswer(status)
//	Over ≤ Answers
type DwellBound struct {
	Bound   string  `json:"bound"`    // D as given, e.g. "150ms"
	BoundMs float64 `json:"bound_ms"` // D in ms
	// Answers counts the answers that reported a dwell; Over those of them
	// whose dwell was > D (exactly D is within the bound).
	Answers int64 `json:"answers"`
	Over    int64 `json:"over"`
	// Unreported counts answers without a dwell metric: they could not be
	// checked.
	Unreported int64 `json:"unreported"`
	// Others counts responses that are not answers (drops, errors, 204)
	// and reported a dwell; they are not checked.
	Others int64 `json:"others"`
	// Dwell summarises the dwell of the Answers, in ms: unlike the
	// server_timing entry of the same metric, it leaves out the responses
	// that are not answers (a dropped answer reports its dwell too). Its
	// Max is exact, not rounded to the histogram's resolution (at 150 ms a
	// bucket is 128 µs wide), so that it compares with the bound as the
	// count does.
	Dwell Percentiles `json:"dwell"`
	// Histogram is Dwell's histogram (EncodeHistogram), so that merged
	// shards' dwell stays exact; empty in results written before.
	Histogram string `json:"histogram,omitempty"`
}

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
	r.dwell = &dwellCount{bound: bound, hist: NewHistogram()}
}

// addDwell counts one record; r.dwell is not nil.
func (r *Recorder) addDwell(rec *Record) {
	d := r.dwell
	var dwell time.Duration
	found := false
	for i := 0; i < rec.NTimings && i < MaxTimings; i++ {
		if rec.Timings[i].Name == DwellMetric {
			dwell, found = rec.Timings[i].Dur, true
			break
		}
	}
	switch {
	case !IsAnswer(rec.Status):
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

// mergeDwell adds o's dwell counts to r's.
func (r *Recorder) mergeDwell(o *Recorder) {
	if o.dwell == nil {
		return
	}
	if r.dwell == nil {
		r.BoundDwell(o.dwell.bound)
	}
	d := r.dwell
	if o.dwell.answers > 0 && (d.answers == 0 || o.dwell.max > d.max) {
		d.max = o.dwell.max
	}
	d.answers += o.dwell.answers
	d.over += o.dwell.over
	d.unreported += o.dwell.unreported
	d.others += o.dwell.others
	r.dropped += d.hist.Merge(o.dwell.hist)
}

// dwellResult is the DwellBound of the result, nil without BoundDwell.
func (r *Recorder) dwellResult() *DwellBound {
	d := r.dwell
	if d == nil {
		return nil
	}
	dwell := Summarize(d.hist)
	if d.answers > 0 {
		dwell.Max = float64(d.max) / float64(time.Millisecond)
	}
	return &DwellBound{
		Bound:      d.bound.String(),
		BoundMs:    float64(d.bound) / float64(time.Millisecond),
		Answers:    d.answers,
		Over:       d.over,
		Unreported: d.unreported,
		Others:     d.others,
		Dwell:      dwell,
	}
}
