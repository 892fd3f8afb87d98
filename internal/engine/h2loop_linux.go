//go:build linux

package engine

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"runtime"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
	"golang.org/x/sys/unix"

	"github.com/openload/openload/internal/servertiming"
	"github.com/openload/openload/recorder"
	"github.com/openload/openload/schedule"
)

// HTTP/2 on the event loop (Stats.Client "epoll" with Config.Protocol h2c
// or h2): one goroutine owns the schedule, every connection and every
// stream, as the HTTP/1.1 loop does (epoll_linux.go), and frames are read
// and written with x/net/http2's Framer and hpack.
//
// Streams and connections. Config.Connections is still the in-flight
// limit: at most that many requests have a stream (or wait for a dial) at
// once; the rest wait in the queue, and that wait is send delay. A
// request takes a stream on the open connection with the fewest streams
// that has room, as h2load spreads its streams: a server reads each
// connection's frames in order (Go's in one goroutine), so one connection
// carrying every stream would set the pace first. Room is fewer
// streams than min(Config.MaxStreams, the server's
// SETTINGS_MAX_CONCURRENT_STREAMS; 100 until its SETTINGS came, as
// x/net/http2 assumes). When every connection is full one more is dialled,
// one dial at a time (in a goroutine, as the HTTP/1.1 loop dials), for the
// request that found no room; its TLS handshake is made there too. So
// connections ≤ ⌈Connections ÷ min(MaxStreams, the server's limit)⌉ while
// they stay up, as on the net/http path (h2.go). Stream ids are odd and
// rising on each connection; a connection whose ids run out takes no new
// streams and is closed when its last stream ends.
//
// Times. A request's attempt starts when it got a stream (or a dial was
// started for it); its sent time is when the write(2) that put the last
// byte of its HEADERS on the socket began (the server may read them
// before the call returns), not of the body framed
// after them (frames are batched per connection and written once per turn
// of the loop; over TLS, the record carrying that byte: seal); done is
// when its last frame's bytes arrived, by the kernel's stamp on the read
// that brought them (the beat, beat_linux.go), or when it was read.
//
// Flow control. The loop advertises a stream window of h2StreamWindow and
// a connection window of h2ConnWindow, and gives back what it read (DATA
// lengths, padding included) with WINDOW_UPDATE once half a window was
// read. Request bodies are sent as the server's windows allow (its
// SETTINGS_INITIAL_WINDOW_SIZE, changed by later SETTINGS, and its
// WINDOW_UPDATEs) and as the socket takes them (at most h2QueueBody
// framed and not written: sendBody), in DATA frames of at most its
// SETTINGS_MAX_FRAME_SIZE; its SETTINGS_HEADER_TABLE_SIZE bounds the
// encoder's table. SETTINGS and PING are acknowledged.
//
// What the server did not process. RFC 9113 §8.7: a stream reset with
// REFUSED_STREAM, or above the last-stream-id of a GOAWAY, was not
// processed. Its attempt does not count (the server never saw the
// request: resends_unwritten), and the request is sent again on a new
// stream, on another connection after a GOAWAY, at most h2Resends
// times, as x/net/http2 re-sends them (bounces off the GOAWAY of a
// connection that processed some stream not counted), a refused one
// after the k-th refusal 2^(k-2) s later (h2RefusedWait); so is a stream
// whose HEADERS had not left openload when its connection failed.
// Config.Resend narrows that (newH2ResendRule): unwritten sends again
// only the latter, never neither, and what is not sent again fails. Any other stream whose
// HEADERS were written counts, whatever became of it: answered, reset
// (RST_STREAM with another code: an error of kind reset), cut by the
// connection's end (reset), timed out or abandoned at the drain's end
// (RST_STREAM CANCEL is sent). A connection error (a frame the loop cannot
// read, a COMPRESSION_ERROR, an HTTP/1.1 answer to the preface) fails its
// streams as protocol errors and closes it with a GOAWAY.
//
// Allocations. In steady state a request costs none: the header block is
// encoded into the connection's buffer, fields that vary per request as
// never-indexed literals over reused bytes (h2req.go); DATA frames are read
// with the Framer's frame reuse (SetReuseFrames); the answer's header block
// is decoded by the connection's hpack.Decoder, whose indexed fields cost
// nothing. x/net's Framer allocates a frame value for every HEADERS,
// CONTINUATION and WINDOW_UPDATE it parses, so for those three the loop
// takes the header with Framer.ReadFrameHeader, which checks the frame's
// size and order, and reads the payload itself (RFC 9113 §6.2, §6.10,
// §6.9: a pad length and priority fields to skip, or a 31-bit increment).
// TLS is crypto/tls over buffers the loop fills and drains (loopTLS).

const (
	h2StreamWindow = 4 << 20 // what each stream may receive before a WINDOW_UPDATE
	h2ConnWindow   = 1 << 30 // what the connection may
	h2InitStreams  = 100     // streams assumed allowed before the server's SETTINGS
	h2ReadBuf      = 64 << 10
	h2MaxReadFrame = 1 << 14 // the SETTINGS_MAX_FRAME_SIZE the loop keeps: the default, as x/net's Transport
)

// h2QueueBody is how much a connection may have framed and not written
// before no more of a body is framed (sendBody; docs/MEASUREMENTS.md,
// “h2QueueBody”). A variable for a test that needs HEADERS to wait behind
// a whole body (TestH2ResendUnwritten).
var h2QueueBody = 256 << 10

// The states of a stream slot.
const (
	h2Free = iota
	h2Wait // waits for a stream: in l.waiting, or the request a dial is for
	h2Open // a stream on a connection
)

type h2Slot struct {
	state   uint8
	it      item
	req     *h2Req
	attempt time.Duration
	tx      sends
	resends int           // the re-sends charged against h2Resends (unprocessed)
	refused int           // of those unprocessed, the refusals (REFUSED_STREAM)
	release time.Duration // a re-send held back (h2RefusedWait) goes at release; 0: none held

	c       *h2lc
	id      uint32
	hand    time.Duration // when the stream's HEADERS were framed, or -1
	written bool          // its HEADERS were written to the socket
	sent    time.Duration // when, if written
	ended   bool          // the request's END_STREAM was framed
	peerEnd bool          // the answer ended (END_STREAM)

	body    []byte
	boff    int
	bodyBuf []byte
	sendWin int64
	blocked bool // waits for a window to send more of its body

	recvUnacked uint32
	answered    bool // a header block of the answer came
	final       bool // the final (non-1xx) head came
	status      int
	ctype       string
	rec         recorder.Record // the head's classes and timings, a stream's points
	nbody       int64
	streaming   bool
	er          eventReader
}

// clear forgets what slot s's last attempt wrote and read: the next
// record is built from its own attempt only.
func (s *h2Slot) clear() {
	s.written, s.ended, s.peerEnd, s.answered, s.final, s.streaming = false, false, false, false, false, false
	s.status, s.ctype, s.nbody, s.recvUnacked, s.blocked = 0, "", 0, 0, false
	s.rec = recorder.Record{}
}

// h2 connection states.
const (
	connFree = iota
	connDial
	connOpen
)

type h2lc struct {
	idx   int32
	state uint8
	fd    int

	tlsc *tls.Conn // nil for h2c
	tio  *loopTLS

	fr     *http2.Framer
	enc    *hpack.Encoder
	hbuf   bytes.Buffer
	dec    *hpack.Decoder
	frw    h2sink // where fr writes: out (h2c) or plain (TLS)
	out    []byte // bytes for the socket; out[woff:] not written yet
	woff   int
	plain  []byte // TLS: frames not yet sealed
	outEv  bool   // epoll watches for room to write
	dirty  bool
	marks  []h2mark // streams whose HEADERS are in out or plain
	sealed int      // marks[:sealed] have their end in out

	rbuf []byte // frames read, rbuf[roff:rn] not taken yet
	roff int
	rn   int
	rx   time.Duration // when the bytes of the last read arrived, by the kernel's stamp, or -1

	ring     []int32 // stream slot by id>>1 & (len-1), or -1
	nextID   uint32
	active   int
	limit    int // min(MaxStreams, ring), the server's limit apart
	exhaust  bool
	settings bool // the server's first SETTINGS came
	peerMax  uint32
	peerWin  int64
	peerMaxF uint32
	sendWin  int64
	unacked  uint32 // connection: read and not given back

	goAway bool
	lastID uint32
	goErr  http2.ErrCode

	cur      int32  // the slot whose header block is being decoded, or -1
	curID    uint32 // its stream
	curEnd   bool   // that HEADERS frame had END_STREAM
	curTrail bool   // the block is trailers

	blockedN int  // streams whose body waits for a window or for queued to drain
	full     bool // a body waits for queued to drain (sendBody), which flush then calls unblock for
}

// queued is what c has framed and not yet written to its socket.
func (c *h2lc) queued() int { return len(c.out) - c.woff + len(c.plain) }

// h2mark is where a stream's HEADERS (and CONTINUATIONs) are in what the
// Framer wrote: [start, end) of out for h2c; of plain for TLS until
// sealed, when end becomes the end in out of the record that carries
// their last byte (seal).
type h2mark struct {
	slot       int32
	id         uint32
	start, end int
}

// h2sink is a byte slice the Framer appends frames to.
type h2sink struct{ b *[]byte }

func (w h2sink) Write(p []byte) (int, error) {
	*w.b = append(*w.b, p...)
	return len(p), nil
}

// Read is the Framer's reader: the frames read, whole (the loop calls
// the Framer only when a frame is whole in rbuf).
func (c *h2lc) Read(p []byte) (int, error) {
	if c.roff == c.rn {
		return 0, io.ErrUnexpectedEOF
	}
	n := copy(p, c.rbuf[c.roff:c.rn])
	c.roff += n
	return n, nil
}

type h2news struct {
	conn int32
	fd   int
	tc   *tls.Conn
	tio  *loopTLS
	err  error
}

type h2Loop struct {
	loopArrivals
	stamper // the beat (beat_linux.go)
	w       *worker
	reqs    []h2Req
	resend  resendRule // what goes again of what the server did not process (unprocessed)
	tls     bool
	tlsConf *tls.Config
	addr    string

	efd     int
	slots   []h2Slot
	free    []int32
	waiting []int32 // slots to give a stream, oldest first
	inUse   int
	conns   []*h2lc // open connections, oldest first
	ctab    []*h2lc // every connection by idx
	cfree   []int32
	dialing *h2lc
	dialFor int32 // the slot the dial is for, or -1
	out     int   // dials not reported
	aborted bool

	nextCheck time.Duration
	ts        tokenSink
	sc        h2Scratch
	stampName string
	classes   []string // class header names, lower case
	metrics   interner
	dirtyList []*h2lc
	ringSize  int

	mu      sync.Mutex
	closed  bool
	inbox   []h2news
	scratch []h2news
}

// newH2Loop returns the HTTP/2 event loop for g's open run of s, or nil
// when it does not apply: Config.Epoll, HTTP/2 (h2c or TLS), no
// transport of the caller's, no redirects followed, no retries.
func newH2Loop(g *generator, s schedule.Schedule, stats *Stats, dispatched chan<- struct{}) *h2Loop {
	cfg := &g.cfg
	if !h2LoopApplies(cfg) || g.retry != nil {
		return nil
	}
	ep, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return nil
	}
	tfd, err := newTimerfd()
	if err != nil {
		unix.Close(ep)
		return nil
	}
	efd, err := unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC)
	if err != nil {
		unix.Close(ep)
		unix.Close(tfd)
		return nil
	}
	addr := h2Addr(cfg.URL)
	l := &h2Loop{loopArrivals: newLoopArrivals(g, stats, dispatched, s, ep, tfd), w: g.newWorker(), reqs: newH2Reqs(cfg),
		tls: cfg.Protocol == HTTP2, tlsConf: tlsConfig(*cfg), addr: addr,
		efd: efd, slots: make([]h2Slot, cfg.Connections), nextCheck: never,
		dialFor: -1, metrics: interner{max: recorder.MaxTimingMetrics}, stamper: stamper{plain: !cfg.Stream},
		resend: newH2ResendRule(cfg.Resend)}
	l.ts.sh = l.w.shard
	if cfg.StampHeader != "" {
		l.stampName = lowerASCII(cfg.StampHeader)
	}
	for _, n := range cfg.ClassHeaders[:min(len(cfg.ClassHeaders), recorder.MaxClassHeaders)] {
		l.classes = append(l.classes, lowerASCII(n))
	}
	per := cfg.Connections
	if cfg.MaxStreams > 0 {
		per = min(per, cfg.MaxStreams)
	}
	l.ringSize = 2
	for l.ringSize < 2*per {
		l.ringSize <<= 1
	}
	for i := range l.slots {
		l.slots[i].hand = -1
		l.free = append(l.free, int32(len(l.slots)-1-i))
	}
	for _, fd := range []int{tfd, efd} {
		if err := unix.EpollCtl(ep, unix.EPOLL_CTL_ADD, fd, &unix.EpollEvent{Events: unix.EPOLLIN, Fd: -1, Pad: int32(fd)}); err != nil {
			l.close()
			return nil
		}
	}
	l.startBeat(&l.loopArrivals, efd)
	// The connections opened before the start (predialH2).
	for _, n := range g.h2warm {
		if c := l.newConn(); l.openConn(c, n) != nil {
			unix.Close(n.fd)
			l.freeConn(c)
		}
	}
	g.h2warm = nil
	l.off, l.scheduling = s.Next()
	l.seq = seqOf(s, 0)
	if !l.scheduling {
		l.endSchedule(false)
	}
	return l
}

func lowerASCII(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

func (l *h2Loop) start(ctx context.Context, wg *sync.WaitGroup) {
	l.g.mon.WatchLoop(func() time.Duration { return time.Duration(l.waited.Load()) })
	wg.Add(1)
	go func() {
		defer wg.Done()
		runtime.LockOSThread()
		l.g.mon.LoopSlice(shortSlice())
		l.run(ctx)
	}()
}

func (l *h2Loop) wake() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.closed {
		one := [8]byte{1}
		_, _ = unix.Write(l.efd, one[:])
	}
}

func (l *h2Loop) tell(n h2news) {
	l.mu.Lock()
	l.inbox = append(l.inbox, n)
	l.mu.Unlock()
	l.wake()
}

func (l *h2Loop) run(ctx context.Context) {
	g := l.g
	defer l.close()
	stopCtx := context.AfterFunc(ctx, l.wake)
	defer stopCtx()
	stopDrain := context.AfterFunc(g.drain, l.wake)
	defer stopDrain()
	for {
		now := g.since()
		if !l.aborted && g.drain.Err() != nil {
			l.abort()
		}
		next := l.take(ctx, now, l.inUse)
		if l.aborted {
			for l.pending.len() > 0 {
				g.abandon(l.pending.pop(), l.w.shard)
			}
		}
		if now >= l.nextCheck {
			l.expire(now)
		}
		l.assign()
		l.flushAll()
		if len(l.waiting) > 0 && l.dialing == nil && !l.aborted {
			// A write failed a connection (connDown) after assign: what
			// it sends again gets a stream or a dial now, not at the next
			// arrival or deadline.
			continue
		}
		if !l.scheduling && l.pending.len() == 0 && l.inUse == 0 && l.out == 0 {
			return
		}
		check := l.sleepOn(l.onBeat(), now, l.nextCheck, l.inUse, l.inUse >= l.g.cfg.Connections)
		l.wallOff = 0
		n, err := l.sleep(now, next, check)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			l.broken(os.NewSyscallError("epoll_wait", err))
			return
		}
		for _, ev := range l.events[:n] {
			l.event(ev)
		}
	}
}

// onBeat says whether the loop may sleep on the beat (beat_linux.go): no
// slot waits for a stream (l.waiting), no connection for room to write,
// no body for a window. Arrivals that wait are sleepOn's to judge.
func (l *h2Loop) onBeat() bool {
	if !l.stamps || !l.plain || len(l.waiting) > 0 {
		return false
	}
	for _, c := range l.conns {
		if c.outEv || c.blockedN > 0 {
			return false
		}
	}
	return true
}

func (l *h2Loop) event(ev unix.EpollEvent) {
	if ev.Fd < 0 {
		if l.ownEvent(int(ev.Pad)) {
			l.news()
		}
		return
	}
	c := l.ctab[ev.Fd]
	if c.state != connOpen || c.fd != int(ev.Pad) {
		return
	}
	if ev.Events&unix.EPOLLOUT != 0 {
		l.flush(c)
		if c.state != connOpen {
			return
		}
	}
	if ev.Events&(unix.EPOLLIN|unix.EPOLLRDHUP|unix.EPOLLHUP|unix.EPOLLERR) != 0 {
		l.readConn(c)
	}
}

// news takes the dials' results.
func (l *h2Loop) news() {
	l.mu.Lock()
	l.scratch, l.inbox = l.inbox, l.scratch[:0]
	l.mu.Unlock()
	for _, n := range l.scratch {
		l.out--
		c := l.ctab[n.conn]
		l.dialing = nil
		owner := l.dialFor
		l.dialFor = -1
		if n.err == nil && l.aborted {
			unix.Close(n.fd)
			n.err = errAborted
		}
		if n.err != nil {
			l.freeConn(c)
			if owner >= 0 {
				l.finish(owner, n.err)
			}
			continue
		}
		if err := l.openConn(c, n); err != nil {
			unix.Close(n.fd)
			l.freeConn(c)
			if owner >= 0 {
				l.finish(owner, err)
			}
			continue
		}
		if owner >= 0 {
			l.waiting = append([]int32{owner}, l.waiting...)
		}
	}
	clear(l.scratch)
}

func (l *h2Loop) newConn() *h2lc {
	var c *h2lc
	if n := len(l.cfree); n > 0 {
		c = l.ctab[l.cfree[n-1]]
		l.cfree = l.cfree[:n-1]
	} else {
		c = &h2lc{idx: int32(len(l.ctab))}
		l.ctab = append(l.ctab, c)
	}
	c.state = connDial
	c.fd = -1
	return c
}

func (l *h2Loop) freeConn(c *h2lc) {
	idx := c.idx
	*c = h2lc{idx: idx, fd: -1}
	l.cfree = append(l.cfree, idx)
}

// startDial dials a connection for slot i's request.
func (l *h2Loop) startDial(i int32) {
	s := &l.slots[i]
	s.state = h2Wait
	c := l.newConn()
	l.dialing, l.dialFor = c, i
	l.out++
	deadline := l.g.start.Add(s.attempt + l.g.cfg.Timeout)
	idx := c.idx
	go func() {
		n := h2news{conn: idx, fd: -1}
		n.fd, n.tc, n.tio, n.err = l.dial(deadline)
		l.tell(n)
	}()
}

// dial opens a connection for the loop (h2Dial).
func (l *h2Loop) dial(deadline time.Time) (int, *tls.Conn, *loopTLS, error) {
	return h2Dial(&l.g.cfg, l.g.drain, l.addr, l.tlsConf, deadline)
}

// h2Dial opens a connection of a run of cfg to addr (TCP for h2c, TLS
// with ALPN h2 and tlsConf) and returns a duplicate of its descriptor; the
// runtime's poller forgets the original.
func h2Dial(cfg *Config, drain context.Context, addr string, tlsConf *tls.Config, deadline time.Time) (int, *tls.Conn, *loopTLS, error) {
	d := cfg.dialer()
	d.control = stampFromConnect // beat_linux.go
	nc, err := d.dialBy(drain, "tcp", addr, deadline)
	if err != nil {
		return -1, nil, nil, err
	}
	defer nc.Close()
	if cfg.Protocol != HTTP2 {
		fd, err := dupFD(nc)
		return fd, nil, nil, err
	}
	conf := &tls.Config{}
	if tlsConf != nil {
		conf = tlsConf.Clone()
	}
	conf.NextProtos = []string{http2.NextProtoTLS}
	if conf.ServerName == "" {
		host, _, err := net.SplitHostPort(addr)
		if err != nil {
			return -1, nil, nil, err
		}
		conf.ServerName = host
	}
	tio := &loopTLS{Conn: nc, direct: true}
	tc := tls.Client(tio, conf)
	ctx, cancel := context.WithDeadline(drain, deadline)
	defer cancel()
	if err := tc.HandshakeContext(ctx); err != nil {
		return -1, nil, nil, err
	}
	if got := tc.ConnectionState().NegotiatedProtocol; got != http2.NextProtoTLS {
		return -1, nil, nil, fmt.Errorf("engine: %s did not negotiate HTTP/2 with ALPN (got %q)", addr, got)
	}
	fd, err := dupFD(nc)
	if err != nil {
		return -1, nil, nil, err
	}
	tio.direct = false
	return fd, tc, tio, nil
}

// h2Addr is the host:port of u.
func h2Addr(u *url.URL) string {
	if u.Port() != "" {
		return u.Host
	}
	port := "80"
	if u.Scheme == "https" {
		port = "443"
	}
	return net.JoinHostPort(u.Hostname(), port)
}

// h2LoopApplies reports whether an open run of cfg goes on the HTTP/2
// event loop (newH2Loop).
func h2LoopApplies(cfg *Config) bool {
	return h2LoopFields(cfg) && cfg.URL != nil && cfg.URL.User == nil
}

// h2LoopFields reports whether cfg's fields other than its URL let an
// open run go on the HTTP/2 event loop.
func h2LoopFields(cfg *Config) bool {
	return cfg.Epoll && (cfg.Protocol == H2C || cfg.Protocol == HTTP2) && cfg.Transport == nil && !cfg.FollowRedirects &&
		!cfg.Retry.Enabled()
}

// predialH2 opens, before the clock starts (predial.go), the connections
// the first requests of an open run on the HTTP/2 loop would open:
// ⌈want ÷ the streams a connection takes before its server's SETTINGS
// (MaxStreams, else 100)⌉, one at a time, within predialBudget, stopping at
// the first failure. The loop adopts them (newH2Loop). It reports false
// when the run does not go on the loop.
func (g *generator) predialH2(want int) (Predial, bool) {
	if g.due == nil || !h2LoopApplies(&g.cfg) {
		return Predial{}, false
	}
	if want <= 0 {
		return Predial{}, true
	}
	per := h2InitStreams
	if m := g.cfg.MaxStreams; m > 0 {
		per = m
	}
	p := Predial{Wanted: (want + per - 1) / per}
	begun := time.Now()
	deadline := begun.Add(min(predialBudget, g.cfg.Timeout))
	addr, conf := h2Addr(g.cfg.URL), tlsConfig(g.cfg)
	for range p.Wanted {
		fd, tc, tio, err := h2Dial(&g.cfg, g.drain, addr, conf, deadline)
		if err != nil {
			p.Err = err
			break
		}
		g.h2warm = append(g.h2warm, h2news{fd: fd, tc: tc, tio: tio})
	}
	p.Opened, p.Took = len(g.h2warm), time.Since(begun)
	return p, true
}

// closeH2Warm closes the connections opened before the start that no
// loop adopted.
func closeH2Warm(g *generator) {
	for _, n := range g.h2warm {
		unix.Close(n.fd)
	}
	g.h2warm = nil
}

// openConn makes a dialled connection one of the loop's and writes the
// client's preface.
func (l *h2Loop) openConn(c *h2lc, n h2news) error {
	c.fd = n.fd
	l.stampConn(n.fd)
	c.rx = -1
	if err := unix.EpollCtl(l.ep, unix.EPOLL_CTL_ADD, n.fd, &unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLRDHUP, Fd: c.idx, Pad: int32(n.fd)}); err != nil {
		c.fd = -1
		return err
	}
	c.state = connOpen
	c.tlsc, c.tio = n.tc, n.tio
	c.out = c.out[:0]
	if c.tlsc != nil {
		c.tio.out = &c.out
		c.frw = h2sink{&c.plain}
	} else {
		c.frw = h2sink{&c.out}
	}
	if c.rbuf == nil {
		c.rbuf = make([]byte, h2ReadBuf)
	}
	c.fr = http2.NewFramer(c.frw, c)
	c.fr.SetReuseFrames()
	c.fr.SetMaxReadFrameSize(h2MaxReadFrame)
	c.enc = hpack.NewEncoder(&c.hbuf)
	c.dec = hpack.NewDecoder(4096, c.field(l))
	c.ring = make([]int32, l.ringSize)
	for k := range c.ring {
		c.ring[k] = -1
	}
	c.nextID = 1
	c.limit = l.ringSize / 2
	if m := l.g.cfg.MaxStreams; m > 0 {
		c.limit = min(c.limit, m)
	}
	c.peerMax, c.peerWin, c.peerMaxF, c.sendWin = h2InitStreams, 65535, 16384, 65535
	c.cur = -1
	*c.frw.b = append(*c.frw.b, http2.ClientPreface...)
	c.fr.WriteSettings(
		http2.Setting{ID: http2.SettingEnablePush, Val: 0},
		http2.Setting{ID: http2.SettingInitialWindowSize, Val: h2StreamWindow},
	)
	c.fr.WriteWindowUpdate(0, h2ConnWindow-65535)
	l.conns = append(l.conns, c)
	l.dirtyConn(c)
	return nil
}

// field is c's hpack emit function: it puts the fields of the header
// block being decoded in its slot.
func (c *h2lc) field(l *h2Loop) func(hpack.HeaderField) {
	return func(f hpack.HeaderField) {
		if c.cur < 0 || c.curTrail {
			return
		}
		s := &l.slots[c.cur]
		name := f.Name
		if len(name) > 0 && name[0] == ':' {
			if name == ":status" && len(f.Value) == 3 {
				v := f.Value
				if st := int(v[0]-'0')*100 + int(v[1]-'0')*10 + int(v[2]-'0'); v[0] >= '1' && v[0] <= '9' && v[1] >= '0' && v[1] <= '9' && v[2] >= '0' && v[2] <= '9' {
					s.status = st
				}
			}
			return
		}
		switch {
		case name == "content-type":
			s.ctype = f.Value
			return
		case name == "server-timing" && l.g.cfg.ServerTiming:
			b := unsafe.Slice(unsafe.StringData(f.Value), len(f.Value))
			servertiming.ParseBytes(b, func(mn []byte, dur float64, hasDur bool) {
				if hasDur && s.rec.NTimings < recorder.MaxTimings {
					s.rec.Timings[s.rec.NTimings] = recorder.Timing{Name: l.metrics.get(mn), Dur: msDuration(dur)}
					s.rec.NTimings++
				}
			})
			return
		}
		for k, cn := range l.classes {
			if name == cn {
				s.rec.Class[k] = f.Value
			}
		}
	}
}

func (l *h2Loop) dirtyConn(c *h2lc) {
	if !c.dirty {
		c.dirty = true
		l.dirtyList = append(l.dirtyList, c)
	}
}

// assign gives the requests waiting a stream: re-sends first, then the
// queue's arrivals while the in-flight limit allows.
func (l *h2Loop) assign() {
	for {
		fromWait := len(l.waiting) > 0
		if !fromWait && (l.pending.len() == 0 || l.inUse >= l.g.cfg.Connections || l.aborted) {
			return
		}
		c := l.roomy()
		if c == nil && (l.dialing != nil || l.aborted) {
			return
		}
		var i int32
		if fromWait {
			i = l.waiting[0]
			l.waiting = l.waiting[:copy(l.waiting, l.waiting[1:])]
		} else {
			i = l.free[len(l.free)-1]
			l.free = l.free[:len(l.free)-1]
			it := l.pending.pop()
			s := &l.slots[i]
			s.it = it
			s.attempt = l.g.since()
			s.tx = newSends()
			s.resends, s.refused = 0, 0
			s.req = &l.reqs[0]
			if len(l.reqs) > 1 {
				s.req = &l.reqs[l.g.pick.index(it.seq)]
			}
			l.inUse++
			l.g.busyOne()
			if d := s.attempt + l.g.cfg.Timeout; d < l.nextCheck {
				l.nextCheck = d
			}
		}
		if c == nil {
			l.startDial(i)
			return
		}
		l.open(i, c)
	}
}

// roomy is the open connection with room for a stream that has the fewest,
// or nil.
func (l *h2Loop) roomy() *h2lc {
	var best *h2lc
	for _, c := range l.conns {
		if !c.goAway && !c.exhaust && c.active < c.limit && c.active < int(c.peerMax) && (best == nil || c.active < best.active) {
			best = c
		}
	}
	return best
}

// open starts slot i's request on a new stream of c.
func (l *h2Loop) open(i int32, c *h2lc) {
	s := &l.slots[i]
	id := c.nextID
	mask := uint32(len(c.ring) - 1)
	for c.ring[(id>>1)&mask] >= 0 {
		id += 2
	}
	if id > 1<<31-1 {
		c.exhaust = true
		l.waiting = append([]int32{i}, l.waiting...)
		s.state = h2Wait
		if c.active == 0 {
			l.closeConn(c)
		}
		return
	}
	c.nextID = id + 2
	c.ring[(id>>1)&mask] = i
	c.active++
	s.state, s.c, s.id = h2Open, c, id
	s.clear()
	s.body = s.req.requestBody(&s.bodyBuf, s.it.seq)
	s.boff = 0
	s.sendWin = c.peerWin
	var stamp []byte
	if l.stampName != "" {
		stamp = l.w.stampDigits(s.it.off)
	}
	c.hbuf.Reset()
	s.req.encode(c.enc, &l.sc, s.it.seq, s.body, l.stampName, stamp)
	start := len(*c.frw.b)
	block := c.hbuf.Bytes()
	end := len(s.body) == 0
	maxF := int(c.peerMaxF)
	first := block[:min(len(block), maxF)]
	block = block[len(first):]
	c.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: first, EndStream: end, EndHeaders: len(block) == 0})
	for len(block) > 0 {
		p := block[:min(len(block), maxF)]
		block = block[len(p):]
		c.fr.WriteContinuation(id, len(block) == 0, p)
	}
	s.ended = end
	s.hand = l.g.since()
	c.marks = append(c.marks, h2mark{slot: i, id: id, start: start, end: len(*c.frw.b)})
	if !end {
		l.sendBody(i)
	}
	l.dirtyConn(c)
}

// sendBody frames what the windows allow of slot i's body, while c has
// less than h2QueueBody framed and not written; the rest is framed as the
// socket takes what is queued (flush). Framed whole, as far as a server's
// windows let it (a test server's grant 1 GiB), a body grew the
// connection's buffer by its size in one turn of the loop, and the HEADERS
// of later streams waited behind all of it: under the race detector,
// four bodies of 8 MiB over TLS kept the loop busy for seconds.
func (l *h2Loop) sendBody(i int32) {
	s := &l.slots[i]
	c := s.c
	for from := s.boff; s.boff < len(s.body); {
		n := min(len(s.body)-s.boff, int(c.peerMaxF))
		n = int(min(int64(n), c.sendWin, s.sendWin))
		full := c.queued() >= h2QueueBody
		if n <= 0 || full {
			if !s.blocked {
				s.blocked = true
				c.blockedN++
			}
			c.full = c.full || full
			// What was framed before the window ran out goes now, not
			// when something else has c written: it sat there until the
			// stream's timeout (TestH2Differential, large request
			// bodies, on a busy machine). Only then: a flush calls
			// unblock, which calls this again.
			if s.boff > from {
				l.dirtyConn(c)
			}
			return
		}
		last := s.boff+n == len(s.body)
		c.fr.WriteData(s.id, last, s.body[s.boff:s.boff+n])
		s.boff += n
		c.sendWin -= int64(n)
		s.sendWin -= int64(n)
		s.ended = last
	}
	if s.blocked {
		s.blocked = false
		c.blockedN--
	}
	l.dirtyConn(c)
}

// unblock sends more of the bodies waiting for c's windows or for its
// queue to drain.
func (l *h2Loop) unblock(c *h2lc) {
	if c.blockedN == 0 {
		return
	}
	for k := range c.ring {
		if j := c.ring[k]; j >= 0 && l.slots[j].blocked && c.sendWin > 0 && c.queued() < h2QueueBody {
			l.sendBody(j)
		}
	}
}

func (l *h2Loop) flushAll() {
	for _, c := range l.dirtyList {
		c.dirty = false
		if c.state == connOpen {
			l.flush(c)
		}
	}
	clear(l.dirtyList)
	l.dirtyList = l.dirtyList[:0]
}

// flush writes what c has for the socket; the streams whose HEADERS went
// out are written, sent when the write that completed them began. Once all is out it
// frames more of the bodies that waited for that (sendBody), and writes
// them too, until the socket is full or nothing waits. Meanwhile c counts
// as dirty, so that what it frames does not put c on l.dirtyList for a
// second write(2) that the socket, full, would refuse.
func (l *h2Loop) flush(c *h2lc) {
	dirty := c.dirty
	c.dirty = true
	l.writeOut(c)
	if c.state == connOpen { // not freed by a failed write (connDown)
		c.dirty = dirty
	}
}

// writeOut is flush's work.
func (l *h2Loop) writeOut(c *h2lc) {
	for {
		if c.tlsc != nil && len(c.plain) > 0 {
			if err := l.seal(c); err != nil {
				l.connDown(c, err)
				return
			}
		}
		c.sealed = len(c.marks)
		for c.woff < len(c.out) {
			// sent is when the write that completes a request's HEADERS
			// began: the server may read them before it returns.
			at := l.g.since()
			n, err := rawIO(syscall.SYS_WRITE, c.fd, c.out[c.woff:])
			if n > 0 {
				c.woff += n
				l.written(c, at)
			}
			switch err {
			case nil, unix.EINTR:
				continue
			case unix.EAGAIN:
				if !c.outEv {
					c.outEv = true
					_ = unix.EpollCtl(l.ep, unix.EPOLL_CTL_MOD, c.fd, &unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLRDHUP | unix.EPOLLOUT, Fd: c.idx, Pad: int32(c.fd)})
				}
				return
			}
			l.connDown(c, os.NewSyscallError("write", err))
			return
		}
		c.out, c.woff = c.out[:0], 0
		if !c.full {
			break
		}
		c.full = false
		l.unblock(c)
		if c.queued() == 0 {
			break
		}
	}
	if c.outEv {
		c.outEv = false
		_ = unix.EpollCtl(l.ep, unix.EPOLL_CTL_MOD, c.fd, &unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLRDHUP, Fd: c.idx, Pad: int32(c.fd)})
	}
}

// seal encrypts c.plain into c.out. HEADERS are written when the record
// carrying their last byte is (the server can read none of a record
// before all of it), so plain is cut after HEADERS that other bytes (a
// body) follow; HEADERS that follow one another are sealed together.
func (l *h2Loop) seal(c *h2lc) error {
	from, k0 := 0, c.sealed
	for k := c.sealed; k < len(c.marks); k++ {
		end := c.marks[k].end
		if k+1 < len(c.marks) && c.marks[k+1].start == end {
			continue
		}
		if _, err := c.tlsc.Write(c.plain[from:end]); err != nil {
			return err
		}
		for j := k0; j <= k; j++ {
			c.marks[j].end = len(c.out)
		}
		from, k0 = end, k+1
	}
	if from < len(c.plain) {
		if _, err := c.tlsc.Write(c.plain[from:]); err != nil {
			return err
		}
	}
	c.plain = c.plain[:0]
	return nil
}

// written marks the streams whose HEADERS are in c.out[:woff], sent at
// at: when the write that completed them began.
func (l *h2Loop) written(c *h2lc, at time.Duration) {
	k := 0
	for ; k < c.sealed && c.marks[k].end <= c.woff; k++ {
		m := c.marks[k]
		s := &l.slots[m.slot]
		if s.state == h2Open && s.c == c && s.id == m.id {
			s.written, s.sent = true, at
		}
	}
	if k > 0 {
		n := copy(c.marks, c.marks[k:])
		c.marks = c.marks[:n]
		c.sealed -= k
	}
}

// readConn reads what c has and takes every whole frame. One read(2) a
// wake-up when it did not fill the buffer: epoll is level-triggered, and
// says so again if more came.
func (l *h2Loop) readConn(c *h2lc) {
	if c.tlsc != nil {
		l.readConnTLS(c)
		return
	}
	for c.state == connOpen {
		room := len(c.rbuf) - c.rn
		m, rx, err := l.recv(c.fd, c.rbuf[c.rn:])
		if err == nil && m == 0 {
			err = io.EOF
		}
		if m > 0 {
			c.rn, c.rx = c.rn+m, rx
			l.frames(c)
			if c.state != connOpen {
				return
			}
			c.compact()
		}
		switch {
		case err == nil && m < room:
			return
		case err == nil:
			continue
		case err == unix.EAGAIN || err == unix.EINTR:
		case err == io.EOF:
			l.connDown(c, io.ErrUnexpectedEOF)
		default:
			l.connDown(c, os.NewSyscallError("read", err))
		}
		return
	}
}

// compact moves the part of a frame left in rbuf to its start.
func (c *h2lc) compact() {
	if c.roff > 0 {
		c.rn = copy(c.rbuf, c.rbuf[c.roff:c.rn])
		c.roff = 0
	}
}

// readConnTLS is readConn over TLS: ciphertext from the socket into c's
// loopTLS, plaintext from crypto/tls into rbuf.
func (l *h2Loop) readConnTLS(c *h2lc) {
	t := c.tio
	for c.state == connOpen {
		drained := true
		if !t.eof {
			t.room()
			room := cap(t.in) - len(t.in)
			m, rx, err := l.recv(c.fd, t.in[len(t.in):cap(t.in)])
			switch {
			case err == nil && m == 0:
				t.eof = true
			case err == nil:
				t.in, c.rx = t.in[:len(t.in)+m], rx
				drained = m < room
			case err != unix.EAGAIN && err != unix.EINTR:
				l.connDown(c, os.NewSyscallError("read", err))
				return
			}
		}
		for c.state == connOpen {
			n, err := c.tlsc.Read(c.rbuf[c.rn:])
			if n > 0 {
				c.rn += n
				l.frames(c)
				if c.state != connOpen {
					return
				}
				c.compact()
			}
			if err == nil {
				continue
			}
			if err == errWouldBlock {
				break
			}
			if errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			l.connDown(c, err)
			return
		}
		l.dirtyConn(c) // crypto/tls may have written (a key update)
		if drained {
			return
		}
	}
}

// frames takes the whole frames in c.rbuf.
func (l *h2Loop) frames(c *h2lc) {
	for c.state == connOpen {
		avail := c.rn - c.roff
		if avail < 9 {
			return
		}
		b := c.rbuf[c.roff:]
		length := int(b[0])<<16 | int(b[1])<<8 | int(b[2])
		if length <= h2MaxReadFrame && avail < 9+length {
			return
		}
		fh, err := c.fr.ReadFrameHeader()
		if err != nil {
			l.connError(c, err)
			return
		}
		if !c.settings && fh.Type != http2.FrameSettings {
			l.connError(c, http2.ConnectionError(http2.ErrCodeProtocol))
			return
		}
		switch fh.Type {
		case http2.FrameHeaders, http2.FrameContinuation, http2.FrameWindowUpdate:
			p := c.rbuf[c.roff : c.roff+int(fh.Length)]
			c.roff += int(fh.Length)
			l.rawFrame(c, fh, p)
			continue
		}
		f, err := c.fr.ReadFrameForHeader(fh)
		if err != nil {
			var se http2.StreamError
			if errors.As(err, &se) {
				l.streamError(c, se)
				continue
			}
			l.connError(c, err)
			return
		}
		switch f := f.(type) {
		case *http2.DataFrame:
			l.data(c, f)
		case *http2.SettingsFrame:
			l.settings(c, f)
		case *http2.PingFrame:
			if !f.IsAck() {
				c.fr.WritePing(true, f.Data)
				l.dirtyConn(c)
			}
		case *http2.RSTStreamFrame:
			l.rstStream(c, f.StreamID, f.ErrCode)
		case *http2.GoAwayFrame:
			l.goAway(c, f.LastStreamID, f.ErrCode)
		case *http2.PushPromiseFrame:
			l.connError(c, http2.ConnectionError(http2.ErrCodeProtocol)) // push is off
			return
		}
	}
}

// rawFrame takes the frames whose parsing by the Framer would allocate:
// HEADERS, CONTINUATION (RFC 9113 §6.2, §6.10) and WINDOW_UPDATE (§6.9).
func (l *h2Loop) rawFrame(c *h2lc, fh http2.FrameHeader, p []byte) {
	switch fh.Type {
	case http2.FrameWindowUpdate:
		if len(p) != 4 {
			l.connError(c, http2.ConnectionError(http2.ErrCodeFrameSize))
			return
		}
		inc := int64(binary.BigEndian.Uint32(p) & (1<<31 - 1))
		if fh.StreamID == 0 {
			if inc == 0 {
				l.connError(c, http2.ConnectionError(http2.ErrCodeProtocol))
				return
			}
			c.sendWin += inc
			if c.sendWin > 1<<31-1 {
				l.connError(c, http2.ConnectionError(http2.ErrCodeFlowControl))
				return
			}
			l.unblock(c)
			return
		}
		if i := l.lookup(c, fh.StreamID); i >= 0 && inc > 0 {
			s := &l.slots[i]
			s.sendWin += inc
			if s.blocked {
				l.sendBody(i)
			}
		}
		return
	case http2.FrameHeaders:
		if fh.StreamID == 0 {
			l.connError(c, http2.ConnectionError(http2.ErrCodeProtocol))
			return
		}
		if fh.Flags.Has(http2.FlagHeadersPadded) {
			if len(p) < 1 || int(p[0]) > len(p)-1 {
				l.connError(c, http2.ConnectionError(http2.ErrCodeProtocol))
				return
			}
			p = p[1 : len(p)-int(p[0])]
		}
		if fh.Flags.Has(http2.FlagHeadersPriority) {
			if len(p) < 5 {
				l.connError(c, http2.ConnectionError(http2.ErrCodeFrameSize))
				return
			}
			p = p[5:]
		}
		c.curID, c.curEnd = fh.StreamID, fh.Flags.Has(http2.FlagHeadersEndStream)
		c.cur = l.lookup(c, fh.StreamID)
		c.curTrail = c.cur >= 0 && l.slots[c.cur].final
		if c.cur >= 0 && !c.curTrail {
			s := &l.slots[c.cur]
			s.status, s.ctype = 0, ""
		}
	}
	if _, err := c.dec.Write(p); err != nil {
		l.connError(c, http2.ConnectionError(http2.ErrCodeCompression))
		return
	}
	if !fh.Flags.Has(http2.FlagHeadersEndHeaders) {
		return
	}
	if err := c.dec.Close(); err != nil {
		l.connError(c, http2.ConnectionError(http2.ErrCodeCompression))
		return
	}
	i := c.cur
	c.cur = -1
	if i < 0 {
		return
	}
	l.headBlock(c, i, c.curTrail, c.curEnd)
}

// headBlock takes the end of a header block of slot i's answer, on c.
// A stream's head and events are dated as done is: when the read that
// brought them arrived (arrived, the kernel's stamp), not when the loop,
// which may have slept on the beat meanwhile, read them.
func (l *h2Loop) headBlock(c *h2lc, i int32, trailers, end bool) {
	s := &l.slots[i]
	now := l.arrived(c.rx, s.sent)
	s.answered = true
	if !trailers {
		switch {
		case s.status == 0:
			l.resetStream(i, http2.ErrCodeProtocol)
			l.finish(i, http2.StreamError{StreamID: s.id, Code: http2.ErrCodeProtocol, Cause: errors.New("no :status in the answer")})
			return
		case s.status < 200:
			if end {
				l.resetStream(i, http2.ErrCodeProtocol)
				l.finish(i, http2.StreamError{StreamID: s.id, Code: http2.ErrCodeProtocol})
				return
			}
			// 1xx: the final head is still to come.
			s.rec.Class = [recorder.MaxClassHeaders]string{}
			s.rec.NTimings = 0
			s.status = 0
			return
		}
		s.final = true
		if f := streamFormat(l.g.cfg.Stream, s.ctype); f != nil {
			s.streaming = true
			l.plain = false // off the beat: a stream's reader wakes for each event, as its user would
			s.er.reset(f)
			s.rec.Streamed, s.rec.GotFirstByte, s.rec.FirstByte = true, true, now
		}
	}
	if end {
		l.peerEnded(i, now)
	}
}

// peerEnded completes slot i's exchange: the answer ended.
func (l *h2Loop) peerEnded(i int32, now time.Duration) {
	s := &l.slots[i]
	s.peerEnd = true
	if s.streaming {
		if err := s.er.end(now, &s.rec, &l.ts); err != nil {
			l.finish(i, err)
			return
		}
	}
	if !s.ended {
		// Answered before the request's body was all sent: the rest is
		// not sent (RFC 9113 §8.1).
		l.resetStream(i, http2.ErrCodeNo)
	}
	l.finish(i, nil)
}

// data takes a DATA frame.
func (l *h2Loop) data(c *h2lc, f *http2.DataFrame) {
	n := f.Length
	c.unacked += n
	if c.unacked >= h2ConnWindow/2 {
		c.fr.WriteWindowUpdate(0, c.unacked)
		c.unacked = 0
		l.dirtyConn(c)
	}
	i := l.lookup(c, f.StreamID)
	if i < 0 {
		return
	}
	s := &l.slots[i]
	if !s.final {
		l.resetStream(i, http2.ErrCodeProtocol)
		l.finish(i, http2.StreamError{StreamID: s.id, Code: http2.ErrCodeProtocol, Cause: errors.New("DATA before the answer's head")})
		return
	}
	now := l.arrived(c.rx, s.sent) // as headBlock dates the head
	data := f.Data()
	over := false
	if limit := l.g.cfg.MaxBody; limit > 0 && s.nbody+int64(len(data)) > limit {
		data, over = data[:limit-s.nbody], true
	}
	s.nbody += int64(len(data))
	if s.streaming && len(data) > 0 {
		if err := s.er.feed(data, now, &s.rec, &l.ts); err != nil {
			l.resetStream(i, http2.ErrCodeCancel)
			l.finish(i, err)
			return
		}
	}
	if over {
		s.rec.BodyOverCap = true
		if !f.StreamEnded() {
			l.resetStream(i, http2.ErrCodeCancel)
		}
		s.peerEnd = true
		l.finish(i, nil)
		return
	}
	if f.StreamEnded() {
		l.peerEnded(i, now)
		return
	}
	s.recvUnacked += n
	if s.recvUnacked >= h2StreamWindow/2 {
		c.fr.WriteWindowUpdate(s.id, s.recvUnacked)
		s.recvUnacked = 0
		l.dirtyConn(c)
	}
}

// settings applies the server's SETTINGS and acknowledges them.
func (l *h2Loop) settings(c *h2lc, f *http2.SettingsFrame) {
	if f.IsAck() {
		return
	}
	c.settings = true
	var bad error
	_ = f.ForeachSetting(func(st http2.Setting) error {
		switch st.ID {
		case http2.SettingMaxConcurrentStreams:
			c.peerMax = st.Val
		case http2.SettingInitialWindowSize:
			if st.Val > 1<<31-1 {
				bad = http2.ConnectionError(http2.ErrCodeFlowControl)
				return nil
			}
			delta := int64(st.Val) - c.peerWin
			c.peerWin = int64(st.Val)
			for _, j := range c.ring {
				if j >= 0 {
					l.slots[j].sendWin += delta
				}
			}
		case http2.SettingMaxFrameSize:
			c.peerMaxF = min(max(st.Val, 1<<14), 1<<24-1)
		case http2.SettingHeaderTableSize:
			c.enc.SetMaxDynamicTableSizeLimit(st.Val)
		}
		return nil
	})
	if bad != nil {
		l.connError(c, bad)
		return
	}
	c.fr.WriteSettingsAck()
	l.dirtyConn(c)
	l.unblock(c)
}

// rstStream takes the server's RST_STREAM of stream id.
func (l *h2Loop) rstStream(c *h2lc, id uint32, code http2.ErrCode) {
	i := l.lookup(c, id)
	if i < 0 {
		return
	}
	s := &l.slots[i]
	l.detach(i)
	if code == http2.ErrCodeRefusedStream {
		l.unprocessed(i, http2.StreamError{StreamID: id, Code: code}, true, true)
		return
	}
	s.peerEnd = true
	l.finish(i, http2.StreamError{StreamID: id, Code: code})
}

// streamError ends the stream whose frame the Framer refused.
func (l *h2Loop) streamError(c *h2lc, se http2.StreamError) {
	i := l.lookup(c, se.StreamID)
	if i < 0 {
		return
	}
	l.resetStream(i, se.Code)
	l.finish(i, se)
}

// goAway takes the server's GOAWAY: the streams above last were not
// processed and go again elsewhere; the others go on; c takes no more.
func (l *h2Loop) goAway(c *h2lc, last uint32, code http2.ErrCode) {
	if !c.goAway || last < c.lastID {
		c.lastID = last
	}
	c.goAway, c.goErr = true, code
	for _, j := range c.ring {
		if j >= 0 && l.slots[j].id > c.lastID {
			l.detach(j)
			l.unprocessed(j, goAwayError{last: last, code: code}, true, last == 0)
		}
	}
	if c.active == 0 {
		l.closeConn(c)
	}
}

func (l *h2Loop) lookup(c *h2lc, id uint32) int32 {
	j := c.ring[(id>>1)&uint32(len(c.ring)-1)]
	if j >= 0 && l.slots[j].c == c && l.slots[j].id == id && l.slots[j].state == h2Open {
		return j
	}
	return -1
}

// detach takes slot i's stream off its connection.
func (l *h2Loop) detach(i int32) {
	s := &l.slots[i]
	c := s.c
	if c == nil {
		return
	}
	c.ring[(s.id>>1)&uint32(len(c.ring)-1)] = -1
	c.active--
	if s.blocked {
		s.blocked = false
		c.blockedN--
	}
	if c.cur == i {
		c.cur = -1
	}
	s.c = nil
	if c.state == connOpen && c.active == 0 && (c.goAway || c.exhaust) {
		l.closeConn(c)
	}
}

// resetStream sends RST_STREAM for slot i's stream, unless it is closed
// on both sides.
func (l *h2Loop) resetStream(i int32, code http2.ErrCode) {
	s := &l.slots[i]
	if c := s.c; c != nil && c.state == connOpen && !(s.ended && s.peerEnd) {
		c.fr.WriteRSTStream(s.id, code)
		l.dirtyConn(c)
	}
}

// counted reports whether slot i's attempt on its stream counts: its
// HEADERS were written (or framed and not yet out, when it ends: they
// still go), and the server did not say it left it unprocessed.
func (s *h2Slot) counted() bool { return s.state == h2Open }

// unprocessed sends slot i's request again, as l.resend allows: its
// stream (detached) was not processed by the server (wrote: it refused it,
// or it was past a GOAWAY's last), or its HEADERS never left. Not sent
// again, the request fails with err, and the attempt does not count
// either way: the server did not process it. charge: the bounce counts
// against h2Resends. One past the GOAWAY of a connection that
// processed a stream (last > 0) does not: that server makes progress, and
// nginx with keepalive_requests 3 ends every connection after three
// streams, so on a loaded machine, one dial at a time and 33 in flight,
// requests were bounced seven times and failed (TestNginx). A request
// bounced so still ends at its timeout.
func (l *h2Loop) unprocessed(i int32, err error, wrote, charge bool) {
	s := &l.slots[i]
	if charge {
		s.resends++
	}
	if !l.resend.allows(wrote) || s.resends > h2Resends || l.aborted || l.g.since() >= s.attempt+l.g.cfg.Timeout {
		s.hand = -1 // not an attempt
		s.state = h2Wait
		l.finish(i, err)
		return
	}
	s.state, s.hand = h2Wait, -1
	s.clear()
	if se := (http2.StreamError{}); errors.As(err, &se) && se.Code == http2.ErrCodeRefusedStream {
		s.refused++
		if d := h2RefusedWait(s.refused); d > 0 {
			s.release = l.g.since() + d // counted a re-send when it goes (expire)
			l.nextCheck = min(l.nextCheck, s.release)
			return
		}
	}
	s.tx.resend(false)
	l.waiting = append(l.waiting, i)
}

// finish records slot i's request, ended with err (nil: completed), and
// frees its slot.
func (l *h2Loop) finish(i int32, err error) {
	s := &l.slots[i]
	c := s.c // detached below
	counted := s.counted()
	hand := time.Duration(-1)
	if counted {
		at := s.sent
		if !s.written {
			at = s.hand
		}
		s.tx.wrote(at)
		hand = at
	}
	if s.state == h2Open {
		if err != nil && !s.peerEnd {
			l.resetStream(i, http2.ErrCodeCancel)
		}
		l.detach(i)
	}
	r := s.rec
	r.Seq, r.Scheduled, r.Status = s.it.seq, s.it.off, s.status
	if !s.final {
		r.Class, r.NTimings, r.Status = [recorder.MaxClassHeaders]string{}, 0, 0
	}
	if s.streaming {
		s.er.count(&r)
		l.ts.flush()
	}
	var done time.Duration
	if err == nil && s.written && c != nil {
		done = l.arrived(c.rx, s.sent) // the read that ended the stream
	} else {
		done = l.g.since()
	}
	tx := s.tx
	l.g.leanOutcome(&r, done, s.attempt, hand, &tx, err)
	l.freed(done - s.attempt)
	if counted && !s.answered && r.Status == 0 {
		switch {
		case r.Outcome == recorder.Failed && r.Kind == recorder.KindReset:
			tx.noAnswer(true)
		case r.Outcome == recorder.TimedOut, r.Outcome == recorder.Unfinished:
			tx.noAnswer(false)
		}
		r.Unanswered = tx.un
	}
	l.g.done(&r, l.w.shard)
	l.inUse--
	if l.dialFor == i {
		l.dialFor = -1
	}
	if s.state == h2Wait {
		for k, j := range l.waiting {
			if j == i {
				l.waiting = append(l.waiting[:k], l.waiting[k+1:]...)
				break
			}
		}
	}
	s.state, s.c, s.hand, s.release = h2Free, nil, -1, 0
	s.clear()
	l.free = append(l.free, i)
}

// connError fails c with a connection error: a GOAWAY says why, and c is
// closed.
func (l *h2Loop) connError(c *h2lc, err error) {
	var ce http2.ConnectionError
	if errors.As(err, &ce) {
		c.fr.WriteGoAway(0, http2.ErrCode(ce), nil)
		l.flush(c)
	}
	if c.state == connOpen {
		l.connDown(c, err)
	}
}

// connDown ends c, which failed with err: its written streams fail with
// err (or, after a GOAWAY, with the GOAWAY's error), those whose HEADERS
// never left go again.
func (l *h2Loop) connDown(c *h2lc, err error) {
	if c.state != connOpen {
		return
	}
	c.state = connFree // no more frames to it
	if c.goAway && (errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET)) {
		err = goAwayError{last: c.lastID, code: c.goErr}
	}
	for _, j := range c.ring {
		if j < 0 || l.slots[j].c != c {
			continue
		}
		s := &l.slots[j]
		if !s.written {
			l.detach(j)
			l.unprocessed(j, err, false, true)
			continue
		}
		s.peerEnd = true
		l.finish(j, err)
	}
	c.state = connOpen
	l.closeConn(c)
}

// closeConn closes c and forgets it.
func (l *h2Loop) closeConn(c *h2lc) {
	if c.state != connOpen {
		return
	}
	if c.fd >= 0 {
		if c.tlsc != nil {
			l.closeNotify(c)
		}
		unix.Close(c.fd)
	}
	for k, d := range l.conns {
		if d == c {
			l.conns = append(l.conns[:k], l.conns[k+1:]...)
			break
		}
	}
	for _, j := range c.ring {
		if j >= 0 && l.slots[j].c == c {
			l.slots[j].c = nil
		}
	}
	l.freeConn(c)
}

// closeNotify ends c's TLS with a close_notify alert, as RFC 8446 §6.1
// asks of a side that stops writing (crypto/tls's Close sends it for
// x/net's transport): one write of what is left for the socket, the alert
// last. A socket that takes no more, or is gone, loses it: the connection
// is closed either way.
func (l *h2Loop) closeNotify(c *h2lc) {
	if c.tlsc.CloseWrite() != nil {
		return
	}
	if c.woff < len(c.out) {
		_, _ = rawIO(syscall.SYS_WRITE, c.fd, c.out[c.woff:])
	}
}

// expire cuts the requests whose deadline passed, lets go the re-sends
// held back whose time came, and finds the next of either.
func (l *h2Loop) expire(now time.Duration) {
	l.nextCheck = never
	for i := range l.slots {
		s := &l.slots[i]
		if s.state == h2Free {
			continue
		}
		d := s.attempt + l.g.cfg.Timeout
		if d <= now {
			l.finish(int32(i), os.ErrDeadlineExceeded)
			continue
		}
		if s.release > 0 {
			if s.release <= now {
				s.release = 0
				s.tx.resend(false)
				l.waiting = append(l.waiting, int32(i))
			} else {
				d = min(d, s.release)
			}
		}
		l.nextCheck = min(l.nextCheck, d)
	}
}

// abort ends every request when the drain expired: unfinished.
func (l *h2Loop) abort() {
	l.aborted = true
	for i := range l.slots {
		if l.slots[i].state != h2Free {
			l.finish(int32(i), errAborted)
		}
	}
}

// broken ends the run when the loop can no longer wait (see
// epollLoop.broken).
func (l *h2Loop) broken(err error) {
	l.stats.LoopErr = err
	l.aborted = true
	for i := range l.slots {
		if l.slots[i].state != h2Free {
			l.finish(int32(i), err)
		}
	}
	for l.pending.len() > 0 {
		l.g.abandon(l.pending.pop(), l.w.shard)
	}
	if l.scheduling {
		l.endSchedule(false)
	}
	for l.out > 0 {
		time.Sleep(time.Millisecond)
		l.news()
	}
}

func (l *h2Loop) close() {
	l.ts.flush()
	for _, c := range append([]*h2lc(nil), l.conns...) {
		l.closeConn(c)
	}
	l.mu.Lock()
	l.closed = true
	l.mu.Unlock()
	l.stopBeat()
	for _, fd := range []int{l.tfd, l.efd, l.ep, l.quiet} {
		if fd >= 0 {
			unix.Close(fd)
		}
	}
}

// loopTLS is the connection under a loop's crypto/tls client: during the
// handshake (in the dial's goroutine) the socket itself; after, buffers
// the loop fills with what it read from the socket (in) and drains to it
// (out). A read that finds in empty fails with errWouldBlock, a
// temporary net.Error, which crypto/tls passes on without failing the
// connection, keeping a partial record for the next read.
type loopTLS struct {
	net.Conn
	direct bool
	in     []byte
	ioff   int
	eof    bool
	out    *[]byte
}

func (t *loopTLS) Read(p []byte) (int, error) {
	if t.direct {
		return t.Conn.Read(p)
	}
	if t.ioff == len(t.in) {
		if t.eof {
			return 0, io.EOF
		}
		return 0, errWouldBlock
	}
	n := copy(p, t.in[t.ioff:])
	t.ioff += n
	return n, nil
}

// room makes room in in for a read.
func (t *loopTLS) room() {
	if t.ioff == len(t.in) {
		t.in, t.ioff = t.in[:0], 0
	}
	if cap(t.in)-len(t.in) >= 16<<10 {
		return
	}
	if t.ioff > 0 {
		t.in = t.in[:copy(t.in, t.in[t.ioff:])]
		t.ioff = 0
	}
	if cap(t.in)-len(t.in) < 16<<10 {
		b := make([]byte, len(t.in), 2*cap(t.in)+64<<10)
		copy(b, t.in)
		t.in = b
	}
}

func (t *loopTLS) Write(p []byte) (int, error) {
	if t.direct {
		return t.Conn.Write(p)
	}
	*t.out = append(*t.out, p...)
	return len(p), nil
}

// goAwayError ends a request the server's GOAWAY stopped: above its last
// stream and sent again too often, or cut when the connection closed after
// it. A reset, as x/net/http2's error for it is (Kind).
type goAwayError struct {
	last uint32
	code http2.ErrCode
}

func (e goAwayError) Error() string {
	return fmt.Sprintf("http2: the server sent GOAWAY (last stream %d, %v)", e.last, e.code)
}

func (goAwayError) Unwrap() error { return syscall.ECONNRESET }

type wouldBlock struct{}

func (wouldBlock) Error() string   { return "engine: would block" }
func (wouldBlock) Timeout() bool   { return false }
func (wouldBlock) Temporary() bool { return true }

var errWouldBlock error = wouldBlock{}
