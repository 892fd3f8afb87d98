//lint:file-ignore SA1019 x/net/http2's Transport and ClientConn are deprecated in favour of net/http's (Go 1.26: Transport.NewClientConn, ClientConn); see h2Pool for why openload keeps them.

package engine

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"slices"
	"sync"
	"sync/atomic"
	"time"

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
	return &h2Client{t: t, p: p}, p.closeAll
}

// h2Client sends a request over the pool with x/net/http2's ClientConn,
// and re-sends it itself when the server did not process it, where
// x/net's Transport would wait first.
//
// x/net's Transport.RoundTrip re-sends a stream the server refused
// (REFUSED_STREAM), one past a GOAWAY's last stream, and one a closing
// connection could not take, up to 7 times, the first at once and the
// k-th after 2^(k−2) s (transport_common.go, roundTripViaPool and
// canRetryError, x/net v0.62.0). Against nginx with keepalive_requests 5
// (a GOAWAY every five streams) at 2,000/s, a request bounced off two or
// three GOAWAYs in a row waited 1 to 3 s unwritten, and 10 to 45 of
// 1,000 were still waiting when the drain ended them unfinished (issue
// 50). x/net offers no knob for the waits, but ClientConn.RoundTrip is
// one attempt, so this loop is x/net's with the event loop's rule
// (h2loop_linux.go, unprocessed): past a GOAWAY's last stream, or not
// written at all on a connection that is closing, a request goes again
// at once; only the server's refusal (REFUSED_STREAM, its word that it
// is overloaded) waits, as x/net waits.
//
// What the server processed is what the request's netTries (wire.go)
// counts from the frames (h2Conn), so the loop and the count cannot
// disagree. A request without one (none of the engine's) goes through
// x/net's own loop.
type h2Client struct {
	t *http2.Transport
	p *h2Pool
}

// h2Bounces is one request's bounces off HTTP/2 servers that did not
// process it (RFC 9113 §8.7: refused, or past a GOAWAY's last stream),
// and the one rule of both HTTP/2 paths, x/net's transport (h2Client) and
// the loop (h2Loop.unprocessed), for whether and when it goes again.
type h2Bounces struct {
	charged int // bounces charged against h2Resends
	refused int // of the bounces, the refusals (REFUSED_STREAM)
}

// h2Resends is how often a request the server did not process is sent
// again before its last failure is its outcome (x/net's number).
const h2Resends = 6

// bounce notes a bounce that ended an attempt with err and says whether
// the request may go again and after how long. charge false: a bounce off
// the GOAWAY of a connection that let a stream through, not counted
// against h2Resends: that server makes progress, and nginx with
// keepalive_requests 3 ends every connection after three streams, so on a
// loaded machine requests were bounced seven times and failed (TestNginx;
// with keepalive_requests 5 at 5,000/s, 1,326 of 5,000). The request's
// timeout still bounds it.
//
// The wait: after the first refusal none, after the k-th 2^(k−2) s, as
// x/net/http2's RoundTrip waits. (x/net adds 10 % of jitter to a float
// that it then truncates to whole seconds, so none is left; neither is
// here.) x/net waits so after any failure it retries; openload only after
// refusals, the server's word that it is overloaded. A stream past a
// GOAWAY's last goes again at once: that is a connection's graceful end
// (nginx's keepalive_requests sends one every N streams), and a request
// can be past several in a row, one a second apart under x/net's waits.
func (b *h2Bounces) bounce(err error, charge bool) (again bool, wait time.Duration) {
	if charge {
		b.charged++
	}
	if b.charged > h2Resends {
		return false, 0
	}
	if se := (http2.StreamError{}); errors.As(err, &se) && se.Code == http2.ErrCodeRefusedStream {
		b.refused++
		if b.refused > 1 {
			wait = time.Second << (b.refused - 2)
		}
	}
	return true, wait
}

func (c *h2Client) RoundTrip(req *http.Request) (*http.Response, error) {
	tries, _ := req.Context().Value(triesKey{}).(*netTries)
	if tries == nil {
		return c.t.RoundTrip(req)
	}
	addr := h2Authority(req.URL)
	var bounces h2Bounces
	for {
		cc, nc, reused, err := c.p.get(req, addr)
		if err != nil {
			return nil, err
		}
		if trace := httptrace.ContextClientTrace(req.Context()); trace != nil && trace.GotConn != nil {
			trace.GotConn(httptrace.GotConnInfo{Conn: nc, Reused: reused})
		}
		res, err := cc.RoundTrip(req)
		if err == nil {
			return res, nil
		}
		if req.Context().Err() != nil {
			return nil, err
		}
		// The attempt's WroteHeaders hook has run: x/net returns an
		// error only after the stream's goroutine is done, unless the
		// request's context ended (wire.go, netTries).
		written, unprocessed, progress := tries.h2Attempt()
		st := cc.State()
		if !unprocessed && (written || !st.Closed && !st.Closing) {
			return nil, err // the server may have acted on it
		}
		again, wait := bounces.bounce(err, !progress)
		if !again {
			return nil, err
		}
		if req, err = rewound(req); err != nil {
			return nil, err
		}
		if wait > 0 {
			t := time.NewTimer(wait)
			select {
			case <-t.C:
			case <-req.Context().Done():
				t.Stop()
				return nil, req.Context().Err()
			}
		}
	}
}

// rewound is req ready to be sent again: its body anew (GetBody), as
// x/net's shouldRetryRequest does.
func rewound(req *http.Request) (*http.Request, error) {
	if req.Body == nil || req.Body == http.NoBody {
		return req, nil
	}
	if req.GetBody == nil {
		return nil, errors.New("engine: an HTTP/2 request the server did not process cannot be sent again: its body cannot be read anew")
	}
	body, err := req.GetBody()
	if err != nil {
		return nil, err
	}
	r := *req
	r.Body = body
	return &r, nil
}

// h2Authority is the host:port a URL's requests go to, the port its
// scheme's when it names none (x/net's authorityAddr).
func h2Authority(u *url.URL) string {
	if port := u.Port(); port != "" {
		return u.Host
	}
	port := "443"
	if u.Scheme == "http" {
		port = "80"
	}
	return net.JoinHostPort(u.Hostname(), port)
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
	conns []*h2PoolConn
}

// h2PoolConn is one of the pool's connections: x/net's ClientConn and the
// connection under it (an h2Conn), which GotConn names.
type h2PoolConn struct {
	cc *http2.ClientConn
	nc net.Conn
}

// GetClientConn returns a connection with a stream reserved for req.
func (p *h2Pool) GetClientConn(req *http.Request, addr string) (*http2.ClientConn, error) {
	cc, _, _, err := p.get(req, addr)
	return cc, err
}

// get returns a connection with a stream reserved for req, the
// connection under it, and whether it was open before (reused).
func (p *h2Pool) get(req *http.Request, addr string) (*http2.ClientConn, net.Conn, bool, error) {
	if pc := p.reserve(); pc != nil {
		return pc.cc, pc.nc, true, nil
	}
	// Dial one connection at a time: a request that waited for another's
	// dial may find room on it.
	select {
	case p.dialing <- struct{}{}:
	case <-req.Context().Done():
		return nil, nil, false, req.Context().Err()
	}
	defer func() { <-p.dialing }()
	if pc := p.reserve(); pc != nil {
		return pc.cc, pc.nc, true, nil
	}
	nc, err := p.dial(req.Context(), addr)
	if err != nil {
		return nil, nil, false, err
	}
	hc := newH2Conn(nc)
	cc, err := p.t.NewClientConn(hc)
	if err != nil {
		nc.Close()
		return nil, nil, false, err
	}
	p.mu.Lock()
	p.conns = append(p.conns, &h2PoolConn{cc: cc, nc: hc})
	// A fresh connection has room; should the reservation fail all the
	// same, RoundTrip on it reports why.
	cc.ReserveNewRequest()
	p.mu.Unlock()
	return cc, hc, false, nil
}

// reserve reserves a stream on the open connection with the fewest
// streams that has room, as the event loop chooses (h2loop_linux.go), or
// returns nil. Connections that closed are dropped.
func (p *h2Pool) reserve() *h2PoolConn {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.conns = slices.DeleteFunc(p.conns, func(pc *h2PoolConn) bool {
		st := pc.cc.State()
		return st.Closed || st.Closing
	})
	room := func(cc *http2.ClientConn) (int, bool) {
		st := cc.State()
		n := st.StreamsActive + st.StreamsReserved
		return n, p.max <= 0 || n < p.max
	}
	var best *h2PoolConn
	bestN := 0
	for _, pc := range p.conns {
		if n, ok := room(pc.cc); ok && (best == nil || n < bestN) {
			best, bestN = pc, n
		}
	}
	if best != nil && best.cc.ReserveNewRequest() {
		return best
	}
	// The fewest refused (the server's limit or a GOAWAY): any other.
	for _, pc := range p.conns {
		if _, ok := room(pc.cc); ok && pc != best && pc.cc.ReserveNewRequest() {
			return pc
		}
	}
	return nil
}

// MarkDead drops a connection the transport found broken.
func (p *h2Pool) MarkDead(cc *http2.ClientConn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.conns = slices.DeleteFunc(p.conns, func(pc *h2PoolConn) bool { return pc.cc == cc })
}

// closeAll closes every connection; the run is over.
func (p *h2Pool) closeAll() {
	p.mu.Lock()
	conns := p.conns
	p.conns = nil
	p.mu.Unlock()
	for _, pc := range conns {
		pc.cc.Close()
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

// What the server processed, seen on the wire.
//
// An HTTP/2 request is one stream, and the server processed it when it
// read its HEADERS, unless it said it did not: RFC 9113 §8.7 gives a
// server two ways to say so, and a client may send such a request again.
// A stream it resets with REFUSED_STREAM was closed "prior to any
// processing"; a GOAWAY names the last stream that "might have been
// processed", and those above it were not. nginx logs neither, and
// x/net/http2 re-sends both (on a new stream, usually of a new
// connection). Every other stream whose HEADERS went out counts, answered
// or not (reset after its HEADERS, cut by a closed connection, timed out):
// the server may have acted on it, as on an HTTP/1.1 request written
// before its connection failed.
//
// httptrace alone cannot tell that: x/net/http2 calls WroteHeaders on the
// stream's own goroutine after flushing its HEADERS, when the answer may
// already be in hand, and no hook says what the server did with a stream.
// So each of the pool's connections is an h2Conn, which follows the
// frames through it (frameScan) in both directions: the header blocks the
// client wrote, by stream, and the server's RST_STREAM(REFUSED_STREAM)
// and GOAWAY frames. A request's netTries (wire.go) asks it, in its
// WroteHeaders hook, which stream it wrote (claim) and, when the attempt
// ends without an answer, whether the server processed that stream
// (unprocessed). An attempt that got an answer was processed whatever
// the hooks say.

// h2Conn is a connection of the pool as x/net/http2 sees it: it follows
// the frames written and read (see above). x/net writes under its write
// lock and reads on one goroutine, so each direction's frameScan has one
// user at a time; what other goroutines read is atomic or under mu.
type h2Conn struct {
	net.Conn

	out     frameScan     // the client's frames (Write)
	in      frameScan     // the server's frames (Read)
	maxOut  uint32        // the highest stream whose header block was written (Write only)
	headers atomic.Uint32 // maxOut, for the hooks
	claimed atomic.Uint32 // the stream the last WroteHeaders hook claimed

	goAway   atomic.Int64 // the lowest last-stream-id of the server's GOAWAYs, or -1
	nrefused atomic.Int32 // len(refused)
	mu       sync.Mutex
	refused  []uint32 // streams the server refused (RST_STREAM REFUSED_STREAM); rare
}

// h2TLSConn is an h2Conn over TLS: x/net/http2 takes the connection's
// state from it (ConnectionState), and Close does what x/net does only
// for a *tls.Conn, close the TCP connection when the TLS close hangs.
type h2TLSConn struct {
	*h2Conn
	tc *tls.Conn
}

func (c *h2TLSConn) ConnectionState() tls.ConnectionState { return c.tc.ConnectionState() }

func (c *h2TLSConn) Close() error {
	t := time.AfterFunc(250*time.Millisecond, func() { c.tc.NetConn().Close() })
	defer t.Stop()
	return c.tc.Close()
}

// newH2Conn wraps a new connection, TCP (h2c) or TLS, before its client
// preface.
func newH2Conn(nc net.Conn) net.Conn {
	c := &h2Conn{Conn: nc, out: frameScan{preface: len(http2.ClientPreface)}}
	c.goAway.Store(-1)
	if tc, ok := nc.(*tls.Conn); ok {
		return &h2TLSConn{h2Conn: c, tc: tc}
	}
	return c
}

// h2conn returns the h2Conn of one of the pool's connections
// (httptrace.GotConnInfo.Conn), or nil for any other connection.
func h2conn(c net.Conn) *h2Conn {
	switch c := c.(type) {
	case *h2Conn:
		return c
	case *h2TLSConn:
		return c.h2Conn
	}
	return nil
}

// Write and Read keep their frames small and scan after the call: the
// stream goroutine that writes a request's HEADERS starts with a small
// stack, which a larger frame above TLS's encryption makes it grow (and
// copy) for every request.

func (c *h2Conn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	c.wrote(p[:n])
	return n, err
}

func (c *h2Conn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.read(p[:n])
	return n, err
}

// wrote follows the client's frames in p, just written.
//
//go:noinline
func (c *h2Conn) wrote(p []byte) {
	for len(p) > 0 {
		k, done := c.out.feed(p)
		p = p[k:]
		// A stream higher than any before is a new request's (a lower
		// one's header block would be trailers).
		if done && c.out.endsHeaderBlock() && c.out.stream() > c.maxOut {
			c.maxOut = c.out.stream()
			c.headers.Store(c.maxOut)
		}
	}
}

// read follows the server's frames in p, just read.
//
//go:noinline
func (c *h2Conn) read(p []byte) {
	for len(p) > 0 {
		k, done := c.in.feed(p)
		p = p[k:]
		if done {
			c.serverFrame()
		}
	}
}

// serverFrame notes a frame the server sent, when it says the server did
// not process streams.
func (c *h2Conn) serverFrame() {
	pay := c.in.payload()
	switch c.in.typ() {
	case http2.FrameRSTStream:
		if code, ok := rstCode(pay); ok && code == http2.ErrCodeRefusedStream {
			c.mu.Lock()
			c.refused = append(c.refused, c.in.stream())
			c.mu.Unlock()
			c.nrefused.Add(1)
		}
	case http2.FrameGoAway:
		if id, ok := goAwayLast(pay); ok {
			last := int64(id)
			for {
				g := c.goAway.Load()
				if (g >= 0 && g <= last) || c.goAway.CompareAndSwap(g, last) {
					break
				}
			}
		}
	}
}

// claim is for the WroteHeaders hook of a stream on c, which x/net calls
// under its write lock right after writing the stream's HEADERS: it
// returns that stream, the last whose header block was written, or 0 when
// none was written since the last claim (the write failed).
func (c *h2Conn) claim() uint32 {
	id := c.headers.Load()
	if c.claimed.Swap(id) == id {
		return 0
	}
	return id
}

// unprocessed reports whether the server said it did not process stream
// id: it refused it, or a GOAWAY's last stream is below it.
func (c *h2Conn) unprocessed(id uint32) bool {
	if g := c.goAway.Load(); g >= 0 && int64(id) > g {
		return true
	}
	if c.nrefused.Load() == 0 {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Contains(c.refused, id)
}
