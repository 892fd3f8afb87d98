//go:build linux

package engine

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"runtime"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/openload/openload/internal/h1"
	"github.com/openload/openload/internal/recorder"
	"github.com/openload/openload/schedule"
)

// The epoll client (Stats.Client "epoll", Config.Epoll): the lean client's
// requests and h1.ParseHead's responses, driven by one event loop instead
// of a dispatcher and a goroutine per connection.
//
// On the lean path every request costs two goroutine hand-offs: the
// dispatcher readies a worker, and the runtime's network poller readies it
// again when the response arrives. On two shared cores those hand-offs, the
// futex wake-ups of idle threads they cause and the read that finds nothing
// after each write are a quarter of the generator's CPU per request (see
// docs/MEASUREMENTS.md, “The epoll client”).
//
// Here one goroutine owns the schedule and every connection: it waits in
// epoll_wait(2) on the sockets, a timerfd(2) for the next arrival and an
// eventfd(2) for news from other goroutines, writes each request the moment
// it is due and reads each response when epoll says it is there. Per
// request that leaves one write(2), one read(2) and a share of one
// epoll_wait.
//
// The loop reads plain responses itself (h1.ParseHead), their class
// headers and Server-Timing too (heads.go), and chunked event streams
// (epollstream_linux.go), with the parsers the goroutines use. Any other
// response (other chunked bodies, close-delimited, 1xx, a head over 4
// KiB, a body over Config.MaxBody) is lent, with its connection, to a
// goroutine that reads it with http.ReadResponse, as the lean client
// reads the heads it does not read itself, then gives the connection
// back. Dials run in goroutines too, so a slow dial never holds
// up the loop. Everything else is the lean client's: the request bytes, the
// deadline (attempt + timeout), one re-send on a reused connection that
// failed before any byte of its response when the run's rule allows
// (Config.Resend, wire.go),
// Connection: close, the outcomes (leanOutcome) and the drain (abort).
//
// It is used when Config.Epoll and Config.Lean are set, on Linux, for open
// runs (Run) that do not send HEAD and make no retries; everything else
// takes the lean or net/http path.

// The states of a connection slot.
const (
	slotFree = iota // no connection
	slotIdle        // an idle keep-alive connection
	slotDial        // a goroutine dials for the slot's request
	slotBusy        // the request is written, or being written; the loop reads the response
	slotLent        // a goroutine reads the response (not plain)
)

// slotBuf is the read buffer of a slot: a response head must fit in it to
// be read by the loop.
const slotBuf = 4096

type slot struct {
	state   uint8
	reused  bool // the connection served an exchange before
	retried bool // the exchange was retried once on a new connection
	head    bool // the response head was read
	keep    bool // the connection may serve another exchange after this one
	fd      int
	it      item
	v       *variant      // the request's (lean.go), once sent
	attempt time.Duration // the request's first attempt
	sent    time.Duration // when the connection was in hand
	tx      sends         // the attempts written (wire.go)
	status  int
	heads   heads  // what the head said beyond the status, once head
	left    int64  // body bytes still to read, once head
	wb      []byte // the request; wb[woff:] is still to write
	woff    int
	out     bool   // epoll watches for room to write
	hup     bool   // the server closed its side: the connection ends with the exchange
	buf     []byte // response bytes not consumed yet (buf[:n])
	n       int
	rx      time.Duration // when the bytes of the last read arrived, by the kernel's stamp, or -1
	st      *loopStream   // an event stream the loop reads (epollstream_linux.go), or nil
	grab    *grab         // the body of a refusal the run keeps (refusal.go), or nil
}

// clear forgets what slot s's exchange read and wrote, once the exchange
// ended or before it is tried again: the next record is built from its
// own exchange only, whatever the path to it (a dial that fails keeps no
// status, head or class value of the exchange before).
func (s *slot) clear() {
	s.head, s.status, s.heads, s.left = false, 0, heads{}, 0
	s.keep, s.hup, s.n = false, false, 0
	s.wb, s.woff = s.wb[:0], 0
	s.grab = nil
}

// unheard reports whether slot s's request was written and no byte of
// its answer came: the server may not have read it (wire.go).
func (s *slot) unheard() bool { return s.woff > 0 && !s.head && s.n == 0 && s.st == nil }

// news is what other goroutines tell the loop: a dial's connection (fd ≥ 0)
// or error, or a lent slot given back with its connection (fd ≥ 0) or
// without.
type news struct {
	slot int32
	fd   int
	err  error
	lent bool
}

// One loop serves the whole run: two, one per processor with half the
// connections each, woke twice as often for half the events per wake-up,
// and cost more CPU and send delay (see docs/MEASUREMENTS.md, “One event
// loop”).
type epollLoop struct {
	loopArrivals
	t *leanTransport
	w *worker // the loop's shard and stamp digits

	slots []slot
	idle  []int32 // slots with an idle connection, most recently used last
	free  []int32 // slots without a connection
	inUse int     // slots dialling, busy or lent

	nextCheck    time.Duration  // earliest deadline of a busy slot, or never
	discard      *h1.DiscardBuf // where body bytes are read to be dropped
	ts           tokenSink      // content events of streams, not yet handed over
	spareStreams []*loopStream
	lentSh       *shard // records of lent exchanges
	out          int    // goroutines (dials, lent exchanges) that have not reported

	stamper     // the beat (beat_linux.go)
	writing int // slots whose request waits for room to write

	loopInbox[news] // what goroutines tell the loop
}

// never is an offset no run reaches.
const never = time.Duration(1<<63 - 1)

// maxPending bounds the arrivals taken from the schedule that wait for a
// connection, as the open model's queue does on the lean path: past it
// the loop stops taking arrivals until a connection frees up (they stay
// due, and their send delay counts from their scheduled time).
const maxPending = 1 << 14

// newEpollLoop returns the event loop for g's open run of s, or nil when
// the epoll client does not apply (see above) or its descriptors cannot be
// had. The loop closes dispatched when the schedule is spent or the run's
// context cancelled.
func newEpollLoop(g *generator, s schedule.Schedule, stats *Stats, dispatched chan<- struct{}) *epollLoop {
	t := g.lean
	if !g.cfg.Epoll || t == nil || t.head || g.retry != nil || g.cfg.TargetStream != nil {
		return nil
	}
	ep, tfd, efd, err := openLoop() // arrivals_linux.go
	if err != nil {
		return nil
	}
	l := &epollLoop{loopArrivals: newLoopArrivals(g, stats, dispatched, s, ep, tfd), t: t, w: g.newWorker(),
		loopInbox: loopInbox[news]{efd: efd}, slots: make([]slot, g.cfg.Connections), nextCheck: never,
		discard: h1.GetDiscardBuf(), lentSh: g.sink.newShard(), stamper: stamper{plain: !t.stream, bytes: &g.bytes}}
	l.ts.sh = l.w.shard
	l.bounded = true // batchArrivals
	for i := range l.slots {
		l.slots[i].fd = -1
		l.free = append(l.free, int32(len(l.slots)-1-i)) // slot 0 first
	}
	l.startBeat(&l.loopArrivals, efd)
	l.adoptWarm() // predial_linux.go
	l.off, l.scheduling = s.Next()
	g.nextDue.Store(int64(l.off)) // endSchedule stores notDue when there is none
	l.seq = seqOf(s, 0)
	if !l.scheduling {
		l.endSchedule(false)
	}
	return l
}

// start runs the loop in a goroutine of wg; it returns when every request
// has its record. The run's self-monitoring samples how busy the loop is.
func (l *epollLoop) start(ctx context.Context, wg *sync.WaitGroup) {
	l.startLoop(wg, func() { l.run(ctx) })
}

// loopSlice is the scheduler slice the loop's thread asks for.
//
// The loop sleeps and wakes thousands of times a second, and on a machine
// the server under test shares, its thread often wakes while the server's
// threads hold every core. Linux's fair scheduler (EEVDF) then lets the
// running thread finish its slice before the loop runs: requests leave
// late and responses are read late, which shows as send delay and as
// service time the server did not take. A thread that asks for a shorter
// slice gets an earlier deadline and runs first when it wakes; over time
// it gets the same share of CPU, in shorter turns. 100 µs is the shortest
// slice the kernel takes (it clamps a shorter one, which shortSlice's
// read-back then rejects); longer ones did worse (see
// docs/MEASUREMENTS.md, “loopSlice”).
const loopSlice = 100 * time.Microsecond

// shortSlice asks for loopSlice on the calling thread, keeping its policy
// and nice value, and returns the slice the kernel reports back: loopSlice
// on kernels that take custom slices (Linux 6.12 and later), 0 where it
// could not be read or set.
func shortSlice() time.Duration {
	a, err := unix.SchedGetAttr(0, 0)
	if err != nil || (a.Policy != unix.SCHED_NORMAL && a.Policy != unix.SCHED_BATCH) {
		return 0
	}
	a.Runtime = uint64(loopSlice)
	if unix.SchedSetAttr(0, a, 0) != nil {
		return 0
	}
	if a, err = unix.SchedGetAttr(0, 0); err != nil || a.Runtime != uint64(loopSlice) {
		return 0
	}
	return loopSlice
}

// run sends every arrival and reads the responses, until the schedule is
// spent, nothing waits and every exchange is over.
func (l *epollLoop) run(ctx context.Context) {
	g := l.g
	defer l.close()
	defer l.wakeOn(ctx, g.drain)()
	aborted := false
	for {
		now := g.since()
		if !aborted && g.drain.Err() != nil {
			aborted = true
			l.abort()
		}
		next := l.take(ctx, now, l.inUse)
		if aborted {
			l.abandonPending(l.w.shard)
		}
		// Expire before assigning: a slot a timeout frees takes a waiting
		// arrival now, not at the next event, which may never come.
		if now >= l.nextCheck {
			l.expire(now)
		}
		l.assign()
		if !l.scheduling && l.pending.len() == 0 && l.inUse == 0 && l.out == 0 {
			return
		}
		// Sleep until the next arrival, the next deadline or an event.
		// Arrivals still waiting after assign wait for a slot: the limit.
		check := l.sleepOn(l.stamps && l.plain && l.writing == 0, now, l.nextCheck, l.inUse, true)
		l.wallOff = 0
		evs, err := l.wait(now, next, check)
		if err != nil {
			l.broken(err)
			return
		}
		for _, ev := range evs {
			l.event(ev)
		}
	}
}

func (l *epollLoop) event(ev unix.EpollEvent) {
	if ev.Fd < 0 {
		if l.ownEvent(int(ev.Pad)) {
			l.news()
		}
		return
	}
	i := ev.Fd
	s := &l.slots[i]
	if s.fd != int(ev.Pad) {
		return // the event of a connection closed since
	}
	switch s.state {
	case slotIdle:
		// An idle connection is readable: the server closed it, or sent
		// what nobody asked for. Either way it is done.
		l.closeConn(i)
		s.state = slotFree
		l.free = append(l.free, i)
		l.removeIdle(i)
	case slotBusy:
		if ev.Events&unix.EPOLLOUT != 0 && s.woff < len(s.wb) {
			l.write(i)
			if s.state != slotBusy {
				return
			}
		}
		if ev.Events&(unix.EPOLLIN|unix.EPOLLRDHUP|unix.EPOLLHUP|unix.EPOLLERR) != 0 {
			// A FIN that came with the response: the connection must not
			// go idle, or the next request would be written where no one
			// reads it.
			s.hup = ev.Events&(unix.EPOLLRDHUP|unix.EPOLLHUP) != 0
			l.read(i)
		}
	}
}

// news takes the inbox's news: dialled connections and lent slots given back.
func (l *epollLoop) news() {
	for _, n := range l.loopInbox.news() {
		l.out--
		s := &l.slots[n.slot]
		if n.lent {
			l.inUse--
			if n.fd >= 0 && !l.t.aborted.Load() && l.register(n.slot, n.fd) == nil {
				s.reused = true
				l.idleSlot(n.slot)
			} else {
				if n.fd >= 0 {
					unix.Close(n.fd)
				}
				s.state = slotFree
				l.free = append(l.free, n.slot)
			}
			continue
		}
		if s.state != slotDial { // abandoned when the drain expired
			if n.fd >= 0 {
				unix.Close(n.fd)
			}
			continue
		}
		if n.err != nil {
			l.fail(n.slot, -1, n.err)
			continue
		}
		if err := l.register(n.slot, n.fd); err != nil {
			unix.Close(n.fd)
			l.fail(n.slot, -1, err)
			continue
		}
		s.reused = false
		l.send(n.slot, l.g.since())
	}
}

func (l *epollLoop) register(i int32, fd int) error {
	s := &l.slots[i]
	s.fd = fd
	l.stampConn(fd)
	err := unix.EpollCtl(l.ep, unix.EPOLL_CTL_ADD, fd, &unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLRDHUP, Fd: i, Pad: int32(fd)})
	if err != nil {
		s.fd = -1
	}
	return err
}

// assign gives the arrivals waiting to idle connections, or to free
// slots, which dial.
func (l *epollLoop) assign() {
	for l.pending.len() > 0 {
		var i int32
		switch {
		case len(l.idle) > 0:
			i = l.idle[len(l.idle)-1]
			l.idle = l.idle[:len(l.idle)-1]
		case len(l.free) > 0:
			i = l.free[len(l.free)-1]
			l.free = l.free[:len(l.free)-1]
		default:
			return
		}
		it := l.pending.pop()
		s := &l.slots[i]
		s.it = it
		s.attempt = l.g.since()
		s.retried = false
		s.tx = newSends()
		l.inUse++
		l.g.busyOne()
		if s.state == slotIdle {
			l.send(i, s.attempt) // the connection is in hand now
		} else {
			l.dial(i)
		}
	}
}

// dial starts a goroutine that dials a connection for slot i.
func (l *epollLoop) dial(i int32) {
	s := &l.slots[i]
	s.state = slotDial
	deadline := l.g.start.Add(s.attempt + l.g.cfg.Timeout)
	l.out++
	go func() {
		fd, err := l.dialFD(deadline)
		l.tell(news{slot: i, fd: fd, err: err})
	}()
}

// dialFD dials as the lean client does and returns a duplicate of the
// connection's descriptor, which stays non-blocking; the runtime's poller
// forgets the original.
func (l *epollLoop) dialFD(deadline time.Time) (int, error) {
	if l.t.aborted.Load() {
		return -1, errAborted
	}
	nc, err := l.t.dialer.dialBy(l.t.drain, "tcp", l.t.addr, deadline) // dial.go
	if err != nil {
		return -1, err
	}
	defer nc.Close()
	return dupFD(nc)
}

func dupFD(nc net.Conn) (int, error) {
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return -1, errors.New("engine: not a socket connection")
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return -1, err
	}
	fd := -1
	cerr := rc.Control(func(u uintptr) {
		fd, err = unix.FcntlInt(u, unix.F_DUPFD_CLOEXEC, 0)
	})
	if cerr != nil {
		return -1, cerr
	}
	if err != nil {
		return -1, os.NewSyscallError("fcntl", err)
	}
	return fd, nil
}

// send writes slot i's request on its connection, in hand since sent.
func (l *epollLoop) send(i int32, sent time.Duration) {
	s := &l.slots[i]
	var stamp []byte
	if l.g.cfg.StampHeader != "" {
		stamp = l.w.stampDigits(s.it.off)
	}
	s.state = slotBusy
	s.v = l.t.variant(&l.g.pick, s.it.seq)
	s.wb = s.v.wire.AppendSeq(s.wb[:0], s.it.seq, stamp)
	s.woff = 0
	s.head, s.n, s.status, s.keep, s.hup, s.rx = false, 0, 0, false, false, -1
	if s.buf == nil {
		s.buf = make([]byte, slotBuf)
	}
	s.sent = sent
	if d := s.attempt + l.g.cfg.Timeout; d < l.nextCheck {
		l.nextCheck = d
	}
	l.write(i)
}

// write writes what is left of slot i's request; if the socket takes only
// part of it, epoll says when it takes more.
func (l *epollLoop) write(i int32) {
	s := &l.slots[i]
	for s.woff < len(s.wb) {
		n, err := l.writeFD(s.fd, s.wb[s.woff:])
		if n > 0 {
			if s.woff == 0 {
				s.tx.wrote(s.sent)
			}
			s.woff += n
		}
		switch err {
		case nil, unix.EINTR:
			continue
		case unix.EAGAIN:
			if !s.out {
				s.out = true
				l.writing++
				_ = unix.EpollCtl(l.ep, unix.EPOLL_CTL_MOD, s.fd, &unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLRDHUP | unix.EPOLLOUT, Fd: i, Pad: int32(s.fd)})
			}
			return
		}
		l.early(i, os.NewSyscallError("write", err))
		return
	}
	if s.out {
		// The whole request is out: back to reading only.
		s.out = false
		l.writing--
		_ = unix.EpollCtl(l.ep, unix.EPOLL_CTL_MOD, s.fd, &unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLRDHUP, Fd: i, Pad: int32(s.fd)})
	}
}

// read reads what slot i's connection has and completes the exchange when
// the response is whole.
func (l *epollLoop) read(i int32) {
	s := &l.slots[i]
	if s.st != nil {
		l.readStream(i) // epollstream_linux.go
		return
	}
	buf := s.buf[s.n:] // never full: a full buffer without a plain head is lent
	if s.head {
		buf = l.discard[:] // the body: fewer reads for large ones
	}
	m, rx, err := l.recv(s.fd, buf)
	if m > 0 {
		s.rx = rx
	}
	switch {
	case err == unix.EAGAIN || err == unix.EINTR:
		return
	case err != nil:
		if !s.head && s.n == 0 {
			l.early(i, os.NewSyscallError("read", err))
		} else {
			l.fail(i, s.sent, os.NewSyscallError("read", err))
		}
		return
	case m == 0: // EOF
		switch {
		case !s.head && s.n == 0:
			l.early(i, io.EOF)
		case !s.head:
			l.lend(i) // a head http.ReadResponse may still make sense of
		default:
			l.fail(i, s.sent, io.ErrUnexpectedEOF)
		}
		return
	}
	if s.head {
		if s.grab != nil {
			s.grab.add(buf[:min(int64(m), s.left)])
		}
		if int64(m) > s.left {
			s.keep = false // bytes after the body: nothing to pair them with
			s.left = 0
		} else {
			s.left -= int64(m)
		}
		if s.left == 0 {
			l.complete(i)
		}
		return
	}
	s.n += m
	h, hs := l.w.hr.head(s.buf[:s.n], &s.heads)
	if hs == h1.HeadPartial && s.n < len(s.buf) {
		return // wait for the rest of the head
	}
	length := h.Length
	if hs != h1.HeadSimple || h.Chunked || length > 1<<30 || (l.t.maxBody > 0 && length > l.t.maxBody) {
		if hs != h1.HeadSimple || !l.streamHead(i, h) {
			l.lend(i)
		}
		return
	}
	if l.t.stream {
		l.lend(i) // read event by event (stream.go)
		return
	}
	s.head, s.status, s.keep = true, h.Status, h.Keep
	hn := h.N
	if l.g.refusals.wants(h.Status, s.it.seq) {
		s.grab = newGrab()
		s.grab.add(s.buf[hn:min(int64(s.n), int64(hn)+length)])
	}
	if body := int64(s.n - hn); body >= length {
		s.keep = s.keep && body == length
		s.left = 0
		l.complete(i)
		return
	}
	s.left = length - int64(s.n-hn)
	s.n = 0 // the rest of the body goes to l.discard
}

// complete records slot i's exchange, completed, and keeps or closes its
// connection.
func (l *epollLoop) complete(i int32) {
	s := &l.slots[i]
	r := recorder.Record{Seq: s.it.seq, Scheduled: s.it.off, Status: s.status}
	s.heads.apply(&r)
	l.endStream(&r, i) // a stream's head and points, when it was one
	if s.grab != nil {
		l.g.refusals.keep(r.Seq, r.Status, s.grab)
	}
	l.g.leanOutcome(&r, l.arrived(s.rx, s.sent), s.attempt, s.sent, &s.tx, nil)
	l.freed(r.Done - s.attempt)
	l.g.done(&r, l.w.shard)
	l.inUse--
	// A server may answer before it read the whole request; as net/http
	// does, the connection then ends with the exchange.
	keep := s.keep && !s.hup && s.woff == len(s.wb) && !s.v.once && !l.t.aborted.Load()
	s.clear()
	if keep {
		s.reused = true
		l.idleSlot(i)
		return
	}
	l.closeConn(i)
	s.state = slotFree
	l.free = append(l.free, i)
}

func (l *epollLoop) idleSlot(i int32) {
	l.slots[i].state = slotIdle
	l.idle = append(l.idle, i)
}

func (l *epollLoop) removeIdle(i int32) {
	for k, j := range l.idle {
		if j == i {
			l.idle = append(l.idle[:k], l.idle[k+1:]...)
			return
		}
	}
}

// early ends slot i's exchange, which failed before any byte of the
// response arrived, the connection closed or reset under it: on a reused
// connection the server may have closed it while idle, so the request is
// re-sent once on a new one when the run's rule allows, as the lean
// client does (wire.go).
func (l *epollLoop) early(i int32, err error) {
	s := &l.slots[i]
	wrote := s.woff > 0
	if wrote {
		s.tx.noAnswer(true)
	}
	if s.reused && !s.retried && s.v.resend.allows(wrote) && l.g.since() < s.attempt+l.g.cfg.Timeout && !l.t.aborted.Load() {
		s.tx.resend(wrote)
		l.closeConn(i)
		s.clear()
		s.retried = true
		l.dial(i)
		return
	}
	l.fail(i, s.sent, err)
}

// cut fails slot i's busy exchange with err, which is not the server's
// doing (a timeout, the drain, the loop's end).
func (l *epollLoop) cut(i int32, err error) {
	s := &l.slots[i]
	if s.unheard() {
		s.tx.noAnswer(false)
	}
	l.fail(i, s.sent, err)
}

// fail records slot i's exchange as failed with err and frees the slot,
// closing its connection. sent < 0: no connection was in hand.
func (l *epollLoop) fail(i int32, sent time.Duration, err error) {
	s := &l.slots[i]
	r := recorder.Record{Seq: s.it.seq, Scheduled: s.it.off, Status: s.status}
	if s.head {
		s.heads.apply(&r) // the head came, the body did not
	}
	l.endStream(&r, i) // a stream cut before its end keeps its tokens
	l.g.leanOutcome(&r, l.g.since(), s.attempt, sent, &s.tx, err)
	l.freed(r.Done - s.attempt)
	l.g.done(&r, l.w.shard)
	l.inUse--
	l.closeConn(i)
	s.clear()
	s.state = slotFree
	l.free = append(l.free, i)
}

func (l *epollLoop) closeConn(i int32) {
	s := &l.slots[i]
	if s.fd >= 0 {
		unix.Close(s.fd) // closing removes it from the epoll set
		s.fd = -1
	}
	l.unwatchOut(s)
}

// unwatchOut forgets that slot s waits for room to write.
func (l *epollLoop) unwatchOut(s *slot) {
	if s.out {
		s.out = false
		l.writing--
	}
}

// expire fails the busy exchanges whose deadline passed and finds the next
// deadline.
func (l *epollLoop) expire(now time.Duration) {
	l.nextCheck = never
	for i := range l.slots {
		s := &l.slots[i]
		if s.state != slotBusy {
			continue
		}
		d := s.attempt + l.g.cfg.Timeout
		if d <= now {
			l.cut(int32(i), os.ErrDeadlineExceeded)
			continue
		}
		l.nextCheck = min(l.nextCheck, d)
	}
}

// lend hands slot i's exchange, whose response the loop does not read
// itself, to a goroutine that reads it as the lean client does. A request
// still being written (a 1xx came while it was) is written to its end
// beside the reading, as net/http does: the server may wait for the rest
// of the body before it answers.
func (l *epollLoop) lend(i int32) {
	s := &l.slots[i]
	_ = unix.EpollCtl(l.ep, unix.EPOLL_CTL_DEL, s.fd, nil)
	fd := s.fd
	s.fd = -1
	l.unwatchOut(s)
	l.plain = false // off the beat: lent exchanges are stamped by the clock
	s.state = slotLent
	var rest []byte
	if s.woff < len(s.wb) {
		rest = append([]byte(nil), s.wb[s.woff:]...)
	}
	fresh := s.woff == 0 // nothing written yet: the goroutine's write is the attempt's first
	got := append([]byte(nil), s.buf[:s.n]...)
	it, v, attempt, sent, tx := s.it, s.v, s.attempt, s.sent, s.tx
	s.clear() // the goroutine holds what it needs of the exchange
	g, t := l.g, l.t
	l.out++
	go func() {
		r := recorder.Record{Seq: it.seq, Scheduled: it.off}
		back := -1
		err := func() error {
			f := os.NewFile(uintptr(fd), "lent")
			nc, err := net.FileConn(f)
			f.Close()
			if err != nil {
				return err
			}
			c, err := t.adopt(nc, got)
			if err != nil {
				nc.Close()
				return err
			}
			if err := c.SetDeadline(g.start.Add(attempt + g.cfg.Timeout)); err != nil {
				t.close(c)
				return err
			}
			var writing chan error
			if len(rest) > 0 {
				writing = make(chan error, 1)
				go func() {
					n, err := c.Write(rest)
					if n > 0 && fresh {
						tx.wrote(sent) // read after <-writing
					}
					writing <- err
				}()
			}
			var keep *leanConn
			resp, err := t.readResponse(c, &keep, v)
			if err == nil {
				err = g.response(resp, &r, l.lentSh) // closes the body: c is kept or closed
			} else {
				t.close(c)
			}
			whole := writing == nil
			if writing != nil {
				select {
				case werr := <-writing:
					whole = werr == nil
				default:
					// Answered before the request was written to its
					// end: the connection ends with the exchange.
					t.close(c)
					<-writing
				}
			}
			if keep != nil {
				// Given back only if the server did not close it
				// meanwhile (peek_unix.go).
				if whole && !keep.closedWhileIdle() {
					if fd, derr := dupFD(keep.Conn); derr == nil {
						back = fd // else the loop dials anew
					}
				}
				t.close(keep)
			}
			return err
		}()
		g.leanOutcome(&r, g.since(), attempt, sent, &tx, err)
		g.done(&r, l.lentSh)
		l.tell(news{slot: i, fd: back, lent: true})
	}()
}

// testEpollWait, when set by a test, replaces epoll_wait(2).
var testEpollWait func(ep int, events []unix.EpollEvent, msec int) (int, error)

// broken ends the run when the loop can no longer wait for events (an
// epoll_wait error other than EINTR, which would otherwise return at once
// forever): the exchanges in flight fail with err, the arrivals taken
// wait end unfinished, no more arrivals are taken (the schedule check then
// shows what was never scheduled), and the run's error says why
// (Stats.LoopErr). The dials and lent exchanges still out are ended by the
// lean transport's abort; the loop collects their news so that no
// descriptor is left open.
func (l *epollLoop) broken(err error) {
	l.stats.LoopErr = err
	l.t.abort()
	l.failAll(err)
	l.abandonPending(l.w.shard)
	if l.scheduling {
		l.endSchedule(false)
	}
	for l.out > 0 {
		time.Sleep(time.Millisecond)
		l.news()
	}
}

// abort ends the loop's exchanges when the drain expired: they are
// recorded unfinished. Dials and lent exchanges are ended by the lean
// transport's abort and report back.
func (l *epollLoop) abort() { l.failAll(errAborted) }

// failAll fails every exchange the loop writes, reads or dials for, with
// err.
func (l *epollLoop) failAll(err error) {
	for i := range l.slots {
		s := &l.slots[i]
		switch s.state {
		case slotBusy:
			l.cut(int32(i), err)
		case slotDial:
			l.fail(int32(i), -1, err)
		}
	}
}

// close closes the loop's descriptors and idle connections.
func (l *epollLoop) close() {
	l.flushTokens()
	for i := range l.slots {
		l.closeConn(int32(i))
	}
	l.shut()
	l.stopBeat()
	for _, fd := range []int{l.tfd, l.efd, l.ep, l.quiet} {
		if fd >= 0 {
			unix.Close(fd)
		}
	}
	h1.PutDiscardBuf(l.discard)
}

// epollClient is the client Config.Epoll gives where it applies.
const epollClient = ClientEpoll

// The loop's reads and writes, on non-blocking sockets, and its
// epoll_wait(2) with a zero timeout never block, so they skip the runtime's
// bookkeeping for system calls that may (syscall.RawSyscall): on loopback a
// write does the receiving socket's TCP work too and often takes longer
// than the 20 µs after which the runtime's monitor hands a processor in a
// system call to another thread. wait looks for ready events that way
// before it blocks (see docs/MEASUREMENTS.md, “Raw system calls”).

// rawIO is read(2) or write(2) (trap) of p on fd.
func rawIO(trap uintptr, fd int, p []byte) (int, error) {
	r, _, e := syscall.RawSyscall(trap, uintptr(fd), uintptr(unsafe.Pointer(unsafe.SliceData(p))), uintptr(len(p)))
	if e != 0 {
		return 0, e
	}
	return int(r), nil
}

// Sleeping without a system call's bookkeeping.
//
// A goroutine that blocks in a system call made the usual way keeps its
// processor (P) in the system call, and the runtime's monitor thread
// (sysmon) takes it back whenever other goroutines want to run: at every
// tick of the recorder goroutine, for instance. Each take-back also
// resets sysmon's own sleep to 20 µs, and it then wakes some sixty times
// before it sleeps 10 ms again. At 1,000 requests a second that was
// about 1,600 of sysmon's wake-ups a second, more than the loop's own, and
// a third of openload's context switches and CPU (docs/BENCHMARKS.md,
// "Issue 35"). So where there is a processor to spare (GOMAXPROCS ≥
// 2), the loop sleeps in epoll_wait(2) as a raw system call, as if it
// were running: the runtime leaves its processor alone, and the other
// goroutines run on the others. What the runtime needs of a running
// goroutine it still gets: to preempt it, or to stop the world for the
// garbage collector, it signals the thread, epoll_wait returns EINTR, and
// the loop reaches a preemption point at its next call; sysmon does so
// every 10 ms of sleep. A sleep longer than rawSleepMax (or without an
// end: nothing is due, the loop waits for answers) is made the ordinary
// way: its P is taken back once, where a raw one would be preempted every
// 10 ms, and at a few requests a second that cost more than it saved.

// rawSleepMax is the longest sleep a loop makes raw.
const rawSleepMax = 10 * time.Millisecond

// blockingEpollWait is epoll_wait(2) on ep for up to msec ms (-1: until
// an event), raw when raw is set (see above).
func blockingEpollWait(ep int, events []unix.EpollEvent, msec int, raw bool) (int, error) {
	if !raw {
		return unix.EpollWait(ep, events, msec)
	}
	r, _, e := syscall.RawSyscall6(unix.SYS_EPOLL_PWAIT, uintptr(ep), uintptr(unsafe.Pointer(unsafe.SliceData(events))), uintptr(len(events)), uintptr(msec), 0, 0)
	if e != 0 {
		return 0, e
	}
	return int(r), nil
}

// rawSleepOK reports whether a loop may sleep raw: there is a processor
// besides its own, and OPENLOAD_NO_RAW_SLEEP is not set (it restores the
// ordinary sleep, to measure the difference).
func rawSleepOK() bool { return runtime.GOMAXPROCS(0) >= 2 && os.Getenv("OPENLOAD_NO_RAW_SLEEP") == "" }

// rawEpollWait is epoll_wait(2) on ep with a zero timeout, made as
// epoll_pwait(2) without a signal mask, which every Linux architecture has
// (arm64 has no epoll_wait).
func rawEpollWait(ep int, events []unix.EpollEvent) (int, error) {
	r, _, e := syscall.RawSyscall6(unix.SYS_EPOLL_PWAIT, uintptr(ep), uintptr(unsafe.Pointer(unsafe.SliceData(events))), uintptr(len(events)), 0, 0, 0)
	if e != 0 {
		return 0, e
	}
	return int(r), nil
}
