//lint:file-ignore SA1019 x/net/http2's Transport and ClientConn are deprecated in favour of net/http's (Go 1.26: Transport.NewClientConn, ClientConn); see h2Pool for why openload keeps them.

package engine

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"slices"
	"sync"

	"golang.org/x/net/http2"
)

// Protocols a run can speak, as Config.Protocol and the result name them
// (the ALPN identifiers).
const (
	HTTP1 = "http/1.1" // keep-alive HTTP/1.1, over TLS for https URLs (the default)
	HTTP2 = "h2"       // HTTP/2 over TLS, negotiated with ALPN; the URL must be https
	H2C   = "h2c"      // HTTP/2 over plain TCP with prior knowledge; the URL must be http
)

// How the limits map for HTTP/2.
//
// With HTTP/1.1 a connection carries one request at a time, so the
// Connections workers are at once the in-flight limit and the connection
// limit. With HTTP/2 the in-flight limit is still Connections: each worker
// owns at most one request, so at most Connections streams are open over
// all connections together, and a request that finds every worker busy
// waits inside openload, which is send delay, exactly as with HTTP/1.1.
//
// Streams are packed onto connections: a request takes a stream on the
// first open connection that has fewer than MaxStreams streams in flight
// (and fewer than the server's SETTINGS_MAX_CONCURRENT_STREAMS), and a new
// connection is dialled only when every open one is full. So
//
//	connections ≤ ⌈Connections ÷ min(MaxStreams, server's limit)⌉
//
// as long as the connections stay up (dials are made one at a time, each
// after a last look for room). A request never waits for a stream slot after it got its
// connection: the sent time (GotConn) is taken after the slot is reserved,
// so time spent waiting for a slot or a dial is send delay, never service
// time, like waiting for a free connection with HTTP/1.1.

// newH2Transport returns an HTTP/2 transport over its own connection pool
// (h2Pool) and the function that closes its connections.
func newH2Transport(cfg Config) (http.RoundTripper, func()) {
	t := &http2.Transport{
		DisableCompression: true,
		AllowHTTP:          cfg.Protocol == H2C,
	}
	p := &h2Pool{
		t:       t,
		tls:     cfg.Protocol == HTTP2,
		tlsConf: cfg.TLS,
		dialer:  cfg.dialer(),
		max:     cfg.MaxStreams,
		dialing: make(chan struct{}, 1),
	}
	t.ConnPool = p
	return t, p.closeAll
}

// h2Pool is an http2.ClientConnPool that caps the streams in flight on
// each connection at max (0: the server's limit only) and dials a new
// connection when every open one is full.
//
// x/net/http2 deprecates its Transport and ClientConn in favour of
// net/http's (Go 1.26 has Transport.NewClientConn and ClientConn.Reserve,
// enough to build this pool on). openload stays with x/net/http2 for now:
// only its Transport takes a pool of ours and still retries, on another
// connection, a request the server refused or never processed (a stream
// refused, or one past the last stream a GOAWAY let through). A pool of
// net/http ClientConns would have to tell those cases apart by the text
// of unexported errors.
type h2Pool struct {
	t       *http2.Transport
	tls     bool
	tlsConf *tls.Config
	dialer  dialer // dial.go
	max     int

	dialing chan struct{} // a token: one dial at a time

	mu    sync.Mutex
	conns []*http2.ClientConn
}

// GetClientConn returns a connection with a stream reserved for req.
func (p *h2Pool) GetClientConn(req *http.Request, addr string) (*http2.ClientConn, error) {
	if cc := p.reserve(); cc != nil {
		return cc, nil
	}
	// Dial one connection at a time: a request that waited for another's
	// dial may find room on it.
	select {
	case p.dialing <- struct{}{}:
	case <-req.Context().Done():
		return nil, req.Context().Err()
	}
	defer func() { <-p.dialing }()
	if cc := p.reserve(); cc != nil {
		return cc, nil
	}
	nc, err := p.dial(req.Context(), addr)
	if err != nil {
		return nil, err
	}
	cc, err := p.t.NewClientConn(nc)
	if err != nil {
		nc.Close()
		return nil, err
	}
	p.mu.Lock()
	p.conns = append(p.conns, cc)
	// A fresh connection has room; should the reservation fail all the
	// same, RoundTrip on it reports why.
	cc.ReserveNewRequest()
	p.mu.Unlock()
	return cc, nil
}

// reserve reserves a stream on the first open connection with room, or
// returns nil. Connections that closed are dropped.
func (p *h2Pool) reserve() *http2.ClientConn {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.conns = slices.DeleteFunc(p.conns, func(cc *http2.ClientConn) bool {
		st := cc.State()
		return st.Closed || st.Closing
	})
	for _, cc := range p.conns {
		if p.max > 0 {
			if st := cc.State(); st.StreamsActive+st.StreamsReserved >= p.max {
				continue
			}
		}
		if cc.ReserveNewRequest() {
			return cc
		}
	}
	return nil
}

// MarkDead drops a connection the transport found broken.
func (p *h2Pool) MarkDead(cc *http2.ClientConn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.conns = slices.DeleteFunc(p.conns, func(c *http2.ClientConn) bool { return c == cc })
}

// closeAll closes every connection; the run is over.
func (p *h2Pool) closeAll() {
	p.mu.Lock()
	conns := p.conns
	p.conns = nil
	p.mu.Unlock()
	for _, cc := range conns {
		cc.Close()
	}
}

// dial opens one connection: TCP for h2c, TLS with ALPN h2 for HTTP2.
func (p *h2Pool) dial(ctx context.Context, addr string) (net.Conn, error) {
	if !p.tls {
		return p.dialer.DialContext(ctx, "tcp", addr)
	}
	conf := &tls.Config{}
	if p.tlsConf != nil {
		conf = p.tlsConf.Clone()
	}
	conf.NextProtos = []string{http2.NextProtoTLS}
	if conf.ServerName == "" {
		host, _, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, err
		}
		conf.ServerName = host
	}
	tc, err := p.dialer.dialTLS(ctx, addr, conf)
	if err != nil {
		return nil, err
	}
	if got := tc.ConnectionState().NegotiatedProtocol; got != http2.NextProtoTLS {
		tc.Close()
		return nil, fmt.Errorf("engine: %s did not negotiate HTTP/2 with ALPN (got %q)", addr, got)
	}
	return tc, nil
}
