package schedule

import (
	"math"
	"strings"
	"testing"
	"time"
)

// TestProcesses holds every row of the table to what New, Validate and
// MaxCount make of it, so that a new row is built, checked and bounded
// as the others are: a plain and a staged spec of each build a schedule
// that is exact when the row is, named after the row, whose count an
// exact row fixes and a drawn row keeps within MaxCount; a parameter the
// row does not take is refused.
func TestProcesses(t *testing.T) {
	if len(Processes()) == 0 {
		t.Fatal("no arrival process")
	}
	for _, a := range Processes() {
		got, ok := Lookup(a.Name)
		if !ok || got.Name != a.Name {
			t.Errorf("Lookup(%q) = %q, %v", a.Name, got.Name, ok)
		}
		for _, stages := range []string{"", "1s:100,1s:300"} {
			s := Spec{Kind: a.Name, Rate: 200, Duration: 2 * time.Second, Seed: 3, Stages: stages}
			for _, p := range a.Params {
				setParam(t, &s, p.Field, 0.5)
			}
			sch, err := New(s)
			if err != nil {
				t.Errorf("%s %q: %v", a.Name, stages, err)
				continue
			}
			if sch.Exact() != a.Exact() {
				t.Errorf("%s: the schedule's Exact %v, the row's %v", a.Name, sch.Exact(), a.Exact())
			}
			if !strings.HasPrefix(sch.Name(), a.Name) {
				t.Errorf("%s: schedule named %q", a.Name, sch.Name())
			}
			n := 0
			for _, ok := sch.Next(); ok; _, ok = sch.Next() {
				n++
			}
			switch {
			case a.Exact() && float64(n) != s.MaxCount():
				t.Errorf("%s %q: %d arrivals, want ⌊Λ⌋ = %v", a.Name, stages, n, s.MaxCount())
			case !a.Exact() && (float64(n) > s.MaxCount() || a.Spread(s.Expected(), s.Burstiness) <= 0):
				t.Errorf("%s %q: %d arrivals, MaxCount %v, spread %v", a.Name, stages, n, s.MaxCount(), a.Spread(s.Expected(), s.Burstiness))
			}
			w := a.CountWords(s.Burstiness, stages != "")
			if w.Mean == "" || !a.Exact() && w.Draw == "" {
				t.Errorf("%s: count words %+v", a.Name, w)
			}
		}
		for _, p := range params() {
			if a.Takes(p.Field) {
				continue
			}
			s := Spec{Kind: a.Name, Rate: 200, Duration: time.Second}
			setParam(t, &s, p.Field, 0.5)
			if err := s.Validate(); err == nil || !strings.HasPrefix(err.Error(), p.Field+" applies to Kind") {
				t.Errorf("%s with %s: %v, want it refused", a.Name, p.Field, err)
			}
		}
	}
	if _, ok := Lookup(Replay); ok {
		t.Error("a replay is built from a file, not by New: it has no row")
	}
}

// setParam sets the field of s a Param names: each field a row's Params
// hold needs a line here.
func setParam(t *testing.T, s *Spec, f string, v float64) {
	t.Helper()
	switch f {
	case "Burstiness":
		s.Burstiness = v
	default:
		t.Fatalf("no value for the parameter %s in this test", f)
	}
}

// TestProcessWords: a row without words of its own is named plainly.
func TestProcessWords(t *testing.T) {
	drawn := Process{Name: "weibull", Spread: func(e, _ float64) float64 { return math.Sqrt(e) }}
	if w := drawn.CountWords(1, false); w.Draw != "weibull draw" || w.Mean != "∫λ dt" || w.Spread != "" {
		t.Errorf("drawn: %+v", w)
	}
	if w := (Process{Name: "even"}).CountWords(0, true); w.Mean != "⌊∫λ dt⌋" {
		t.Errorf("exact: %+v", w)
	}
}
