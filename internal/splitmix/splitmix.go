// Package splitmix is SplitMix64 (Steele, Lea and Flood, "Fast splittable
// pseudorandom number generators", OOPSLA 2014) as pure functions: the
// draws a run makes per request (its target, its body, a retry's jitter,
// a template's values) from a seed and the request's index, so that every
// shard, worker and re-run draws the same for the same request without
// sharing any state.
package splitmix

// Gamma is SplitMix64's increment: 2⁶⁴ ÷ φ, rounded to odd.
const Gamma = 0x9e3779b97f4a7c15

// Mix is SplitMix64's finaliser: a bijection of uint64 whose output bits
// each depend on every input bit.
func Mix(z uint64) uint64 {
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// At is output seq (from 0) of the SplitMix64 stream seeded with seed:
// Mix(seed + (seq+1)·Gamma). Its outputs are equidistributed over uint64.
func At(seed, seq uint64) uint64 { return Mix(seed + (seq+1)*Gamma) }

// Unit maps z to [0, 1) by its top 53 bits, a float64's precision.
func Unit(z uint64) float64 { return float64(z>>11) * 0x1p-53 }
