package engine

import (
	"fmt"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/openload/openload/internal/recorder"
	"github.com/openload/openload/schedule"
)

// hungAddr returns the address of a loopback socket that listens but never
// accepts, with its accept queue full: Linux drops the SYN of a connect to
// a listener whose queue is full, so such a connect hangs, as one to a
// dead host does, until the dialer gives up.
func hungAddr(t *testing.T) string {
	t.Helper()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Close(fd) })
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	// A backlog of 0 queues one connection; the one below fills it.
	if err := syscall.Listen(fd, 0); err != nil {
		t.Fatal(err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		t.Fatal(err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", sa.(*syscall.SockaddrInet4).Port)
	filler, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		t.Fatalf("the connection that fills the accept queue: %v", err)
	}
	t.Cleanup(func() { filler.Close() })
	return addr
}

// TestDialTimeout: against a host whose connects hang, every client (the
// event loop, the lean client and its pre-dial, net/http's transport, the
// HTTP/2 pool) gives up each connect after DialTimeout, far inside the
// request's Timeout, and counts the request as an error of kind timeout
// (no connection), not as a timed-out request.
func TestDialTimeout(t *testing.T) {
	const dial, timeout = 100 * time.Millisecond, 5 * time.Second
	cs := append(openClients, clientCase{"h2c", ClientNetHTTP, false, false})
	forClients(t, cs, func(t *testing.T, cl clientCase) {
		cfg := Config{Lean: cl.lean, Epoll: cl.epoll, Connections: 2, Timeout: timeout, DialTimeout: dial}
		if cl.test == "h2c" {
			cfg.Protocol = H2C
		}
		rec, stats := runAgainst(t, "http://"+hungAddr(t)+"/", cfg, schedule.NewConstant(20, 200*time.Millisecond))
		if stats.Client != cl.name {
			t.Errorf("client %s, want %s", stats.Client, cl.name)
		}
		c := checkIdentity(t, rec, 4)
		if c.Errors != 4 || c.Timeouts != 0 || rec.ErrorKinds()[recorder.KindTimeout.String()] != 4 {
			t.Errorf("counts %+v, kinds %v: want 4 errors of kind timeout, no timed-out request", c, rec.ErrorKinds())
		}
		// Each request waited for one dial that hung until DialTimeout
		// (the histogram keeps 3 significant digits), and none until the
		// request's Timeout.
		if lo, hi := rec.Response.Min(), rec.Response.Max(); lo < dial.Microseconds()*999/1000 || hi >= timeout.Microseconds() {
			t.Errorf("response times %d … %d µs: want from the dial timeout %v to below the timeout %v", lo, hi, dial, timeout)
		}
		if cl.lean {
			if p := stats.Predial; p.Opened != 0 || Kind(p.Err) != recorder.KindTimeout || p.Took >= predialBudget {
				t.Errorf("pre-dial %+v: want none opened, a timeout, before its budget %v", p, predialBudget)
			}
		}
	})
}
