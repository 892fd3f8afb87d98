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
	"github.com/openload/openload/recorder"
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
		var got [2]recorder.Counts
		var statuses [2]map[int]int64
		var conns [2]int
		for i, lean := range []bool{false, true} {
			cs := &connServer{conns: map[string]int{}}
			srv := httptest.NewServer(cs)
			rec, _ := runAgainst(t, srv.URL+path, Config{
				Lean:        lean,
				Connections: 4,
				Method:      http.MethodPost,
				Header:      http.Header{"X-Test": {"yes"}},
				Body:        []byte("hello"),
				StampHeader: "X-Stamp",
			}, schedule.NewConstant(200, 250*time.Millisecond))
			srv.Close()
			got[i] = checkIdentity(t, rec, 50)
			statuses[i] = rec.StatusCodes()
			cs.mu.Lock()
			conns[i] = len(cs.conns)
			if len(cs.bad) > 0 {
				t.Errorf("%s lean=%v: %d requests without the header or body, first %q", path, lean, len(cs.bad), cs.bad[0])
			}
			cs.mu.Unlock()
		}
		if got[0] != got[1] {
			t.Errorf("%s: counts net/http %+v, lean %+v", path, got[0], got[1])
		}
		for code, n := range statuses[0] {
			if statuses[1][code] != n {
				t.Errorf("%s: status %d ×%d with net/http, ×%d on the lean client", path, code, n, statuses[1][code])
			}
		}
		switch path {
		case "/close":
			if conns[1] != 50 {
				t.Errorf("/close: lean client used %d connections for 50 requests answered Connection: close", conns[1])
			}
		default:
			if conns[1] > 4 {
				t.Errorf("%s: lean client used %d connections with 4 workers: keep-alive not reused", path, conns[1])
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
	rec, _ := runAgainst(t, "http://"+srv.Addr()+"/", Config{Lean: true, Connections: 1}, schedule.NewConstant(100, 100*time.Millisecond))
	if c := checkIdentity(t, rec, 10); c.Completed != 10 {
		t.Errorf("counts %+v, kinds %v: want 10 completed", c, rec.ErrorKinds())
	}
}

// TestConnectionCloseHeader: a run whose request says Connection: close
// sends it as given and uses a connection per request, on both paths.
func TestConnectionCloseHeader(t *testing.T) {
	bothClients(t, func(t *testing.T, lean bool) {
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
		rec, _ := runAgainst(t, srv.URL, Config{Lean: lean, Connections: 2, Header: http.Header{"Connection": {"close"}}},
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
