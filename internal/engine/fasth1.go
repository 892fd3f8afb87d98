package engine

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"strconv"
	"strings"
	"time"
)

// The lean HTTP/1.1 path (Config.FastHTTP1).
//
// net/http's transport runs two goroutines per connection (a write loop
// and a read loop) and hands every request to them and every response
// back over channels: four goroutine switches per request on top of the
// engine's own. At tens of thousands of requests a second on two cores
// those switches, and the futex wake-ups they cause, are most of the
// generator's CPU. fastTransport instead writes a request serialised once
// per run on a connection it owns and reads the response with
// http.ReadResponse on that connection's bufio.Reader, both in the
// worker's goroutine.
//
// What it keeps from net/http: response parsing (http.ReadResponse:
// content length, chunked bodies, Connection: close, 1xx), the httptrace
// GotConn hook (so sent is taken the same way), error values the engine
// classifies (net errors, io.EOF, os.ErrDeadlineExceeded). What it does
// not do: proxies, TLS (https URLs use net/http), redirects (the engine
// never follows them anyway), compression, Expect: 100-continue. A
// request that fails on a reused keep-alive connection before any byte of
// the response came back is retried once on a new connection, as net/http
// does, because the server may have closed the idle connection.

// fastTransport is an http.RoundTripper for one run: every request is the
// run's request, plus the stamp header when the run has one.
type fastTransport struct {
	addr    string
	prefix  []byte // request line and headers, without the final CRLF
	body    []byte
	stamp   string // canonical stamp header name, or ""
	timeout time.Duration
	idle    chan *fastConn // kept-alive connections, at most Connections
}

type fastConn struct {
	net.Conn
	br  *bufio.Reader
	wb  []byte // write buffer: prefix + stamp line + CRLF + body
	hdr [1]string
}

// newFastTransport serialises the run's request. It returns nil when the
// configuration needs net/http (https, or a URL it cannot serialise).
func newFastTransport(cfg Config) *fastTransport {
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
	hasUA := false
	for k, vs := range cfg.Header {
		if strings.EqualFold(k, "Host") {
			if len(vs) > 0 {
				host = vs[0]
			}
			continue
		}
		if strings.EqualFold(k, "Content-Length") || strings.EqualFold(k, "Transfer-Encoding") || strings.EqualFold(k, "Connection") {
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
	line, rest, _ := strings.Cut(b.String(), "\r\n")
	return &fastTransport{
		addr:    addr,
		prefix:  []byte(line + "\r\n" + prefix + rest),
		body:    cfg.Body,
		stamp:   cfg.StampHeader,
		timeout: cfg.Timeout,
		idle:    make(chan *fastConn, cfg.Connections),
	}
}

// methodWantsLength reports whether net/http would send Content-Length: 0
// for an empty body of this method.
func methodWantsLength(m string) bool {
	return m == http.MethodPost || m == http.MethodPut || m == http.MethodPatch
}

// RoundTrip sends req (the run's request) and returns its response; the
// connection goes back to the idle set when the body is read to the end
// and closed.
func (t *fastTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	var stampVal string
	if t.stamp != "" {
		if vs := req.Header[t.stamp]; len(vs) > 0 {
			stampVal = vs[0]
		}
	}
	for try := 0; ; try++ {
		c, reused, err := t.get(ctx)
		if err != nil {
			return nil, t.ctxErr(ctx, err)
		}
		if tr := httptrace.ContextClientTrace(ctx); tr != nil && tr.GotConn != nil {
			tr.GotConn(httptrace.GotConnInfo{Conn: c.Conn, Reused: reused})
		}
		resp, early, err := t.exchange(ctx, c, req, stampVal)
		if err == nil {
			return resp, nil
		}
		c.Close()
		if !(reused && early && try == 0 && ctx.Err() == nil) {
			return nil, t.ctxErr(ctx, err)
		}
	}
}

// ctxErr waits, when the request's deadline has passed, for its context to
// be done, so that the engine sees the timeout as the cause (the
// connection's deadline may fire a moment before the context's timer).
func (t *fastTransport) ctxErr(ctx context.Context, err error) error {
	if d, ok := ctx.Deadline(); ok && !time.Now().Before(d) {
		<-ctx.Done()
	}
	return err
}

// get returns an idle connection, or dials one.
func (t *fastTransport) get(ctx context.Context) (*fastConn, bool, error) {
	select {
	case c := <-t.idle:
		return c, true, nil
	default:
	}
	d := net.Dialer{Timeout: t.timeout, KeepAlive: 30 * time.Second}
	nc, err := d.DialContext(ctx, "tcp", t.addr)
	if err != nil {
		return nil, false, err
	}
	return &fastConn{Conn: nc, br: bufio.NewReaderSize(nc, 4096)}, false, nil
}

// exchange writes the request on c and reads the response head. early is
// true when the exchange failed before any byte of the response arrived.
func (t *fastTransport) exchange(ctx context.Context, c *fastConn, req *http.Request, stampVal string) (resp *http.Response, early bool, err error) {
	dl, _ := ctx.Deadline()
	c.SetDeadline(dl) // zero: none
	stop := context.AfterFunc(ctx, func() { c.SetDeadline(time.Unix(1, 0)) })
	c.wb = append(c.wb[:0], t.prefix...)
	if stampVal != "" {
		c.wb = append(c.wb, t.stamp...)
		c.wb = append(c.wb, ": "...)
		c.wb = append(c.wb, stampVal...)
		c.wb = append(c.wb, "\r\n"...)
	}
	c.wb = append(c.wb, "\r\n"...)
	c.wb = append(c.wb, t.body...)
	if _, err := c.Write(c.wb); err != nil {
		stop()
		return nil, true, err
	}
	if _, err := c.br.Peek(1); err != nil {
		stop()
		return nil, true, err
	}
	for {
		resp, err = http.ReadResponse(c.br, req)
		if err != nil {
			stop()
			return nil, false, err
		}
		// Skip informational answers (103 Early Hints, 100 Continue), as
		// net/http does; 101 would switch protocols and ends the exchange.
		if resp.StatusCode < 100 || resp.StatusCode > 199 || resp.StatusCode == http.StatusSwitchingProtocols {
			break
		}
	}
	resp.Body = &fastBody{rc: resp.Body, c: c, t: t, stop: stop, keep: !resp.Close}
	return resp, false, nil
}

// fastBody returns its connection to the idle set when it was read to the
// end and closed, and closes the connection otherwise.
type fastBody struct {
	rc   io.ReadCloser
	c    *fastConn
	t    *fastTransport
	stop func() bool
	keep bool // the response allows reuse
	eof  bool
	done bool
}

func (b *fastBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	if errors.Is(err, io.EOF) {
		b.eof = true
	}
	return n, err
}

func (b *fastBody) Close() error {
	if b.done {
		return nil
	}
	b.done = true
	err := b.rc.Close()
	stopped := b.stop()
	if b.keep && b.eof && err == nil && stopped && b.c.br.Buffered() == 0 {
		b.c.SetDeadline(time.Time{})
		select {
		case b.t.idle <- b.c:
			return nil
		default:
		}
	}
	b.c.Close()
	return err
}

// closeIdle closes the kept-alive connections.
func (t *fastTransport) closeIdle() {
	for {
		select {
		case c := <-t.idle:
			c.Close()
		default:
			return
		}
	}
}
