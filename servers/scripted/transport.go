package scripted

import (
	"net"
	"net/http"
	"strconv"
	"time"
)

// Transport behaviour: what a server does with the connection and the
// framing around its answer, the same on every format, so that a client's
// stamps can be judged on plain answers, stalls, pauses, resets, hangs,
// 1xx heads and closing servers as well as on streams (doc.go,
// "Transport"). None of it is switched on by the zero Options: a server
// without these options writes the bytes it wrote before they existed.

// PlainPath is the path a server answers with its plain answer when
// Options.Plain is set, whatever the method.
const PlainPath = "/plain"

// The transport's cuts (Options.Cut), after those of scripted.go.
const (
	// CutReset resets the connection after Options.CutAfter tokens: on
	// HTTP/1.1 the socket is closed with SO_LINGER 0, so the client reads
	// ECONNRESET, as when a server host's TCP stack aborts it; on HTTP/2,
	// which cannot hand the connection over, the stream is reset
	// (RST_STREAM), as CutClose does there too.
	CutReset CutMode = CutError + 1 + iota
	// CutHang stops writing after Options.CutAfter tokens and holds the
	// stream open until the client leaves (or the server closes): the
	// client's timeout ends it, as with a model server that wedged.
	CutHang
)

// plainByte is the plain answer's byte at offset i: a known pattern that
// is not all one byte, so a body read out of order would show.
func plainByte(i int) byte { return 'a' + byte(i%26) }

// transport runs what Options asks of every request once its body (of
// n bytes) was read, before the format's handler: the 1xx, the stall
// before the head, the close after CloseAfter answers, and the plain
// answer. It reports whether it answered the request itself.
func (s *Server) transport(w http.ResponseWriter, r *http.Request, n int) bool {
	o := &s.o
	if n > 0 {
		s.add(func(st *Stats) { st.BodyBytes += int64(n) })
	}
	if o.Informational >= 100 && o.Informational < 200 {
		w.WriteHeader(o.Informational) // net/http writes a 1xx at once, on HTTP/1.1 and HTTP/2
	}
	if !sleep(r.Context(), o.HeadDelay) {
		s.count(r, 0) // read whole, never answered: the client left
		return true
	}
	if o.CloseAfter > 0 {
		s.mu.Lock()
		if s.conns == nil {
			s.conns = map[string]int{}
		}
		s.conns[r.RemoteAddr]++
		last := s.conns[r.RemoteAddr]%o.CloseAfter == 0
		if last {
			s.st.CloseAsked++
		}
		s.mu.Unlock()
		if last {
			// net/http closes an HTTP/1.1 connection after this answer
			// and sends GOAWAY on HTTP/2 (its server treats the header
			// so, and drops it from the HTTP/2 head).
			w.Header().Set("Connection", "close")
		}
	}
	if o.Plain > 0 && r.URL.Path == PlainPath {
		s.plain(w, r)
		return true
	}
	return false
}

// plain writes the plain answer: Options.Plain bytes of text/plain, with
// a Content-Length, or in PlainChunks flushed pieces ITL apart without
// one (chunked on HTTP/1.1), with Options.Pause after PauseAfter pieces.
func (s *Server) plain(w http.ResponseWriter, r *http.Request) {
	o := &s.o
	status := http.StatusOK
	if o.PlainStatus != 0 {
		status = o.PlainStatus
	}
	s.count(r, status)
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	body := make([]byte, o.Plain)
	for i := range body {
		body[i] = plainByte(i)
	}
	pieces := max(o.PlainChunks, 1)
	if o.PlainSized {
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	}
	if pieces == 1 {
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.WriteHeader(status)
		_, _ = w.Write(body)
		return
	}
	w.WriteHeader(status)
	fl, _ := w.(http.Flusher)
	per := (len(body) + pieces - 1) / pieces
	for i := 0; len(body) > 0; i++ {
		if i > 0 && !sleep(r.Context(), o.ITL+s.pauseBefore(i)) {
			return
		}
		k := min(per, len(body))
		if _, err := w.Write(body[:k]); err != nil {
			return
		}
		if fl != nil {
			fl.Flush()
		}
		body = body[k:]
	}
}

// pauseBefore is the extra wait before token (or plain piece) i: Pause
// before the one after the first PauseAfter.
func (s *Server) pauseBefore(i int) time.Duration {
	if s.o.Pause > 0 && s.o.PauseAfter > 0 && i == s.o.PauseAfter {
		return s.o.Pause
	}
	return 0
}

// cutTransport ends a stream cut by CutReset or CutHang (see there); the
// body written so far has been flushed.
func (s *Server) cutTransport(w http.ResponseWriter, r *http.Request) {
	switch s.o.Cut {
	case CutHang:
		<-r.Context().Done()
	case CutReset:
		c, _, err := http.NewResponseController(w).Hijack()
		if err != nil {
			// HTTP/2: no connection to hand over; net/http resets the
			// stream instead.
			panic(http.ErrAbortHandler)
		}
		reset(c)
	}
}

// reset closes c with an RST rather than a FIN: under TLS the TCP
// connection beneath, so that no close_notify goes first.
func reset(c net.Conn) {
	if tc, ok := c.(interface{ NetConn() net.Conn }); ok { // *tls.Conn
		c = tc.NetConn()
	}
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	_ = c.Close()
}

// Exchange is the server's own log of one request (Server.Log): when it
// read the request and when it began to write each part of the answer,
// on this process's monotonic clock. Each time is taken just before the
// write that sends those bytes, so a client cannot have read them
// earlier; a zero time is a part not written.
type Exchange struct {
	Header http.Header // the request's headers
	Read   time.Time   // the request's body read whole
	Head   time.Time   // the answer's head (a 1xx is not it)
	First  time.Time   // the first token event (streams)
	Last   time.Time   // the last token event (streams)
	End    time.Time   // the answer's last write: its final event, an error event, or the last piece
}

// Log returns the exchanges answered so far, in the order they ended.
func (s *Server) Log() []Exchange {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Exchange(nil), s.log...)
}

// logWriter stamps an answer's writes into its Exchange.
type logWriter struct {
	http.ResponseWriter
	ex   Exchange
	last time.Time // before the latest write or flush
}

func (lw *logWriter) mark() {
	lw.last = time.Now()
	if lw.ex.Head.IsZero() {
		lw.ex.Head = lw.last
	}
	lw.ex.End = lw.last
}

func (lw *logWriter) Write(b []byte) (int, error) {
	lw.mark()
	return lw.ResponseWriter.Write(b)
}

// Flush stamps only a head that no write carried yet (a stream's early
// head): the bytes a flush sends were stamped by their Write, and a
// flush with nothing to send (as a cut's) writes nothing.
func (lw *logWriter) Flush() {
	if lw.ex.Head.IsZero() {
		lw.mark()
	}
	if fl, ok := lw.ResponseWriter.(http.Flusher); ok {
		fl.Flush()
	}
}

// Unwrap lets http.ResponseController reach the connection (CutReset).
func (lw *logWriter) Unwrap() http.ResponseWriter { return lw.ResponseWriter }

// tokenWritten notes that the latest write was a token event.
func tokenWritten(w http.ResponseWriter) {
	if lw, ok := w.(*logWriter); ok {
		if lw.ex.First.IsZero() {
			lw.ex.First = lw.last
		}
		lw.ex.Last = lw.last
	}
}

// logged adds lw's exchange to the server's log.
func (s *Server) logged(lw *logWriter) {
	s.mu.Lock()
	s.log = append(s.log, lw.ex)
	s.mu.Unlock()
}
