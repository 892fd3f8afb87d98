package engine

import (
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"net/http/httptrace"
	"sync"
	"sync/atomic"
	"time"

	"github.com/openload/openload/internal/h1"
	"github.com/openload/openload/internal/recorder"
)

// What goes onto the wire, and what a client may send twice.
//
// A kept-alive connection can fail under a request before any byte of its
// answer: the server closed it while it was idle, its keep-alive timeout
// raced the request, or it read the request and closed without answering
// (nginx's 444). The client cannot tell these apart. Under Config.Resend
// (resendRule) openload's own clients then re-send the request once on a
// new connection:
//
//	idempotent  (the default) when none of its bytes were written (the
//	            server cannot have seen it), or when its method is
//	            idempotent (RFC 9110 §9.2.2: GET, HEAD, OPTIONS, TRACE,
//	            PUT, DELETE), so that running it twice is harmless; a POST
//	            that was written and lost with its connection is an error
//	            (reset), never silently sent again: the server may have
//	            run it
//	unwritten   only when none of its bytes were written
//	never       not at all: the first attempt's failure is the request's
//	            outcome, as with wrk
//
// A re-send is the failure of a first attempt, and it is counted as one:
// per request, the written attempts that got no byte of an answer before
// the connection was closed or reset under them (sends.unanswered) or
// before their time ran out (sends.silent), and the re-sends made after a
// written attempt (sends.resentWritten: the server read it and dropped
// it, or lost it in a keep-alive race) apart from those after an
// unwritten one (sends.resentUnwritten: the server never saw it). The
// recorder sums them (recorder.Wire) and verify says what they mean.
//
// net/http's transport makes the same decision itself, slightly narrower
// (it re-sends GET, HEAD, OPTIONS and TRACE, requests with an
// Idempotency-Key header, and any request nothing of which was written),
// and so does HTTP/2's (x/net/http2 re-sends a stream the server refused
// or did not process before GOAWAY); openload cannot turn that off, so it
// counts it (netTries), and Config.Validate refuses a Resend other than
// idempotent for a run that goes through net/http.
//
// Every client counts, per request, the attempts written to a connection
// (at least one byte: sends.wrote), whichever sent them; the record carries
// them (recorder.Record.Attempts, Resends), the per-request log's attempts
// column shows them, and the result sums them (recorder.Wire): the number
// of request heads the server read. A request's sent stays its first
// written attempt's; the final attempt's is LastSent, so a re-send shows
// as retry delay, not as service time.

// idempotent reports whether method is idempotent (RFC 9110 §9.2.2).
func idempotent(method string) bool {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodTrace, http.MethodPut, http.MethodDelete:
		return true
	}
	return false
}

// The re-send policies of Config.Resend (see the top of this file); ""
// is ResendIdempotent.
const (
	ResendIdempotent = "idempotent"
	ResendUnwritten  = "unwritten"
	ResendNever      = "never"
)

// resendRule is what a run's client may re-send after an attempt failed
// on a kept-alive connection before any byte of its answer.
type resendRule struct {
	unwritten bool // an attempt none of whose bytes were written
	written   bool // an attempt that was written
}

// newResendRule is the rule of policy (Config.Resend, validated) for a
// run that sends method.
func newResendRule(policy, method string) resendRule {
	switch policy {
	case ResendNever:
		return resendRule{}
	case ResendUnwritten:
		return resendRule{unwritten: true}
	}
	return resendRule{unwritten: true, written: idempotent(method)}
}

// newH2ResendRule is the rule of policy for HTTP/2 on the event loop,
// where what may go again is what the server did not process (RFC 9113
// §8.7): a stream whose HEADERS never left (unwritten), and one written
// that the server refused or left past a GOAWAY's last stream (written),
// which any method may, as x/net/http2 re-sends them. ResendUnwritten
// keeps the first, ResendNever neither: the server's refusals are then
// the requests' outcomes (errors of kind reset).
func newH2ResendRule(policy string) resendRule {
	switch policy {
	case ResendNever:
		return resendRule{}
	case ResendUnwritten:
		return resendRule{unwritten: true}
	}
	return resendRule{unwritten: true, written: true}
}

// allows reports whether an attempt that wrote (at least one byte) or not
// may be re-sent.
func (r resendRule) allows(wrote bool) bool {
	if wrote {
		return r.written
	}
	return r.unwritten
}

// sends is what a client did to put one request onto the wire.
type sends struct {
	first    time.Duration // the first written attempt's sent, or -1
	last     time.Duration // the last written attempt's sent, or -1
	attempts int           // attempts at least one byte of which was written
	resends  int           // of those, the ones after the first (of each redirect hop)
	hop      bool          // the next written attempt starts a redirect hop: not a re-send
	// un counts the written attempts that got no byte of an answer and
	// the re-sends by cause (see the top of this file).
	un recorder.Unanswered
}

func newSends() sends { return sends{first: -1, last: -1} }

// wrote notes an attempt, in hand since sent, that wrote to its connection.
func (s *sends) wrote(sent time.Duration) {
	switch {
	case s.attempts == 0:
		s.first = sent
	case s.hop:
	default:
		s.resends++
	}
	s.hop = false
	s.attempts++
	s.last = sent
}

// noAnswer notes that the attempt under way, which wrote, got no byte of
// its answer: the connection was closed or reset under it (closed), or
// its time ran out first (a timeout, the drain).
func (s *sends) noAnswer(closed bool) {
	if closed {
		s.un.Closed++
	} else {
		s.un.Silent++
	}
}

// resend notes that the attempt under way, which wrote or not, failed
// before any byte of its answer and is sent again on a new connection.
func (s *sends) resend(wrote bool) {
	if wrote {
		s.un.ResentWritten++
	} else {
		s.un.ResentUnwritten++
	}
}

// apply sets r's sent times and attempt counts: the request's attempt began
// at attempt, and hand is when its last connection was in hand (-1: none
// was). A request nothing of which was written is sent at hand, or at
// attempt when no connection could be had.
func (s *sends) apply(r *recorder.Record, attempt, hand time.Duration) {
	r.WasSent = true
	switch {
	case s.attempts > 0:
		r.Sent = s.first
	case hand >= 0:
		r.Sent = hand
	default:
		r.Sent = attempt
	}
	r.Attempts, r.Resends, r.Unanswered = s.attempts, s.resends, s.un
	if s.resends > 0 {
		r.LastSent = s.last
	}
}

// add adds the attempts of another try of the same request (a retry).
func (s *sends) add(o sends) {
	if s.attempts == 0 {
		s.first = o.first
	}
	if o.attempts > 0 {
		s.last = o.last
	}
	s.attempts += o.attempts
	s.resends += o.resends
	s.un.Add(o.un)
}

// truncated returns err as an h1.TruncatedError, a reset, when it is a
// parse error (not a read error, which Kind already names) and the
// connection's reads had ended (rerr: the first read error, EOF or a
// reset): a head cut short, not a malformed one.
func truncated(err, rerr error) error {
	if err == nil || Kind(err) != recorder.KindOther {
		return err
	}
	return h1.Truncated(err, rerr)
}

// countingConn is a connection of net/http's HTTP/1.1 transport that
// counts the bytes written to it, so that an attempt knows whether it put
// anything on the wire, and keeps its first read error, so that a
// response cut short reads as a reset (truncated).
//
// A response can be read before the goroutine that wrote its request has
// counted the bytes, so started counts the writes begun too: an attempt
// that got its answer wrote if a write began; one that failed is judged by
// written, which is final by then (net/http's transport waits for its
// write loop to end before it returns an error).
type countingConn struct {
	net.Conn
	started atomic.Int64 // writes begun
	written atomic.Int64 // bytes written
	mu      sync.Mutex
	rerr    error
}

func (c *countingConn) Write(p []byte) (int, error) {
	c.started.Add(1)
	n, err := c.Conn.Write(p)
	c.written.Add(int64(n))
	return n, err
}

func (c *countingConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if err != nil {
		c.mu.Lock()
		if c.rerr == nil {
			c.rerr = err
		}
		c.mu.Unlock()
	}
	return n, err
}

func (c *countingConn) readErr() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.rerr
}

// countDials wraps dial so that its connections are countingConns.
func countDials(dial func(ctx context.Context, network, addr string) (net.Conn, error)) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &countingConn{Conn: c}, nil
	}
}

// counted returns the countingConn under c (a TLS connection's too), or
// nil.
func counted(c net.Conn) *countingConn {
	if tc, ok := c.(*tls.Conn); ok {
		c = tc.NetConn()
	}
	cc, _ := c.(*countingConn)
	return cc
}

// netTries follows one request through net/http's client with httptrace:
// every connection the transport takes for it (GotConn) is an attempt.
// An attempt that got an answer was written; one that did not was
// written when its connection took bytes (HTTP/1.1: countingConn), or,
// with HTTP/2 on openload's pool, when the HEADERS of its stream were
// written (WroteHeaders names the stream: h2Conn.claim) and the server did
// not say it left the stream unprocessed (REFUSED_STREAM, above a GOAWAY's
// last stream: h2Conn.unprocessed, h2.go), or, on a transport of the
// caller's, when its headers were written.
//
// Its hooks run on the transport's goroutines: GotConn on the caller's,
// before the attempt's stream exists; x/net/http2's WroteHeaders on the
// stream's own, after the HEADERS were flushed, which may be after the
// answer came and Do returned. Such a late hook finds the attempt closed
// and changes nothing, which is right: the answer counted it. When an
// attempt ends without an answer its hook has run: x/net/http2 returns
// such an error, or tries again, only after the stream's goroutine is
// done. Except when the request's context ended (timeout, drain): then it
// returns at once, and HEADERS still being written are not counted, as a
// record cannot wait for a write that may never end.
type netTries struct {
	since func() time.Duration

	mu       sync.Mutex
	tx       sends
	open     bool          // an attempt is under way
	conn     *countingConn // its connection, when countable
	mark     int64         // conn's bytes written when it got it
	begun    int64         // conn's writes begun when it got it
	headers  bool          // it wrote its headers (not countable)
	h2       *h2Conn       // the last attempt's connection, when one of openload's HTTP/2 pool (h2.go)
	stream   uint32        // the stream whose HEADERS the attempt wrote on h2, or 0
	hand     time.Duration // when it got its connection; -1 before the first
	lastConn *countingConn // the last attempt's connection, for its read error
	quiet    bool          // the last attempt ended written, without an answer
}

// endLocked closes the attempt under way, answered (ok) or failed: it
// counts if it wrote (if the server processed it, on HTTP/2), and the
// attempt is quiet when it wrote and got no answer. No hook says whether
// a byte of an answer came (GotFirstResponseByte would cost a closure per
// request): an attempt the transport tries again got none (net/http
// re-sends only then), and a last attempt without a response may have
// got a head cut short, counted as none.
func (t *netTries) endLocked(ok bool) (wrote bool) {
	if !t.open {
		return false
	}
	t.open = false
	// An answer comes only to a request the server read.
	switch {
	case t.h2 != nil:
		wrote = ok || t.stream != 0 && !t.h2.unprocessed(t.stream)
	case t.conn == nil:
		wrote = ok || t.headers
	default:
		wrote = t.conn.written.Load() > t.mark || ok && t.conn.started.Load() > t.begun
	}
	if wrote {
		t.tx.wrote(t.hand)
	}
	t.quiet = wrote && !ok
	return wrote
}

// getConn is net/http's GetConn hook, called as its transport looks for
// a connection (Transport.getConn), for the first attempt and for each
// re-send, before the dial. An attempt under way then failed and is being
// re-sent, and it is closed here, not at the next GotConn: the re-send's
// dial may fail (nginx stopped: refused), and then no GotConn comes and
// the request ends with the dial's error, which says nothing of the
// written attempt before it (issue 50).
//
// x/net/http2 does not call it on a pool of ours (h2.go): there gotConn
// closes the attempt, and a re-sent stream is one the server did not
// process, which did not write.
func (t *netTries) getConn(string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.resendLocked()
}

// resendLocked closes the attempt under way, if any, as one the transport
// sends again: it failed before a byte of its answer (net/http re-sends
// only then: Transport.roundTrip retries on a reused connection only an
// attempt that wrote nothing, or whose connection ended, EOF or an error,
// before the first byte of its answer (persistConn.shouldRetryRequest);
// x/net/http2 a stream the server left unprocessed, which did not write).
// A written one was closed under, never silent.
func (t *netTries) resendLocked() {
	if !t.open {
		return
	}
	wrote := t.endLocked(false)
	if t.quiet {
		t.tx.noAnswer(true)
		// Counted: the request's end must not count it again.
		t.quiet = false
	}
	t.tx.resend(wrote)
}

func (t *netTries) gotConn(info httptrace.GotConnInfo) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.resendLocked()
	t.open, t.headers, t.stream, t.hand = true, false, 0, t.since()
	t.h2 = h2conn(info.Conn)
	t.conn = counted(info.Conn)
	if t.conn != nil {
		t.mark, t.begun = t.conn.written.Load(), t.conn.started.Load()
	}
	t.lastConn = t.conn
}

func (t *netTries) wroteHeaders() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.h2 != nil {
		// Claimed even when late (the attempt was answered): the next
		// hook on the connection must not take this stream for its own.
		if id := t.h2.claim(); t.open {
			t.stream = id
		}
		return
	}
	if t.open && t.conn == nil {
		t.headers = true
	}
}

// h2Attempt tells the re-send loop over openload's HTTP/2 pool (h2Client,
// h2.go) what became of the attempt under way, which failed: whether the
// HEADERS of its stream were written, whether the server said it did not
// process that stream (refused it, or a GOAWAY's last stream is below
// it), and whether the connection had a GOAWAY that let some stream
// through (progress). What counts the attempt (endLocked) decides the
// re-send.
func (t *netTries) h2Attempt() (written, unprocessed, progress bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.h2 == nil {
		return false, false, false
	}
	progress = t.h2.goAway.Load() > 0
	if t.stream == 0 {
		return false, false, progress
	}
	return true, t.h2.unprocessed(t.stream), progress
}

// redirect notes that the client follows a redirect: its next attempt is
// a new request to the server, not a re-send.
func (t *netTries) redirect() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.endLocked(true)
	t.tx.hop = true
}

// end closes the last attempt when Do returned, ok when with a response,
// and returns the request's sends, the last connection's hand time, its
// read error, and whether the last attempt wrote and got no answer
// (quiet).
func (t *netTries) end(ok bool) (tx sends, hand time.Duration, rerr error, quiet bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.endLocked(ok)
	if t.lastConn != nil {
		rerr = t.lastConn.readErr()
	}
	return t.tx, t.hand, rerr, t.quiet
}

type triesKey struct{}

// newNetTries returns the tries of one request and the context, derived
// from base, that carries its trace hooks.
func newNetTries(base context.Context, since func() time.Duration) (*netTries, context.Context) {
	t := &netTries{since: since, tx: newSends(), hand: -1}
	trace := &httptrace.ClientTrace{GetConn: t.getConn, GotConn: t.gotConn, WroteHeaders: t.wroteHeaders}
	return t, httptrace.WithClientTrace(context.WithValue(base, triesKey{}, t), trace)
}

// followRedirect tells the request's netTries, if any, that the client
// follows a redirect (checkRedirect calls it).
func followRedirect(req *http.Request) {
	if t, ok := req.Context().Value(triesKey{}).(*netTries); ok {
		t.redirect()
	}
}
