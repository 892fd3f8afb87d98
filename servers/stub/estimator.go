package stub

import (
	"time"
)

// rateWindow counts events (model completions) in a sliding window made of a
// ring of fixed-size buckets rotated by time. It is not safe for concurrent
// use; the server calls it with its queue mutex held.
//
// Bucket k (absolute, counted from origin) holds the events that happened in
// [origin + k·bucket, origin + (k+1)·bucket). The ring keeps the current bucket
// and the n−1 before it, n = ceil(window / bucket), so the effective window
// is n·bucket (equal to Window when Window is a whole multiple of Bucket).
type rateWindow struct {
	now    func() time.Time
	bucket time.Duration
	counts []int64
	origin time.Time
	cur    int64 // absolute index of the current bucket
	total  int64 // sum of counts
}

func newRateWindow(window, bucket time.Duration, now func() time.Time) *rateWindow {
	n := int((window + bucket - 1) / bucket)
	if n < 1 {
		n = 1
	}
	return &rateWindow{
		now:    now,
		bucket: bucket,
		counts: make([]int64, n),
		origin: now(),
	}
}

// advance rotates the ring up to time t, zeroing buckets that left the
// window. Time that goes backwards is treated as the current bucket.
func (w *rateWindow) advance(t time.Time) {
	idx := int64(t.Sub(w.origin) / w.bucket)
	if idx <= w.cur {
		return
	}
	n := int64(len(w.counts))
	if idx-w.cur >= n {
		clear(w.counts)
		w.total = 0
	} else {
		for k := w.cur + 1; k <= idx; k++ {
			slot := k % n
			w.total -= w.counts[slot]
			w.counts[slot] = 0
		}
	}
	w.cur = idx
}

// add records one event now.
func (w *rateWindow) add() {
	w.advance(w.now())
	w.counts[w.cur%int64(len(w.counts))]++
	w.total++
}

// snapshot returns the events in the window and the time the window actually
// covers: from the start of its oldest retained bucket (or from origin, when
// less than a full window has passed since origin) to now. Dividing by the
// covered time rather than by the nominal window matters at startup: a server
// that has been up for 0.5s of a 2s window has seen 0.5s of completions, and
// dividing those by 2s would under-estimate its throughput fourfold. It also
// keeps the rate unbiased right after a rotation, when the current bucket is
// nearly empty: the covered time is then about (n−1)·bucket, not n·bucket.
func (w *rateWindow) snapshot() (count int64, covered time.Duration) {
	t := w.now()
	w.advance(t)
	start := w.origin
	if oldest := w.cur - int64(len(w.counts)) + 1; oldest > 0 {
		start = w.origin.Add(time.Duration(oldest) * w.bucket)
	}
	covered = t.Sub(start)
	if covered < 0 {
		covered = 0
	}
	return w.total, covered
}

// estimator turns the queue length into a wait estimate for the admission
// gate. Like rateWindow it is not safe for concurrent use.
//
// The completions estimator deliberately uses the completion RATE (model
// calls finished per second), never an average of observed request
// durations. Request durations measured at the server include the time spent
// queueing, so feeding them back would make the gate circular: with a long
// queue the durations grow, the estimate grows faster than the real wait, and
// the gate over-rejects; with a short queue the reverse happens and it
// over-admits. The rate of completions while the workers are busy is the
// model's throughput, whatever the queue does, and queue ÷ throughput is the
// time the queue ahead takes to drain. (While workers are idle the rate only
// measures the arrival rate, but then the queue is empty and the estimate is
// zero anyway.)
type estimator struct {
	kind       Estimator
	workers    int
	believed   time.Duration
	minSamples int
	win        *rateWindow // nil for the believed estimator
}

func newEstimator(cfg Config, now func() time.Time) *estimator {
	e := &estimator{
		kind:       cfg.Estimator,
		workers:    cfg.slots(),
		believed:   cfg.BelievedLatency,
		minSamples: cfg.MinSamples,
	}
	if cfg.Estimator == EstimatorCompletions {
		e.win = newRateWindow(cfg.Window, cfg.Bucket, now)
	}
	return e
}

// completed records one finished model call.
func (e *estimator) completed() {
	if e.win != nil {
		e.win.add()
	}
}

// believedWait is queue × believed ÷ workers.
func believedWait(queue, workers int, believed time.Duration) time.Duration {
	if queue <= 0 || workers <= 0 {
		return 0
	}
	return time.Duration(int64(queue) * int64(believed) / int64(workers))
}

// rateWait is queue ÷ rate (rate in completions per second, > 0).
func rateWait(queue int, perSec float64) time.Duration {
	if queue <= 0 {
		return 0
	}
	return time.Duration(float64(queue) / perSec * float64(time.Second))
}

// estimateState is what the estimator currently believes.
type estimateState struct {
	perSec        float64 // throughput used by the estimate; 0 = unbounded (believed latency 0)
	usingBelieved bool    // true when the believed latency is used
	samples       int64   // completions in the window (completions estimator)
	covered       time.Duration
}

func (e *estimator) state() estimateState {
	var st estimateState
	if e.win != nil {
		st.samples, st.covered = e.win.snapshot()
		// MinSamples 0 still needs one completion and a non-empty covered
		// time: a rate of zero would make every wait infinite.
		if st.samples >= int64(e.minSamples) && st.samples > 0 && st.covered > 0 {
			st.perSec = float64(st.samples) / st.covered.Seconds()
			return st
		}
	}
	st.usingBelieved = true
	if e.believed > 0 {
		st.perSec = float64(e.workers) / e.believed.Seconds()
	}
	return st
}

// wait estimates how long a request that finds queue requests waiting ahead
// of it will wait in front of the model.
func (e *estimator) wait(queue int) (time.Duration, estimateState) {
	st := e.state()
	if st.usingBelieved {
		return believedWait(queue, e.workers, e.believed), st
	}
	return rateWait(queue, st.perSec), st
}
