package recorder

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
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

// IntervalTags are the tags of the interval log, in the order written.
var IntervalTags = []string{"response", "service", "send_delay"}

type intervals struct {
	cur     int // index of the second being filled, -1 before the first record
	h       [3]*hdrhistogram.Histogram
	start   time.Time // wall clock of offset 0
	started bool
	w       *hdrhistogram.HistogramLogWriter
	err     error
}

func newIntervals() *intervals {
	return &intervals{cur: -1, h: [3]*hdrhistogram.Histogram{NewHistogram(), NewHistogram(), NewHistogram()}}
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
	_ = h.RecordValue(min(max(int64(d/time.Microsecond), 0), HistHighest))
}

// closeInterval finishes the current second: its p99 goes to the timeline
// and its histograms to the log, then they are reset.
func (r *Recorder) closeInterval() {
	iv := r.iv
	if iv.cur < 0 {
		return
	}
	if iv.h[0].TotalCount() > 0 {
		r.second(time.Duration(iv.cur) * time.Second).ResponseP99 = usToMs(float64(iv.h[0].ValueAtQuantile(99)))
	}
	if iv.w != nil && iv.err == nil {
		base := iv.start.UnixMilli()
		for k, h := range iv.h {
			h.SetTag(IntervalTags[k])
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

// IntervalLog is an interval log read back: per tag, the intervals in order
// and their merge.
type IntervalLog struct {
	Intervals map[string][]*hdrhistogram.Histogram
	Total     map[string]*hdrhistogram.Histogram
}

// ReadIntervalLog reads an HdrHistogram interval log such as --hlog writes;
// name is used in errors. Intervals without a tag are filed under "".
func ReadIntervalLog(rd io.Reader, name string) (*IntervalLog, error) {
	lr := hdrhistogram.NewHistogramLogReader(rd)
	out := &IntervalLog{Intervals: map[string][]*hdrhistogram.Histogram{}, Total: map[string]*hdrhistogram.Histogram{}}
	n := 0
	for {
		h, err := lr.NextIntervalHistogram()
		if err != nil {
			return nil, fmt.Errorf("%s: interval %d: %v", name, n+1, err)
		}
		if h == nil {
			break
		}
		n++
		tag := h.Tag()
		out.Intervals[tag] = append(out.Intervals[tag], h)
		if out.Total[tag] == nil {
			out.Total[tag] = NewHistogram()
		}
		if dropped := out.Total[tag].Merge(h); dropped > 0 {
			return nil, fmt.Errorf("%s: interval %d (%s): %d values outside openload's histogram range", name, n, tag, dropped)
		}
	}
	if n == 0 {
		return nil, fmt.Errorf("%s: no interval histograms", name)
	}
	return out, nil
}

// intervalLogMarks are the header lines HdrHistogram's log writers (Java's,
// Go's, JavaScript's, and so --hlog) put before the first interval; a JSON
// result never starts with one.
var intervalLogMarks = [][]byte{
	[]byte("#[Histogram log format version "),
	[]byte("#[StartTime: "),
	[]byte("#[BaseTime: "),
	[]byte(`"StartTimestamp"`),
}

// LooksLikeIntervalLog reports whether head, the start of a file, is an
// HdrHistogram interval log: one of its leading comment lines, or the
// legend after them, is one of the headers such logs start with. Other
// comments may come first (jHiccup writes one).
func LooksLikeIntervalLog(head []byte) bool {
	sc := bufio.NewScanner(bytes.NewReader(head))
	for sc.Scan() {
		line := sc.Bytes()
		for _, m := range intervalLogMarks {
			if bytes.HasPrefix(line, m) {
				return true
			}
		}
		if !bytes.HasPrefix(line, []byte("#")) {
			return false
		}
	}
	return false
}
