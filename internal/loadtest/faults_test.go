package loadtest

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/net/http2"

	"github.com/openload/openload/internal/engine"
	"github.com/openload/openload/internal/rawtcp"
	"github.com/openload/openload/internal/report"
	"github.com/openload/openload/schedule"
	"github.com/openload/openload/verify"
)

// newFaultServer starts a raw TCP server on loopback (rawtcp) whose every
// connection is handled by handle: it misbehaves in ways net/http's server
// will not. It is closed when the test ends; it returns its address.
func newFaultServer(t *testing.T, handle func(c net.Conn, done <-chan struct{})) string {
	t.Helper()
	s, err := rawtcp.Serve(handle)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s.Addr()
}

// resetConn makes Close send a TCP RST instead of a FIN.
func resetConn(c net.Conn) {
	if tc, ok := c.(*net.TCPConn); ok {
		tc.SetLinger(0)
	}
	c.Close()
}

// sleepOr waits d, or until done is closed; it reports whether d passed.
func sleepOr(d time.Duration, done <-chan struct{}) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-done:
		return false
	}
}

// h2Fault serves HTTP/2 with prior knowledge on c and calls onHeaders for
// every request's HEADERS frame; when it returns false the connection is
// closed.
func h2Fault(c net.Conn, onHeaders func(fr *http2.Framer, stream uint32) bool) {
	preface := make([]byte, len(http2.ClientPreface))
	if _, err := io.ReadFull(c, preface); err != nil {
		return
	}
	fr := http2.NewFramer(c, c)
	if err := fr.WriteSettings(); err != nil {
		return
	}
	for {
		f, err := fr.ReadFrame()
		if err != nil {
			return
		}
		switch f := f.(type) {
		case *http2.SettingsFrame:
			if !f.IsAck() {
				if fr.WriteSettingsAck() != nil {
					return
				}
			}
		case *http2.HeadersFrame:
			if !onHeaders(fr, f.StreamID) {
				return
			}
		}
	}
}

// faultCase is one misbehaving server and what a run against it must
// show.
type faultCase struct {
	name  string
	setup func(t *testing.T) (rawURL string, o Options) // o: the options beyond the common ones
	// want
	completed, errors, timeouts int64
	kinds                       map[string]int64
	status                      map[string]int64 // of completed responses
	failedStatus                map[string]int64 // of responses that failed after their head
	redirects, overCap          int64
	tlsCauses                   map[string]int64
	words                       []string // in the text report
}

const (
	faultRequests = 10
	faultTimeout  = 250 * time.Millisecond
)

func faultCases() []faultCase {
	all := func(n int64) map[string]int64 { return map[string]int64{"200": n} }
	return []faultCase{
		{
			name: "refused",
			setup: func(t *testing.T) (string, Options) {
				addr, release, err := rawtcp.RefusedAddr()
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(release)
				return "http://" + addr + "/", Options{}
			},
			errors: faultRequests, kinds: map[string]int64{"refused": faultRequests},
			words: []string{"refused 10 (connection refused: nothing listening at the address)"},
		},
		{
			name: "reset before the response",
			setup: func(t *testing.T) (string, Options) {
				return "http://" + newFaultServer(t, func(c net.Conn, _ <-chan struct{}) {
					if rawtcp.ReadRequest(bufio.NewReader(c)) {
						resetConn(c)
					}
				}) + "/", Options{}
			},
			errors: faultRequests, kinds: map[string]int64{"reset": faultRequests},
			words: []string{"reset 10 (the server reset or closed the connection"},
		},
		{
			name:  "reset during the body",
			setup: resetMidBody,
			// The status line came, the body did not: the outcome is the
			// error, the head's status is kept apart (failedStatus).
			errors: faultRequests, kinds: map[string]int64{"reset": faultRequests}, failedStatus: all(faultRequests),
			words: []string{"reset 10 (the server reset"},
		},
		{
			name: "accepts and never answers",
			setup: func(t *testing.T) (string, Options) {
				return "http://" + newFaultServer(t, func(c net.Conn, done <-chan struct{}) {
					rawtcp.ReadRequest(bufio.NewReader(c))
					<-done
				}) + "/", Options{}
			},
			timeouts: faultRequests, kinds: map[string]int64{"timeout": faultRequests},
			words: []string{"timeout 10 (no complete response within the request timeout)"},
		},
		{
			name: "slow trickle (slow loris)",
			setup: func(t *testing.T) (string, Options) {
				return "http://" + newFaultServer(t, func(c net.Conn, done <-chan struct{}) {
					if !rawtcp.ReadRequest(bufio.NewReader(c)) {
						return
					}
					if _, err := io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n"); err != nil {
						return
					}
					// One byte every 50 ms: 50 s for the body, far past
					// the timeout.
					for range 1000 {
						if !sleepOr(50*time.Millisecond, done) {
							return
						}
						if _, err := c.Write([]byte{'x'}); err != nil {
							return
						}
					}
				}) + "/", Options{}
			},
			timeouts: faultRequests, kinds: map[string]int64{"timeout": faultRequests}, failedStatus: all(faultRequests),
			words: []string{"timeout 10 (no complete response within the request timeout)"},
		},
		{
			name:      "huge body, no cap",
			setup:     hugeBody(0),
			completed: faultRequests, status: all(faultRequests),
			words: []string{"every request completed"},
		},
		{
			name:      "huge body over --max-body",
			setup:     hugeBody(64 << 10),
			completed: faultRequests, status: all(faultRequests), overCap: faultRequests,
			words: []string{"10 response(s) had a body larger than the body cap, 65536 bytes", "count as completed, not as errors"},
		},
		{
			name:   "malformed HTTP",
			setup:  malformed,
			errors: faultRequests, kinds: map[string]int64{"other": faultRequests},
			words: []string{"other 10 (another failure: a malformed HTTP response"},
		},
		{
			name: "TLS handshake failure (plain HTTP answers a TLS hello)",
			setup: func(t *testing.T) (string, Options) {
				return "https://" + newFaultServer(t, func(c net.Conn, _ <-chan struct{}) {
					buf := make([]byte, 512)
					c.Read(buf) // the ClientHello
					io.WriteString(c, "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")
				}) + "/", Options{}
			},
			errors: faultRequests, kinds: map[string]int64{"tls": faultRequests}, tlsCauses: map[string]int64{"not_tls": faultRequests},
			words: []string{"tls 10 (the server did not answer in TLS: if it serves plain HTTP, use an http:// URL)"},
		},
		{
			name: "untrusted certificate, verified by default",
			setup: func(t *testing.T) (string, Options) {
				return tlsServer(t), Options{}
			},
			errors: faultRequests, kinds: map[string]int64{"tls": faultRequests}, tlsCauses: map[string]int64{"self_signed": faultRequests},
			words: []string{"tls 10 (self-signed certificate: trust the certificate, or skip certificate verification)",
				"tls      self-signed certificate ×10 (trust the certificate"},
		},
		{
			name: "untrusted certificate with --insecure",
			setup: func(t *testing.T) (string, Options) {
				return tlsServer(t), Options{Config: engine.Config{Insecure: true}}
			},
			completed: faultRequests, status: all(faultRequests),
			words: []string{"certificates were not verified (verification skipped)"},
		},
		{
			name:      "redirect, not followed",
			setup:     redirects(false, false),
			completed: faultRequests, status: map[string]int64{"302": faultRequests},
			words: []string{"10 response(s) were redirects (3xx): counted as completed under their status, not followed"},
		},
		{
			name:      "redirect, --follow-redirects",
			setup:     redirects(true, false),
			completed: faultRequests, status: all(faultRequests), redirects: faultRequests,
			words: []string{"followed 10 redirect(s) (following redirects"},
		},
		{
			name:      "redirect loop, --follow-redirects stops after 10",
			setup:     redirects(true, true),
			completed: faultRequests, status: map[string]int64{"302": faultRequests}, redirects: faultRequests * engine.MaxRedirects,
			words: []string{"followed 100 redirect(s)", "10 request(s) still ended on a redirect (3xx)"},
		},
		{
			name: "HTTP/2 stream reset (RST_STREAM)",
			setup: func(t *testing.T) (string, Options) {
				return "http://" + newFaultServer(t, func(c net.Conn, _ <-chan struct{}) {
					h2Fault(c, func(fr *http2.Framer, stream uint32) bool {
						return fr.WriteRSTStream(stream, http2.ErrCodeInternal) == nil
					})
				}) + "/", Options{Config: engine.Config{Protocol: engine.H2C}}
			},
			errors: faultRequests, kinds: map[string]int64{"reset": faultRequests},
			words: []string{"reset 10 (the server reset or closed the connection (or HTTP/2 stream)"},
		},
		{
			name: "HTTP/2 GOAWAY",
			setup: func(t *testing.T) (string, Options) {
				return "http://" + newFaultServer(t, func(c net.Conn, _ <-chan struct{}) {
					h2Fault(c, func(fr *http2.Framer, stream uint32) bool {
						// The stream was seen (last stream = it): the
						// client may not retry it elsewhere.
						fr.WriteGoAway(stream, http2.ErrCodeInternal, []byte("fault injected"))
						return false
					})
				}) + "/", Options{Config: engine.Config{Protocol: engine.H2C}}
			},
			errors: faultRequests, kinds: map[string]int64{"reset": faultRequests},
			words: []string{"reset 10 (the server reset"},
		},
	}
}

func resetMidBody(t *testing.T) (string, Options) {
	return "http://" + newFaultServer(t, func(c net.Conn, _ <-chan struct{}) {
		if !rawtcp.ReadRequest(bufio.NewReader(c)) {
			return
		}
		io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n"+strings.Repeat("x", 1000))
		time.Sleep(5 * time.Millisecond) // let the head and some body arrive first
		resetConn(c)
	}) + "/", Options{}
}

func malformed(t *testing.T) (string, Options) {
	return "http://" + newFaultServer(t, func(c net.Conn, _ <-chan struct{}) {
		if rawtcp.ReadRequest(bufio.NewReader(c)) {
			io.WriteString(c, "HTTP/1.1 ok-ish\r\n\x00\x01garbage\r\n\r\n")
		}
	}) + "/", Options{}
}

// hugeBody serves 4 MiB bodies; the run caps bodies at maxBody (0: none).
func hugeBody(maxBody int64) func(t *testing.T) (string, Options) {
	return func(t *testing.T) (string, Options) {
		chunk := bytes.Repeat([]byte("0123456789abcdef"), 4096) // 64 KiB
		s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", fmt.Sprint(64*len(chunk)))
			for range 64 {
				if _, err := w.Write(chunk); err != nil {
					return
				}
			}
		}))
		t.Cleanup(s.Close)
		return s.URL + "/", Options{Config: engine.Config{MaxBody: maxBody}}
	}
}

func tlsServer(t *testing.T) string {
	s := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "ok")
	}))
	s.Config.ErrorLog = quietLog()
	t.Cleanup(s.Close)
	return s.URL + "/"
}

// redirects serves /start → 302 → /final (200); with loop, every path
// redirects to another.
func redirects(follow, loop bool) func(t *testing.T) (string, Options) {
	return func(t *testing.T) (string, Options) {
		var mu sync.Mutex
		n := 0
		s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			switch {
			case loop:
				mu.Lock()
				n++
				next := fmt.Sprintf("/loop/%d", n)
				mu.Unlock()
				http.Redirect(w, r, next, http.StatusFound)
			case r.URL.Path == "/start":
				http.Redirect(w, r, "/final", http.StatusFound)
			default:
				io.WriteString(w, "final")
			}
		}))
		t.Cleanup(s.Close)
		return s.URL + "/start", Options{Config: engine.Config{FollowRedirects: follow}}
	}
}

// TestFaults runs a short schedule against each misbehaving server: the
// run completes, every scheduled request ends in exactly one outcome of
// the right kind, the accounting identity holds, and the report says what
// happened in words.
//
// Plain-http HTTP/1.1 rows run with each client: net/http's transport, the
// lean client and the lean client on the event loop (Options.Lean, Epoll).
func TestFaults(t *testing.T) {
	clients := []struct {
		name        string
		lean, epoll bool
	}{{"net-http", false, false}, {"lean", true, false}, {"epoll", true, true}}
	for _, tc := range faultCases() {
		for _, cl := range clients {
			t.Run(tc.name+"/"+cl.name, func(t *testing.T) {
				t.Parallel()
				runFault(t, tc, cl.lean, cl.epoll)
			})
		}
	}
}

// runFault runs fault case tc, with the lean client (lean) on the event
// loop (epoll) when the case is plain-http HTTP/1.1.
func runFault(t *testing.T, tc faultCase, lean, epoll bool) {
	raw, o := tc.setup(t)
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	if lean {
		if u.Scheme != "http" || o.Protocol != "" || o.FollowRedirects {
			t.Skip("the lean client sends plain-http HTTP/1.1 only, without following redirects")
		}
		o.Lean, o.Epoll = true, epoll
	}
	o.URL = u
	o.Schedule = schedule.Spec{Kind: schedule.Constant, Rate: 100, Duration: faultRequests * 10 * time.Millisecond}
	if o.Connections == 0 {
		o.Connections = 4
	}
	o.Timeout = faultTimeout
	if tc.timeouts == 0 {
		// A row that expects no timeout gets a timeout no busy
		// machine reaches: on one, a fault server that answers at
		// once has taken longer than faultTimeout (see
		// docs/MEASUREMENTS.md, “Fault tests' timeout”).
		o.Timeout = 10 * time.Second
	}
	o.Drain = 10 * time.Second
	res, findings, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if want := wantClient(lean, epoll); res.Config.Client != want {
		t.Errorf("client %q, want %q", res.Config.Client, want)
	}
	c := res.Counts
	if c.Scheduled != faultRequests || !c.Balanced() {
		t.Errorf("counts %+v: want %d scheduled, balanced", c, faultRequests)
	}
	if c.Completed != tc.completed || c.Errors != tc.errors || c.Timeouts != tc.timeouts || c.Unfinished != 0 {
		t.Errorf("completed %d, errors %d, timeouts %d, unfinished %d; want %d, %d, %d, 0",
			c.Completed, c.Errors, c.Timeouts, c.Unfinished, tc.completed, tc.errors, tc.timeouts)
	}
	if !sameCounts(res.ErrorKinds, tc.kinds) {
		t.Errorf("error kinds %v, want %v", res.ErrorKinds, tc.kinds)
	}
	if !sameCounts(res.Status, tc.status) || !sameCounts(res.FailedStatus, tc.failedStatus) {
		t.Errorf("status %v, failed status %v; want %v, %v", res.Status, res.FailedStatus, tc.status, tc.failedStatus)
	}
	if res.Redirects != tc.redirects || res.BodyOverCap != tc.overCap {
		t.Errorf("redirects %d, body over cap %d; want %d, %d", res.Redirects, res.BodyOverCap, tc.redirects, tc.overCap)
	}
	// A followed redirect is one more request head the server reads, not a
	// re-send: every request that completed wrote 1 + its redirects.
	if w := res.Wire; tc.redirects > 0 && (w == nil || w.Resends != 0 || w.Attempts != c.Completed+res.Redirects) {
		t.Errorf("wire %+v: want %d attempts, no re-send", w, c.Completed+res.Redirects)
	}
	if !sameCounts(res.TLSCauses, tc.tlsCauses) {
		t.Errorf("tls causes %v, want %v", res.TLSCauses, tc.tlsCauses)
	}
	// The requests without an answer are set apart from the answered
	// ones, and the response histogram still holds them all.
	switch bad := c.Errors + c.Timeouts + c.Unfinished; {
	case bad == 0 && (res.Answered != nil || res.Unanswered != nil):
		t.Errorf("every request completed, yet answered %+v unanswered %+v", res.Answered, res.Unanswered)
	case bad > 0 && (res.Answered == nil || res.Unanswered == nil):
		t.Errorf("%d requests got no answer, yet no answered/unanswered split", bad)
	case bad > 0 && (res.Answered.Count != c.Completed || res.Unanswered.Count != bad || res.Response.Count != c.Scheduled):
		t.Errorf("answered %d, unanswered %d, response %d; want %d, %d, %d",
			res.Answered.Count, res.Unanswered.Count, res.Response.Count, c.Completed, bad, c.Scheduled)
	}
	// Kinds add up to the requests that did not complete.
	var kinds int64
	for _, n := range res.ErrorKinds {
		kinds += n
	}
	if kinds != c.Errors+c.Timeouts+c.Unfinished {
		t.Errorf("error kinds sum to %d, errors+timeouts+unfinished = %d", kinds, c.Errors+c.Timeouts+c.Unfinished)
	}
	if f := findCheck(findings, "accounting"); f == nil || f.Severity != verify.Pass {
		t.Errorf("accounting check %+v", f)
	}
	var b strings.Builder
	if err := report.Text(&b, res); err != nil {
		t.Fatal(err)
	}
	for _, w := range tc.words {
		if !strings.Contains(b.String(), w) {
			t.Errorf("report lacks %q:\n%s", w, b.String())
		}
	}
	t.Logf("observed: completed %d errors %d timeouts %d unfinished %d kinds %v status %v redirects %d over-cap %d",
		c.Completed, c.Errors, c.Timeouts, c.Unfinished, res.ErrorKinds, res.Status, res.Redirects, res.BodyOverCap)
}

// wantClient is the client a plain-http HTTP/1.1 run uses: the event loop
// is Linux's.
func wantClient(lean, epoll bool) string {
	switch {
	case !lean:
		return engine.ClientNetHTTP
	case epoll && runtime.GOOS == "linux":
		return engine.ClientEpoll
	}
	return engine.ClientLean
}

func sameCounts(got, want map[string]int64) bool {
	n := 0
	for k, v := range got {
		if v == 0 {
			continue
		}
		if want[k] != v {
			return false
		}
		n++
	}
	return n == len(want)
}

func findCheck(fs []verify.Finding, name string) *verify.Finding {
	for i := range fs {
		if fs[i].Check == name {
			return &fs[i]
		}
	}
	return nil
}

// quietLog discards the TLS server's complaints about the clients that
// refuse its certificate.
func quietLog() *log.Logger { return log.New(io.Discard, "", 0) }
