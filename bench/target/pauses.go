package main

import (
	"flag"
	"fmt"
	"runtime"
	"sync"
	"time"
)

// pauses measures how much CPU time the machine takes away from a program
// that wants all of it: one thread per core spins for -d, reading the
// clock, and every gap between two reads longer than -min is time that
// thread did not run (the kernel ran something else, or the hypervisor
// ran another machine). bench/run.sh runs it on the idle machine before
// the benchmark, so that BENCHMARKS.md says how noisy the cores were.
func pauses(args []string) error {
	fs := flag.NewFlagSet("pauses", flag.ContinueOnError)
	d := fs.Duration("d", 5*time.Second, "how long each thread spins")
	least := fs.Duration("min", 50*time.Microsecond, "the shortest gap counted as a pause")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *d <= 0 || *least <= 0 {
		return fmt.Errorf("pauses: -d and -min must be positive")
	}
	p := measurePauses(runtime.NumCPU(), *d, *least)
	fmt.Printf("%d threads × %v: lost %.2f %% of the time in %d pauses over %v (%d over 1 ms); longest %v\n",
		p.threads, *d, 100*p.lostShare(), p.count, *least, p.overMS, p.longest.Round(10*time.Microsecond))
	return nil
}

type pauseStats struct {
	threads int
	spun    time.Duration // all threads together
	lost    time.Duration // in pauses
	count   int
	overMS  int
	longest time.Duration
}

func (p pauseStats) lostShare() float64 {
	if p.spun <= 0 {
		return 0
	}
	return float64(p.lost) / float64(p.spun)
}

// measurePauses spins n threads for d each and adds up their gaps longer
// than least.
func measurePauses(n int, d, least time.Duration) pauseStats {
	gaps := make([][]time.Duration, n)
	spun := make([]time.Duration, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runtime.LockOSThread()
			start := time.Now()
			last := start
			for last.Sub(start) < d {
				now := time.Now()
				if g := now.Sub(last); g > least {
					gaps[i] = append(gaps[i], g)
				}
				last = now
			}
			spun[i] = last.Sub(start)
		}()
	}
	wg.Wait()
	p := pauseStats{threads: n}
	for i := range n {
		p.spun += spun[i]
		for _, g := range gaps[i] {
			p.lost += g
			p.count++
			if g > time.Millisecond {
				p.overMS++
			}
			p.longest = max(p.longest, g)
		}
	}
	return p
}
