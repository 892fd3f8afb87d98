package prompt

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
)

// Length is a length in tokens, N, or lengths drawn around it: with
// Spread s > 0, uniformly from the integers of [⌊N(1−s)⌋, ⌈N(1+s)⌉], both
// ends included. That is vLLM's --random-range-ratio rule, exactly
// (RandomDataset.get_sampling_params in vllm/benchmarks/datasets.py:
// input_low = floor(len * (1 - ratio)), input_high = ceil(len * (1 +
// ratio)), then rng.integers(low, high + 1)), computed here in the same
// float64 order, so the bounds agree with vLLM's even where rounding
// shows (⌈100·1.1⌉ is 111 in both). vLLM first subtracts the tokens its
// tokenizer adds to every prompt (num_special_tokens_to_add); cl100k_base
// as tiktoken counts adds none.
//
// The zero Length means "not given".
type Length struct {
	N      int     // tokens; > 0 when given
	Spread float64 // in [0, 1)
}

// ParseLength parses "N" or "N,spread", e.g. "1024" or "1024,0.1".
func ParseLength(s string) (Length, error) {
	ns, ss, hasSpread := strings.Cut(s, ",")
	n, err := strconv.Atoi(strings.TrimSpace(ns))
	if err != nil {
		return Length{}, fmt.Errorf("length %q: the token count must be an integer", s)
	}
	l := Length{N: n}
	if hasSpread {
		l.Spread, err = strconv.ParseFloat(strings.TrimSpace(ss), 64)
		if err != nil {
			return Length{}, fmt.Errorf("length %q: the spread must be a number in [0, 1)", s)
		}
	}
	if err := l.Validate(); err != nil {
		return Length{}, fmt.Errorf("length %q: %w", s, err)
	}
	return l, nil
}

// String formats l as ParseLength reads it.
func (l Length) String() string {
	if l.Spread == 0 {
		return strconv.Itoa(l.N)
	}
	return strconv.Itoa(l.N) + "," + strconv.FormatFloat(l.Spread, 'g', -1, 64)
}

// Validate checks that N is positive and Spread in [0, 1) (NaN is not).
func (l Length) Validate() error {
	if l.N <= 0 {
		return fmt.Errorf("the token count must be at least 1, got %d", l.N)
	}
	if !(l.Spread >= 0 && l.Spread < 1) {
		return fmt.Errorf("the spread must be in [0, 1), got %v", l.Spread)
	}
	return nil
}

// Bounds returns the shortest and longest length l draws, as vLLM
// computes them.
func (l Length) Bounds() (lo, hi int) {
	return int(math.Floor(float64(l.N) * (1 - l.Spread))), int(math.Ceil(float64(l.N) * (1 + l.Spread)))
}

// draw draws one length in Bounds.
func (l Length) draw(r *rand.Rand) int {
	lo, hi := l.Bounds()
	if hi <= lo {
		return lo
	}
	return lo + r.IntN(hi-lo+1)
}

// outputBounds are Bounds for an output length: vLLM raises both ends to
// at least 1, so that no request asks for 0 tokens.
func (l Length) outputBounds() (lo, hi int) {
	lo, hi = l.Bounds()
	return max(lo, 1), max(hi, 1)
}

func (l Length) drawOutput(r *rand.Rand) int {
	lo, hi := l.outputBounds()
	if hi <= lo {
		return lo
	}
	return lo + r.IntN(hi-lo+1)
}
