//go:build !linux

package engine

// peakRSSMB is not measured off Linux.
func peakRSSMB() (float64, bool) { return 0, false }
