//go:build linux

package engine

import (
	"io"
	"os"
	"time"

	"golang.org/x/sys/unix"

	"github.com/openload/openload/internal/framing"
	"github.com/openload/openload/internal/h1"
	"github.com/openload/openload/internal/recorder"
)

// Event streams on the event loop. A lent response costs its goroutine a
// wake-up and two reads per token (the one that finds nothing, and the one
// after the runtime's poller says the token is there); at thousands of
// streams and tens of thousands of tokens a second those wake-ups were
// most of the generator's CPU (docs/BENCHMARKS.md, “Streamed answers”).
// So the loop reads a chunked event stream itself, as it reads plain
// responses: one read(2) per token when epoll says it came. It feeds what
// it reads to h1.Dechunk and the payload to the eventReader every client
// reads streams with (stream.go), and ends the exchange at an error event
// as readStream does: failed, the connection closed with whatever of the
// body is still unread. Everything else a stream may be — a head
// over the slot's buffer, a 1xx, not chunked, a body cap — is still lent.

// loopStream is a slot's stream while the loop reads it.
type loopStream struct {
	rec recorder.Record // the head's status, classes and timings; the stream's points
	dc  h1.Dechunk
	er  eventReader
}

// streamHead starts reading slot i's response, whose simple head h is
// whole in the slot's buffer, as an event stream on the loop, if h says
// it is one the loop can read: chunked, of a stream format, no body cap.
// It reports whether it did; otherwise the caller lends the response.
func (l *epollLoop) streamHead(i int32, h h1.Head) bool {
	f := streamFormat(l.g.cfg.Stream, h.ContentType)
	if l.t.maxBody > 0 || !h.Chunked || f == nil {
		return false
	}
	s := &l.slots[i]
	st := l.newLoopStream(f)
	st.rec.Status = h.Status
	s.heads.apply(&st.rec)
	st.rec.Streamed, st.rec.GotFirstByte, st.rec.FirstByte = true, true, l.arrived(s.rx, s.sent)
	s.st, s.status, s.keep = st, h.Status, h.Keep
	l.plain = false // off the beat: a stream's reader wakes for each event, as its user would
	if l.g.refusals.wants(h.Status, s.it.seq) {
		s.grab = newGrab()
	}
	body := s.buf[h.N:s.n]
	s.n = 0
	l.feed(i, body, st.rec.FirstByte)
	return true
}

func (l *epollLoop) newLoopStream(f framing.Format) *loopStream {
	var st *loopStream
	if n := len(l.spareStreams); n > 0 {
		st = l.spareStreams[n-1]
		l.spareStreams = l.spareStreams[:n-1]
	} else {
		st = new(loopStream)
	}
	st.er.reset(f)
	return st
}

// readStream reads what slot i's stream has.
func (l *epollLoop) readStream(i int32) {
	s := &l.slots[i]
	m, rx, err := l.recv(s.fd, l.discard[:])
	switch {
	case err == unix.EAGAIN || err == unix.EINTR:
		return
	case err != nil:
		l.fail(i, s.sent, os.NewSyscallError("read", err))
		return
	case m == 0:
		l.fail(i, s.sent, io.ErrUnexpectedEOF) // cut before its end
		return
	}
	// The events are dated as the head and done are: when the read's
	// bytes arrived (the kernel's stamp), whenever the loop read them.
	l.feed(i, l.discard[:m], l.arrived(rx, s.sent))
}

// feed reads b, bytes of slot i's stream that arrived at now, and
// completes the exchange at the stream's end.
func (l *epollLoop) feed(i int32, b []byte, now time.Duration) {
	s := &l.slots[i]
	st := s.st
	for len(b) > 0 && !st.dc.Done() {
		data, rest, err := st.dc.Feed(b)
		if s.grab != nil {
			s.grab.add(data)
		}
		if err == nil {
			err = st.er.feed(data, now, &st.rec, &l.ts)
		}
		if err != nil {
			l.fail(i, s.sent, err)
			return
		}
		b = rest
	}
	if !st.dc.Done() {
		return
	}
	if len(b) > 0 {
		s.keep = false // bytes after the body: nothing to pair them with
	}
	if err := st.er.end(now, &st.rec, &l.ts); err != nil {
		l.fail(i, s.sent, err)
		return
	}
	// done is when the stream's last byte was read, not the head's
	// kernel stamp, which reading the stream never moves: complete takes
	// done from s.rx.
	s.rx = now
	l.complete(i)
}

// flushTokens hands the loop's batch of token events to the recorder.
func (l *epollLoop) flushTokens() { l.ts.flush() }

// endStream puts slot i's stream into r, the exchange's record, and
// frees the stream.
func (l *epollLoop) endStream(r *recorder.Record, i int32) {
	s := &l.slots[i]
	st := s.st
	if st == nil {
		return
	}
	p := &st.rec
	r.Class, r.Timings, r.NTimings = p.Class, p.Timings, p.NTimings
	r.Streamed, r.GotFirstByte, r.FirstByte = true, true, p.FirstByte
	r.FirstToken, r.FirstAnswer, r.LastToken, r.Events = p.FirstToken, p.FirstAnswer, p.LastToken, p.Events
	st.er.count(r)
	l.flushTokens()
	st.rec = recorder.Record{}
	st.dc.Reset()
	l.spareStreams = append(l.spareStreams, st)
	s.st = nil
}
