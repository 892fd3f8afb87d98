package recorder

import (
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/openload/openload/result"
)

// warmupTally is the recorder's count of the warm-up requests.
type warmupTally struct {
	until             time.Duration // 0: no warm-up
	outcomes          [numOutcomes]int64
	response, service *hdrhistogram.Histogram
}

// SetWarmup keeps the requests scheduled before d out of the headline
// figures: Add counts them in the outcomes, the timeline and on the wire,
// and records their times apart (Result.Warmup). Call it before the first
// Add.
func (r *Recorder) SetWarmup(d time.Duration) {
	r.warm = warmupTally{until: d, response: result.NewHistogram(), service: result.NewHistogram()}
}

// addWarmup is Add for a request scheduled in the warm-up.
func (r *Recorder) addWarmup(rec *Record) error {
	r.outcomes[rec.Outcome]++
	r.warm.outcomes[rec.Outcome]++
	r.kinds[rec.Kind]++
	if rec.Outcome == Completed {
		r.status.add(rec.Status)
	}
	r.second(rec.Scheduled).Scheduled++
	r.record(r.warm.response, rec.Response())
	if rec.WasSent {
		r.sent++
		r.second(rec.Sent).Sent++
		r.record(r.warm.service, rec.Service())
	}
	if rec.Outcome == Completed {
		r.second(rec.Done).Completed++
	} else {
		r.second(rec.Done).Errors++
	}
	r.addClassSeconds(rec) // in the timeline, like the counts above
	r.addAttempts(rec)
	r.addWire(rec)
	if r.log != nil {
		return r.log.Write(rec)
	}
	return nil
}

// warmupResult is Result.Warmup: nil without a warm-up.
func (r *Recorder) warmupResult() (*result.Warmup, error) {
	if r.warm.until <= 0 {
		return nil, nil
	}
	o := r.warm.outcomes
	w := &result.Warmup{Until: r.warm.until.String(), Completed: o[Completed], Errors: o[Failed], Timeouts: o[TimedOut], Unfinished: o[Unfinished]}
	w.Scheduled = w.Completed + w.Errors + w.Timeouts + w.Unfinished
	return w, w.SetHistograms(r.warm.response, r.warm.service)
}

// outcomesSum is the number of warm-up requests.
func (w *warmupTally) outcomesSum() int64 {
	var n int64
	for _, c := range w.outcomes {
		n += c
	}
	return n
}
