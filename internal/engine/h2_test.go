package engine

import (
	"crypto/tls"
	"crypto/x509"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/openload/openload/schedule"
	"github.com/openload/openload/servers/stub"
)

// protoServer counts the requests it served by HTTP major version and, per
// connection, the most handlers it ran at once.
type protoServer struct {
	h1, h2 atomic.Int64
	hold   time.Duration

	mu      sync.Mutex
	active  map[string]int
	maxConc map[string]int
}

func (p *protoServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.ProtoMajor == 2 {
		p.h2.Add(1)
	} else {
		p.h1.Add(1)
	}
	p.mu.Lock()
	p.active[r.RemoteAddr]++
	p.maxConc[r.RemoteAddr] = max(p.maxConc[r.RemoteAddr], p.active[r.RemoteAddr])
	p.mu.Unlock()
	if p.hold > 0 {
		time.Sleep(p.hold)
	}
	p.mu.Lock()
	p.active[r.RemoteAddr]--
	p.mu.Unlock()
	w.Write([]byte("ok"))
}

// h2Clients are HTTP/2's two clients: x/net/http2's transport and the
// event loop (h2loop_linux.go; elsewhere the transport again), as
// Config.Epoll chooses.
var h2Clients = []struct {
	name  string
	epoll bool
}{{"net-http", false}, {"loop", true}}

// h2ClientName is the Stats.Client of an HTTP/2 run with Config.Epoll
// epoll.
func h2ClientName(epoll bool) string {
	if epoll && runtime.GOOS == "linux" {
		return ClientEpoll
	}
	return ClientNetHTTP
}

// forH2Clients runs test on each of h2Clients.
func forH2Clients(t *testing.T, test func(t *testing.T, epoll bool)) {
	for _, cl := range h2Clients {
		t.Run(cl.name, func(t *testing.T) { test(t, cl.epoll) })
	}
}

func newProtoServer(hold time.Duration) *protoServer {
	return &protoServer{hold: hold, active: map[string]int{}, maxConc: map[string]int{}}
}

// tlsTrusting returns a TLS configuration that trusts srv's certificate.
func tlsTrusting(srv *httptest.Server) *tls.Config {
	pool := x509.NewCertPool()
	pool.AddCert(srv.Certificate())
	return &tls.Config{RootCAs: pool}
}

func TestHTTP2OverTLS(t *testing.T) {
	forH2Clients(t, func(t *testing.T, epoll bool) {
		ps := newProtoServer(0)
		srv := httptest.NewUnstartedServer(ps)
		srv.EnableHTTP2 = true
		srv.StartTLS()
		defer srv.Close()
		rec, _ := runAgainst(t, srv.URL, Config{Protocol: HTTP2, TLS: tlsTrusting(srv), Epoll: epoll}, schedule.NewConstant(200, 500*time.Millisecond))
		c := checkIdentity(t, rec, 100)
		if c.Completed != 100 || rec.StatusCodes()[200] != 100 {
			t.Errorf("counts %+v, statuses %v: want 100 completed with 200", c, rec.StatusCodes())
		}
		if h2, h1 := ps.h2.Load(), ps.h1.Load(); h2 != 100 || h1 != 0 {
			t.Errorf("server saw %d HTTP/2 and %d HTTP/1 requests, want 100 HTTP/2", h2, h1)
		}
	})
}

func TestHTTP2UntrustedCertificateIsTLSError(t *testing.T) {
	forH2Clients(t, func(t *testing.T, epoll bool) {
		srv := httptest.NewUnstartedServer(newProtoServer(0))
		srv.EnableHTTP2 = true
		srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the handshakes fail, as they should
		srv.StartTLS()
		defer srv.Close()
		rec, _ := runAgainst(t, srv.URL, Config{Protocol: HTTP2, Epoll: epoll}, schedule.NewConstant(100, 100*time.Millisecond))
		c := checkIdentity(t, rec, 10)
		if c.Errors != 10 || rec.ErrorKinds()["tls"] != 10 {
			t.Errorf("counts %+v, kinds %v: want 10 tls errors", c, rec.ErrorKinds())
		}
	})
}

func TestH2CPriorKnowledge(t *testing.T) {
	forH2Clients(t, func(t *testing.T, epoll bool) {
		ps := newProtoServer(2 * time.Millisecond)
		srv := httptest.NewUnstartedServer(ps)
		srv.Config.Protocols = new(http.Protocols)
		srv.Config.Protocols.SetHTTP1(true)
		srv.Config.Protocols.SetUnencryptedHTTP2(true)
		srv.Start()
		defer srv.Close()
		// 8 streams in flight at most, 2 per connection.
		rec, stats := runAgainst(t, srv.URL, Config{Protocol: H2C, Connections: 8, MaxStreams: 2, Epoll: epoll}, schedule.NewConstant(400, 250*time.Millisecond))
		c := checkIdentity(t, rec, 100)
		if c.Completed != 100 {
			t.Errorf("counts %+v: want 100 completed", c)
		}
		if h2, h1 := ps.h2.Load(), ps.h1.Load(); h2 != 100 || h1 != 0 {
			t.Errorf("server saw %d HTTP/2 and %d HTTP/1 requests, want 100 HTTP/2", h2, h1)
		}
		if want := h2ClientName(epoll); stats.Client != want {
			t.Errorf("client %q, want %q", stats.Client, want)
		}
		if stats.MaxInFlight > 8 {
			t.Errorf("max in flight %d > 8 workers", stats.MaxInFlight)
		}
		ps.mu.Lock()
		defer ps.mu.Unlock()
		for addr, n := range ps.maxConc {
			if n > 2 {
				t.Errorf("connection %s carried %d streams at once, MaxStreams is 2", addr, n)
			}
		}
		if len(ps.maxConc) > 4 {
			t.Errorf("%d connections for 8 streams of 2 per connection, want ≤ 4", len(ps.maxConc))
		}
	})
}

// TestH2CAgainstHTTP1: HTTP/2 with prior knowledge sent to a server that
// speaks HTTP/1.1 only gets an HTTP/1.1 answer to its preface, which
// HTTP/2 cannot read: every request fails as "protocol", not "other",
// so that the report can say the server does not speak h2c.
func TestH2CAgainstHTTP1(t *testing.T) {
	forH2Clients(t, func(t *testing.T, epoll bool) {
		cfg := stub.DefaultConfig()
		cfg.Policy, cfg.Latency = stub.PolicyNone, time.Millisecond
		s, err := stub.NewServer(cfg) // no H2C
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		rec, _ := runAgainst(t, s.URL+"/predict", Config{Protocol: H2C, Epoll: epoll}, schedule.NewConstant(100, 100*time.Millisecond))
		c := checkIdentity(t, rec, 10)
		if kinds := rec.ErrorKinds(); c.Errors != 10 || kinds["protocol"] != 10 || len(kinds) != 1 {
			t.Errorf("counts %+v, kinds %v: want 10 errors of kind protocol", c, kinds)
		}
	})
}

func TestH2CAgainstStub(t *testing.T) {
	forH2Clients(t, func(t *testing.T, epoll bool) {
		cfg := stub.DefaultConfig()
		cfg.Policy, cfg.Latency, cfg.Workers, cfg.H2C = stub.PolicyNone, time.Millisecond, 8, true
		s, err := stub.NewServer(cfg)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		rec, _ := runAgainst(t, s.URL+"/predict", Config{Protocol: H2C, Epoll: epoll}, schedule.NewConstant(200, 250*time.Millisecond))
		c := checkIdentity(t, rec, 50)
		if c.Completed != 50 || rec.StatusCodes()[200] != 50 {
			t.Errorf("counts %+v, statuses %v: want 50 completed with 200", c, rec.StatusCodes())
		}
		if got := s.Stats().Total; got != 50 {
			t.Errorf("stub counted %d requests, want 50", got)
		}
		// The stub really speaks HTTP/2 without TLS, and HTTP/1.1 still.
		var h2c http.Protocols
		h2c.SetUnencryptedHTTP2(true)
		h2 := &http.Transport{Protocols: &h2c}
		defer h2.CloseIdleConnections()
		for _, rt := range []struct {
			rt    http.RoundTripper
			major int
		}{{h2, 2}, {&http.Transport{}, 1}} {
			req, _ := http.NewRequest(http.MethodGet, s.URL+"/predict", nil)
			resp, err := rt.rt.RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.ProtoMajor != rt.major || resp.StatusCode != 200 {
				t.Errorf("got %s %d, want HTTP/%d 200", resp.Proto, resp.StatusCode, rt.major)
			}
			if tr, ok := rt.rt.(*http.Transport); ok {
				tr.CloseIdleConnections()
			}
		}
	})
}

func TestValidateProtocol(t *testing.T) {
	for _, tc := range []struct {
		url, proto string
		streams    int
		ok         bool
	}{
		{"http://x/", "", 0, true},
		{"https://x/", HTTP1, 0, true},
		{"https://x/", HTTP2, 4, true},
		{"http://x/", HTTP2, 0, false},
		{"http://x/", H2C, 0, true},
		{"https://x/", H2C, 0, false},
		{"http://x/", "spdy", 0, false},
		{"http://x/", H2C, -1, false},
	} {
		err := Config{URL: mustURL(t, tc.url), Protocol: tc.proto, MaxStreams: tc.streams, Connections: 1, Timeout: time.Second}.Validate()
		if (err == nil) != tc.ok {
			t.Errorf("%s %q streams %d: err %v, want ok %v", tc.url, tc.proto, tc.streams, err, tc.ok)
		}
	}
}

// TestH2Predial: on the event loop, the connections the first streams
// take are opened before the clock starts, ⌈16 ÷ 4⌉ = 4 here, and the
// run uses them and no others.
func TestH2Predial(t *testing.T) {
	if h2ClientName(true) != ClientEpoll {
		t.Skip("no HTTP/2 event loop here")
	}
	ps := newProtoServer(time.Millisecond)
	srv := httptest.NewUnstartedServer(ps)
	srv.Config.Protocols = new(http.Protocols)
	srv.Config.Protocols.SetUnencryptedHTTP2(true)
	srv.Start()
	defer srv.Close()
	rec, stats := runAgainst(t, srv.URL, Config{Protocol: H2C, Connections: 16, MaxStreams: 4, Epoll: true}, schedule.NewConstant(400, 250*time.Millisecond))
	checkIdentity(t, rec, 100)
	if p := stats.Predial; p.Wanted != 4 || p.Opened != 4 || p.Err != nil {
		t.Errorf("predial %+v: want 4 of 4 opened", p)
	}
	ps.mu.Lock()
	defer ps.mu.Unlock()
	if len(ps.maxConc) > 4 {
		t.Errorf("%d connections, want the 4 opened before the start", len(ps.maxConc))
	}
}

// TestH2SpreadsStreams: on the event loop a request takes a stream on the
// open connection with the fewest, so a burst of 8 over the 2 connections
// opened before the start (⌈16 ÷ 8⌉, for 16 requests) is 4 and 4, not 8 on
// the first (which has room for all 8). The server holds each for 50 ms,
// so a burst's 8 are in flight together and done before the next.
func TestH2SpreadsStreams(t *testing.T) {
	if h2ClientName(true) != ClientEpoll {
		t.Skip("no HTTP/2 event loop here")
	}
	ps := newProtoServer(50 * time.Millisecond)
	srv := httptest.NewUnstartedServer(ps)
	srv.Config.Protocols = new(http.Protocols)
	srv.Config.Protocols.SetUnencryptedHTTP2(true)
	srv.Start()
	defer srv.Close()
	rec, _ := runAgainst(t, srv.URL, Config{Protocol: H2C, Connections: 16, MaxStreams: 8, Epoll: true}, &bursts{n: 8, every: 200 * time.Millisecond, total: 16})
	if c := checkIdentity(t, rec, 16); c.Completed != 16 {
		t.Fatalf("counts %+v: want 16 completed", c)
	}
	ps.mu.Lock()
	defer ps.mu.Unlock()
	if len(ps.maxConc) != 2 {
		t.Fatalf("%d connections, want the 2 opened before the start", len(ps.maxConc))
	}
	for addr, n := range ps.maxConc {
		if n != 4 {
			t.Errorf("connection %s carried %d streams at once, want 4 of a burst's 8", addr, n)
		}
	}
}
