package recorder

import (
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/openload/openload/result"
)

// Recorder accumulates records. It is not safe for concurrent use; see the
// package documentation.
type Recorder struct {
	Response, Service, SendDelay *hdrhistogram.Histogram
	// Corrected is nil unless Correct was called: the response times with
	// HdrHistogram's correction for coordinated omission.
	Corrected *hdrhistogram.Histogram
	interval  time.Duration // expected interval of the correction
	skipped   int64

	outcomes [numOutcomes]int64
	kinds    kindTally
	status   statusTally // completed responses
	grpc     grpcTally   // completed gRPC calls, by grpc-status
	sent     int64
	censored int64
	clamped  int64
	timeline []result.Second
	log      *LogWriter

	classes        []classTable
	timings        map[string]*hdrhistogram.Histogram
	timingOrder    []string
	timingOverflow int64
	dwell          *dwellCount // nil unless BoundDwell was called
	retry          retryTally  // retry.go
	wire           wireTally   // wire.go
	faults         faultTally  // faults.go
	targets        partTallies // a request mix's (part.go)
	steps          partTallies // a session run's (session.go)
	sessions       *sessionTally

	iv *intervals

	stream     *StreamStats       // nil until a stream is seen or StreamRun (stream.go)
	objectives []RequestObjective // per-request objectives for goodput
	warm       warmupTally        // warmup.go
	stamps     stampTally         // stamps.go
}

// Bounds on what a recorder tracks, so that a header with unbounded values
// cannot grow memory without limit.
const (
	MaxClassValues   = 64 // distinct values per class header; the rest count as OtherClass
	MaxTimingMetrics = 32 // distinct Server-Timing metric names
)

type classTable struct {
	header string
	auto   bool // TrackClassesSeen's: in the result only when a response carried it
	values map[string]*classStat
	order  []string
	sec    classSeconds // per second (classsec.go)
}

type classStat struct {
	count    int64
	response *hdrhistogram.Histogram
}

// New returns an empty Recorder. If log is not nil, every record is also
// written to it as one CSV line.
func New(log *LogWriter) *Recorder {
	return &Recorder{
		Response:  result.NewHistogram(),
		Service:   result.NewHistogram(),
		SendDelay: result.NewHistogram(),
		timeline:  make([]result.Second, 0, 64),
		log:       log,
		iv:        newIntervals(),
	}
}

func (r *Recorder) second(d time.Duration) *result.Second {
	i := int(d / time.Second)
	if i < 0 {
		i = 0
	}
	for len(r.timeline) <= i {
		r.timeline = append(r.timeline, result.Second{})
	}
	return &r.timeline[i]
}

func (r *Recorder) record(h *hdrhistogram.Histogram, d time.Duration) {
	if recordIn(h, d) {
		r.clamped++
	}
}

// recordIn records d in h, clamped to the histogram's range; it reports
// whether it was clamped. A part's histograms record what the run's
// already counted (part.go), so they do not count it again.
func recordIn(h *hdrhistogram.Histogram, d time.Duration) (clamped bool) {
	us := int64(d / time.Microsecond)
	if us < 0 {
		us = 0
	}
	if us > result.HistHighest {
		us, clamped = result.HistHighest, true
	}
	// In range by construction, so RecordValue cannot fail.
	_ = h.RecordValue(us)
	return clamped
}

// Add records one request. It does not allocate once the timeline has grown
// to cover the record's seconds. The log write error, if any, is returned;
// the record is counted either way.
func (r *Recorder) Add(rec *Record) error {
	r.addStamps(rec) // stamps.go
	if rec.Scheduled < r.warm.until {
		return r.addWarmup(rec)
	}
	r.outcomes[rec.Outcome]++
	r.kinds[rec.Kind]++
	if rec.Outcome == Completed {
		// A status belongs to a completed response (wire.go).
		r.status.add(rec.Status)
		if rec.GRPC {
			r.grpc.add(rec.GRPCStatus)
		}
	}
	r.second(rec.Scheduled).Scheduled++
	r.record(r.Response, rec.Response())
	r.addInterval(rec)
	if r.Corrected != nil {
		r.recordCorrected(rec.Response())
	}
	if rec.WasSent {
		r.sent++
		r.second(rec.Sent).Sent++
		r.record(r.Service, rec.Service())
		r.record(r.SendDelay, rec.SendDelay())
	}
	switch rec.Outcome {
	case Completed:
		r.second(rec.Done).Completed++
	case TimedOut, Unfinished:
		r.censored++
		r.second(rec.Done).Errors++
	default:
		r.second(rec.Done).Errors++
	}
	for i := range r.classes {
		r.addClass(&r.classes[i], rec.Class[i], rec.Response())
	}
	r.addClassSeconds(rec)
	for i := 0; i < rec.NTimings && i < MaxTimings; i++ {
		if h := r.timing(rec.Timings[i].Name); h != nil {
			r.record(h, rec.Timings[i].Dur)
		}
	}
	if r.dwell != nil {
		r.addDwell(rec)
	}
	r.addAttempts(rec)
	r.addWire(rec)
	r.addFaults(rec)
	r.targets.add(int(rec.Target), rec) // part.go
	r.steps.add(int(rec.Target), rec)
	if rec.Streamed || r.stream != nil || rec.PromptTokens > 0 || rec.AskedTokens > 0 || rec.CachedTokens > 0 {
		r.streamStats()
		r.addStream(rec) // stream.go
		r.targets.addStream(int(rec.Target), rec)
		r.steps.addStream(int(rec.Target), rec)
	}
	if r.log != nil {
		return r.log.Write(rec)
	}
	return nil
}

// Correct also records every response time in Corrected with HdrHistogram's
// correction for coordinated omission (RecordCorrectedValue): a value v
// longer than the expected interval I between one user's requests also adds
// v − I, v − 2I, … down to I, the response times the requests a closed loop
// did not send while it waited would have had if they had been sent on time
// and served once the wait was over. The correction assumes evenly spaced
// arrivals, one every I per user; it adds ⌊v/I⌋ − 1 values for v ≥ 2I.
// Call it before the first Add.
func (r *Recorder) Correct(interval time.Duration) {
	r.Corrected = result.NewHistogram()
	r.interval = interval
}

// CorrectionInterval is the expected interval Correct was given (0 when the
// recorder does not correct).
func (r *Recorder) CorrectionInterval() time.Duration { return r.interval }

func (r *Recorder) recordCorrected(d time.Duration) {
	us := max(int64(d/time.Microsecond), 0)
	if us > result.HistHighest {
		us = result.HistHighest // counted in clamped by the response histogram
	}
	// An interval under 1 µs (above a million requests per second per
	// user) is corrected at 1 µs, the histogram's resolution.
	iv := max(int64(r.interval/time.Microsecond), 1)
	// In range by construction: every value recorded lies in [0, us].
	_ = r.Corrected.RecordCorrectedValue(us, iv)
}

// AddSkipped records n slots of a closed run's pacing schedule, due in the
// second that holds offset at, that no user took: requests the schedule
// would have sent and that were never sent. They are not requests, so they
// count in no outcome; Counts().Skipped and the timeline show them.
func (r *Recorder) AddSkipped(at time.Duration, n int64) {
	if n <= 0 {
		return
	}
	r.skipped += n
	r.second(at).Skipped += n
}

// TrackClasses groups requests by the values of these response headers (at
// most MaxClassHeaders); the engine fills Record.Class in the same order.
func (r *Recorder) TrackClasses(headers []string) {
	r.classes = r.classes[:0]
	for _, h := range headers[:min(len(headers), MaxClassHeaders)] {
		r.classes = append(r.classes, classTable{header: h, values: map[string]*classStat{}})
	}
}

// TrackClassesSeen groups requests by these response headers too, after
// those of TrackClasses (call it after) and within MaxClassHeaders in
// all, for headers looked for without being asked: the result holds a
// header's table only when at least one response carried the header, and
// marks it (ClassTable.Auto).
func (r *Recorder) TrackClassesSeen(headers []string) {
	for _, h := range headers[:min(len(headers), max(MaxClassHeaders-len(r.classes), 0))] {
		r.classes = append(r.classes, classTable{header: h, auto: true, values: map[string]*classStat{}})
	}
}

func (r *Recorder) addClass(t *classTable, value string, resp time.Duration) {
	if value == "" {
		value = result.NoClass
	}
	st := t.values[value]
	if st == nil {
		if len(t.values) >= MaxClassValues {
			value = result.OtherClass
			st = t.values[value]
		}
		if st == nil {
			st = &classStat{response: result.NewHistogram()}
			t.values[value] = st
			t.order = append(t.order, value)
		}
	}
	st.count++
	r.record(st.response, resp)
}

func (r *Recorder) timing(name string) *hdrhistogram.Histogram {
	h := r.timings[name]
	if h != nil {
		return h
	}
	if len(r.timings) >= MaxTimingMetrics {
		r.timingOverflow++
		return nil
	}
	if r.timings == nil {
		r.timings = map[string]*hdrhistogram.Histogram{}
	}
	h = result.NewHistogram()
	r.timings[name] = h
	r.timingOrder = append(r.timingOrder, name)
	return h
}

// Counts returns the outcome counts so far.
func (r *Recorder) Counts() result.Counts {
	c := result.Counts{
		Sent:       r.sent,
		Completed:  r.outcomes[Completed],
		Errors:     r.outcomes[Failed],
		Timeouts:   r.outcomes[TimedOut],
		Unfinished: r.outcomes[Unfinished],
		Skipped:    r.skipped,
	}
	c.Scheduled = c.Completed + c.Errors + c.Timeouts + c.Unfinished
	return c
}

// Timeline returns the per-second timeline (shared, not copied).
func (r *Recorder) Timeline() []result.Second { return r.timeline }

// StatusCodes returns the count per HTTP status code of the completed
// responses.
func (r *Recorder) StatusCodes() map[int]int64 {
	m := map[int]int64{}
	for code, n := range r.status.codes {
		if n > 0 {
			m[code] = n
		}
	}
	return m
}

// ErrorKinds returns the count per error kind seen (excluding KindNone).
func (r *Recorder) ErrorKinds() map[string]int64 {
	m := map[string]int64{}
	r.kinds.addTo(m)
	return m
}

// Censored is the number of timed-out and unfinished requests, whose
// response time is a lower bound.
func (r *Recorder) Censored() int64 { return r.censored }

// Clamped is the number of values above the histogram range, recorded at
// its top.
func (r *Recorder) Clamped() int64 { return r.clamped }

// OtherStatus is the number of responses with a status outside [100, 600).
func (r *Recorder) OtherStatus() int64 { return r.status.other }

// seen reports whether a response carried t's header.
func (t *classTable) seen() bool {
	for _, v := range t.order {
		if v != result.NoClass {
			return true
		}
	}
	return false
}

// EachClass calls f with each class header's values and their counts, in
// the order they were first seen, for the tables the result holds (an
// automatic header's only once a response carried it). It does not
// allocate.
func (r *Recorder) EachClass(f func(header, value string, n int64)) {
	for i := range r.classes {
		t := &r.classes[i]
		if t.auto && !t.seen() {
			continue
		}
		for _, v := range t.order {
			f(t.header, v, t.values[v].count)
		}
	}
}
