package selfmon

import (
	"math"
	"runtime"
	"runtime/metrics"
	"testing"
	"time"
)

// pauseStats reads the pauses of the run as the difference of two
// readings of one cumulative histogram, each at its bucket's upper bound.
func TestPauseStats(t *testing.T) {
	buckets := []float64{0, 1e-6, 1e-5, 1e-4, 1e-3, math.Inf(1)}
	before := &metrics.Float64Histogram{Buckets: buckets, Counts: []uint64{5, 0, 0, 0, 0}}
	// 99 pauses in (1 µs, 10 µs], 1 in (100 µs, 1 ms], 5 from before.
	after := &metrics.Float64Histogram{Buckets: buckets, Counts: []uint64{5, 99, 0, 1, 0}}
	if p99, maxMs := pauseStats(before, after); p99 != 0.01 || maxMs != 1 {
		t.Errorf("pauseStats = %v, %v ms, want 0.01 and 1", p99, maxMs)
	}
	// The open last bucket counts at its lower bound.
	after.Counts[4] = 1
	if _, maxMs := pauseStats(before, after); maxMs != 1 {
		t.Errorf("max with a pause in the open bucket = %v ms, want 1", maxMs)
	}
	if p99, maxMs := pauseStats(before, before); p99 != 0 || maxMs != 0 {
		t.Errorf("no pauses: %v, %v", p99, maxMs)
	}
	if p99, maxMs := pauseStats(nil, nil); p99 != 0 || maxMs != 0 {
		t.Errorf("no histogram: %v, %v", p99, maxMs)
	}
}

// A monitor counts the GC cycles run between Start and Stop, and an event
// loop that never waited was busy all along.
func TestMonitor(t *testing.T) {
	m := Start()
	m.WatchLoop(func() time.Duration { return 0 })
	m.LoopSlice(100 * time.Microsecond)
	runtime.GC()
	runtime.GC()
	g := m.Stop()
	if g.GCCycles < 2 {
		t.Errorf("GC cycles %d, want at least the 2 run", g.GCCycles)
	}
	if g.LoopBusy != 1 || g.LoopSliceUS != 100 {
		t.Errorf("loop busy %v, slice %d µs; want 1 and 100", g.LoopBusy, g.LoopSliceUS)
	}
	if g.GOMAXPROCS != runtime.GOMAXPROCS(0) || g.WallSeconds < 0 {
		t.Errorf("%+v", g)
	}
	if g.CPUKnown != (runtime.GOOS != "windows" && runtime.GOOS != "plan9" && runtime.GOOS != "js" && runtime.GOOS != "wasip1") {
		t.Errorf("CPU known %v on %s", g.CPUKnown, runtime.GOOS)
	}
}
