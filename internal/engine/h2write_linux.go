//go:build linux

package engine

import (
	"os"
	"time"
	"unsafe"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
	"golang.org/x/sys/unix"

	"github.com/openload/openload/internal/recorder"
	"github.com/openload/openload/internal/servertiming"
)

// The HTTP/2 loop's write path: a request's stream on the roomiest
// connection, its HEADERS and body framed into the connection's buffer
// (flow control permitting) and written, sent dated by the write that
// completed its HEADERS.

// field is c's hpack emit function: it puts the fields of the header
// block being decoded in its slot.
func (c *h2lc) field(l *h2Loop) func(hpack.HeaderField) {
	return func(f hpack.HeaderField) {
		if c.cur < 0 {
			return
		}
		s := &l.slots[c.cur]
		name := f.Name
		if l.g.cfg.GRPC && len(name) > 5 && name[:5] == "grpc-" {
			// In the trailers, or in a trailers-only head (grpc.go).
			switch name {
			case "grpc-status":
				s.gHas, s.gCode = true, grpcStatus(f.Value)
				return
			case "grpc-message":
				s.gMsg = f.Value
				return
			}
		}
		if c.curTrail {
			return
		}
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
			s.bounces = h2Bounces{}
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
			n, err := l.writeFD(c.fd, c.out[c.woff:])
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
