package metrics

import (
	"math"
	"strconv"
	"time"
)

// LatencyBounds are the upper bounds, in seconds, of the classic buckets of
// every time histogram (+Inf is implied): 24 a decade, 10^(i/24) rounded
// to three significant digits, from 100 µs to 3,830 s (183 bounds).
// Each bucket is about 10 % wider than the last (10.07 %, ± 0.5 % for
// the rounding), and the decades fall on bounds (1 ms, 10 ms, … 1,000 s).
//
// histogram_quantile interpolates linearly inside the bucket that holds
// the quantile, so its answer is within that bucket: at most 10 % above
// or below the true figure, where the earlier 1-2.5-5 steps allowed
// 150 % (p99.9 read 3,966 ms for a run whose max was 2,589 ms) and put
// all of 10-25 ms in one bucket. The result file's HdrHistograms keep
// three significant digits; these buckets are for dashboards and alerts.
//
// The cost is series: an exporter serves the bounds up to its top
// (SetMaxLatency: openload run sets twice the timeout), 140 at the
// default 30 s (to 61.9 s), so a histogram is 143 series (buckets, +Inf,
// sum, count) instead of 22, and a streamed run's seven histograms 1,001
// instead of 154. Native
// histograms would cost less, but Prometheus 2.42 reads them only behind
// --enable-feature=native-histograms, and then drops the classic buckets
// of the same histogram (the dashboard's queries read classic buckets).
var LatencyBounds = func() []float64 {
	var b []float64
	for i := -96; i <= 86; i++ {
		v, _ := strconv.ParseFloat(strconv.FormatFloat(math.Pow(10, float64(i)/24), 'g', 3, 64), 64)
		b = append(b, v)
	}
	return b
}()

// boundsUs are LatencyBounds in the histograms' unit, µs.
var boundsUs = func() []int64 {
	b := make([]int64, len(LatencyBounds))
	for i, s := range LatencyBounds {
		b[i] = int64(s*1e6 + 0.5)
	}
	return b
}()

// Bounds are the LatencyBounds an exporter whose top is max serves: those
// below max and the first at or above it; all of them when max is 0 or
// above the last. A value above the last bound served is counted in +Inf
// only, and histogram_quantile reads a quantile there as that bound.
func Bounds(max time.Duration) []float64 {
	if max <= 0 {
		return LatencyBounds
	}
	for i, b := range LatencyBounds {
		if b >= max.Seconds() {
			return LatencyBounds[:i+1]
		}
	}
	return LatencyBounds
}

// SetMaxLatency makes the exporter's histograms stop at the first bound at
// or above max (Bounds): buckets no request can reach cost series and
// tell nothing. It applies to the sources added after it;
// 0 (the default) serves every bound.
func (e *Exporter) SetMaxLatency(max time.Duration) {
	e.mu.Lock()
	e.nBounds = len(Bounds(max))
	e.mu.Unlock()
}

// upTo is s with its histograms cut to their first n bounds, for a
// source that serves n; s itself, which the source's other readers
// share, is not changed.
func (s *Snapshot) upTo(n int) *Snapshot {
	if n <= 0 || n >= len(LatencyBounds) {
		return s
	}
	c := *s
	cut := func(h *Histogram) { h.Cumulative = h.Cumulative[:n:n] }
	cut(&c.Response)
	cut(&c.Service)
	cut(&c.SendDelay)
	if s.Stream != nil {
		st := *s.Stream
		cut(&st.TTFTSchedule)
		cut(&st.TTFTSend)
		cut(&st.ITL)
		cut(&st.TPOT)
		c.Stream = &st
	}
	return &c
}
