// Package selfmon samples openload's own resource use during a run, so
// that a result can say whether the generator, not the server, was short
// of CPU or paused for GC.
package selfmon

import (
	"math"
	"runtime"
	"runtime/metrics"
	"sync"
	"time"

	"github.com/openload/openload/result"
)

// Monitor samples openload's own resource use during a run: process CPU
// time (getrusage, rusage_unix.go) once a second, for the whole run and
// its busiest second, and the runtime's GC pause histogram and cycle count
// at the start and the end (runtime/metrics), so that the run's own pauses
// are the difference of the two.
//
// A generator that used nearly all the CPU it had, or paused for GC about
// as long as the send-delay budget, sent late for reasons of its own; the
// send-delay histogram shows the lateness, and verify names the cause.
type Monitor struct {
	start  time.Time
	cpu0   time.Duration
	pauses *metrics.Float64Histogram
	cycles uint64

	stopc    chan struct{}
	done     chan struct{}
	mu       sync.Mutex
	peak     float64              // busiest second's CPU share
	loop     func() time.Duration // the event loop's time waiting for events so far, if any
	loopFrom time.Time            // when the loop started
	loopPeak float64              // busiest second's loop busy share
	slice    time.Duration        // the loop thread's scheduler slice, if set
}

// WatchLoop samples, along with the CPU, how busy an event loop that
// starts now is: the time since, less waited, its cumulative time waiting
// for events.
func (m *Monitor) WatchLoop(waited func() time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.loop, m.loopFrom = waited, time.Now()
}

// loopBusy is the event loop's busy time from its start to at (m.mu held).
func (m *Monitor) loopBusy(at time.Time) time.Duration {
	return at.Sub(m.loopFrom) - m.loop()
}

// LoopSlice notes the scheduler slice the event loop's thread runs with
// (0: the kernel's default).
func (m *Monitor) LoopSlice(d time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.slice = d
}

// The runtime/metrics names read. pauseMetric is the GC's stop-the-world
// pause latencies since Go 1.22; oldPauseMetric is its deprecated alias.
const (
	pauseMetric    = "/sched/pauses/total/gc:seconds"
	oldPauseMetric = "/gc/pauses:seconds"
	cyclesMetric   = "/gc/cycles/total:gc-cycles"
)

// Start starts sampling.
func Start() *Monitor {
	m := &Monitor{start: time.Now(), stopc: make(chan struct{}), done: make(chan struct{})}
	m.cpu0, _ = processCPU()
	m.pauses, m.cycles = readGC()
	go m.sample()
	return m
}

// sample measures the CPU share of each whole second until stopped.
func (m *Monitor) sample() {
	defer close(m.done)
	t := time.NewTicker(time.Second)
	defer t.Stop()
	procs := float64(runtime.GOMAXPROCS(0))
	lastCPU, lastAt := m.cpu0, m.start
	var lastBusy time.Duration
	var lastLoopAt time.Time
	for {
		select {
		case <-m.stopc:
			return
		case now := <-t.C:
			m.mu.Lock()
			if m.loop != nil {
				busy := m.loopBusy(now)
				if !lastLoopAt.IsZero() {
					m.loopPeak = max(m.loopPeak, min(1, share(busy-lastBusy, now.Sub(lastLoopAt), 1)))
				}
				lastBusy, lastLoopAt = busy, now
			}
			m.mu.Unlock()
			cpu, ok := processCPU()
			if !ok {
				continue
			}
			m.mu.Lock()
			m.peak = max(m.peak, share(cpu-lastCPU, now.Sub(lastAt), procs))
			m.mu.Unlock()
			lastCPU, lastAt = cpu, now
		}
	}
}

// Stop ends the sampling and returns what the run used.
func (m *Monitor) Stop() result.Generator {
	close(m.stopc)
	<-m.done
	g := result.Generator{GOMAXPROCS: runtime.GOMAXPROCS(0)}
	wall := time.Since(m.start)
	g.WallSeconds = wall.Seconds()
	if cpu, ok := processCPU(); ok {
		g.CPUKnown = true
		g.CPUSeconds = (cpu - m.cpu0).Seconds()
		g.CPUShare = share(cpu-m.cpu0, wall, float64(g.GOMAXPROCS))
	}
	m.mu.Lock()
	g.PeakCPUShare = m.peak
	if m.loop != nil {
		now := time.Now()
		g.LoopBusy = round3(min(1, share(m.loopBusy(now), now.Sub(m.loopFrom), 1)))
		g.PeakLoopBusy = round3(m.loopPeak)
		g.LoopSliceUS = int(m.slice / time.Microsecond)
	}
	m.mu.Unlock()
	pauses, cycles := readGC()
	g.GCCycles = cycles - m.cycles
	g.GCPauseP99, g.GCPauseMax = pauseStats(m.pauses, pauses)
	g.MaxRSSMB = maxRSSMB()
	g.CPUSeconds = round3(g.CPUSeconds)
	g.WallSeconds = round3(g.WallSeconds)
	g.CPUShare = round3(g.CPUShare)
	g.PeakCPUShare = round3(g.PeakCPUShare)
	return g
}

func round3(x float64) float64 { return math.Round(x*1000) / 1000 }

// share is used over wall on n processors: the CPU share of n cores, or a
// thread's busy share with n = 1; 0 without wall time.
func share(used, wall time.Duration, n float64) float64 {
	if wall <= 0 {
		return 0
	}
	return float64(used) / (float64(wall) * n)
}

// readGC reads the cumulative GC pause histogram and cycle count.
func readGC() (*metrics.Float64Histogram, uint64) {
	s := []metrics.Sample{{Name: pauseMetric}, {Name: cyclesMetric}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindFloat64Histogram {
		s[0].Name = oldPauseMetric
		metrics.Read(s[:1])
	}
	var h *metrics.Float64Histogram
	if s[0].Value.Kind() == metrics.KindFloat64Histogram {
		h = s[0].Value.Float64Histogram()
	}
	var cycles uint64
	if s[1].Value.Kind() == metrics.KindUint64 {
		cycles = s[1].Value.Uint64()
	}
	return h, cycles
}

// pauseStats returns the p99 and the maximum, in ms, of the pauses counted
// in after but not in before (two readings of one cumulative histogram).
// A value is its bucket's upper bound (the lower one for the last, open
// bucket), so both are upper bounds to the bucket width.
func pauseStats(before, after *metrics.Float64Histogram) (p99, maxMs float64) {
	if after == nil {
		return 0, 0
	}
	diff := make([]uint64, len(after.Counts))
	var total uint64
	for i, c := range after.Counts {
		if before != nil && i < len(before.Counts) && len(before.Counts) == len(after.Counts) {
			c -= before.Counts[i]
		}
		diff[i] = c
		total += c
	}
	if total == 0 {
		return 0, 0
	}
	upper := func(i int) float64 {
		b := after.Buckets[i+1]
		if math.IsInf(b, 1) {
			b = after.Buckets[i]
		}
		return math.Round(b*1e6) / 1e3 // s → ms, to the µs
	}
	want := uint64(math.Ceil(0.99 * float64(total)))
	var seen uint64
	p99 = -1
	for i, c := range diff {
		if c == 0 {
			continue
		}
		seen += c
		if p99 < 0 && seen >= want {
			p99 = upper(i)
		}
		maxMs = upper(i)
	}
	return p99, maxMs
}
