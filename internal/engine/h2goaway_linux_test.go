package engine

import (
	"testing"
	"time"
)

// TestH2GoAwayBounces: a stream past a GOAWAY's last goes again at once,
// however often its request was bounced (h2Bounces.bounce waits only after
// refusals), and a bounce counts against h2Resends only when the
// connection processed no stream. The server of "progress" answers one
// stream a connection and sends GOAWAY at the second, so with four
// streams a connection most requests are bounced more than once: all
// complete, none waits the second a back-off would cost (none times out
// at 800 ms); charged for every bounce, 2 or 3 of the 20 failed after
// their seventh. The server of "none" sends GOAWAY with last 0 at once, every
// time: each request fails after h2Resends re-sends, none is an attempt.
func TestH2GoAwayBounces(t *testing.T) {
	if !h2LoopFields(&Config{Epoll: true, Protocol: H2C}) {
		t.Skip("no HTTP/2 event loop here")
	}
	cfg := Config{Protocol: H2C, MaxStreams: 4, Epoll: true, Timeout: 800 * time.Millisecond}
	t.Run("progress", func(t *testing.T) {
		s := newRawH2(t, false, 0, 0, 2)
		rec, _ := h2Run(t, s.URL, cfg, &bursts{n: 20, total: 20, every: time.Second})
		s.settle()
		c := checkIdentity(t, rec, 20)
		w := rec.Wire()
		if c.Completed != 20 || s.answered.Load() != 20 || w.Attempts != s.read.Load() || w.ResendsUnwritten < 20 || w.ResendsUnwritten != s.above.Load() {
			t.Errorf("counts %+v, kinds %v, wire %+v; the server answered %d, read %d, left %d past GOAWAY: want 20 completed, more than 20 re-sends, one for each left",
				c, rec.ErrorKinds(), w, s.answered.Load(), s.read.Load(), s.above.Load())
		}
		t.Logf("counts %+v, kinds %v, wire %+v; past GOAWAY %d", c, rec.ErrorKinds(), w, s.above.Load())
	})
	t.Run("none", func(t *testing.T) {
		s := newRawH2(t, false, 0, 0, 1)
		rec, _ := h2Run(t, s.URL, cfg, &bursts{n: 5, total: 5, every: time.Second})
		s.settle()
		c := checkIdentity(t, rec, 5)
		w := rec.Wire()
		if c.Errors != 5 || rec.ErrorKinds()["reset"] != 5 || w.Attempts != 0 || s.read.Load() != 0 ||
			w.ResendsUnwritten != 5*h2Resends || s.above.Load() != 5*(h2Resends+1) {
			t.Errorf("counts %+v, kinds %v, wire %+v; the server read %d, left %d past GOAWAY: want 5 resets, %d re-sends, %d left, no attempt",
				c, rec.ErrorKinds(), w, s.read.Load(), s.above.Load(), 5*h2Resends, 5*(h2Resends+1))
		}
		t.Logf("counts %+v, kinds %v, wire %+v; past GOAWAY %d", c, rec.ErrorKinds(), w, s.above.Load())
	})
}
