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
// when it came (the kernel's stamp). The server's connections log when
// each of their writes began and returned (writeLog), on the test's
// clock, and every record's done must lie within one of those writes:
// the kernel stamps a segment on loopback as the sender's write queues it
// (netif_rx, with net.core.netdev_tstamp_prequeue at its default 1), so
// the stamp is inside the write, whatever the machine's load made of the
// server's hold or of the loop's wake. Read from the clock (the defect:
// done when the loop read), done is the loop's next wake, spacing − hold
// = 6 ms after the write on an idle machine; the second run, with
// testClockDone set, shows that records then fall outside every write:
// without it the first would prove nothing. It asks for a quarter of
// them: a busy machine delays the server's answers towards the loop's
// next wake, and with a CPU hog beside the test the share fell to 24 of
// 50 in 1 run of 10 (37 to 50 in the others). hold is there so that the
// server does not answer, woken by the request, on the loop's core
// before the loop went to sleep (the loop would find the answer in and
// read it at once). Both loops: HTTP/1.1's and HTTP/2's (h2c and over
// TLS). Not parallel: it sets testClockDone.
//
// The test holds the kernel's stamping on (holdStamps) while it runs: an
// HTTP/2 run opens its connections before its loop asks for the hold
// (predialH2, then startBeat), and the server's SETTINGS that came on one
// of them before the kernel turned stamping on takes the loop off the
// beat for the run, reading each answer when it comes, from the clock.
// With a CPU hog beside it that happened in 2 of 10 runs (every record
// of the run without a stamp): the stamped run then depends on how soon
// the loop woke, and the run from the clock cannot show the defect.
func TestBeatDoneFromStamps(t *testing.T) {
	if h := holdStamps(); h != nil {
		defer h.Close()
	}
	const hold = 2 * time.Millisecond
	answer := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { time.Sleep(hold) })
	writes, tlsWrites := &writeLog{}, &writeLog{}
	srv := httptest.NewUnstartedServer(answer)
	srv.Listener = writes.listener(srv.Listener)
	srv.Config.Protocols = new(http.Protocols)
	srv.Config.Protocols.SetHTTP1(true)
	srv.Config.Protocols.SetUnencryptedHTTP2(true)
	srv.Start()
	defer srv.Close()
	tlsSrv := httptest.NewUnstartedServer(answer)
	tlsSrv.Listener = tlsWrites.listener(tlsSrv.Listener) // under TLS: the TCP writes
	tlsSrv.EnableHTTP2 = true
	tlsSrv.StartTLS()
	defer tlsSrv.Close()
	const spacing = 8 * time.Millisecond // under rawSleepMax: on the beat
	for _, tc := range []struct {
		name string
		url  string
		log  *writeLog
		cfg  Config
	}{
		{"http1", srv.URL, writes, Config{Lean: true, Epoll: true, Connections: 4}},
		{"h2c", srv.URL, writes, Config{Protocol: H2C, Epoll: true, Connections: 4}},
		{"h2-tls", tlsSrv.URL, tlsWrites, Config{Protocol: HTTP2, TLS: tlsTrusting(tlsSrv), Epoll: true, Connections: 4}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			outside := func() int {
				got, rec, stats := records(t, tc.url, tc.cfg, schedule.NewConstant(float64(time.Second/spacing), 400*time.Millisecond))
				if stats.Client != ClientEpoll {
					t.Fatalf("client %q, want the event loop", stats.Client)
				}
				if c := checkIdentity(t, rec, 50); c.Completed != 50 || len(got) != 50 {
					t.Fatalf("counts %+v, %d records: want 50 completed", c, len(got))
				}
				n, far := tc.log.outside(t, got, stats.Start, testClockDone)
				t.Logf("%d of 50 dones outside the server's writes, the farthest %v (done from the clock: %v; median service time %v)",
					n, far, testClockDone, time.Duration(rec.Service.ValueAtQuantile(50))*time.Microsecond)
				return n
			}
			if n := outside(); n > 0 {
				t.Errorf("%d of 50 dones with the kernel's stamps lie outside every write of the server (±%v): done is not when the answer came", n, stampSlop)
			}
			testClockDone = true
			defer func() { testClockDone = false }()
			if n := outside(); n < 50/4 {
				t.Errorf("done from the clock: %d of 50 dones outside the server's writes, want %d or more: the loop did not read on its beat, and the test proves nothing", n, 50/4)
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
// stream's done must not be the second's read either: every done lies
// within one of the server's writes, as in TestBeatDoneFromStamps (and
// from the clock a quarter of them at least fall outside: 18 of 50 in
// the worst of 10 runs beside a CPU hog).
func TestBeatPairsDateAlike(t *testing.T) {
	if !h2LoopFields(&Config{Epoll: true, Protocol: H2C}) {
		t.Skip("no HTTP/2 event loop here")
	}
	if h := holdStamps(); h != nil { // as TestBeatDoneFromStamps says
		defer h.Close()
	}
	const hold, spacing, pairs = 2 * time.Millisecond, 8 * time.Millisecond, 25
	run := func() (apart, outside int) {
		s := newPairingH2(t, hold)
		cfg := Config{Protocol: H2C, Epoll: true, Connections: 4}
		got, rec, stats := records(t, s.URL, cfg, &bursts{n: 2, total: 2 * pairs, every: spacing})
		if c := checkIdentity(t, rec, 2*pairs); c.Completed != 2*pairs || s.answered.Load() != 2*pairs || len(got) != 2*pairs {
			t.Fatalf("counts %+v, %d records, the server answered %d: want %d completed", c, len(got), s.answered.Load(), 2*pairs)
		}
		for seq, r := range got {
			if o, ok := got[seq^1]; ok && seq&1 == 0 && o.Done != r.Done {
				apart++
			}
		}
		outside, far := s.writes.outside(t, got, stats.Start, testClockDone)
		t.Logf("%d pairs of %d with two dones, %d dones outside the server's writes, the farthest %v (done from the clock: %v; median service time %v)",
			apart, pairs, outside, far, testClockDone, time.Duration(rec.Service.ValueAtQuantile(50))*time.Microsecond)
		return apart, outside
	}
	if apart, out := run(); apart > 0 || out > 0 {
		t.Errorf("%d pairs answered in one write had two dones, %d dones outside the server's writes (±%v): want none and none", apart, out, stampSlop)
	}
	testClockDone = true
	defer func() { testClockDone = false }()
	if apart, out := run(); apart < pairs/2 || out < pairs/2 {
		t.Errorf("done from the clock: %d pairs with two dones, %d dones outside the server's writes: want %d or more, and %d or more; the test proves nothing", apart, out, pairs/2, pairs/2)
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
