package verify

import (
	"strings"
	"testing"

	"github.com/openload/openload/result"
)

func TestGeneratorCheck(t *testing.T) {
	base := func() *result.Generator {
		return &result.Generator{GOMAXPROCS: 2, WallSeconds: 10, CPUSeconds: 1, CPUKnown: true, CPUShare: 0.05, PeakCPUShare: 0.06, GCCycles: 3, GCPauseP99: 0.2, GCPauseMax: 0.5}
	}
	tests := []struct {
		name string
		set  func(*result.Generator)
		sev  Severity
		text string
	}{
		{"healthy, a half-budget GC pause is harmless", func(g *result.Generator) {}, Pass, "CPU 1.00 s = 5 % of 2 cores"},
		{"whole run saturated", func(g *result.Generator) { g.CPUShare = 0.95 }, Warn, "used over 90 % of its cores"},
		{"busiest second saturated", func(g *result.Generator) { g.PeakCPUShare = 0.97 }, Warn, "used over 90 % of its cores"},
		{"GC pause at the budget", func(g *result.Generator) { g.GCPauseMax = 1.0 }, Warn, "a GC pause of 1.000 ms reached the send-delay budget of 1.000 ms"},
		{"CPU unknown", func(g *result.Generator) { g.CPUKnown = false; g.CPUShare = 0.99 }, Pass, "CPU not measured"},
		{"event loop with room", func(g *result.Generator) { g.LoopBusy, g.PeakLoopBusy = 0.4, 0.5 }, Pass, "event loop busy 40 % of the time (busiest second 50 %)"},
		{"event loop with a short slice", func(g *result.Generator) { g.LoopBusy, g.PeakLoopBusy, g.LoopSliceUS = 0.4, 0.5, 100 }, Pass, "(busiest second 50 %), scheduler slice 100 µs"},
		// The loop is one thread: saturated at half of 2 cores.
		{"event loop saturated", func(g *result.Generator) { g.CPUShare, g.LoopBusy, g.PeakLoopBusy = 0.5, 0.93, 0.97 }, Warn, "its event loop, one thread, was busy over 90 % of the time"},
		{"event loop's busiest second saturated", func(g *result.Generator) { g.LoopBusy, g.PeakLoopBusy = 0.6, 0.95 }, Warn, "its event loop, one thread, was busy over 90 %"},
	}
	for _, tc := range tests {
		r := good()
		r.Generator = base()
		tc.set(r.Generator)
		f := find(t, Run(r, Options{}), "generator")
		if f.Severity != tc.sev || !strings.Contains(f.Message, tc.text) {
			t.Errorf("%s: %s %q, want %s containing %q", tc.name, f.Severity, f.Message, tc.sev, tc.text)
		}
	}
	// With the built-in stub the line says whether its work is in the
	// figures; against any other target it says nothing of a stub.
	for _, tc := range []struct {
		builtin string
		child   bool
		want    string
	}{
		{"4 workers × 50ms", true, "; openload's own: the built-in stub ran in a child process"},
		{"4 workers × 50ms", false, "; includes the built-in stub, which ran in openload's process"},
		{"", false, "max 0.500 ms"},
	} {
		r := good()
		r.Generator = base()
		r.Config.BuiltinStub, r.Config.StubChild = tc.builtin, tc.child
		if f := find(t, Run(r, Options{}), "generator"); !strings.HasSuffix(f.Message, tc.want) {
			t.Errorf("stub %q child %v: %q, want it to end %q", tc.builtin, tc.child, f.Message, tc.want)
		}
	}
	// A result without the section (older files) gets no generator finding.
	for _, f := range Run(good(), Options{}) {
		if f.Check == "generator" {
			t.Errorf("generator finding without a generator section: %+v", f)
		}
	}
}
