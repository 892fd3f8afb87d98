//go:build !linux

package engine

import "time"

// sleeper falls back to the runtime's timers where nanosleep(2) and timer
// slack are not available.
type sleeper struct{}

func newSleeper() *sleeper { return &sleeper{} }

func (s *sleeper) sleep(d time.Duration) { time.Sleep(d) }

func (s *sleeper) close() {}
