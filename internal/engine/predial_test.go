package engine

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/openload/openload/internal/recorder"
	"github.com/openload/openload/schedule"
)

// TestPredialBeforeTheFirstArrival: the schedule has two arrivals, at 0
// and 5 s, and the run is stopped once the first is answered, so that only
// one request is ever sent. The lean clients opened both connections the
// run could use before its clock started, and the one request went out on
// one of them: the server saw two connections and no third. net/http
// opens nothing in advance: one connection.
func TestPredialBeforeTheFirstArrival(t *testing.T) {
	forClients(t, openClients, func(t *testing.T, cl clientCase) {
		var conns atomic.Int64
		answered := make(chan struct{}, 1)
		srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			select {
			case answered <- struct{}{}:
			default:
			}
		}))
		srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
			if s == http.StateNew {
				conns.Add(1)
			}
		}
		srv.Start()
		defer srv.Close()
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		go func() {
			<-answered
			cancel()
		}()
		rec := recorder.New(nil)
		stats, err := Run(ctx, Config{URL: mustURL(t, srv.URL), Method: http.MethodGet, Lean: cl.lean, Epoll: cl.epoll,
			Connections: 2, Timeout: 5 * time.Second, Drain: 5 * time.Second}, schedule.NewConstant(0.2, 10*time.Second), rec)
		if err != nil {
			t.Fatal(err)
		}
		if c := rec.Counts(); c.Completed != 1 || c.Scheduled != 1 || !stats.Interrupted {
			t.Fatalf("counts %+v interrupted %v; want the first request alone", c, stats.Interrupted)
		}
		want, predial := int64(2), Predial{Wanted: 2, Opened: 2}
		if cl.name == ClientNetHTTP {
			want, predial = 1, Predial{}
		}
		if p := stats.Predial; p.Wanted != predial.Wanted || p.Opened != predial.Opened || p.Err != nil {
			t.Errorf("predial %+v, want %d of %d", p, predial.Opened, predial.Wanted)
		}
		// The server accepts what is queued in its own time: wait for it
		// (bounded), then make sure no other connection came.
		for deadline := time.Now().Add(5 * time.Second); conns.Load() < want && time.Now().Before(deadline); {
			time.Sleep(5 * time.Millisecond)
		}
		srv.Close()
		if n := conns.Load(); n != want {
			t.Errorf("the server saw %d connections, want %d", n, want)
		}
	})
}

// TestPredialGivesUpAtTheFirstError: against a port that refuses, the
// pre-dial stops at the first refusal and the requests are refused on
// their own, counted as before.
func TestPredialGivesUpAtTheFirstError(t *testing.T) {
	forClients(t, openClients[1:], func(t *testing.T, cl clientCase) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		ln.Close()
		rec, stats := runAgainst(t, "http://"+addr+"/", Config{Lean: cl.lean, Epoll: cl.epoll, Connections: 4}, schedule.NewConstant(100, 100*time.Millisecond))
		if p := stats.Predial; p.Wanted != 4 || p.Opened != 0 || p.Err == nil {
			t.Errorf("predial %+v, want 0 of 4 and the refusal", p)
		}
		if c := checkIdentity(t, rec, 10); c.Errors != 10 {
			t.Errorf("counts %+v, want 10 refused", c)
		}
	})
}

func TestPredialCount(t *testing.T) {
	for _, tc := range []struct {
		conns    int
		requests float64
		want     int
	}{{64, 1600, 64}, {64, 10, 10}, {64, 9.5, 10}, {64, 0, 0}, {1, 1e9, 1}} {
		if got := predialCount(tc.conns, tc.requests); got != tc.want {
			t.Errorf("predialCount(%d, %v) = %d, want %d", tc.conns, tc.requests, got, tc.want)
		}
	}
}

// TestPredialClosedBeforeTheStart: a server that closes a new connection
// that sent nothing within 300 ms (Go's ReadHeaderTimeout, as the stub's
// 10 s) closes every pre-dialled connection while the run waits for its
// shared start. No request may be written on one of those: each client
// sees the close first and dials anew, so every request is answered.
// (With the epoll client such requests failed as resets: 17 of 2,000 in
// a run started 14 s ahead against the stub.)
func TestPredialClosedBeforeTheStart(t *testing.T) {
	forClients(t, openClients, func(t *testing.T, cl clientCase) {
		srv := httptest.NewUnstartedServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
		srv.Config.ReadHeaderTimeout = 300 * time.Millisecond
		srv.Start()
		defer srv.Close()
		rec := recorder.New(nil)
		// 1.2 s ahead: inside predialLead, so the dials are made at once
		// and sit idle past the server's timeout.
		at := time.Now().Add(1200 * time.Millisecond)
		if _, err := Run(context.Background(), Config{URL: mustURL(t, srv.URL), Method: http.MethodGet, Lean: cl.lean, Epoll: cl.epoll,
			Connections: 8, Timeout: 5 * time.Second, Drain: 5 * time.Second, StartAt: at}, schedule.NewConstant(200, 200*time.Millisecond), rec); err != nil {
			t.Fatal(err)
		}
		if c := rec.Counts(); c.Completed != 40 || c.Errors != 0 {
			t.Errorf("counts %+v; want all 40 completed", c)
		}
	})
}
