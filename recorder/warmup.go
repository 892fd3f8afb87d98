package recorder

import (
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// Warmup is what the requests scheduled in a run's first Until took: they
// were sent and are counted in Counts (every request is accounted for) and
// the timeline, but kept out of the headline figures (Response, Service,
// SendDelay, classes, Server-Timing) and so out of the objectives.
type Warmup struct {
	Until      string      `json:"until"`
	Scheduled  int64       `json:"scheduled"`
	Completed  int64       `json:"completed"`
	Errors     int64       `json:"errors"`
	Timeouts   int64       `json:"timeouts"`
	Unfinished int64       `json:"unfinished"`
	Response   Percentiles `json:"response"`
	Service    Percentiles `json:"service"`
	// The histograms behind Response and Service, encoded as
	// Result.Histograms are, so that shards' warm-ups merge losslessly.
	ResponseHistogram string `json:"response_histogram,omitempty"`
	ServiceHistogram  string `json:"service_histogram,omitempty"`
}

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
	r.warm = warmupTally{until: d, response: NewHistogram(), service: NewHistogram()}
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
func (r *Recorder) warmupResult() (*Warmup, error) {
	if r.warm.until <= 0 {
		return nil, nil
	}
	o := r.warm.outcomes
	w := &Warmup{Until: r.warm.until.String(), Completed: o[Completed], Errors: o[Failed], Timeouts: o[TimedOut], Unfinished: o[Unfinished]}
	w.Scheduled = w.Completed + w.Errors + w.Timeouts + w.Unfinished
	return w, w.setHistograms(r.warm.response, r.warm.service)
}

// setHistograms sets w's percentiles and encoded histograms.
func (w *Warmup) setHistograms(response, service *hdrhistogram.Histogram) error {
	w.Response, w.Service = Summarize(response), Summarize(service)
	var err error
	if w.ResponseHistogram, err = EncodeHistogram(response); err != nil {
		return err
	}
	w.ServiceHistogram, err = EncodeHistogram(service)
	return err
}

// Headline are the counts the headline figures hold: Counts less the
// warm-up's.
func (r *Result) Headline() Counts {
	c := r.Counts
	if w := r.Warmup; w != nil {
		c.Scheduled -= w.Scheduled
		c.Completed -= w.Completed
		c.Errors -= w.Errors
		c.Timeouts -= w.Timeouts
		c.Unfinished -= w.Unfinished
	}
	return c
}

// outcomesSum is the number of warm-up requests.
func (w *warmupTally) outcomesSum() int64 {
	var n int64
	for _, c := range w.outcomes {
		n += c
	}
	return n
}

// mergeWarmup adds o's warm-up to r's.
func (r *Recorder) mergeWarmup(o *Recorder) {
	if o.warm.until <= 0 {
		return
	}
	if r.warm.until <= 0 {
		r.SetWarmup(o.warm.until)
	}
	for i, c := range o.warm.outcomes {
		r.warm.outcomes[i] += c
	}
	r.dropped += r.warm.response.Merge(o.warm.response)
	r.dropped += r.warm.service.Merge(o.warm.service)
}
