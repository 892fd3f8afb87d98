//go:build linux

package engine

import (
	"io"
	"net"
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
// frees one) unless paced (arrivals_linux.go), while a request waits
// for room to write, once any exchange was lent to a goroutine (its
// times are read from the clock) or read as an event stream (its head,
// events and done are dated by the kernel's stamps of the reads that
// brought them, as every loop-read exchange's are; the loop wakes for
// each event as the stream's user would): after the first, the run
// stays off the beat, in stream runs, and for sleeps
// longer than rawSleepMax.
// Failed exchanges take done from the clock, at most one beat late.
// OPENLOAD_NO_BEAT=1 keeps it off, to measure the difference.
//
// The HTTP/2 loop (h2loop_linux.go) keeps the same beat. One read there
// may end several streams of a connection, each then dated by the read's
// stamp, the newest segment's: late by at most one beat for those that
// ended earlier in it, never later than the clock's reading would be. It
// also wakes for each event while a re-sent stream or a dial is waited
// for, or a body waits for a window; arrivals that wait for the cap of
// streams are paced alike.

// stamper is what a loop keeps to read the kernel's stamps and to sleep
// on the beat: one home for both event loops (epollLoop, h2Loop).
type stamper struct {
	gen     *generator // whose clock the stamps are read against
	stamps  bool       // every connection has SO_TIMESTAMPNS: its reads say when their bytes arrived
	plain   bool       // no exchange was lent or read as a stream so far
	wallOff int64      // the wall clock at offset 0, in Unix ns, as of this wake; 0: not read yet
	hold    io.Closer  // keeps the kernel stamping while the loop runs (holdStamps), or nil
	msg     unix.Msghdr
	iov     unix.Iovec
	oob     [64]byte   // recvmsg's control messages: the stamp
	bytes   *wireBytes // the run's byte counts: recv's and writeFD's (bytes.go)
}

// startBeat gives the loop its quiet epoll set (a's timerfd and the
// loop's eventfd efd) and turns stamps on, or leaves the loop off the beat
// when either cannot be had.
func (st *stamper) startBeat(a *loopArrivals, efd int) {
	st.gen = a.g
	if noBeat() {
		return
	}
	q, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return
	}
	for _, fd := range []int{a.tfd, efd} {
		if unix.EpollCtl(q, unix.EPOLL_CTL_ADD, fd, &unix.EpollEvent{Events: unix.EPOLLIN, Fd: -1, Pad: int32(fd)}) != nil {
			unix.Close(q)
			return
		}
	}
	a.quiet, st.stamps = q, true
	if st.hold, a.g.warmHold = a.g.warmHold, nil; st.hold == nil {
		st.hold = holdStamps()
	}
	st.msg.Iov, st.msg.Control = &st.iov, &st.oob[0]
	st.msg.SetIovlen(1)
}

// stopBeat lets the kernel stop stamping, as far as this loop is concerned.
func (st *stamper) stopBeat() {
	if st.hold != nil {
		st.hold.Close()
		st.hold = nil
	}
}

// holdEarly takes the loops' hold on the kernel's stamping (holdStamps)
// before the clock starts, for an open run a loop will send: its wait
// (holdSettle reads at least) is then not the first arrivals' send
// delay, and the server's SETTINGS that an HTTP/2 dial before the start
// reads come stamped (unstamped, they took the loop off the beat in 2
// runs of 10 beside a CPU hog). The loop's startBeat adopts it.
func (g *generator) holdEarly() {
	cfg := &g.cfg
	if g.due == nil || !cfg.Epoll || cfg.Retry.Enabled() || noBeat() {
		return // no loop sends this run (newEpollLoop, newH2Loop)
	}
	if h2LoopApplies(cfg) || g.lean != nil && !g.lean.head {
		g.warmHold = holdStamps()
	}
}

// holdStamps waits until the kernel stamps what its TCP sockets receive
// and returns a socket that keeps it so until closed; nil when its reads
// did not come stamped holdSettle times in a row within 300 tries a
// millisecond apart.
//
// The kernel stamps received segments only while a static key is on, and
// the first socket to ask for stamps has it turned on later, by a work
// queue (net_enable_timestamp, net/core/dev.c); the last socket to close
// has it turned off the same way. A TCP read of bytes that came before
// that has no stamp, and takes the loop off the beat for the run: 2 runs
// in 56 at 11,570/s (one of them 1.5 ms in), each at 1.5 times the CPU
// (docs/MEASUREMENTS.md, "holdStamps"). So the loop asks first,
// on a loopback connection of its own, and sends itself a byte until the
// read comes stamped, before its first request; and it keeps that socket
// open while it runs, so that the key stays on while its own connections
// close and open.
//
// One stamped read is not enough. When the last socket of another loop
// (another run, or another process) has just closed, the work queue may
// be turning the key off as this socket asks: the ask is then deferred
// to a second run of the work, and reads come stamped until the first
// run's patching is done, unstamped until the second's. Returning at the
// first stamped read, the next connections' first reads were unstamped
// in 10 of 15 runs of TestHoldStamps after two loops had closed; hence
// holdSettle stamped reads in a row, and an unstamped one starts the
// count again.
func holdStamps() io.Closer {
	ln, err := net.ListenTCP("tcp4", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		return nil
	}
	defer ln.Close()
	c, err := net.DialTCP("tcp4", nil, ln.Addr().(*net.TCPAddr))
	if err != nil {
		return nil
	}
	if s, err := ln.AcceptTCP(); err == nil {
		defer s.Close()
		// A read that never comes ends the wait too; c is not read again.
		if rc, err := c.SyscallConn(); err == nil && c.SetReadDeadline(time.Now().Add(2*time.Second)) == nil && stampedEcho(rc, s) {
			return c
		}
	}
	c.Close()
	return nil
}

// holdSettle is how many reads a millisecond apart must come stamped in
// a row before holdStamps trusts the key to stay on: longer than the
// work queue takes to turn it off and on again (holdStamps).
const holdSettle = 10

// stampedEcho asks rc's socket for stamps and writes a byte to it from s
// until the socket has read holdSettle in a row with a stamp, for up to
// 300 tries.
func stampedEcho(rc syscall.RawConn, s io.Writer) bool {
	var serr error
	if err := rc.Control(func(fd uintptr) { serr = askStamps(int(fd)) }); err != nil || serr != nil {
		return false
	}
	streak := 0
	for range 300 {
		stamped, err := stampedRead(rc, s)
		if err != nil {
			return false
		}
		streak++
		if !stamped {
			streak = 0
		}
		if streak == holdSettle {
			return true
		}
		time.Sleep(time.Millisecond)
	}
	return false
}

// stampedRead writes a byte to rc's socket from s, reads it, and says
// whether the read came with a stamp.
func stampedRead(rc syscall.RawConn, s io.Writer) (bool, error) {
	if _, err := s.Write([]byte{0}); err != nil {
		return false, err
	}
	var b [1]byte
	var oob [64]byte
	stamped := false
	var rerr error
	err := rc.Read(func(fd uintptr) bool {
		n, oobn, _, _, err := unix.Recvmsg(int(fd), b[:], oob[:], 0)
		if err == unix.EAGAIN {
			return false
		}
		_, ok := stampOf(oob[:oobn])
		stamped, rerr = err == nil && n == 1 && ok, err
		return true
	})
	if err != nil {
		return false, err
	}
	return stamped, rerr
}

// askStamps asks the kernel to stamp what socket fd receives.
func askStamps(fd int) error {
	return unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1)
}

// noBeat says whether OPENLOAD_NO_BEAT=1 keeps the loops off the beat.
func noBeat() bool { return os.Getenv("OPENLOAD_NO_BEAT") != "" }

// stampConn asks the kernel to stamp what connection fd receives; the
// loop leaves the beat if it will not.
func (st *stamper) stampConn(fd int) {
	if st.stamps && askStamps(fd) != nil {
		st.stamps = false
	}
}

// stampFromConnect is the HTTP/2 dials' net.Dialer Control: the server
// speaks first there (its SETTINGS; over TLS its session tickets), and a
// read of bytes that came before SO_TIMESTAMPNS was set has no stamp, which
// would take the loop off the beat (stamp).
func stampFromConnect(_, _ string, rc syscall.RawConn) error {
	if noBeat() {
		return nil
	}
	return rc.Control(func(fd uintptr) {
		// Refused, the loop's stampConn is refused too and says so.
		_ = askStamps(int(fd))
	})
}

// recv reads fd into p, as rawIO does, with recvmsg(2) when the loop
// stamps; rx is when the bytes read arrived, or -1.
func (st *stamper) recv(fd int, p []byte) (n int, rx time.Duration, err error) {
	if !st.stamps {
		n, err = rawIO(syscall.SYS_READ, fd, p)
		st.bytes.got(n)
		return n, -1, err
	}
	st.iov.Base = unsafe.SliceData(p)
	st.iov.SetLen(len(p))
	st.msg.SetControllen(len(st.oob)) // the kernel sets it to what it wrote
	r, _, e := syscall.RawSyscall(unix.SYS_RECVMSG, uintptr(fd), uintptr(unsafe.Pointer(&st.msg)), 0)
	if e != 0 {
		return 0, -1, e
	}
	if r == 0 {
		return 0, -1, nil
	}
	st.bytes.got(int(r))
	return int(r), st.stamp(st.oob[:st.msg.Controllen]), nil
}

// writeFD is write(2) of p on fd, as rawIO, counted: every write of the
// loops' connections goes through it.
func (st *stamper) writeFD(fd int, p []byte) (int, error) {
	n, err := rawIO(syscall.SYS_WRITE, fd, p)
	st.bytes.wrote(n)
	return n, err
}

// stamp returns the run's offset of the SCM_TIMESTAMPNS stamp in the
// control messages b, or -1 when there is none (on Linux 6.18, reading
// a head that the server's close cut short brought none:
// TestEpollServerCloses):
// the exchange's done is then read from the clock, and the loop, which
// can no longer tell when responses came, leaves the beat.
func (st *stamper) stamp(b []byte) time.Duration {
	ts, ok := stampOf(b)
	if !ok {
		st.stamps = false
		return -1
	}
	if st.wallOff == 0 {
		t := time.Now() // the wall clock and the run's offset, read together
		st.wallOff = t.UnixNano() - int64(t.Sub(st.gen.start))
	}
	return time.Duration(ts.Nano() - st.wallOff)
}

// stampOf returns the SCM_TIMESTAMPNS stamp in the control messages b.
func stampOf(b []byte) (ts unix.Timespec, ok bool) {
	if len(b) < unix.SizeofCmsghdr { // else ParseOneSocketControlMessage panics
		return ts, false
	}
	h, data, _, err := unix.ParseOneSocketControlMessage(b)
	if err != nil || h.Level != unix.SOL_SOCKET || h.Type != unix.SCM_TIMESTAMPNS || len(data) < int(unsafe.Sizeof(ts)) {
		return ts, false
	}
	copy(unsafe.Slice((*byte)(unsafe.Pointer(&ts)), unsafe.Sizeof(ts)), data)
	return ts, true
}

// arrived returns the done of an exchange sent at sent whose last bytes
// came in a read stamped rx: rx, or the clock's now when the stamp is
// missing or out of bounds (it cannot be before the request was in hand,
// nor after now: the wall clock was set meanwhile).
func (st *stamper) arrived(rx, sent time.Duration) time.Duration {
	now := st.gen.since()
	if rx >= sent && rx <= now && !testClockDone {
		return rx
	}
	return now
}

// testClockDone, when set by a test, makes done the clock's reading when
// the loop read the response, as it was before the beat.
var testClockDone bool
