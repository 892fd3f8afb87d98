package recorder

import (
	"io"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/openload/openload/result"
)

// Interval histograms: besides the run's histograms, the recorder keeps one
// set per second of completion (by a record's done time). When a second is
// over, its response-time p99 goes into the timeline (Second.ResponseP99)
// and, if an interval log was set, the three histograms are written to it
// in HdrHistogram's interval log format with the tags response, service and
// send_delay — readable by HdrHistogram's HistogramLogProcessor and by
// ReadIntervalLog. Values are in microseconds; the log's "max" column uses
// hdrhistogram-go's default unit ratio (1e6), so it reads in seconds.
//
// Records reach the recorder roughly in completion order; one whose done
// time falls in a second already written goes into the current second.

type intervals struct {
	cur     int // index of the second being filled, -1 before the first record
	h       [3]*hdrhistogram.Histogram
	start   time.Time // wall clock of offset 0
	started bool
	w       *hdrhistogram.HistogramLogWriter
	err     error
}

func newIntervals() *intervals {
	return &intervals{cur: -1, h: [3]*hdrhistogram.Histogram{result.NewHistogram(), result.NewHistogram(), result.NewHistogram()}}
}

// Begin tells the recorder the wall-clock time of the run's offset 0; the
// engine calls it when the run starts. The interval log's timestamps are
// relative to it.
func (r *Recorder) Begin(start time.Time) {
	r.iv.start = start
	r.iv.started = true
	if r.iv.w != nil {
		r.iv.writeHeader()
	}
}

// SetIntervalLog writes the per-second interval histograms to w. Call it
// before the run (before Begin).
func (r *Recorder) SetIntervalLog(w io.Writer) {
	r.iv.w = hdrhistogram.NewHistogramLogWriter(w)
	if r.iv.started {
		r.iv.writeHeader()
	}
}

// IntervalLogErr is the first error writing the interval log, if any.
func (r *Recorder) IntervalLogErr() error { return r.iv.err }

func (iv *intervals) writeHeader() {
	ms := iv.start.UnixMilli()
	iv.w.SetBaseTime(ms)
	for _, f := range []func() error{
		iv.w.OutputLogFormatVersion,
		func() error {
			return iv.w.OutputComment("openload interval log: one interval per second of completion, values in microseconds")
		},
		func() error { return iv.w.OutputStartTime(ms) },
		func() error { return iv.w.OutputBaseTime(ms) },
		iv.w.OutputLegend,
	} {
		if err := f(); err != nil && iv.err == nil {
			iv.err = err
		}
	}
}

// addInterval adds a record to its second's histograms, closing the seconds
// before it.
func (r *Recorder) addInterval(rec *Record) {
	i := int(rec.Done / time.Second)
	if i < 0 {
		i = 0
	}
	if r.iv.cur < 0 {
		r.iv.cur = i
	}
	for r.iv.cur < i {
		r.closeInterval()
		r.iv.cur++
	}
	recordClamped(r.iv.h[0], rec.Response())
	if rec.WasSent {
		recordClamped(r.iv.h[1], rec.Service())
		recordClamped(r.iv.h[2], rec.SendDelay())
	}
}

// recordClamped records d clamped to the histogram's range; the run's
// histograms already counted any clamping.
func recordClamped(h *hdrhistogram.Histogram, d time.Duration) {
	_ = h.RecordValue(min(max(int64(d/time.Microsecond), 0), result.HistHighest))
}

// closeInterval finishes the current second: its p99 goes to the timeline
// and its histograms to the log, then they are reset.
func (r *Recorder) closeInterval() {
	iv := r.iv
	if iv.cur < 0 {
		return
	}
	if iv.h[0].TotalCount() > 0 {
		r.second(time.Duration(iv.cur) * time.Second).ResponseP99 = result.Ms(float64(iv.h[0].ValueAtQuantile(99)))
	}
	if iv.w != nil && iv.err == nil {
		base := iv.start.UnixMilli()
		for k, h := range iv.h {
			h.SetTag(result.IntervalTags[k])
			h.SetStartTimeMs(base + int64(iv.cur)*1000)
			h.SetEndTimeMs(base + int64(iv.cur+1)*1000)
			if err := iv.w.OutputIntervalHistogram(h); err != nil {
				iv.err = err
				break
			}
		}
	}
	for _, h := range iv.h {
		h.Reset()
	}
}

// flushIntervals closes the last open second; Fill calls it.
func (r *Recorder) flushIntervals() {
	if r.iv.cur >= 0 {
		r.closeInterval()
		r.iv.cur = -1
	}
}
