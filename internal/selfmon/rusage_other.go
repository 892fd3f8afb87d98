//go:build !unix

package selfmon

import "time"

// processCPU is not measured on this platform.
func processCPU() (time.Duration, bool) { return 0, false }

// maxRSSMB is not measured on this platform.
func maxRSSMB() float64 { return 0 }
