//go:build linux

package engine

import (
	"errors"
	"io"
	"os"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/sys/unix"

	"github.com/openload/openload/internal/recorder"
)

// The HTTP/2 loop's read path: a connection's bytes read (through TLS
// when it has it), cut into frames (h2frame.go) and taken: header blocks,
// DATA, SETTINGS, RST_STREAM and GOAWAY.

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
		length := frameLen(b)
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
		n, ok := windowIncrement(p)
		if !ok {
			l.connError(c, http2.ConnectionError(http2.ErrCodeFrameSize))
			return
		}
		inc := int64(n)
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
		frag, code, ok := headerFragment(fh.Flags, p)
		if !ok {
			l.connError(c, http2.ConnectionError(code))
			return
		}
		p = frag
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
		if l.g.refusals.wants(s.status, s.it.seq) {
			s.grab = newGrab()
		}
		if l.g.cfg.GRPC && s.status == 200 {
			// A gRPC answer (grpc.go): its messages are its events.
			s.grpc = true
			s.gr.reset()
			s.rec.Streamed, s.rec.GotFirstByte, s.rec.FirstByte = true, true, now
		} else if f := streamFormat(l.g.cfg.Stream, s.ctype); f != nil {
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
	if s.grpc {
		if !s.ended {
			l.resetStream(i, http2.ErrCodeNo)
		}
		err := grpcEnd(&s.gr, &s.rec, s.gHas, s.gCode)
		if err == nil {
			l.g.refusals.keepGRPC(s.it.seq, s.status, s.gCode, s.gMsg)
		}
		l.finish(i, err)
		return
	}
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
	if s.grab != nil {
		s.grab.add(data)
	}
	if s.grpc && len(data) > 0 {
		if s.rec.Events == 1 {
			l.plain = false // a server stream: off the beat, so that each message is dated by its own read
		}
		if err := s.gr.feed(data, now, l.g.cfg.grpcMax(), &s.rec, &l.ts); err != nil {
			s.rec.Tokens = s.rec.Events
			l.resetStream(i, http2.ErrCodeCancel)
			l.finish(i, err)
			return
		}
	}
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
