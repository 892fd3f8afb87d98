package engine

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"syscall"
	"time"
)

// dialKeepAlive is the TCP keep-alive period of a run's connections.
const dialKeepAlive = 30 * time.Second

// dialer opens every connection of a run, whichever client asks: the lean
// client, its event loop and the pre-dial (lean.go, epoll_linux.go,
// predial.go), net/http's transport and the HTTP/2 pool (h2.go). A
// connection is a TCP connection with keep-alive whose establishing may
// take Config.DialTimeout, or Timeout when that is 0: an unreachable host
// then fails fast while a request may still take Timeout. A TLS handshake,
// where there is one, comes after and counts in the request's Timeout.
type dialer struct {
	timeout time.Duration
	control func(network, addr string, c syscall.RawConn) error // net.Dialer's, or nil
	bytes   *wireBytes                                          // counts DialContext's connections (bytes.go), or nil
	// drain, when set, ends a TLS dial of net/http's transport that is
	// still under way when the run's drain expires (transportTLS): the
	// transport dials apart from the request, which may be long gone.
	drain context.Context
}

// dialer is the dialer of a run of cfg.
func (cfg Config) dialer() dialer {
	if cfg.DialTimeout > 0 {
		return dialer{timeout: cfg.DialTimeout, bytes: cfg.bytes}
	}
	return dialer{timeout: cfg.Timeout, bytes: cfg.bytes}
}

// DialContext dials addr on network within the dial timeout, giving up
// when ctx ends; net/http's transport and the HTTP/2 pool call it. Its
// connections' bytes are counted (bytes.go); dialBy's, whose callers
// read and write the descriptor or the connection themselves, are not.
func (d dialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	nc, err := d.dialBy(ctx, network, addr, time.Time{})
	if err != nil {
		return nil, err
	}
	return countBytes(nc, d.bytes), nil
}

// dialBy is DialContext that also gives up at deadline when that comes
// first (zero: no deadline); the lean client passes the request's. A dial
// that timed out at the dial timeout, before deadline and ctx's, returns a
// *dialTimeoutError.
func (d dialer) dialBy(ctx context.Context, network, addr string, deadline time.Time) (net.Conn, error) {
	start := time.Now()
	nd := net.Dialer{Timeout: d.timeout, Deadline: deadline, KeepAlive: dialKeepAlive, Control: d.control}
	nc, err := nd.DialContext(ctx, network, addr)
	if err == nil {
		return nc, nil
	}
	var ne net.Error
	own := start.Add(d.timeout)
	ctxDeadline, bounded := ctx.Deadline()
	if errors.As(err, &ne) && ne.Timeout() && (deadline.IsZero() || own.Before(deadline)) && (!bounded || own.Before(ctxDeadline)) {
		return nil, &dialTimeoutError{err}
	}
	return nil, err
}

// dialTimeoutError is a dial that gave up at the dial timeout, before the
// request's deadline: no connection could be established in time. It is a
// timeout (a net.Error), but not the request's (it is not
// os.ErrDeadlineExceeded, which the runtime's poller may return for either),
// so the request counts as failed, of kind timeout, rather than timed out.
type dialTimeoutError struct{ err error }

func (e *dialTimeoutError) Error() string   { return e.err.Error() }
func (e *dialTimeoutError) Timeout() bool   { return true }
func (e *dialTimeoutError) Temporary() bool { return false }

// dialTLS dials addr and makes the TLS handshake of conf on the
// connection, until ctx ends.
func (d dialer) dialTLS(ctx context.Context, addr string, conf *tls.Config) (*tls.Conn, error) {
	return d.handshake(ctx, d.DialContext, addr, conf, 0)
}

// transportTLS is the DialTLSContext of a run's net/http transport: the
// handshake the transport would make on what dial returns (addTLS: conf,
// the server's name when conf has none, within timeout), made here so
// that the run knows of every TLS dial under way (handshake).
func (d dialer) transportTLS(dial func(ctx context.Context, network, addr string) (net.Conn, error), conf *tls.Config, timeout time.Duration) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c := &tls.Config{}
		if conf != nil {
			c = conf.Clone()
		}
		if c.ServerName == "" {
			host, _, err := net.SplitHostPort(addr)
			if err != nil {
				return nil, err
			}
			c.ServerName = host
		}
		if d.drain != nil {
			var cancel context.CancelFunc
			ctx, cancel = context.WithCancel(ctx)
			defer cancel()
			defer context.AfterFunc(d.drain, cancel)()
		}
		return d.handshake(ctx, dial, addr, c, timeout)
	}
}

// handshake dials addr with dial and makes the TLS handshake of conf on
// the connection, until ctx ends, and within timeout unless it is 0
// (net/http's TLSHandshakeTimeout, with its error).
//
// The run's byte figures wait for it, and it is refused once they are
// about to be taken (wireBytes.settle, bytes.go).
func (d dialer) handshake(ctx context.Context, dial func(ctx context.Context, network, addr string) (net.Conn, error), addr string, conf *tls.Config, timeout time.Duration) (*tls.Conn, error) {
	if !d.bytes.dialStart() {
		return nil, errRunOver
	}
	defer d.bytes.dialEnd()
	nc, err := dial(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	tc := tls.Client(nc, conf)
	var timer *time.Timer
	if timeout > 0 {
		timer = time.AfterFunc(timeout, func() { nc.Close() })
	}
	err = tc.HandshakeContext(ctx)
	if timer != nil && !timer.Stop() {
		// It fired: the connection is closed, whatever the handshake
		// said.
		err = tlsHandshakeTimeoutError{}
	}
	if err != nil {
		nc.Close()
		return nil, err
	}
	return tc, nil
}

// errRunOver refuses a dial that comes after the run's figures were taken.
var errRunOver = errors.New("engine: dial after the run's end")

// tlsHandshakeTimeoutError is net/http's error for a handshake that took
// longer than TLSHandshakeTimeout, as its transport returns it.
type tlsHandshakeTimeoutError struct{}

func (tlsHandshakeTimeoutError) Timeout() bool   { return true }
func (tlsHandshakeTimeoutError) Temporary() bool { return true }
func (tlsHandshakeTimeoutError) Error() string   { return "net/http: TLS handshake timeout" }
