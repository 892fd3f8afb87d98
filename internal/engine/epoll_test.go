package engine

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/openload/openload/internal/rawtcp"
	"github.com/openload/openload/internal/recorder"
	"github.com/openload/openload/internal/retry"
	"github.com/openload/openload/result"
	"github.com/openload/openload/schedule"
)

// The cases where the event loop (epoll_linux.go) leaves its fast path: a
// request the socket takes in parts, responses it lends to a goroutine
// (informational answers, heads over its 4 KiB buffer, chunked bodies)
// and the timeout and drain of a lent exchange. Each runs on every client
// of an open run, which must agree.

// rawAnswers serves every connection with handle, after reading each
// request head; it is closed when the test ends.
func rawAnswers(t *testing.T, handle func(c net.Conn, br *bufio.Reader, done <-chan struct{}) bool) string {
	t.Helper()
	srv, err := rawtcp.Serve(func(c net.Conn, done <-chan struct{}) {
		br := bufio.NewReader(c)
		for rawtcp.ReadRequest(br) && handle(c, br, done) {
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	return "http://" + srv.Addr() + "/"
}

func TestEpollLargeRequestBody(t *testing.T) {
	// 4 MiB bodies fill the socket's send buffer: the loop writes each
	// request in parts, as epoll says there is room.
	body := bytes.Repeat([]byte("0123456789abcdef"), 1<<18)
	forClients(t, openClients, func(t *testing.T, cl clientCase) {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			n, _ := io.Copy(io.Discard, r.Body)
			if n != int64(len(body)) {
				w.WriteHeader(http.StatusBadRequest)
			}
		}))
		defer srv.Close()
		rec, stats := runAgainst(t, srv.URL, Config{Lean: cl.lean, Epoll: cl.epoll, Connections: 2, Method: http.MethodPost, Body: body},
			schedule.NewConstant(50, 200*time.Millisecond))
		if c := checkIdentity(t, rec, 10); c.Completed != 10 || rec.StatusCodes()[200] != 10 {
			t.Errorf("counts %+v, statuses %v: want 10 completed with 200", c, rec.StatusCodes())
		}
		if stats.Client != cl.name {
			t.Errorf("client %q, want %q", stats.Client, cl.name)
		}
	})
}

func TestEpollLentResponses(t *testing.T) {
	bigHeader := "X-Big: " + strings.Repeat("y", 6000) + "\r\n"
	for _, c := range []struct {
		name, answer string
	}{
		{"early hints", "HTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"},
		{"head over 4 KiB", "HTTP/1.1 200 OK\r\n" + bigHeader + "Content-Length: 2\r\n\r\nok"},
		{"chunked", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n"},
		{"no content", "HTTP/1.1 204 No Content\r\n\r\n"},
		// Bare line feeds, then a CRLF blank line: http.ReadResponse reads
		// it, so the loop must see the head as whole (h1.HeadComplete).
		{"bare line feeds", "HTTP/1.1 200 OK\nContent-Length: 2\n\r\nok"},
	} {
		t.Run(c.name, func(t *testing.T) {
			forClients(t, openClients, func(t *testing.T, cl clientCase) {
				u := rawAnswers(t, func(nc net.Conn, _ *bufio.Reader, _ <-chan struct{}) bool {
					_, err := io.WriteString(nc, c.answer)
					return err == nil
				})
				rec, _ := runAgainst(t, u, Config{Lean: cl.lean, Epoll: cl.epoll, Connections: 2}, schedule.NewConstant(100, 200*time.Millisecond))
				if n := checkIdentity(t, rec, 20); n.Completed != 20 {
					t.Errorf("counts %+v, kinds %v: want 20 completed", n, rec.ErrorKinds())
				}
			})
		})
	}
}

// stalledChunks answers with a chunked head and one chunk, then says
// nothing more until the server closes.
func stalledChunks(nc net.Conn, _ *bufio.Reader, done <-chan struct{}) bool {
	io.WriteString(nc, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n")
	<-done
	return false
}

func TestEpollLentTimeout(t *testing.T) {
	forClients(t, openClients, func(t *testing.T, cl clientCase) {
		u := rawAnswers(t, stalledChunks)
		rec, _ := runAgainst(t, u, Config{Lean: cl.lean, Epoll: cl.epoll, Connections: 4, Timeout: 100 * time.Millisecond},
			schedule.NewConstant(100, 40*time.Millisecond))
		if c := checkIdentity(t, rec, 4); c.Timeouts != 4 {
			t.Errorf("counts %+v, kinds %v: want 4 timeouts", c, rec.ErrorKinds())
		}
		// The head came before the timeout: its status is kept apart from
		// the completed responses' (recorder/wire.go).
		if got := rec.FailedStatus()["200"]; got != 4 || len(rec.StatusCodes()) != 0 {
			t.Errorf("failed status 200 ×%d, statuses %v: want 4 and none", got, rec.StatusCodes())
		}
	})
}

func TestEpollLentDrain(t *testing.T) {
	forClients(t, openClients, func(t *testing.T, cl clientCase) {
		u := rawAnswers(t, stalledChunks)
		rec, _ := runAgainst(t, u, Config{Lean: cl.lean, Epoll: cl.epoll, Connections: 4, Timeout: time.Minute, Drain: 100 * time.Millisecond},
			schedule.NewConstant(100, 40*time.Millisecond))
		c := checkIdentity(t, rec, 4)
		if c.Unfinished != 4 || c.Sent != 4 {
			t.Errorf("counts %+v: want 4 sent, unfinished", c)
		}
		if n := rec.ErrorKinds()[recorder.KindUnfinished.String()]; n != 4 {
			t.Errorf("kinds %v: want 4 unfinished", rec.ErrorKinds())
		}
	})
}

// TestEpollServerCloses: servers that close the connection before their
// response is whole, or after bytes nobody asked for. Every client must
// record the same outcomes.
func TestEpollServerCloses(t *testing.T) {
	for _, c := range []struct {
		name, answer string
		completed    int64  // of 10; the others fail
		status       int64  // responses whose status came (completed or not)
		kind         string // of the failures
		clients      []clientCase
	}{
		{"before answering", "", 0, 0, "reset", openClients},
		// A head cut short is a reset, not a malformed response.
		{"in the head", "HTTP/1.1 200 OK\r\nContent-Le", 0, 0, "reset", openClients},
		{"in the body", "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc", 0, 10, "reset", openClients},
		// net/http logs the extra bytes ("Unsolicited response"): the lean
		// clients only.
		{"after bytes past the body", "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokEXTRA", 10, 10, "", openClients[1:]},
	} {
		t.Run(c.name, func(t *testing.T) {
			var first result.Counts
			forClients(t, c.clients, func(t *testing.T, cl clientCase) {
				u := rawAnswers(t, func(nc net.Conn, _ *bufio.Reader, _ <-chan struct{}) bool {
					io.WriteString(nc, c.answer)
					return false // close
				})
				rec, _ := runAgainst(t, u, Config{Lean: cl.lean, Epoll: cl.epoll, Connections: 2}, schedule.NewConstant(100, 100*time.Millisecond))
				n := checkIdentity(t, rec, 10)
				if n.Completed != c.completed || n.Errors != 10-c.completed {
					t.Errorf("counts %+v, kinds %v: want %d completed, the rest failed", n, rec.ErrorKinds(), c.completed)
				}
				if got := rec.StatusCodes()[200] + rec.FailedStatus()["200"]; got != c.status || rec.StatusCodes()[200] != c.completed {
					t.Errorf("status 200 ×%d of which %d completed, want %d and %d", got, rec.StatusCodes()[200], c.status, c.completed)
				}
				if k := rec.ErrorKinds(); n.Errors > 0 && k[c.kind] != n.Errors {
					t.Errorf("kinds %v: want every failure %s", k, c.kind)
				}
				if first == (result.Counts{}) {
					first = n
				} else if n != first {
					t.Errorf("counts %+v, %s had %+v", n, c.clients[0].test, first)
				}
			})
		})
	}
}

// TestEpollAppliesWhereItCan: the event loop drives open runs, reading
// class headers and Server-Timing too, but not HEAD or retries; a run
// that needs them keeps the lean client with a goroutine per connection,
// and says so.
func TestEpollAppliesWhereItCan(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Class", "a")
		w.Write([]byte("ok"))
	}))
	defer srv.Close()
	for _, c := range []struct {
		name string
		cfg  Config
		want string
	}{
		{"plain", Config{}, epollClient},
		{"class header", Config{ClassHeaders: []string{"X-Class"}}, epollClient},
		{"server timing", Config{ServerTiming: true}, epollClient},
		{"HEAD", Config{Method: http.MethodHead}, ClientLean},
		{"retries", Config{Retry: retry.Policy{On: on429(t), Retries: 1, Jitter: retry.JitterNone, Budget: 1, MinPerSec: 1, Window: time.Second}}, ClientLean},
	} {
		cfg := c.cfg
		cfg.Lean, cfg.Epoll = true, true
		rec, stats := runAgainst(t, srv.URL, cfg, schedule.NewConstant(100, 100*time.Millisecond))
		if n := checkIdentity(t, rec, 10); n.Completed != 10 {
			t.Errorf("%s: counts %+v", c.name, n)
		}
		if stats.Client != c.want {
			t.Errorf("%s: client %q, want %q", c.name, stats.Client, c.want)
		}
		// Self-monitoring says how busy the event loop was, where there
		// was one.
		g := stats.Generator
		if loop := stats.Client == ClientEpoll; loop != (g.LoopBusy > 0 && g.LoopBusy <= 1) || g.PeakLoopBusy > 1 {
			t.Errorf("%s: client %s, loop busy %v (busiest second %v)", c.name, stats.Client, g.LoopBusy, g.PeakLoopBusy)
		}
		if slice := time.Duration(g.LoopSliceUS) * time.Microsecond; slice != 0 && (stats.Client != ClientEpoll || slice != loopSlice) {
			t.Errorf("%s: client %s, loop slice %v", c.name, stats.Client, slice)
		}
	}
}

// TestTimeoutFreesConnectionForWaiting: one connection, a server that never
// answers and three arrivals due at once. Each timeout frees the connection
// for the next arrival at once; none may wait for an event that never
// comes (the loop once slept until the drain expired, and the last two
// requests ended unfinished instead of timed out).
func TestTimeoutFreesConnectionForWaiting(t *testing.T) {
	forClients(t, openClients, func(t *testing.T, cl clientCase) {
		u := rawAnswers(t, func(_ net.Conn, _ *bufio.Reader, done <-chan struct{}) bool {
			<-done
			return false
		})
		rec, _ := runAgainst(t, u, Config{Lean: cl.lean, Epoll: cl.epoll, Connections: 1, Timeout: 50 * time.Millisecond, Drain: time.Minute},
			schedule.NewConstant(1000, 3*time.Millisecond))
		if c := checkIdentity(t, rec, 3); c.Timeouts != 3 {
			t.Errorf("counts %+v, kinds %v: want 3 timeouts", c, rec.ErrorKinds())
		}
	})
}

// TestIdleCloseBeforeUse: a server that closes a connection on which no
// request came within 20 ms of its accept, and answers the others after
// 100 ms. Of the two connections opened before the start, the first
// request takes one; the server closes the other, and the second request,
// due while the first is still out, must see that and dial anew, without
// an error and without writing onto the closed connection. (The event loop
// once left a slot whose idle connection the server had closed marked
// idle, and the request was written to no descriptor: "write: bad file
// descriptor", an error of kind other.)
func TestIdleCloseBeforeUse(t *testing.T) {
	forClients(t, openClients, func(t *testing.T, cl clientCase) {
		var heads atomic.Int64
		srv, err := rawtcp.Serve(func(c net.Conn, done <-chan struct{}) {
			br := bufio.NewReader(c)
			c.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
			for rawtcp.ReadRequest(br) {
				c.SetReadDeadline(time.Time{})
				heads.Add(1)
				select {
				case <-time.After(100 * time.Millisecond):
				case <-done:
					return
				}
				if _, err := io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"); err != nil {
					return
				}
			}
		})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(srv.Close)
		rec, stats := runAgainst(t, "http://"+srv.Addr()+"/", Config{Lean: cl.lean, Epoll: cl.epoll, Connections: 2},
			schedule.NewConstant(1000.0/60, 2*60*time.Millisecond))
		c := checkIdentity(t, rec, 2)
		if c.Completed != 2 {
			t.Errorf("counts %+v, kinds %v: want 2 completed", c, rec.ErrorKinds())
		}
		if w := rec.Wire(); w.Attempts != heads.Load() || w.Resends != 0 {
			t.Errorf("wire %+v, the server read %d request heads", w, heads.Load())
		}
		if cl.lean && stats.Predial.Opened != 2 {
			t.Errorf("pre-dialled %d connections, want 2", stats.Predial.Opened)
		}
	})
}
