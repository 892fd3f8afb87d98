//go:build !linux

package engine

import "time"

// sleeper falls back to the runtime's timers where timerfd(2) is not
// available (see sleep_linux.go).
type sleeper struct{}

func newSleeper() *sleeper { return &sleeper{} }

func (s *sleeper) sleep(d time.Duration) { time.Sleep(d) }

func (s *sleeper) close() {}
