//go:build linux

package engine

import (
	"errors"
	"fmt"
	"io"
	"syscall"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/sys/unix"

	"github.com/openload/openload/internal/recorder"
)

// How the HTTP/2 loop's streams and connections end: a stream's record
// finished or its request sent again (the re-send rule, wire.go), a
// connection's error, GOAWAY and close.

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
// against h2Resends, as h2Bounces.bounce says; one past the GOAWAY of a
// connection that processed a stream (last > 0) does not.
func (l *h2Loop) unprocessed(i int32, err error, wrote, charge bool) {
	s := &l.slots[i]
	again, wait := s.bounces.bounce(err, charge)
	if !l.resend.allows(wrote) || !again || l.aborted || l.g.since() >= s.attempt+l.g.cfg.Timeout {
		s.hand = -1 // not an attempt
		s.state = h2Wait
		l.finish(i, err)
		return
	}
	s.state, s.hand = h2Wait, -1
	s.clear()
	if wait > 0 {
		s.release = l.g.since() + wait // counted a re-send when it goes (expire)
		l.nextCheck = min(l.nextCheck, s.release)
		return
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
	if s.grpc {
		r.Tokens = r.Events
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
	if s.grab != nil && err == nil {
		l.g.refusals.keep(r.Seq, r.Status, s.grab)
	}
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
		_, _ = l.writeFD(c.fd, c.out[c.woff:])
	}
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
