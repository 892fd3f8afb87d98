package engine

import "syscall"

// peakRSSMB is the test process's peak resident set size in MiB
// (BenchmarkStreamEvents).
func peakRSSMB() (float64, bool) {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0, false
	}
	return float64(ru.Maxrss) / 1024, true // Linux: KiB
}
