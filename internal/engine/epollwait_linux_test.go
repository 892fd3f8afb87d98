package engine

import (
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/openload/openload/schedule"
)

// TestEpollWaitErrorStops: when epoll_wait fails with anything but EINTR,
// the loop must not spin on it. It stops: the requests it had are recorded
// (the accounting identity holds), the rest of the schedule is never
// taken, and the run says why. Not parallel: it sets testEpollWait.
func TestEpollWaitErrorStops(t *testing.T) {
	srv := newRawServer()
	defer srv.Close()
	var calls atomic.Int64
	testEpollWait = func(ep int, events []unix.EpollEvent, msec int) (int, error) {
		if calls.Add(1) > 40 {
			return 0, unix.EBADF
		}
		return unix.EpollWait(ep, events, msec)
	}
	defer func() { testEpollWait = nil }()
	rec, stats := runAgainst(t, srv.URL, Config{Lean: true, Epoll: true, Connections: 4, Drain: time.Minute},
		schedule.NewConstant(1000, time.Second))
	if stats.Client != ClientEpoll {
		t.Fatalf("client %s, want epoll", stats.Client)
	}
	if stats.LoopErr == nil {
		t.Fatal("no loop error")
	}
	c := rec.Counts()
	if !c.Balanced() || c.Scheduled == 0 || c.Scheduled >= 1000 {
		t.Errorf("counts %+v: want some of the 1000 scheduled, all accounted for", c)
	}
	// The loop stopped at the error, not after spinning through the
	// schedule: it called wait just once more than it was allowed to.
	if n := calls.Load(); n != 41 {
		t.Errorf("epoll_wait called %d times, want 41", n)
	}
	t.Logf("loop error %v; counts %+v", stats.LoopErr, c)
}
