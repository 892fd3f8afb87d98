//go:build unix

package selfmon

import (
	"runtime"
	"syscall"
	"time"
)

// processCPU returns the CPU time (user + system) the process has used.
func processCPU() (time.Duration, bool) {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}

// maxRSSMB returns the process's peak resident set size in MiB.
func maxRSSMB() float64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	kb := float64(ru.Maxrss) // kilobytes on Linux, bytes on Darwin
	if runtime.GOOS == "darwin" {
		kb /= 1024
	}
	return round3(kb / 1024)
}
