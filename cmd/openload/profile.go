//go:build openload_profile

package main

import (
	"fmt"
	"os"
	"runtime/pprof"
)

// Built with -tags openload_profile, openload writes a CPU profile of
// itself to the file named by OPENLOAD_CPUPROFILE (for maintainers: where
// does the generator's CPU per request go? see docs/BENCHMARKS.md).
func startProfile() func() {
	p := os.Getenv("OPENLOAD_CPUPROFILE")
	if p == "" {
		return func() {}
	}
	f, err := os.Create(p)
	if err == nil {
		err = pprof.StartCPUProfile(f)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "openload: cpu profile:", err)
		return func() {}
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}
}
