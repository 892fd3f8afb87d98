package metrics

// LatencyBounds are the upper bounds, in seconds, of the classic buckets of
// every time histogram (+Inf is implied): 1-2.5-5 steps from 50 µs to
// 10 s, then 30 s (the default timeout) and 60 s. They cover a loopback
// answer's send delay and service time at the bottom and a timed-out
// request at the top, at 20 buckets a series. histogram_quantile
// interpolates linearly inside the bucket that holds the quantile, so its
// answer is only known to lie within that bucket: between 10 and 25 ms,
// say, for a p99 of 12 ms. The result file's HdrHistograms keep three
// significant digits; these buckets are for dashboards and alerts.
var LatencyBounds = []float64{
	50e-6, 100e-6, 250e-6, 500e-6,
	1e-3, 2.5e-3, 5e-3, 10e-3, 25e-3, 50e-3, 100e-3, 250e-3, 500e-3,
	1, 2.5, 5, 10, 30, 60,
}

// boundsUs are LatencyBounds in the histograms' unit, µs.
var boundsUs = func() []int64 {
	b := make([]int64, len(LatencyBounds))
	for i, s := range LatencyBounds {
		b[i] = int64(s*1e6 + 0.5)
	}
	return b
}()
