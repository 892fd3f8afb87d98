//go:build linux

package engine

import (
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/openload/openload/schedule"
	"golang.org/x/sys/unix"
)

// On its beat a loop reads a response only when it wakes for the next
// arrival, up to one spacing after the response came; done must still be
// when it came (the kernel's stamp). The server answers after hold, so
// with the stamps the median service time is a little over hold; read
// from the clock it is close to the spacing, 8 ms. Half the spacing
// between the two leaves room for a loaded machine either way. The
// second run, with done read from the clock, shows that the loop did read
// late: without it the first would prove nothing. hold is there for a
// loaded machine: a server that answered at once ran, woken by the
// request, on the loop's core before the loop went to sleep, and the loop
// found the answer already in and read it at once (with two busy loops
// beside the test, 4 runs of 5 failed, with three 10 of 10, medians from
// the clock down to 10 µs; with hold, 15 of 15 passed, 2.17–2.40 ms from
// the stamps and 6.86–8.00 ms from the clock). Both loops: HTTP/1.1's
// and HTTP/2's (h2c and over TLS). Not parallel: it sets testClockDone.
func TestBeatDoneFromStamps(t *testing.T) {
	const hold = 2 * time.Millisecond
	answer := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { time.Sleep(hold) })
	srv := httptest.NewUnstartedServer(answer)
	srv.Config.Protocols = new(http.Protocols)
	srv.Config.Protocols.SetHTTP1(true)
	srv.Config.Protocols.SetUnencryptedHTTP2(true)
	srv.Start()
	defer srv.Close()
	tlsSrv := httptest.NewUnstartedServer(answer)
	tlsSrv.EnableHTTP2 = true
	tlsSrv.StartTLS()
	defer tlsSrv.Close()
	const spacing = 8 * time.Millisecond // under rawSleepMax: on the beat
	for _, tc := range []struct {
		name string
		url  string
		cfg  Config
	}{
		{"http1", srv.URL, Config{Lean: true, Epoll: true, Connections: 4}},
		{"h2c", srv.URL, Config{Protocol: H2C, Epoll: true, Connections: 4}},
		{"h2-tls", tlsSrv.URL, Config{Protocol: HTTP2, TLS: tlsTrusting(tlsSrv), Epoll: true, Connections: 4}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			median := func() time.Duration {
				rec, stats := runAgainst(t, tc.url, tc.cfg, schedule.NewConstant(float64(time.Second/spacing), 400*time.Millisecond))
				if stats.Client != ClientEpoll {
					t.Fatalf("client %q, want the event loop", stats.Client)
				}
				if c := checkIdentity(t, rec, 50); c.Completed != 50 {
					t.Fatalf("counts %+v: want 50 completed", c)
				}
				m := time.Duration(rec.Service.ValueAtQuantile(50)) * time.Microsecond
				t.Logf("median service time %v (done from the clock: %v)", m, testClockDone)
				return m
			}
			if m := median(); m >= spacing/2 {
				t.Errorf("median service time %v with the kernel's stamps, want under %v: done is when the loop read", m, spacing/2)
			}
			testClockDone = true
			defer func() { testClockDone = false }()
			if m := median(); m < spacing/2 {
				t.Errorf("median service time %v read from the clock, want %v or more: the loop did not read on its beat", m, spacing/2)
			}
		})
	}
}

// One read may end several streams of an HTTP/2 connection: each is dated
// by that read's stamp. The server answers streams in pairs, both answers
// in one write 2 ms after the pair came; the loop, on its beat (8 ms
// between pairs), reads them later in one read. Both of a pair must have
// the same done, the stamp; from the clock they differ by the time the
// loop took to finish the first (TestBeatPairsDateAlike shows it would
// fail so: with testClockDone set, pairs came apart), and the first
// stream's done must not be the second's read either: done − sent stays
// near the hold, as in TestBeatDoneFromStamps.
func TestBeatPairsDateAlike(t *testing.T) {
	if !h2LoopFields(&Config{Epoll: true, Protocol: H2C}) {
		t.Skip("no HTTP/2 event loop here")
	}
	const hold, spacing, pairs = 2 * time.Millisecond, 8 * time.Millisecond, 25
	run := func() (apart int, median time.Duration) {
		s := newPairingH2(t, hold)
		cfg := Config{Protocol: H2C, Epoll: true, Connections: 4}
		rec, ents := h2Run(t, s.URL, cfg, &bursts{n: 2, total: 2 * pairs, every: spacing})
		if c := checkIdentity(t, rec, 2*pairs); c.Completed != 2*pairs || s.answered.Load() != 2*pairs {
			t.Fatalf("counts %+v, the server answered %d: want %d completed", c, s.answered.Load(), 2*pairs)
		}
		done := map[uint64]time.Duration{}
		for _, e := range ents {
			if d, ok := done[e.Seq^1]; ok && d != e.Done {
				apart++
			}
			done[e.Seq] = e.Done
		}
		median = time.Duration(rec.Service.ValueAtQuantile(50)) * time.Microsecond
		t.Logf("%d pairs of %d with two dones, median service time %v (done from the clock: %v)", apart, pairs, median, testClockDone)
		return apart, median
	}
	if apart, m := run(); apart > 0 || m >= spacing/2 {
		t.Errorf("%d pairs answered in one write had two dones, median service time %v: want none, and under %v", apart, m, spacing/2)
	}
	testClockDone = true
	defer func() { testClockDone = false }()
	if apart, m := run(); apart < pairs/2 || m < spacing/2 {
		t.Errorf("done from the clock: %d pairs with two dones, median service time %v: want %d or more, and %v or more; the test proves nothing", apart, m, pairs/2, spacing/2)
	}
}

// TestHoldStamps: while holdStamps' socket is open, the kernel stamps:
// the first byte a new connection reads after asking for stamps comes
// with one. Without it, the first such connection of a process may read
// unstamped bytes until the kernel's work queue turns stamping on
// (holdStamps), which took a loop off its beat in 2 runs of 56. Another
// process that holds stamping on (a loop of a test running beside this
// one) makes the test pass without the hold: it fails only when the hold
// is broken and nothing else holds the key.
func TestHoldStamps(t *testing.T) {
	h := holdStamps()
	if h == nil {
		t.Fatal("holdStamps: no stamped read within 100 ms")
	}
	defer h.Close()
	ln, err := net.ListenTCP("tcp4", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	for i := range 20 {
		c, err := net.DialTCP("tcp4", nil, ln.Addr().(*net.TCPAddr))
		if err != nil {
			t.Fatal(err)
		}
		s, err := ln.AcceptTCP()
		if err != nil {
			t.Fatal(err)
		}
		rc, err := c.SyscallConn()
		if err != nil {
			t.Fatal(err)
		}
		var serr error
		if err := rc.Control(func(fd uintptr) { serr = askStamps(int(fd)) }); err != nil || serr != nil {
			t.Fatal(err, serr)
		}
		if stamped, err := stampedRead(rc, s); err != nil {
			t.Fatal(err)
		} else if !stamped {
			t.Errorf("connection %d: its first read has no stamp", i)
		}
		c.Close()
		s.Close()
	}
}

// TestTimerfdRearmClears: arming a timerfd that fired and was not read
// makes it unreadable, as the loops rely on (timerFired).
func TestTimerfdRearmClears(t *testing.T) {
	fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	readable := func(msec int) bool {
		p := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		n, err := unix.Poll(p, msec)
		return err == nil && n == 1
	}
	if err := setTimerfd(fd, time.Microsecond); err != nil {
		t.Fatal(err)
	}
	if !readable(1000) {
		t.Fatal("the timerfd did not fire within 1 s")
	}
	if err := setTimerfd(fd, time.Hour); err != nil {
		t.Fatal(err)
	}
	if readable(0) {
		t.Error("armed again, the timerfd is still readable")
	}
}
