//go:build linux

package engine

import (
	"bytes"
	"context"
	"crypto/tls"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
	"golang.org/x/sys/unix"

	"github.com/openload/openload/internal/recorder"
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
// after the k-th refusal 2^(k-2) s later (h2Bounces); so is a stream
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
	bounces h2Bounces     // how often the server did not process it (h2.go)
	release time.Duration // a re-send held back (h2Bounces.bounce) goes at release; 0: none held

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
	grpc        bool       // a gRPC call's answer (grpc.go): its messages read by gr
	gr          grpcReader //
	gHas        bool       // a grpc-status came, gCode its value
	gCode       int
	gMsg        string // the grpc-message, as the decoder gave it
	grab        *grab  // the body of a refusal the run keeps (refusal.go), or nil
}

// clear forgets what slot s's last attempt wrote and read: the next
// record is built from its own attempt only.
func (s *h2Slot) clear() {
	s.written, s.ended, s.peerEnd, s.answered, s.final, s.streaming = false, false, false, false, false, false
	s.status, s.ctype, s.nbody, s.recvUnacked, s.blocked = 0, "", 0, 0, false
	s.grpc, s.gHas, s.gCode, s.gMsg = false, false, 0, ""
	s.rec = recorder.Record{}
	s.grab = nil
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

	loopInbox[h2news] // what goroutines tell the loop
}

// newH2Loop returns the HTTP/2 event loop for g's open run of s, or nil
// when it does not apply: Config.Epoll, HTTP/2 (h2c or TLS), no
// transport of the caller's, no redirects followed, no retries.
func newH2Loop(g *generator, s schedule.Schedule, stats *Stats, dispatched chan<- struct{}) *h2Loop {
	cfg := &g.cfg
	if !h2LoopApplies(cfg) || g.retry != nil {
		return nil
	}
	ep, tfd, efd, err := openLoop() // arrivals_linux.go
	if err != nil {
		return nil
	}
	addr := h2Addr(cfg.URL)
	l := &h2Loop{loopArrivals: newLoopArrivals(g, stats, dispatched, s, ep, tfd), w: g.newWorker(), reqs: newH2Reqs(cfg),
		tls: cfg.Protocol == HTTP2, tlsConf: tlsConfig(*cfg), addr: addr,
		loopInbox: loopInbox[h2news]{efd: efd}, slots: make([]h2Slot, cfg.Connections), nextCheck: never,
		dialFor: -1, metrics: interner{max: recorder.MaxTimingMetrics}, stamper: stamper{plain: !cfg.Stream, bytes: &g.bytes},
		resend: newH2ResendRule(cfg.Resend)}
	l.ts.sh = l.w.shard
	if cfg.StampHeader != "" {
		l.stampName = strings.ToLower(cfg.StampHeader)
	}
	for _, n := range cfg.ClassHeaders[:min(len(cfg.ClassHeaders), recorder.MaxClassHeaders)] {
		l.classes = append(l.classes, strings.ToLower(n))
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
	g.nextDue.Store(int64(l.off)) // endSchedule stores notDue when there is none
	l.seq = seqOf(s, 0)
	if !l.scheduling {
		l.endSchedule(false)
	}
	return l
}

func (l *h2Loop) start(ctx context.Context, wg *sync.WaitGroup) {
	l.startLoop(wg, func() { l.run(ctx) })
}

func (l *h2Loop) run(ctx context.Context) {
	g := l.g
	defer l.close()
	defer l.wakeOn(ctx, g.drain)()
	for {
		now := g.since()
		if !l.aborted && g.drain.Err() != nil {
			l.abort()
		}
		next := l.take(ctx, now, l.inUse)
		if l.aborted {
			l.abandonPending(l.w.shard)
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
	for _, n := range l.loopInbox.news() {
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
	l.abandonPending(l.w.shard)
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
	l.shut()
	l.stopBeat()
	for _, fd := range []int{l.tfd, l.efd, l.ep, l.quiet} {
		if fd >= 0 {
			unix.Close(fd)
		}
	}
}
