//go:build linux

package engine

import (
	"os"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The beat.
//
// Woken by every response, the HTTP/1.1 loop slept and woke about once
// per request at a tenth of the machine's ceiling (39,794 context
// switches for 39,000 requests), and spent twice bombardier's system
// time doing it (docs/BENCHMARKS.md, “No idle cost”). It woke for each
// response because done was the clock's reading when the response was
// read, and a response read late would have made the server look slower.
//
// So every connection asks the kernel to stamp what it receives
// (SO_TIMESTAMPNS): recvmsg(2) then says when the bytes it returns
// arrived, on the wall clock, the stamp of the last segment it read
// (TCP keeps the newest stamp when it merges segments). A response's
// done is that stamp, turned into the run's offset, whenever the loop
// read it. And the loop, which must wake for the next arrival anyway,
// sleeps until then on an epoll set of its timerfd and eventfd alone
// (loopArrivals.quiet) and takes every response that came meanwhile when
// it wakes: one wake-up for the arrivals due and the responses in.
//
// The loop keeps waking for each event where a late read would cost
// more than CPU: while an arrival waits for a connection (a response
// frees one), while a request waits for room to write, once any
// exchange was lent to a goroutine or read as an event stream (their
// times are read from the clock: after the first, the run stays off
// the beat), in stream runs, and for sleeps longer than rawSleepMax.
// Failed exchanges take done from the clock, at most one beat late.
// OPENLOAD_NO_BEAT=1 keeps it off, to measure the difference.

// startBeat gives the loop its quiet epoll set and turns stamps on, or
// leaves the loop off the beat when either cannot be had.
func (l *epollLoop) startBeat() {
	if os.Getenv("OPENLOAD_NO_BEAT") != "" {
		return
	}
	q, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return
	}
	for _, fd := range []int{l.tfd, l.efd} {
		if unix.EpollCtl(q, unix.EPOLL_CTL_ADD, fd, &unix.EpollEvent{Events: unix.EPOLLIN, Fd: -1, Pad: int32(fd)}) != nil {
			unix.Close(q)
			return
		}
	}
	l.quiet, l.stamps = q, true
	l.msg.Iov, l.msg.Control = &l.iov, &l.oob[0]
	l.msg.SetIovlen(1)
}

// recv reads slot i's connection into p, as rawIO does, with recvmsg(2)
// when the loop stamps: it notes the stamp in the slot (slot.rx).
func (l *epollLoop) recv(i int32, p []byte) (int, error) {
	s := &l.slots[i]
	if !l.stamps {
		return rawIO(syscall.SYS_READ, s.fd, p)
	}
	l.iov.Base = unsafe.SliceData(p)
	l.iov.SetLen(len(p))
	l.msg.SetControllen(len(l.oob)) // the kernel sets it to what it wrote
	r, _, e := syscall.RawSyscall(unix.SYS_RECVMSG, uintptr(s.fd), uintptr(unsafe.Pointer(&l.msg)), 0)
	if e != 0 {
		return 0, e
	}
	if r > 0 {
		s.rx = l.stamp(l.oob[:l.msg.Controllen])
	}
	return int(r), nil
}

// stamp returns the run's offset of the SCM_TIMESTAMPNS stamp in the
// control messages b, or -1 when there is none (on Linux 6.18, reading
// a head that the server's close cut short brought none:
// TestEpollServerCloses):
// the exchange's done is then read from the clock, and the loop, which
// can no longer tell when responses came, leaves the beat.
func (l *epollLoop) stamp(b []byte) time.Duration {
	var ts unix.Timespec
	ok := len(b) >= unix.SizeofCmsghdr // else ParseOneSocketControlMessage panics
	if ok {
		h, data, _, err := unix.ParseOneSocketControlMessage(b)
		ok = err == nil && h.Level == unix.SOL_SOCKET && h.Type == unix.SCM_TIMESTAMPNS && len(data) >= int(unsafe.Sizeof(ts))
		if ok {
			copy(unsafe.Slice((*byte)(unsafe.Pointer(&ts)), unsafe.Sizeof(ts)), data)
		}
	}
	if !ok {
		l.stamps = false
		return -1
	}
	if l.wallOff == 0 {
		t := time.Now() // the wall clock and the run's offset, read together
		l.wallOff = t.UnixNano() - int64(t.Sub(l.g.start))
	}
	return time.Duration(ts.Nano() - l.wallOff)
}

// arrived returns slot s's done: when its response's last bytes arrived,
// or the clock's now when the stamp is missing or out of bounds (it
// cannot be before the request was in hand, nor after now: the wall
// clock was set meanwhile).
func (l *epollLoop) arrived(s *slot) time.Duration {
	now := l.g.since()
	if s.rx >= s.sent && s.rx <= now && !testClockDone {
		return s.rx
	}
	return now
}

// testClockDone, when set by a test, makes done the clock's reading when
// the loop read the response, as it was before the beat.
var testClockDone bool
