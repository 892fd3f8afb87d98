// Package stats holds the statistics over repeated runs that a search
// decides on and a report shows: the median and a bootstrap interval of
// it. It is shared so that what a search decided and what a report of its
// repeats shows are computed one way.
package stats

import (
	"math"
	"math/rand/v2"
	"slices"
	"sort"
)

// Resamples is the number of bootstrap resamples.
const Resamples = 2000

// Median is the median of xs: with an even count the mean of the middle
// two, unless one of them is infinite (a figure past any bound), then the
// upper one; NaN when xs is empty.
func Median(xs []float64) float64 {
	s := slices.Clone(xs)
	sort.Float64s(s)
	n := len(s)
	switch {
	case n == 0:
		return math.NaN()
	case n%2 == 1:
		return s[n/2]
	case math.IsInf(s[n/2-1], 0) || math.IsInf(s[n/2], 0):
		return s[n/2] // a mean with an infinity is that infinity, or NaN
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// Bootstrap is the 95 % percentile interval of the median of xs over
// Resamples resamples, seeded by the count so that the same figures give
// the same interval; NaN, NaN with fewer than two figures.
func Bootstrap(xs []float64) (lo, hi float64) {
	if len(xs) < 2 {
		return math.NaN(), math.NaN()
	}
	rng := rand.New(rand.NewPCG(uint64(len(xs)), 0x5eed))
	meds := make([]float64, Resamples)
	buf := make([]float64, len(xs))
	for b := range meds {
		for i := range buf {
			buf[i] = xs[rng.IntN(len(xs))]
		}
		meds[b] = Median(buf)
	}
	sort.Float64s(meds)
	return meds[int(0.025*Resamples)], meds[int(0.975*Resamples)-1]
}

// MinMax is the least and the greatest of xs; NaN, NaN when empty.
func MinMax(xs []float64) (float64, float64) {
	if len(xs) == 0 {
		return math.NaN(), math.NaN()
	}
	return slices.Min(xs), slices.Max(xs)
}
