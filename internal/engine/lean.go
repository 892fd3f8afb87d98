package engine

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// The lean HTTP/1.1 path (Config.Lean).
//
// net/http's transport runs two goroutines per connection (a write loop
// and a read loop) and hands every request to them and every response
// back over channels: four goroutine switches per request on top of the
// engine's own, plus a context, a timer and a request copy per request. At
// tens of thousands of requests a second on two cores those switches, and
// the futex wake-ups they cause, are a large share of the generator's CPU.
//
// On the lean path each worker owns one connection. It writes the run's
// request, serialised once per run, on it and reads the response from the
// connection's bufio.Reader in its own goroutine: a plain response head
// (Content-Length, no Transfer-Encoding) with quickHead, which allocates
// nothing (quickhead.go), any other with http.ReadResponse. The request's
// timeout is the connection's deadline, and when the drain expires every
// connection's deadline is moved to the past.
//
// What it keeps from net/http: response parsing (http.ReadResponse:
// content length, chunked bodies, Connection: close, 1xx), the error
// values the engine classifies (net errors, io.EOF,
// os.ErrDeadlineExceeded). What it does not do: proxies, TLS (https URLs
// use net/http), redirects (the engine never follows them on this path),
// compression, Expect: 100-continue. A request that fails on a reused
// keep-alive connection before any byte of the response came back is
// re-sent once on a new connection, as net/http does, because the server
// may have closed the idle connection: when none of its bytes were written
// or its method is idempotent, and counted (wire.go).

// leanTransport sends a run's one request, plus the stamp header when the
// run has one.
type leanTransport struct {
	addr   string
	prefix []byte // request line and headers, without the final CRLF
	body   []byte
	stamp  string          // canonical stamp header name, or ""
	req    *http.Request   // what http.ReadResponse is told was sent (its method)
	once   bool            // the request says Connection: close: one request per connection
	idem   bool            // the method is idempotent: a written request may be re-sent (wire.go)
	drain  context.Context // done when the drain expired: dials in progress give up
	// quick: plain responses are read by quickHead (quickhead.go); not
	// when the run needs response headers (class headers, Server-Timing)
	// or sends HEAD.
	quick   bool
	maxBody int64 // Config.MaxBody

	aborted atomic.Bool // the drain expired: no new exchange
	mu      sync.Mutex
	conns   map[*leanConn]struct{} // open connections
}

type leanConn struct {
	net.Conn
	br   *bufio.Reader
	wb   []byte // write buffer: prefix + stamp line + CRLF + body
	rerr error  // the first error reading the connection (readNote)
	used bool   // it carried an exchange: a failure on it may be the server's idle close

	// closedWhileIdle's (peek_unix.go)
	raw    syscall.RawConn
	peekFn func(fd uintptr) bool
	peeked bool
}

var errAborted = errors.New("drain expired")

// newLeanTransport serialises the run's request. It returns nil when the
// configuration needs net/http (https, or a URL it cannot serialise). drain
// is done when the run's drain expired.
func newLeanTransport(cfg Config, drain context.Context) *leanTransport {
	u := cfg.URL
	if u == nil || u.Scheme != "http" || u.User != nil {
		return nil
	}
	host := u.Host
	addr := host
	if u.Port() == "" {
		addr = net.JoinHostPort(u.Hostname(), "80")
	}
	var b strings.Builder
	b.WriteString(cfg.Method)
	b.WriteByte(' ')
	b.WriteString(u.RequestURI())
	b.WriteString(" HTTP/1.1\r\n")
	hasUA, once := false, false
	for k, vs := range cfg.Header {
		if strings.EqualFold(k, "Host") {
			if len(vs) > 0 {
				host = vs[0]
			}
			continue
		}
		if strings.EqualFold(k, "Connection") {
			// As net/http: "close" is kept and ends the connection after
			// the response; other values are the transport's business.
			for _, v := range vs {
				once = once || strings.EqualFold(strings.TrimSpace(v), "close")
			}
			continue
		}
		if strings.EqualFold(k, "Content-Length") || strings.EqualFold(k, "Transfer-Encoding") {
			continue // the transport's business, as with net/http
		}
		hasUA = hasUA || strings.EqualFold(k, "User-Agent")
		for _, v := range vs {
			b.WriteString(k)
			b.WriteString(": ")
			b.WriteString(v)
			b.WriteString("\r\n")
		}
	}
	prefix := "Host: " + host + "\r\n"
	if !hasUA {
		prefix += "User-Agent: Go-http-client/1.1\r\n"
	}
	if len(cfg.Body) > 0 || methodWantsLength(cfg.Method) {
		prefix += "Content-Length: " + strconv.Itoa(len(cfg.Body)) + "\r\n"
	}
	if once {
		prefix += "Connection: close\r\n"
	}
	line, rest, _ := strings.Cut(b.String(), "\r\n")
	return &leanTransport{
		addr:    addr,
		prefix:  []byte(line + "\r\n" + prefix + rest),
		body:    cfg.Body,
		stamp:   http.CanonicalHeaderKey(cfg.StampHeader),
		req:     &http.Request{Method: cfg.Method, URL: u},
		once:    once,
		idem:    idempotent(cfg.Method),
		drain:   drain,
		quick:   len(cfg.ClassHeaders) == 0 && !cfg.ServerTiming && cfg.Method != http.MethodHead,
		maxBody: cfg.MaxBody,
		conns:   make(map[*leanConn]struct{}),
	}
}

// methodWantsLength reports whether net/http would send Content-Length: 0
// for an empty body of this method.
func methodWantsLength(m string) bool {
	return m == http.MethodPost || m == http.MethodPut || m == http.MethodPatch
}

// roundTrip sends the run's request on *cp, dialling a connection first
// when *cp is nil, with stamp (digits, or nil) as the stamp header's value,
// and reads the response head; the whole exchange must end by deadline.
// tx counts the attempts written (wire.go); hand is the offset (since) at
// which the last connection was in hand, or -1 when none could be had. The
// response's body gives the connection back to *cp when it is read to the
// end and closed, and closes it otherwise. A plain response read by
// quickHead comes back as its status alone (resp nil), its body already
// read and the connection already given back; when its body failed,
// status comes with the error.
func (t *leanTransport) roundTrip(cp **leanConn, deadline time.Time, stamp []byte, since func() time.Duration) (resp *http.Response, status int, tx sends, hand time.Duration, err error) {
	tx, hand = newSends(), -1
	for try := 0; ; try++ {
		c := *cp
		*cp = nil
		if c != nil && c.closedWhileIdle() {
			t.close(c)
			c = nil
		}
		// A connection opened before the start (predial.go) and never
		// used is as fresh as one dialled now: the server had no reason
		// to close it, and closedWhileIdle saw it open.
		reused := c != nil && c.used
		if c == nil {
			if c, err = t.dial(deadline); err != nil {
				return nil, 0, tx, hand, err
			}
		}
		hand = since()
		c.used = true
		var early, wrote bool
		resp, status, early, wrote, err = t.exchange(c, cp, deadline, stamp)
		if wrote {
			tx.wrote(hand)
		}
		if err == nil {
			return resp, status, tx, hand, nil
		}
		t.close(c)
		// Re-send once what failed on a kept-alive connection before any
		// byte of its answer, if that is safe (wire.go).
		if !reused || !early || try > 0 || (wrote && !t.idem) || !time.Now().Before(deadline) || t.aborted.Load() {
			return nil, status, tx, hand, err
		}
	}
}

func (t *leanTransport) dial(deadline time.Time) (*leanConn, error) {
	if t.aborted.Load() {
		return nil, errAborted
	}
	d := net.Dialer{Deadline: deadline, KeepAlive: 30 * time.Second}
	nc, err := d.DialContext(t.drain, "tcp", t.addr)
	if err != nil {
		return nil, err
	}
	return t.adopt(nc, nc)
}

// adopt makes nc, read through r, one of t's connections: abort ends its
// exchange, closeAll closes it.
func (t *leanTransport) adopt(nc net.Conn, r io.Reader) (*leanConn, error) {
	c := &leanConn{Conn: nc}
	c.br = bufio.NewReaderSize(readNote{r: r, err: &c.rerr}, 4096)
	t.mu.Lock()
	t.conns[c] = struct{}{}
	t.mu.Unlock()
	if t.aborted.Load() {
		t.close(c)
		return nil, errAborted
	}
	return c, nil
}

// close closes c and forgets it.
func (t *leanTransport) close(c *leanConn) {
	t.mu.Lock()
	delete(t.conns, c)
	t.mu.Unlock()
	c.Close()
}

// abort ends every exchange in flight at once (the drain expired): their
// reads and writes fail with os.ErrDeadlineExceeded, and no new connection
// is dialled.
func (t *leanTransport) abort() {
	t.aborted.Store(true)
	t.mu.Lock()
	defer t.mu.Unlock()
	for c := range t.conns {
		c.SetDeadline(time.Unix(1, 0))
	}
}

// closeAll closes every connection; the run is over.
func (t *leanTransport) closeAll() {
	t.mu.Lock()
	defer t.mu.Unlock()
	for c := range t.conns {
		c.Close()
		delete(t.conns, c)
	}
}

// exchange writes the request on c and reads the response head, or the
// whole of a plain response (see roundTrip). early is true when the
// exchange failed before any byte of the response arrived, wrote when at
// least one byte of the request was written; on an error the caller
// closes c.
func (t *leanTransport) exchange(c *leanConn, cp **leanConn, deadline time.Time, stamp []byte) (resp *http.Response, status int, early, wrote bool, err error) {
	if err := c.SetDeadline(deadline); err != nil {
		return nil, 0, true, false, err
	}
	// After the deadline is set: abort either saw c and moved its
	// deadline to the past, or had flagged the run aborted before.
	if t.aborted.Load() {
		return nil, 0, false, false, errAborted
	}
	c.wb = t.request(c.wb[:0], stamp)
	n, err := c.Write(c.wb)
	wrote = n > 0
	if err != nil {
		return nil, 0, true, wrote, err
	}
	if _, err := c.br.Peek(1); err != nil {
		return nil, 0, true, wrote, err
	}
	if t.quick {
		buf, _ := c.br.Peek(c.br.Buffered())
		status, length, keep, n, ok := quickHead(buf)
		if ok && length <= 1<<30 && (t.maxBody <= 0 || length <= t.maxBody) {
			c.br.Discard(n) // buffered: cannot fail
			if err := discardBody(c.br, length); err != nil {
				if errors.Is(err, io.EOF) {
					err = io.ErrUnexpectedEOF
				}
				return nil, status, false, wrote, err // the status came, the body did not
			}
			if keep && !t.once && c.br.Buffered() == 0 {
				*cp = c
			} else {
				t.close(c)
			}
			return nil, status, false, wrote, nil
		}
	}
	if resp, err = t.readResponse(c, cp); err != nil {
		return nil, 0, false, wrote, err
	}
	return resp, resp.StatusCode, false, wrote, nil
}

// request appends the run's request, with stamp (digits, or nil) as the
// stamp header's value, to wb.
func (t *leanTransport) request(wb, stamp []byte) []byte {
	wb = append(wb, t.prefix...)
	if stamp != nil {
		wb = append(wb, t.stamp...)
		wb = append(wb, ": "...)
		wb = append(wb, stamp...)
		wb = append(wb, "\r\n"...)
	}
	wb = append(wb, "\r\n"...)
	return append(wb, t.body...)
}

// readResponse reads a response head from c with http.ReadResponse. Its
// body gives c back to *cp when read to the end and closed, and closes c
// otherwise.
func (t *leanTransport) readResponse(c *leanConn, cp **leanConn) (*http.Response, error) {
	for {
		resp, err := http.ReadResponse(c.br, t.req)
		if err != nil {
			// A head cut short by the connection's end is a reset.
			return nil, truncated(err, c.rerr)
		}
		// Skip informational answers (103 Early Hints, 100 Continue), as
		// net/http does; 101 would switch protocols and ends the exchange.
		if resp.StatusCode < 100 || resp.StatusCode > 199 || resp.StatusCode == http.StatusSwitchingProtocols {
			resp.Body = &leanBody{rc: resp.Body, c: c, cp: cp, t: t, keep: !resp.Close && !t.once}
			return resp, nil
		}
	}
}

// leanBody gives its connection back to its worker when it was read to the
// end and closed, and closes the connection otherwise.
type leanBody struct {
	rc   io.ReadCloser
	c    *leanConn
	cp   **leanConn
	t    *leanTransport
	keep bool // the response allows reuse
	eof  bool
	done bool
}

func (b *leanBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	if errors.Is(err, io.EOF) {
		b.eof = true
	}
	return n, err
}

func (b *leanBody) Close() error {
	if b.done {
		return nil
	}
	b.done = true
	err := b.rc.Close()
	if b.keep && b.eof && err == nil && b.c.br.Buffered() == 0 {
		*b.cp = b.c
		return nil
	}
	b.t.close(b.c)
	return err
}

// bodyBuf is what body bytes to be dropped are read into, on the lean
// client (discardBody) and the epoll client's loop: 64 KiB reads instead
// of 4 KiB ones. On the loop they cut the CPU of 1 MiB bodies at 500/s
// from 1.57–1.78 to 0.53–0.56 s over 4 s (3 runs each).
type bodyBuf [64 << 10]byte

// bodyBufs holds the buffers bodies are dropped into.
var bodyBufs = sync.Pool{New: func() any { return new(bodyBuf) }}

// discardBody reads and drops the next n bytes of br. What does not fit in
// br's buffer is read straight from the connection in 64 KiB reads (a
// bufio.Reader reads into a caller's buffer at least as large as its own
// directly) instead of a 4 KiB refill at a time, as the epoll client's
// loop does. io.CopyN(io.Discard, br, n) would read 8 KiB at a time (the
// buffer io.Discard pools); with 1 MiB bodies at 500/s for 4 s on the lean
// client it used 0.81–1.21 CPU-s against 0.46–0.60 here (3 alternating
// runs each).
func discardBody(br *bufio.Reader, n int64) error {
	if n <= int64(br.Size()) {
		_, err := br.Discard(int(n))
		return err
	}
	buf := bodyBufs.Get().(*bodyBuf)
	defer bodyBufs.Put(buf)
	for n > 0 {
		m, err := br.Read(buf[:min(n, int64(len(buf)))])
		n -= int64(m)
		if n > 0 && err != nil {
			return err
		}
		if n > 0 && m == 0 {
			return io.ErrNoProgress
		}
	}
	return nil
}
