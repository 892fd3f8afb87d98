package engine

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openload/openload/internal/rawtcp"
	"github.com/openload/openload/result"
	"github.com/openload/openload/schedule"
)

// connServer records, per request, the connection it came on, and answers
// by path: /ka a 10 KB body with Content-Length, /close the same with
// Connection: close, /chunked a chunked body in two flushes, /503 an error
// status. It checks that every request carries the configured header and
// body.
type connServer struct {
	mu    sync.Mutex
	conns map[string]int
	bad   []string
}

func (s *connServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	s.conns[r.RemoteAddr]++
	if r.Header.Get("X-Test") != "yes" || string(body) != "hello" || r.Method != http.MethodPost || r.Header.Get("X-Stamp") == "" {
		s.bad = append(s.bad, r.Method+" "+r.URL.Path+" "+r.Header.Get("X-Test")+" "+string(body))
	}
	s.mu.Unlock()
	big := strings.Repeat("x", 10<<10)
	switch r.URL.Path {
	case "/close":
		w.Header().Set("Connection", "close")
		w.Write([]byte(big))
	case "/chunked":
		w.Write([]byte(big))
		w.(http.Flusher).Flush()
		w.Write([]byte(big))
	case "/503":
		w.WriteHeader(http.StatusServiceUnavailable)
	default:
		w.Header().Set("Content-Length", "10240")
		w.Write([]byte(big))
	}
}

func TestLeanMatchesNetHTTP(t *testing.T) {
	for _, path := range []string{"/ka", "/close", "/chunked", "/503"} {
		var got []result.Counts
		var statuses []map[int]int64
		for _, cl := range openClients {
			cs := &connServer{conns: map[string]int{}}
			srv := httptest.NewServer(cs)
			rec, _ := runAgainst(t, srv.URL+path, Config{
				Lean:        cl.lean,
				Epoll:       cl.epoll,
				Connections: 4,
				Method:      http.MethodPost,
				Header:      http.Header{"X-Test": {"yes"}},
				Body:        []byte("hello"),
				StampHeader: "X-Stamp",
			}, schedule.NewConstant(200, 250*time.Millisecond))
			srv.Close()
			got = append(got, checkIdentity(t, rec, 50))
			statuses = append(statuses, rec.StatusCodes())
			cs.mu.Lock()
			if len(cs.bad) > 0 {
				t.Errorf("%s %s: %d requests without the header or body, first %q", path, cl.test, len(cs.bad), cs.bad[0])
			}
			conns := len(cs.conns)
			cs.mu.Unlock()
			if !cl.lean {
				continue
			}
			switch path {
			case "/close":
				if conns != 50 {
					t.Errorf("/close: %s client used %d connections for 50 requests answered Connection: close", cl.test, conns)
				}
			default:
				if conns > 4 {
					t.Errorf("%s: %s client used %d connections with 4 workers: keep-alive not reused", path, cl.test, conns)
				}
			}
		}
		for i, cl := range openClients[1:] {
			if got[0] != got[i+1] {
				t.Errorf("%s: counts net/http %+v, %s %+v", path, got[0], cl.test, got[i+1])
			}
			for code, n := range statuses[0] {
				if statuses[i+1][code] != n {
					t.Errorf("%s: status %d ×%d with net/http, ×%d with %s", path, code, n, statuses[i+1][code], cl.test)
				}
			}
		}
	}
}

func TestLeanRetriesClosedIdleConnection(t *testing.T) {
	// The server closes every connection after its response without
	// saying so: the next request on it fails before any byte comes
	// back and is retried once on a new connection.
	srv, err := rawtcp.Serve(func(c net.Conn, _ <-chan struct{}) {
		if rawtcp.ReadRequest(bufio.NewReader(c)) {
			c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"))
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	for _, cl := range openClients[1:] {
		rec, _ := runAgainst(t, "http://"+srv.Addr()+"/", Config{Lean: true, Epoll: cl.epoll, Connections: 1}, schedule.NewConstant(100, 100*time.Millisecond))
		if c := checkIdentity(t, rec, 10); c.Completed != 10 {
			t.Errorf("%s: counts %+v, kinds %v: want 10 completed", cl.test, c, rec.ErrorKinds())
		}
	}
}

// TestConnectionCloseHeader: a run whose request says Connection: close
// sends it as given and uses a connection per request, on both paths.
func TestConnectionCloseHeader(t *testing.T) {
	forClients(t, openClients, func(t *testing.T, cl clientCase) {
		var mu sync.Mutex
		conns := map[string]int{}
		var closes int
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			conns[r.RemoteAddr]++
			if r.Close {
				closes++
			}
			mu.Unlock()
			w.Write([]byte("ok"))
		}))
		defer srv.Close()
		rec, _ := runAgainst(t, srv.URL, Config{Lean: cl.lean, Epoll: cl.epoll, Connections: 2, Header: http.Header{"Connection": {"close"}}},
			schedule.NewConstant(100, 200*time.Millisecond))
		if c := checkIdentity(t, rec, 20); c.Completed != 20 {
			t.Errorf("counts %+v", c)
		}
		mu.Lock()
		defer mu.Unlock()
		if len(conns) != 20 || closes != 20 {
			t.Errorf("20 requests with Connection: close came on %d connections, %d said close", len(conns), closes)
		}
	})
}
