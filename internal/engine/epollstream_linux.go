//go:build linux

package engine

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net/http"
	"os"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/openload/openload/recorder"
)

// Event streams on the event loop. A lent response costs its goroutine a
// wake-up and two reads per token (the one that finds nothing, and the one
// after the runtime's poller says the token is there); at thousands of
// streams and tens of thousands of tokens a second those wake-ups were
// most of the generator's CPU (docs/BENCHMARKS.md, “Streamed answers”).
// So the loop reads a chunked event stream itself, as it reads plain
// responses: one read(2) per token when epoll says it came. It undoes the
// chunked framing (RFC 9112 §7.1) and scans the data's lines as
// readStream does (stream.go), and ends the exchange at an error event
// as readStream does: failed, the connection closed with whatever of the
// body is still unread. Everything else a stream may be — a head
// over the slot's buffer, a 1xx, not chunked, a body cap — is still lent.

// The states of a loopStream's chunked framing.
const (
	chunkSize    = iota // reading a chunk-size line
	chunkData           // reading a chunk's data
	chunkCRLF           // reading the CRLF after a chunk's data
	chunkTrailer        // reading trailer lines, up to an empty one
	chunkDone
)

// maxChunkLine bounds a chunk-size or trailer line.
const maxChunkLine = 4096

var errChunk = errors.New("event stream: malformed chunked framing")

// loopStream is a slot's stream while the loop reads it.
type loopStream struct {
	rec   recorder.Record // the head's status, classes and timings; the stream's points
	state int
	left  int64  // data bytes left in the chunk
	cr    bool   // chunkCRLF: the CR came
	ctl   []byte // a chunk-size or trailer line not yet whole
	line  []byte // a data line not yet whole
	usage int
}

// streamHead starts reading slot i's response as an event stream on the
// loop, if its head (whole in the slot's buffer) says it is one the loop
// can read: chunked, a final status, no body cap. It reports whether it
// did; otherwise the caller lends the response.
func (l *epollLoop) streamHead(i int32) bool {
	s := &l.slots[i]
	hn := bytes.Index(s.buf[:s.n], []byte("\r\n\r\n"))
	if l.t.maxBody > 0 || hn < 0 || !l.g.cfg.Stream && !containsFold(s.buf[:hn], eventStream) {
		return false // not parsed: every other chunked answer is lent as before
	}
	hn += 4
	resp, err := http.ReadResponse(bufio.NewReaderSize(bytes.NewReader(s.buf[:hn]), max(hn, 16)), l.t.req)
	if err != nil || resp.StatusCode < 200 || len(resp.TransferEncoding) != 1 || resp.TransferEncoding[0] != "chunked" ||
		!(l.g.cfg.Stream || isEventStream(resp.Header)) {
		return false
	}
	st := l.newLoopStream()
	st.rec.Status = resp.StatusCode
	fromHeader(l.g.cfg, resp.Header, &st.rec)
	st.rec.Streamed, st.rec.GotFirstByte, st.rec.FirstByte = true, true, l.g.since()
	s.st, s.status, s.keep = st, resp.StatusCode, !resp.Close
	body := s.buf[hn:s.n]
	s.n = 0
	l.feed(i, body, st.rec.FirstByte)
	return true
}

func (l *epollLoop) newLoopStream() *loopStream {
	if n := len(l.spareStreams); n > 0 {
		st := l.spareStreams[n-1]
		l.spareStreams = l.spareStreams[:n-1]
		return st
	}
	return &loopStream{usage: -1}
}

// readStream reads what slot i's stream has.
func (l *epollLoop) readStream(i int32) {
	s := &l.slots[i]
	m, err := rawIO(syscall.SYS_READ, s.fd, l.discard[:])
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
	l.feed(i, l.discard[:m], l.g.since())
}

// feed undoes the chunked framing of b, bytes of slot i's stream that
// arrived at now, and completes the exchange at the stream's end.
func (l *epollLoop) feed(i int32, b []byte, now time.Duration) {
	s := &l.slots[i]
	st := s.st
	for len(b) > 0 && st.state != chunkDone {
		switch st.state {
		case chunkSize, chunkTrailer:
			j := bytes.IndexByte(b, '\n')
			if j < 0 {
				st.ctl = append(st.ctl, b...)
				b = nil
				if len(st.ctl) > maxChunkLine {
					l.fail(i, s.sent, errChunk)
					return
				}
				continue
			}
			st.ctl = append(st.ctl, b[:j]...)
			b = b[j+1:]
			line := bytes.TrimSuffix(st.ctl, []byte{'\r'})
			st.ctl = st.ctl[:0]
			if st.state == chunkTrailer {
				if len(line) == 0 {
					st.state = chunkDone
				}
				continue
			}
			if k := bytes.IndexByte(line, ';'); k >= 0 {
				line = line[:k] // chunk extensions
			}
			n, err := strconv.ParseUint(string(bytes.TrimSpace(line)), 16, 62)
			if err != nil {
				l.fail(i, s.sent, errChunk)
				return
			}
			if n == 0 {
				st.state = chunkTrailer
			} else {
				st.state, st.left = chunkData, int64(n)
			}
		case chunkData:
			k := min(int64(len(b)), st.left)
			if !l.streamData(i, b[:k], now) {
				return
			}
			b, st.left = b[k:], st.left-k
			if st.left == 0 {
				st.state, st.cr = chunkCRLF, false
			}
		case chunkCRLF:
			switch {
			case !st.cr && b[0] == '\r':
				st.cr = true
			case st.cr && b[0] == '\n':
				st.state = chunkSize
			default:
				l.fail(i, s.sent, errChunk)
				return
			}
			b = b[1:]
		}
	}
	if st.state != chunkDone {
		return
	}
	if len(b) > 0 {
		s.keep = false // bytes after the body: nothing to pair them with
	}
	failed := l.streamLine(st, st.line, now) // a last line without its newline still counts
	st.line = st.line[:0]
	if failed {
		l.fail(i, s.sent, errStreamEvent)
		return
	}
	l.complete(i)
}

// streamData scans data, bytes of slot i's stream, for whole lines; it
// reports false when it failed the exchange (a line over maxEventLine, an
// error event).
func (l *epollLoop) streamData(i int32, data []byte, now time.Duration) bool {
	st := l.slots[i].st
	for len(data) > 0 {
		j := bytes.IndexByte(data, '\n')
		if j < 0 {
			st.line = append(st.line, data...)
			if len(st.line) > maxEventLine {
				l.fail(i, l.slots[i].sent, errEventLine)
				return false
			}
			return true
		}
		line := data[:j]
		if len(st.line) > 0 {
			st.line = append(st.line, line...)
			line = st.line
		}
		failed := l.streamLine(st, line, now)
		st.line = st.line[:0]
		if failed {
			l.fail(i, l.slots[i].sent, errStreamEvent)
			return false
		}
		data = data[j+1:]
	}
	return true
}

// streamLine reads one line of a stream that arrived at now; it reports
// an error event, which ends the stream.
func (l *epollLoop) streamLine(st *loopStream, line []byte, now time.Duration) (failed bool) {
	c, u, failed := eventLine(line)
	if u >= 0 {
		st.usage = u
	}
	if !c {
		return failed
	}
	l.evs = append(l.evs, tokenAt(&st.rec, now))
	if len(l.evs) == tokenBatch {
		l.flushTokens()
	}
	return false
}

// flushTokens hands the loop's batch of content events to the recorder.
func (l *epollLoop) flushTokens() {
	l.w.shard.putTokens(l.evs)
	l.evs = l.evs[:0]
}

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
	r.FirstToken, r.LastToken, r.Events = p.FirstToken, p.LastToken, p.Events
	r.Tokens = tokensOf(p.Events, st.usage)
	l.flushTokens()
	*st = loopStream{ctl: st.ctl[:0], line: st.line[:0], usage: -1}
	if cap(st.line) > 64<<10 {
		st.line = nil // do not keep a rare giant
	}
	l.spareStreams = append(l.spareStreams, st)
	s.st = nil
}

var eventStream = []byte("text/event-stream")

// containsFold reports whether b contains sub, ASCII case ignored.
func containsFold(b, sub []byte) bool {
	for i := 0; i+len(sub) <= len(b); i++ {
		if bytes.EqualFold(b[i:i+len(sub)], sub) {
			return true
		}
	}
	return false
}
