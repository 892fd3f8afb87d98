//go:build linux

package engine

import (
	"runtime"
	"time"

	"golang.org/x/sys/unix"
)

// Go's runtime timers on Linux wait in epoll with millisecond timeouts, so a
// timer of 6.25 ms fires about 1 ms late, and one under 1 ms waits a whole
// millisecond: measured here, p50 oversleep 1.0 ms for both. That lateness
// would be send delay of the generator's own making. The dispatcher instead
// runs on its own OS thread with the kernel's timer slack at 1 ns and sleeps
// with nanosleep(2), which wakes within about 0.1 ms.

type sleeper struct{ ok bool }

func newSleeper() *sleeper {
	runtime.LockOSThread()
	return &sleeper{ok: unix.Prctl(unix.PR_SET_TIMERSLACK, 1, 0, 0, 0) == nil}
}

func (s *sleeper) sleep(d time.Duration) {
	ts := unix.NsecToTimespec(int64(d))
	_ = unix.Nanosleep(&ts, nil) // EINTR only shortens the sleep; the caller re-reads the clock
}

// close releases the OS thread. The thread's timer slack changed, so it
// must not go back to the pool: leaving it locked makes the runtime end it
// when the goroutine exits.
func (s *sleeper) close() {
	if !s.ok {
		runtime.UnlockOSThread()
	}
}
