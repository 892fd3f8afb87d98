package schedule

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/openload/openload/field"
)

// The names of the arrival processes New takes (Spec.Kind), one a row of
// Processes.
const (
	Constant = "constant"
	Poisson  = "poisson"
	Gamma    = "gamma" // gamma-distributed gaps; Spec.Burstiness is the shape k
)

// Process is one arrival process New builds, with all that the other
// packages know of it: verify's count check, a sweep's early stop and the
// command line's help read a row and name no process themselves, so a new
// process is a new row of Processes.
//
// A process is exact, its count fixed in advance at ⌊Λ⌋ with Λ = ∫λ dt
// (Spec.Expected), or drawn from Spec.Seed as a renewal process: gaps of
// mean 1 in intensity time, mapped to time by Λ⁻¹ (stages.go), its count
// random around Λ with standard deviation Spread.
type Process struct {
	Name string // Spec.Kind
	// Params are the fields of Spec the process takes besides Rate,
	// Duration, Stages and (drawn) Seed; Validate refuses each for a
	// process that does not take it.
	Params []Param
	// Spread is the standard deviation of a drawn count around its
	// expected count Λ, for shape k = Spec.Burstiness; nil for an exact
	// process. The count check warns past CountSpreads of it, and
	// Spec.MaxCount bounds a count with it.
	Spread func(expected, k float64) float64
	// words names the count in the count check (CountWords); nil takes
	// the plain words.
	words func(k float64, staged bool) CountWords
	// gaps returns a drawn process's gaps in intensity time (mean 1) from
	// src; nil for the exact process, constant arrivals.
	gaps func(src rand.Source, k float64) func() float64
	// label is the process in a schedule's Name ("gamma k=0.5"); nil
	// takes Name.
	label func(k float64) string
	// plain builds the process without stages where it is not the
	// rescaled draw over one stage (Poisson's own draw, NewPoisson); nil
	// takes that draw.
	plain func(Spec) Schedule
}

// Param is a field of Spec that only some processes take.
type Param struct {
	Field string // the field of Spec: "Burstiness"
	Help  string // what it means, in a line that names no field
	value func(Spec) float64
	check func(Spec) error // its value, given the process takes it
}

// burstiness is gamma's shape k.
var burstiness = Param{
	Field: "Burstiness",
	Help:  "the gaps' shape k (> 0): 1 is poisson, below 1 burstier, above smoother; the mean gap stays 1/rate",
	value: func(s Spec) float64 { return s.Burstiness },
	check: func(s Spec) error {
		if k := s.Burstiness; math.IsNaN(k) || math.IsInf(k, 0) || k <= 0 {
			return field.Errorf("Burstiness", k, "{Burstiness} must be a finite number > 0 with {Kind} %s, got %v", s.Kind, k)
		}
		return nil
	},
}

// Processes is the table of arrival processes, in the order the help and
// errors list them. A replay (Replay, replay.go) is not among them: its
// offsets come from a file, not from a Spec.
func Processes() []Process {
	return []Process{
		{
			Name: Constant,
			words: func(_ float64, staged bool) CountWords {
				if staged {
					return CountWords{Mean: "⌊∫λ dt⌋ over the stages"}
				}
				return CountWords{Mean: "rate × duration"}
			},
		},
		{
			Name: Poisson,
			// A Poisson count has variance Λ.
			Spread: func(e, _ float64) float64 { return math.Sqrt(e) },
			words: func(_ float64, staged bool) CountWords {
				if staged {
					return CountWords{Draw: "poisson draw", Mean: "∫λ dt over the stages"}
				}
				return CountWords{Draw: "poisson draw", Mean: "λ·D"}
			},
			gaps:  func(src rand.Source, _ float64) func() float64 { return rand.New(src).ExpFloat64 },
			plain: func(s Spec) Schedule { return NewPoisson(s.Rate, s.Duration, s.Seed) },
		},
		{
			Name:   Gamma,
			Params: []Param{burstiness},
			// A renewal count's variance is Λ·CV² for large Λ, with a
			// gap's CV² = 1/k.
			Spread: func(e, k float64) float64 { return math.Sqrt(e / k) },
			words: func(k float64, _ bool) CountWords {
				return CountWords{Draw: fmt.Sprintf("gamma draw (k=%s)", FormatRate(k)), Mean: "∫λ dt", Spread: "√(Λ/k)"}
			},
			// gonum's gamma variate (Marsaglia–Tsang, and a method for
			// shapes below 0.2 where Marsaglia–Tsang's boost loses
			// precision); shape k and rate k give mean 1.
			gaps:  func(src rand.Source, k float64) func() float64 { return distuv.Gamma{Alpha: k, Beta: k, Src: src}.Rand },
			label: func(k float64) string { return fmt.Sprintf("gamma k=%s", FormatRate(k)) },
		},
	}
}

// Lookup is the process named name, and whether Processes has it.
func Lookup(name string) (Process, bool) {
	ps := Processes()
	if i := slices.IndexFunc(ps, func(p Process) bool { return p.Name == name }); i >= 0 {
		return ps[i], true
	}
	return Process{}, false
}

// NamesOf are the names of the processes keep holds, in the table's
// order.
func NamesOf(keep func(Process) bool) []string {
	var out []string
	for _, p := range Processes() {
		if keep(p) {
			out = append(out, p.Name)
		}
	}
	return out
}

// Exact reports whether the process's count is fixed in advance, ⌊Λ⌋.
func (a Process) Exact() bool { return a.Spread == nil }

// Takes reports whether the process takes the field of Spec named f.
func (a Process) Takes(f string) bool {
	for _, p := range a.Params {
		if p.Field == f {
			return true
		}
	}
	return false
}

// CountWords are how the count check names a schedule's count: a drawn
// one as "Draw scheduled N, expected Mean = Λ (z standard deviations of
// Spread)", an exact one as "scheduled N = Mean".
type CountWords struct {
	Draw   string // "poisson draw"
	Mean   string // what Λ is: "λ·D", "rate × duration"
	Spread string // the standard deviation's formula, "" to name none
}

// CountWords are the words of a's count for shape k, with or without
// stages.
func (a Process) CountWords(k float64, staged bool) CountWords {
	if a.words != nil {
		return a.words(k, staged)
	}
	w := CountWords{Draw: a.Name + " draw", Mean: "∫λ dt"}
	if a.Exact() {
		w.Mean = "⌊∫λ dt⌋"
	}
	return w
}

// validateKind checks the arrival process and the fields only some
// processes take.
func (s Spec) validateKind() error {
	a, ok := Lookup(s.Kind)
	if !ok {
		return field.Errorf("Kind", s.Kind, "{Kind} %q: unknown arrival process (known: %s)", s.Kind, strings.Join(NamesOf(func(Process) bool { return true }), ", "))
	}
	for _, p := range a.Params {
		if err := p.check(s); err != nil {
			return err
		}
	}
	for _, p := range params() {
		if v := p.value(s); v != 0 && !a.Takes(p.Field) {
			// The field's name in braces, so that the CLI names its flag.
			return field.Errorf(p.Field, v, "{"+p.Field+"} applies to {Kind} %s only, not %s", strings.Join(NamesOf(func(a Process) bool { return a.Takes(p.Field) }), " or "), s.Kind)
		}
	}
	return nil
}

// ParamOf is the Param of the field of Spec named f, and whether a
// process takes it.
func ParamOf(f string) (Param, bool) {
	ps := params()
	if i := slices.IndexFunc(ps, func(p Param) bool { return p.Field == f }); i >= 0 {
		return ps[i], true
	}
	return Param{}, false
}

// params are the Params of every process, each once.
func params() []Param {
	var out []Param
	seen := map[string]bool{}
	for _, a := range Processes() {
		for _, p := range a.Params {
			if !seen[p.Field] {
				seen[p.Field] = true
				out = append(out, p)
			}
		}
	}
	return out
}

// build returns the schedule of s, valid and of process a; st are its
// parsed stages, nil without.
func (a Process) build(s Spec, st []Stage) Schedule {
	switch {
	case a.Exact() && st != nil:
		return NewConstantStages(s.Rate, st)
	case a.Exact():
		return NewConstant(s.Rate, s.Duration)
	case st != nil:
		r := newDrawn(a, NewProfile(s.Rate, st), s.Seed, s.Burstiness)
		r.staged = true
		return r
	case a.plain != nil:
		return a.plain(s)
	}
	return newDrawn(a, NewProfile(s.Rate, []Stage{{Duration: s.Duration, Target: s.Rate}}), s.Seed, s.Burstiness)
}
