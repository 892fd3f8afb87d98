package verify

import (
	"fmt"
	"time"

	"github.com/openload/openload/result"
)

// Generator saturation thresholds: a generator that used more than
// SaturatedCPUShare of the cores it had (over the run, or in its busiest
// second), whose event loop (the epoll client) was busy more than that
// share of the time, or paused for GC for GCPauseShare of the send-delay budget or
// more, may have sent late for reasons of its own. A pause shorter than the
// budget cannot by itself push a send past it, so GC warns from the whole
// budget on (see docs/MEASUREMENTS.md, “GCPauseShare”).
const (
	SaturatedCPUShare = 0.9
	GCPauseShare      = 1.0
)

// generator checks openload's own health during the run (Result.Generator):
// when it was saturated, the send delay it measured is its own making and
// the response times understate what users would see from a healthy
// generator. Results without the section are not checked.
func generator(res *result.Result, opt Options) (Finding, bool) {
	g := res.Generator
	if g == nil {
		return Finding{}, false
	}
	f := Finding{Check: "generator", Severity: Pass}
	budget := float64(opt.SendDelayP99) / float64(time.Millisecond)
	cpu := "CPU not measured on this platform"
	if g.CPUKnown {
		cpu = fmt.Sprintf("CPU %.2f s = %.0f %% of %d cores (busiest second %.0f %%)",
			g.CPUSeconds, 100*g.CPUShare, g.GOMAXPROCS, 100*g.PeakCPUShare)
	}
	gc := fmt.Sprintf("%d GC cycles, pause p99 %s, max %s", g.GCCycles, fmtMs(g.GCPauseP99), fmtMs(g.GCPauseMax))
	var why []string
	if g.LoopBusy > 0 || g.PeakLoopBusy > 0 {
		cpu += fmt.Sprintf("; event loop busy %.0f %% of the time (busiest second %.0f %%)", 100*g.LoopBusy, 100*g.PeakLoopBusy)
		if g.LoopSliceUS > 0 {
			cpu += fmt.Sprintf(", scheduler slice %d µs", g.LoopSliceUS)
		}
	}
	if g.CPUKnown && (g.CPUShare > SaturatedCPUShare || g.PeakCPUShare > SaturatedCPUShare) {
		why = append(why, fmt.Sprintf("the generator used over %.0f %% of its cores", 100*SaturatedCPUShare))
	}
	if g.LoopBusy > SaturatedCPUShare || g.PeakLoopBusy > SaturatedCPUShare {
		why = append(why, fmt.Sprintf("its event loop, one thread, was busy over %.0f %% of the time", 100*SaturatedCPUShare))
	}
	if g.GCPauseMax >= GCPauseShare*budget {
		why = append(why, fmt.Sprintf("a GC pause of %s reached the send-delay budget of %s", fmtMs(g.GCPauseMax), fmtMs(budget)))
	}
	f.Message = cpu + "; " + gc
	switch {
	case res.Config.BuiltinStub != "" && res.Config.StubChild:
		f.Message += "; openload's own: the built-in stub ran in a child process"
	case res.Config.BuiltinStub != "":
		f.Message += "; includes the built-in stub, which ran in openload's process"
	}
	if len(why) > 0 {
		f.Severity = Warn
		f.Message = fmt.Sprintf("the generator may have been the bottleneck: %s; sends may have left late for reasons of openload's own, understating latency (%s; give it more cores, a lower rate, or split the rate over several generators)",
			joinAnd(why), f.Message)
	}
	return f, true
}

func joinAnd(xs []string) string {
	switch len(xs) {
	case 0:
		return ""
	case 1:
		return xs[0]
	}
	s := xs[0]
	for _, x := range xs[1 : len(xs)-1] {
		s += ", " + x
	}
	return s + " and " + xs[len(xs)-1]
}
