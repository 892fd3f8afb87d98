package engine

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/openload/openload/internal/rawtcp"
	"github.com/openload/openload/internal/recorder"
	"github.com/openload/openload/result"
	"github.com/openload/openload/schedule"
)

func TestMain(m *testing.M) {
	if os.Getenv(sseChildEnv) != "" {
		sseChild() // BenchmarkStreamEvents's server (streambench_test.go)
		return
	}
	goleak.VerifyTestMain(m)
}

func mustURL(t testing.TB, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func runAgainst(t *testing.T, rawURL string, cfg Config, s schedule.Schedule) (*recorder.Recorder, Stats) {
	t.Helper()
	cfg.URL = mustURL(t, rawURL)
	if cfg.Method == "" {
		cfg.Method = http.MethodGet
	}
	if cfg.Connections == 0 {
		cfg.Connections = 16
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = 5 * time.Second
	}
	if cfg.Drain == 0 {
		cfg.Drain = 2 * time.Second
	}
	rec := recorder.New(nil)
	stats, err := Run(context.Background(), cfg, s, rec)
	if err != nil {
		t.Fatal(err)
	}
	return rec, stats
}

// client is one of the engine's HTTP/1.1 clients, as Config chooses it.
type clientCase struct {
	test        string // the subtest's name
	name        string // its Stats.Client
	lean, epoll bool   // Config.Lean, Config.Epoll
}

var (
	// openClients are the clients of an open run: net/http's transport,
	// the lean client (lean.go) and the lean client driven by one event
	// loop (epoll_linux.go).
	openClients = []clientCase{{"net-http", ClientNetHTTP, false, false}, {"lean", ClientLean, true, false}, {"epoll", epollClient, true, true}}
	// closedClients are those of a closed run, which has no event loop.
	closedClients = openClients[:2]
)

// forClients runs test with each of cs: they must keep the same
// accounting.
func forClients(t *testing.T, cs []clientCase, test func(t *testing.T, cl clientCase)) {
	for _, cl := range cs {
		t.Run(cl.test, func(t *testing.T) { test(t, cl) })
	}
}

// hangingServer returns a server that never answers; its requests end
// when the client gives up or at the test's end.
func hangingServer(t *testing.T) *httptest.Server {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(func() {
		close(release)
		srv.Close()
	})
	return srv
}

// checkIdentity asserts the accounting identity against the schedule count.
func checkIdentity(t *testing.T, rec *recorder.Recorder, want int64) result.Counts {
	t.Helper()
	c := rec.Counts()
	if c.Scheduled != want {
		t.Errorf("scheduled %d, want %d", c.Scheduled, want)
	}
	if !c.Balanced() {
		t.Errorf("identity broken: %+v", c)
	}
	if c.Sent > c.Scheduled {
		t.Errorf("sent %d > scheduled %d", c.Sent, c.Scheduled)
	}
	if n := rec.Response.TotalCount(); n != want {
		t.Errorf("response histogram holds %d values, want %d (every request)", n, want)
	}
	return c
}

func TestOpenModelCompletes(t *testing.T) {
	forClients(t, openClients, func(t *testing.T, cl clientCase) {
		var mu sync.Mutex
		var methods []string
		var bodies int
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			methods = append(methods, r.Method+" "+r.Header.Get("X-Test"))
			if r.ContentLength == 5 {
				bodies++
			}
			mu.Unlock()
			w.Write([]byte("ok"))
		}))
		defer srv.Close()
		rec, stats := runAgainst(t, srv.URL, Config{
			Lean:   cl.lean,
			Epoll:  cl.epoll,
			Method: http.MethodPost,
			Header: http.Header{"X-Test": {"yes"}},
			Body:   []byte("hello"),
		}, schedule.NewConstant(200, 500*time.Millisecond))
		c := checkIdentity(t, rec, 100)
		if c.Completed != 100 || c.Sent != 100 {
			t.Errorf("counts %+v, want 100 sent and completed", c)
		}
		if got := rec.StatusCodes()[200]; got != 100 {
			t.Errorf("200s: %d", got)
		}
		if stats.LimitWaited != 0 {
			t.Errorf("limit waited %d with 16 connections for a fast server", stats.LimitWaited)
		}
		if stats.Client != cl.name {
			t.Errorf("client %q, want %q", stats.Client, cl.name)
		}
		mu.Lock()
		defer mu.Unlock()
		if len(methods) != 100 || methods[0] != "POST yes" || bodies != 100 {
			t.Errorf("server saw %d requests (first %q), %d with the body", len(methods), methods[0], bodies)
		}
	})
}

func TestRefusedConnectionsAccounted(t *testing.T) {
	forClients(t, openClients, func(t *testing.T, cl clientCase) {
		addr, release, err := rawtcp.RefusedAddr()
		if err != nil {
			t.Fatal(err)
		}
		defer release()
		rec, _ := runAgainst(t, "http://"+addr+"/", Config{Lean: cl.lean, Epoll: cl.epoll}, schedule.NewConstant(100, 300*time.Millisecond))
		c := checkIdentity(t, rec, 30)
		if c.Errors != 30 {
			t.Errorf("errors %d, want 30 (counts %+v)", c.Errors, c)
		}
		if got := rec.ErrorKinds()["refused"]; got != 30 {
			t.Errorf("refused %d, want 30: %v", got, rec.ErrorKinds())
		}
	})
}

func TestTimeoutsAccounted(t *testing.T) {
	forClients(t, openClients, func(t *testing.T, cl clientCase) {
		srv := hangingServer(t)
		rec, _ := runAgainst(t, srv.URL, Config{Lean: cl.lean, Epoll: cl.epoll, Timeout: 100 * time.Millisecond}, schedule.NewConstant(50, 200*time.Millisecond))
		c := checkIdentity(t, rec, 10)
		if c.Timeouts != 10 {
			t.Errorf("timeouts %d, want 10 (counts %+v)", c.Timeouts, c)
		}
		if rec.Censored() != 10 {
			t.Errorf("censored %d, want 10", rec.Censored())
		}
		// A timed-out request waited at least the timeout: its response time is
		// recorded at its elapsed time, a lower bound, never dropped.
		if min := rec.Response.Min(); min < 100_000 {
			t.Errorf("smallest response %d µs, want ≥ the 100 ms timeout", min)
		}
	})
}

func TestUnfinishedAtDrain(t *testing.T) {
	forClients(t, openClients, func(t *testing.T, cl clientCase) {
		srv := hangingServer(t)
		// 2 connections, 20 requests, a server that never answers and a drain of
		// 100 ms: 2 are in flight when the drain expires, 18 never leave.
		rec, stats := runAgainst(t, srv.URL, Config{Lean: cl.lean, Epoll: cl.epoll, Connections: 2, Timeout: time.Minute, Drain: 100 * time.Millisecond},
			schedule.NewConstant(100, 200*time.Millisecond))
		c := checkIdentity(t, rec, 20)
		if c.Unfinished != 20 || c.Sent != 2 {
			t.Errorf("counts %+v, want 20 unfinished of which 2 sent", c)
		}
		if stats.LimitWaited == 0 {
			t.Error("the connection limit bound but was not reported")
		}
		if stats.MaxInFlight != 2 {
			t.Errorf("max in flight %d, want 2", stats.MaxInFlight)
		}
	})
}

func TestResetClassified(t *testing.T) {
	forClients(t, openClients, func(t *testing.T, cl clientCase) {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			hj, ok := w.(http.Hijacker)
			if !ok {
				t.Error("no hijacker")
				return
			}
			conn, _, err := hj.Hijack()
			if err != nil {
				return
			}
			if tc, ok := conn.(*net.TCPConn); ok {
				tc.SetLinger(0) // RST instead of FIN
			}
			conn.Close()
		}))
		defer srv.Close()
		rec, _ := runAgainst(t, srv.URL, Config{Lean: cl.lean, Epoll: cl.epoll}, schedule.NewConstant(50, 200*time.Millisecond))
		c := checkIdentity(t, rec, 10)
		if c.Errors != 10 || rec.ErrorKinds()["reset"] != 10 {
			t.Errorf("counts %+v kinds %v, want 10 resets", c, rec.ErrorKinds())
		}
	})
}

// TestConnectionLimitIsSendDelay: with one connection and a server that
// takes 20 ms, requests due every 5 ms queue inside openload. That wait must
// show as send delay while service time stays at the server's 20 ms.
func TestConnectionLimitIsSendDelay(t *testing.T) {
	forClients(t, openClients, func(t *testing.T, cl clientCase) {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			time.Sleep(20 * time.Millisecond)
		}))
		defer srv.Close()
		rec, stats := runAgainst(t, srv.URL, Config{Lean: cl.lean, Epoll: cl.epoll, Connections: 1}, schedule.NewConstant(200, 200*time.Millisecond))
		c := checkIdentity(t, rec, 40)
		if c.Completed != 40 {
			t.Fatalf("counts %+v", c)
		}
		if stats.LimitWaited == 0 || stats.MaxInFlight != 1 {
			t.Errorf("limit waited %d, max in flight %d", stats.LimitWaited, stats.MaxInFlight)
		}
		// 40 requests through one 20 ms connection take ≥ 800 ms, so the last
		// one, due at 195 ms, waited ≥ 585 ms before it was sent. Service time
		// is one server call each: its max is far below the send delay's.
		sd, svc := rec.SendDelay.Max(), rec.Service.ValueAtQuantile(50)
		if sd < 500_000 {
			t.Errorf("max send delay %d µs, want ≥ 500 ms", sd)
		}
		if svc < 20_000 || svc > sd/4 {
			t.Errorf("service p50 %d µs: want ≥ 20 ms and far below the send delay %d µs", svc, sd)
		}
	})
}

func TestCancelStopsScheduling(t *testing.T) {
	forClients(t, openClients, func(t *testing.T, cl clientCase) {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
		defer srv.Close()
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(150*time.Millisecond, cancel)
		rec := recorder.New(nil)
		stats, err := Run(ctx, Config{Lean: cl.lean, Epoll: cl.epoll, URL: mustURL(t, srv.URL), Method: "GET", Connections: 4, Timeout: time.Second, Drain: time.Second},
			schedule.NewConstant(100, time.Minute), rec)
		if err != nil {
			t.Fatal(err)
		}
		c := rec.Counts()
		if !stats.Interrupted {
			t.Error("not marked interrupted")
		}
		if c.Scheduled == 0 || c.Scheduled >= 6000 || !c.Balanced() {
			t.Errorf("counts %+v after a cancel at 150 ms of a 60 s run", c)
		}
	})
}

func TestRunRejectsBadConfig(t *testing.T) {
	rec := recorder.New(nil)
	u := mustURL(t, "http://127.0.0.1:1/")
	for _, c := range []struct {
		cfg  Config
		want string
	}{
		{Config{URL: u, Connections: 0, Timeout: time.Second}, "engine: Connections must be between 1 and 100000, got 0"},
		{Config{URL: u, Connections: 1}, "engine: Timeout must be > 0, got 0s"},
		{Config{Connections: 1, Timeout: time.Second}, "engine: no URL to send to"},
	} {
		if _, err := Run(context.Background(), c.cfg, schedule.NewConstant(1, time.Second), rec); err == nil || err.Error() != c.want {
			t.Errorf("%+v: %v, want %s", c.cfg, err, c.want)
		}
	}
}
