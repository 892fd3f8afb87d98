package engine

import (
	"strings"
	"time"

	"github.com/openload/openload/internal/h1"
	"github.com/openload/openload/internal/recorder"
	"github.com/openload/openload/internal/servertiming"
)

// What a run reads of a response head beyond its status: the values of its
// class headers (Config.ClassHeaders) and its Server-Timing metrics
// (Config.ServerTiming), as recorder.Record carries them.
//
// net/http's clients take them from http.Header (generator.response). The
// lean client and the event loop read plain heads themselves
// (h1.ParseHead), and there a string per value would be an allocation per
// request, where they make none. So h1.ParseHead's Watch hands back the
// values as slices of the bytes read, and a headReader turns them into
// strings drawn from small tables of the values seen before: a class
// value or a metric name costs one allocation the first time a worker
// meets it, none after. The tables are bounded as the recorder's are
// (recorder.MaxClassValues values per class header,
// recorder.MaxTimingMetrics metric names); past the bound a new value is
// allocated every time, and the recorder counts it as it would any other.
// Durations are parsed from the bytes (servertiming.ParseBytes): the
// same parser, so the same figures, as from http.Header.

// A Watch must hold every class header a record can: otherwise the quick
// path would miss the last ones, where net/http's reads them.
var _ [h1.MaxWatched - recorder.MaxClassHeaders]struct{}

// heads is what a response head said for its record.
type heads struct {
	class   [recorder.MaxClassHeaders]string
	timings [recorder.MaxTimings]recorder.Timing
	n       int // timings held
}

// apply puts h in r.
func (h *heads) apply(r *recorder.Record) {
	r.Class = h.class
	r.NTimings = copy(r.Timings[:], h.timings[:h.n])
}

// headReader reads heads with h1.ParseHead and a Watch. Each worker, and the
// event loop, has its own: it is not safe for concurrent use.
type headReader struct {
	watch   h1.Watch
	classes [recorder.MaxClassHeaders]interner
	metrics interner
}

// newHeadReader returns the head reader of cfg's run, or nil when the run
// reads nothing but the status.
func newHeadReader(cfg Config) *headReader {
	names := cfg.ClassHeaders[:min(len(cfg.ClassHeaders), recorder.MaxClassHeaders)]
	if len(names) == 0 && !cfg.ServerTiming {
		return nil
	}
	hr := &headReader{metrics: interner{max: recorder.MaxTimingMetrics}}
	hr.watch.ServerTiming = cfg.ServerTiming
	for i, n := range names {
		hr.watch.Names = append(hr.watch.Names, strings.ToLower(n))
		hr.classes[i].max = recorder.MaxClassValues
	}
	return hr
}

// head is h1.ParseHead of buf; when the head is simple and hr is not
// nil, h holds what it said. A nil hr reads what ParseHead gives alone.
func (hr *headReader) head(buf []byte, h *heads) (hd h1.Head, st h1.HeadState) {
	if hr == nil {
		return h1.ParseHead(buf, nil)
	}
	w := &hr.watch
	if hd, st = h1.ParseHead(buf, w); st != h1.HeadSimple {
		return hd, st
	}
	for i := range w.Names {
		h.class[i] = hr.classes[i].get(w.Values[i])
	}
	h.n = 0
	for _, v := range w.Timing[:w.NTiming] {
		servertiming.ParseBytes(v, func(name []byte, dur float64, hasDur bool) {
			if hasDur && h.n < recorder.MaxTimings {
				h.timings[h.n] = recorder.Timing{Name: hr.metrics.get(name), Dur: msDuration(dur)}
				h.n++
			}
		})
	}
	return hd, st
}

// msDuration is a Server-Timing dur, in milliseconds, as a Duration.
func msDuration(ms float64) time.Duration { return time.Duration(ms * float64(time.Millisecond)) }

// interner returns, for the bytes of a value, a string equal to them: the
// same string each time for the first max distinct values, a new one for
// every value past them.
type interner struct {
	vals []string
	max  int
}

func (in *interner) get(b []byte) string {
	// A few values, most often one or two: a scan beats hashing.
	for _, s := range in.vals {
		if string(b) == s {
			return s
		}
	}
	s := string(b)
	if len(in.vals) < in.max {
		in.vals = append(in.vals, s)
	}
	return s
}
