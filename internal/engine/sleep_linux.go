//go:build linux

package engine

import (
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// Go's runtime timers on Linux wait in epoll with millisecond timeouts, so
// they fire about a millisecond late (see docs/MEASUREMENTS.md, “Timerfd
// sleeps”). That lateness would be send delay of the generator's own
// making.
//
// The dispatcher instead sleeps on a timerfd(2) registered with the
// runtime's network poller: the kernel's high-resolution timer makes the
// descriptor readable on time, which wakes the poller's epoll_wait at once,
// and the dispatcher goroutine parks like any goroutine waiting for I/O. Its
// processor runs the workers it just readied meanwhile, on the same thread:
// no thread of its own, no hand-off to wake a worker.

type sleeper struct {
	f   *os.File // nil: fall back to time.Sleep
	fd  int      // f's descriptor (f.Fd would make it blocking)
	buf [8]byte
}

func newSleeper() *sleeper {
	fd, err := newTimerfd()
	if err != nil {
		return &sleeper{}
	}
	return &sleeper{f: os.NewFile(uintptr(fd), "timerfd"), fd: fd}
}

// newTimerfd returns a non-blocking timerfd on the monotonic clock; the
// dispatcher's sleeper and the epoll client's loop (epoll_linux.go) wait
// on one.
func newTimerfd() (int, error) {
	return unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
}

// setTimerfd makes fd readable d from now (at least 1 µs: 0 would disarm it).
func setTimerfd(fd int, d time.Duration) error {
	spec := unix.ItimerSpec{Value: unix.NsecToTimespec(int64(max(d, time.Microsecond)))}
	return unix.TimerfdSettime(fd, 0, &spec, nil)
}

func (s *sleeper) sleep(d time.Duration) {
	if s.f == nil {
		time.Sleep(d)
		return
	}
	if err := setTimerfd(s.fd, d); err != nil {
		time.Sleep(d)
		return
	}
	_, _ = s.f.Read(s.buf[:]) // an error only shortens the sleep; the caller re-reads the clock
}

func (s *sleeper) close() {
	if s.f != nil {
		s.f.Close()
	}
}
