package session

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/openload/openload/internal/splitmix"
)

// Think is a think time: fixed, or drawn per session and step.
//
//	200ms                     fixed
//	uniform(1s, 3s)           uniform in [1s, 3s]
//	exponential(2s)           exponential of mean 2s (Locust's and
//	                          JMeter's "random" timers draw it too)
//
// A draw is a pure function of the run's seed, the session's arrival seq
// and the step, so every shard draws the same for the same session.
type Think struct {
	kind byte // 0 fixed, 'u' uniform, 'e' exponential
	a, b time.Duration
}

// ParseThink parses a think time.
func ParseThink(s string) (Think, error) {
	s = strings.TrimSpace(s)
	name, args, ok := strings.Cut(s, "(")
	if !ok {
		d, err := time.ParseDuration(s)
		if err != nil || d < 0 {
			return Think{}, fmt.Errorf("think %q: want a duration ≥ 0 (200ms), uniform(A, B) or exponential(MEAN)", s)
		}
		return Think{a: d}, nil
	}
	args, closed := strings.CutSuffix(strings.TrimSpace(args), ")")
	var ds []time.Duration
	for _, a := range strings.Split(args, ",") {
		d, err := time.ParseDuration(strings.TrimSpace(a))
		if err != nil || d < 0 {
			return Think{}, fmt.Errorf("think %q: %q is no duration ≥ 0", s, strings.TrimSpace(a))
		}
		ds = append(ds, d)
	}
	switch name = strings.TrimSpace(name); {
	case !closed:
		return Think{}, fmt.Errorf("think %q: no closing parenthesis", s)
	case name == "uniform" && len(ds) == 2 && ds[0] <= ds[1]:
		return Think{kind: 'u', a: ds[0], b: ds[1]}, nil
	case name == "uniform":
		return Think{}, fmt.Errorf("think %q: want uniform(A, B) with A ≤ B", s)
	case name == "exponential" && len(ds) == 1 && ds[0] > 0:
		return Think{kind: 'e', a: ds[0]}, nil
	case name == "exponential":
		return Think{}, fmt.Errorf("think %q: want exponential(MEAN) with MEAN > 0", s)
	}
	return Think{}, fmt.Errorf("think %q: want a duration, uniform(A, B) or exponential(MEAN)", s)
}

// Draw is the think time before step k of session seq.
func (t Think) Draw(seed, seq uint64, k int) time.Duration {
	if t.kind == 0 {
		return t.a
	}
	u := splitmix.Unit(splitmix.At(seed^splitmix.Mix(uint64(k)+0x7468696e6b), seq))
	switch t.kind {
	case 'u':
		return t.a + time.Duration(u*float64(t.b-t.a))
	default:
		// 1−u is in (0, 1]: the log is finite.
		return time.Duration(-math.Log(1-u) * float64(t.a))
	}
}

// String is t as ParseThink reads it.
func (t Think) String() string {
	switch t.kind {
	case 'u':
		return fmt.Sprintf("uniform(%v, %v)", t.a, t.b)
	case 'e':
		return fmt.Sprintf("exponential(%v)", t.a)
	}
	return t.a.String()
}
