//go:build linux

package engine

import (
	"os"
	"time"
)

// fdAlarm is an alarm on a timerfd registered with the runtime's poller,
// as the dispatcher's sleeper (sleep_linux.go): re-arming it from another
// goroutine moves the wake-up of the one reading it.
type fdAlarm struct {
	f   *os.File
	fd  int
	buf [8]byte
}

func newAlarm() alarm {
	fd, err := newTimerfd()
	if err != nil {
		return newPokeAlarm()
	}
	return &fdAlarm{f: os.NewFile(uintptr(fd), "timerfd"), fd: fd}
}

func (a *fdAlarm) arm(d time.Duration) { _ = setTimerfd(a.fd, d) }

func (a *fdAlarm) wait() { _, _ = a.f.Read(a.buf[:]) }

func (a *fdAlarm) close() { a.f.Close() }
