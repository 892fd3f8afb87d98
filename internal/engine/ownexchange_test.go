package engine

import (
	"bufio"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/openload/openload/internal/rawtcp"
	"github.com/openload/openload/internal/recorder"
	"github.com/openload/openload/result"
	"github.com/openload/openload/schedule"
)

// dyingServer answers as the stub does (a class header, three
// Server-Timing metrics) until it answered after requests; then it stops
// listening and closes every connection, idle between two requests, as a
// server stopped gracefully mid-run does (nginx -s quit).
type dyingServer struct {
	*rawtcp.Server
	URL    string
	read   atomic.Int64
	closed chan struct{} // closed once the server closed
}

func newDyingServer(t *testing.T, after int64) *dyingServer {
	t.Helper()
	d := &dyingServer{closed: make(chan struct{})}
	var once sync.Once
	ready := make(chan struct{}) // d.Server is set
	stop := func() { <-ready; d.Server.Close(); close(d.closed) }
	srv, err := rawtcp.Serve(func(c net.Conn, done <-chan struct{}) {
		br := bufio.NewReader(c)
		for rawtcp.ReadRequest(br) {
			n := d.read.Add(1)
			if _, err := c.Write(stubResponse); err != nil || n >= after {
				// Close returns once every handler did: this one too.
				once.Do(func() { go stop() })
				<-done
				return
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	d.Server, d.URL = srv, "http://"+srv.Addr()+"/"
	close(ready)
	t.Cleanup(func() {
		once.Do(stop)
		<-d.closed
	})
	return d
}

// TestRecordsOwnExchangeAfterServerDies: a server stopped mid-run. The
// requests refused after it stopped got no head: none may carry a
// status, a class value or a Server-Timing metric of the exchange its
// connection made before. (The event loop's slot kept them, and reported
// "partial 200" for every refused request.) One connection, so that the
// slot that served is the one that dials.
func TestRecordsOwnExchangeAfterServerDies(t *testing.T) {
	forClients(t, openClients, func(t *testing.T, cl clientCase) {
		srv := newDyingServer(t, 60)
		cfg := Config{URL: mustURL(t, srv.URL), Method: http.MethodGet, Connections: 1, Timeout: 2 * time.Second, Drain: 2 * time.Second,
			Lean: cl.lean, Epoll: cl.epoll, ClassHeaders: []string{"X-Stub-Source"}, ServerTiming: true}
		rec := recorder.New(nil)
		rec.TrackClasses(cfg.ClassHeaders)
		stats, err := Run(t.Context(), cfg, schedule.NewConstant(200, 800*time.Millisecond), rec)
		if err != nil {
			t.Fatal(err)
		}
		if stats.Client != cl.name {
			t.Fatalf("client %s, want %s", stats.Client, cl.name)
		}
		c := checkIdentity(t, rec, 160)
		if c.Completed != 60 || c.Errors != 100 || rec.ErrorKinds()["refused"] != 100 {
			t.Errorf("counts %+v, kinds %v: want the 60 answered completed, the 100 after the server stopped refused", c, rec.ErrorKinds())
		}
		if fs := rec.FailedStatus(); len(fs) != 0 {
			t.Errorf("failed status %v: requests that got no head carry a status", fs)
		}
		if s := rec.StatusCodes(); len(s) != 1 || s[200] != c.Completed {
			t.Errorf("statuses %v, want 200 ×%d", s, c.Completed)
		}
		var res result.Result
		if err := rec.Fill(&res); err != nil {
			t.Fatal(err)
		}
		if m := res.Classes[0].Counts(); m["model"] != c.Completed {
			t.Errorf("class values %v: want model ×%d, the answered requests only", m, c.Completed)
		}
		for _, m := range res.ServerTiming {
			if m.Percentiles.Count != c.Completed {
				t.Errorf("Server-Timing %s ×%d, want ×%d, the answered requests only", m.Name, m.Percentiles.Count, c.Completed)
			}
		}
		if w := rec.Wire(); w.Attempts != srv.read.Load() {
			t.Errorf("wire %+v: %d attempts, the server read %d", w, w.Attempts, srv.read.Load())
		}
	})
}
