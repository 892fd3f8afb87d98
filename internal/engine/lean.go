package engine

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/openload/openload/internal/framing"
	"github.com/openload/openload/internal/h1"
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
// request (request seq's target in a mix), serialised once per run
// (h1.Request, its templates filled per request), on it and reads the
// response from the connection's bufio.Reader in its own goroutine: a
// simple response head (a Content-Length or a chunked body) with
// h1.ParseHead, which allocates nothing, and its class headers and
// Server-Timing with the worker's headReader (heads.go), any other with
// http.ReadResponse (h1.ReadResponse). A chunked body after a simple head
// is undone by h1.ChunkedReader, the parser the event loop feeds (h1's
// Dechunk). The request's
// timeout is the connection's deadline, and when the drain expires every
// connection's deadline is moved to the past.
//
// What it keeps from net/http: the parsing of unusual responses
// (http.ReadResponse: close-delimited bodies, 1xx, HTTP/1.0), the error
// values the engine classifies (net errors, io.EOF,
// os.ErrDeadlineExceeded). What it does not do: proxies, TLS (https URLs
// use net/http), redirects (the engine never follows them on this path),
// compression, Expect: 100-continue. A request that fails on a reused
// keep-alive connection before any byte of the response came back is
// re-sent once on a new connection, as net/http does, because the server
// may have closed the idle connection: when the run's re-send rule allows
// (Config.Resend: by default, when none of its bytes were written or its
// method is idempotent), and counted (wire.go).

// leanTransport sends a run's requests (its variants: one, one per body
// of Config.Bodies, or one per target of Config.Targets), plus the stamp
// header when the run has one.
type leanTransport struct {
	addr    string
	vars    []variant       // at least one; request seq sends vars[picker.index(seq)]
	head    bool            // some variant is HEAD: the event loop does not apply
	drain   context.Context // done when the drain expired: dials in progress give up
	maxBody int64           // Config.MaxBody
	bytes   *wireBytes      // the run's byte counts (bytes.go), or nil
	stream  bool            // Config.Stream: every body goes through response (stream.go)
	dialer  dialer          // dial.go
	// refusals keeps the run's first refused answer (refusal.go): the
	// Content-Length bodies exchange reads itself are kept here.
	refusals *refusals

	aborted atomic.Bool // the drain expired: no new exchange
	mu      sync.Mutex
	conns   map[*leanConn]struct{} // open connections
}

type leanConn struct {
	net.Conn
	br    *bufio.Reader
	wb    []byte     // write buffer: prefix + stamp line + CRLF + body
	rerr  error      // the first error reading the connection (h1.NoteReader)
	used  bool       // it carried an exchange: a failure on it may be the server's idle close
	bytes *wireBytes // the run's byte counts (bytes.go)

	// A chunked body the worker reads itself (exchange): one at a time
	// per connection, so kept here rather than allocated.
	chunked chunkedBody
	body    leanBody

	// closedWhileIdle's (peek_unix.go)
	raw    syscall.RawConn
	peekFn func(fd uintptr) bool
	peeked bool
}

var errAborted = errors.New("drain expired")

// variant is one of the requests a run sends, with what depends on its
// method: its target's in a mix (targets.go), its body's with Bodies.
type variant struct {
	wire   h1.Request    // serialised once; templates fill its holes per request
	req    *http.Request // what http.ReadResponse is told was sent (its method)
	once   bool          // it says Connection: close: one exchange per connection
	resend resendRule    // what may be re-sent (Config.Resend, wire.go)
	// quick: simple heads are read by h1.ParseHead (heads.go); not
	// for HEAD, whose answer has a length but no body.
	quick bool
}

func newVariant(cfg *Config, t Target) variant {
	ts := h1.Templates{Target: t.Path, Body: t.BodyT}
	if len(t.Headers) > 0 {
		ts.Headers = make(map[string]h1.Template, len(t.Headers))
		for k, tm := range t.Headers {
			ts.Headers[k] = tm
		}
	}
	w := h1.NewTemplated(t.Method, t.URL, t.Header, t.Body, cfg.StampHeader, ts)
	return variant{
		wire:   w,
		req:    &http.Request{Method: t.Method, URL: t.URL},
		once:   w.Close(),
		resend: newResendRule(cfg.Resend, t.Method),
		quick:  t.Method != http.MethodHead,
	}
}

// variant is request seq's variant, by p (targets.go).
func (t *leanTransport) variant(p *picker, seq uint64) *variant {
	if len(t.vars) == 1 {
		return &t.vars[0]
	}
	return &t.vars[p.index(seq)]
}

// newLeanTransport serialises the run's requests. It returns nil when the
// configuration needs net/http (https, or a URL it cannot serialise). drain
// is done when the run's drain expired.
func newLeanTransport(cfg Config, drain context.Context) *leanTransport {
	u := cfg.URL // the first target's in a mix, whose targets share its scheme, host and port
	if u == nil || u.Scheme != "http" || u.User != nil {
		return nil
	}
	addr := u.Host
	if u.Port() == "" {
		addr = net.JoinHostPort(u.Hostname(), "80")
	}
	var vars []variant
	switch {
	case len(cfg.Targets) > 0:
		for _, t := range cfg.Targets {
			vars = append(vars, newVariant(&cfg, t))
		}
	case len(cfg.Bodies) > 0:
		for _, b := range cfg.Bodies {
			t := cfg.target(0)
			t.Body = b
			vars = append(vars, newVariant(&cfg, t))
		}
	default:
		vars = []variant{newVariant(&cfg, cfg.target(0))}
	}
	head := false
	for _, v := range vars {
		head = head || !v.quick
	}
	return &leanTransport{
		addr:    addr,
		vars:    vars,
		head:    head,
		drain:   drain,
		maxBody: cfg.MaxBody,
		stream:  cfg.Stream,
		dialer:  cfg.dialer(),
		conns:   make(map[*leanConn]struct{}),
		bytes:   cfg.bytes,
	}
}

// roundTrip sends request seq, of variant v, on *cp, dialling a connection first
// when *cp is nil, with stamp (digits, or nil) as the stamp header's value,
// and reads the response head; the whole exchange must end by deadline.
// hr reads a plain head into *h (heads.go). tx counts the attempts written
// (wire.go); hand is the offset (since) at which the last connection was in
// hand, or -1 when none could be had. The
// response's body gives the connection back to *cp when it is read to the
// end and closed, and closes it otherwise. A simple head read by
// h1.ParseHead comes back without resp (see leanAnswer); when its body
// failed, its status comes with the error.
func (t *leanTransport) roundTrip(cp **leanConn, v *variant, seq uint64, deadline time.Time, stamp []byte, since func() time.Duration, hr *headReader, h *heads) (a leanAnswer, tx sends, hand time.Duration, err error) {
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
				return leanAnswer{}, tx, hand, err
			}
		}
		hand = since()
		c.used = true
		var early, wrote bool
		a, early, wrote, err = t.exchange(c, cp, v, seq, deadline, stamp, hr, h)
		if wrote {
			tx.wrote(hand)
		}
		if err == nil {
			return a, tx, hand, nil
		}
		t.close(c)
		if early && wrote {
			// Written, and no byte of an answer: the server may not
			// have read it (wire.go).
			tx.noAnswer(!errors.Is(err, os.ErrDeadlineExceeded))
		}
		// Re-send once what failed on a kept-alive connection before any
		// byte of its answer, if the run's rule allows (wire.go).
		if !reused || !early || try > 0 || !v.resend.allows(wrote) || !time.Now().Before(deadline) || t.aborted.Load() {
			return leanAnswer{status: a.status}, tx, hand, err
		}
		tx.resend(wrote)
	}
}

// Write writes p to the connection, counted (bytes.go): the requests, and
// the rest of one the event loop lent.
func (c *leanConn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	c.bytes.wrote(n)
	return n, err
}

func (t *leanTransport) dial(deadline time.Time) (*leanConn, error) {
	if t.aborted.Load() {
		return nil, errAborted
	}
	nc, err := t.dialer.dialBy(t.drain, "tcp", t.addr, deadline) // dial.go
	if err != nil {
		return nil, err
	}
	return t.adopt(nc, nil)
}

// adopt makes nc, read after got (bytes already read from it, counted by
// whoever read them), one of t's connections: abort ends its exchange,
// closeAll closes it. What it reads from nc and writes to it is counted
// (bytes.go).
func (t *leanTransport) adopt(nc net.Conn, got []byte) (*leanConn, error) {
	c := &leanConn{Conn: nc, bytes: t.bytes}
	var r io.Reader = byteReader{r: nc, b: t.bytes}
	if len(got) > 0 {
		r = io.MultiReader(bytes.NewReader(got), r)
	}
	c.br = bufio.NewReaderSize(h1.NoteReader{R: r, Err: &c.rerr}, 4096)
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

// leanAnswer is what an exchange read: a head http.ReadResponse read
// (resp), or the status of a simple head h1.ParseHead read, with body nil
// when its Content-Length body is already read (and the connection given
// back), or its chunked body still to read, as a stream of format when
// that is not nil.
type leanAnswer struct {
	resp   *http.Response
	status int
	body   *leanBody
	format framing.Format
}

// exchange writes the request on c and reads the response head, or the
// whole of a plain response, its head read by hr into *h (see roundTrip).
// early is true when the exchange failed before any byte of the response
// arrived, wrote when at least one byte of the request was written; on an
// error the caller closes c.
func (t *leanTransport) exchange(c *leanConn, cp **leanConn, v *variant, seq uint64, deadline time.Time, stamp []byte, hr *headReader, h *heads) (a leanAnswer, early, wrote bool, err error) {
	if err := c.SetDeadline(deadline); err != nil {
		return a, true, false, err
	}
	// After the deadline is set: abort either saw c and moved its
	// deadline to the past, or had flagged the run aborted before.
	if t.aborted.Load() {
		return a, false, false, errAborted
	}
	c.wb = v.wire.AppendSeq(c.wb[:0], seq, stamp)
	n, err := c.Write(c.wb)
	wrote = n > 0
	if err != nil {
		return a, true, wrote, err
	}
	if _, err := c.br.Peek(1); err != nil {
		return a, true, wrote, err
	}
	if v.quick {
		buf, _ := c.br.Peek(c.br.Buffered())
		hd, st := hr.head(buf, h)
		if st == h1.HeadSimple && hd.Chunked {
			// Read by the worker with h1's Dechunk, as the event loop
			// reads it, not by net/http's chunked reader.
			a = leanAnswer{status: hd.Status, format: streamFormat(t.stream, hd.ContentType), body: &c.body}
			c.br.Discard(hd.N) // buffered: cannot fail
			c.chunked.R = c.br
			c.chunked.D.Reset()
			c.body = leanBody{rc: &c.chunked, c: c, cp: cp, t: t, keep: hd.Keep && !v.once}
			return a, false, wrote, nil
		}
		if st == h1.HeadSimple && !t.stream && hd.Length <= 1<<30 && (t.maxBody <= 0 || hd.Length <= t.maxBody) {
			a.status = hd.Status
			c.br.Discard(hd.N) // buffered: cannot fail
			var gb *grab
			if t.refusals.wants(hd.Status, seq) {
				gb = grabLength(c.br, hd.Length)
			}
			if err := h1.Discard(c.br, hd.Length); err != nil {
				if errors.Is(err, io.EOF) {
					err = io.ErrUnexpectedEOF
				}
				return a, false, wrote, err // the status came, the body did not
			}
			if gb != nil {
				t.refusals.keep(seq, hd.Status, gb)
			}
			if hd.Keep && !v.once && c.br.Buffered() == 0 {
				*cp = c
			} else {
				t.close(c)
			}
			return a, false, wrote, nil
		}
	}
	if a.resp, err = t.readResponse(c, cp, v); err != nil {
		return leanAnswer{}, false, wrote, err
	}
	a.status = a.resp.StatusCode
	return a, false, wrote, nil
}

// grabLength is the beginning of a body of n bytes (a refusal's) still
// unread in br, left there for the caller to discard: what of its first
// RefusalCap bytes came, the rest of the body failing as it will then.
func grabLength(br *bufio.Reader, n int64) *grab {
	gb := newGrab()
	p, _ := br.Peek(int(min(n, RefusalCap+1)))
	gb.add(p)
	return gb
}

// chunkedBody is a chunked body read with h1.ChunkedReader; closing it
// reads nothing more (leanBody decides what becomes of the connection).
type chunkedBody struct{ h1.ChunkedReader }

func (*chunkedBody) Close() error { return nil }

// readResponse reads the response head to a request of v from c with
// http.ReadResponse. Its body gives c back to *cp when read to the end and
// closed, and closes c otherwise.
func (t *leanTransport) readResponse(c *leanConn, cp **leanConn, v *variant) (*http.Response, error) {
	resp, err := h1.ReadResponse(c.br, v.req)
	if err != nil {
		// A head cut short by the connection's end is a reset.
		return nil, truncated(err, c.rerr)
	}
	resp.Body = &leanBody{rc: resp.Body, c: c, cp: cp, t: t, keep: !resp.Close && !v.once}
	return resp, nil
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
