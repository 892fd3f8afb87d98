package engine

import (
	"net/http"
	"runtime"
	"testing"
	"time"

	"github.com/openload/openload/schedule"
)

// TestRawSleepStopsForGC: while the event loop sleeps in a raw
// epoll_wait (blockingEpollWait), the garbage collector still stops the
// world promptly: the runtime signals the thread, the wait returns EINTR
// and the loop reaches a preemption point. A run of 100 requests a
// second sleeps 10 ms at a time, raw, from its start until its last
// request is due, 990 ms later; collections are forced meanwhile, one
// after another, 50 ms apart.
//
// A loop the collector could not stop would hold a collection until it
// stops sleeping raw, past the last request's due time. So the first
// collection that began after the run's start must have ended before
// that due time: an order of two instants on one clock, not a bound on
// how long a collection takes (it was under 500 ms, with 101 ms seen on a
// loaded machine; this leaves a collection the ~900 ms after its start).
func TestRawSleepStopsForGC(t *testing.T) {
	if !rawSleepOK() {
		t.Skip("one processor: the loop does not sleep raw")
	}
	srv := newRawServer()
	defer srv.Close()
	type span struct{ from, to time.Time }
	done := make(chan struct{})
	forced := make(chan []span, 1)
	go func() {
		var gcs []span
		for {
			select {
			case <-done:
				forced <- gcs
				return
			case <-time.After(50 * time.Millisecond):
			}
			t0 := time.Now()
			runtime.GC()
			gcs = append(gcs, span{t0, time.Now()})
		}
	}()
	const rate, d = 100, time.Second
	rec, stats := runAgainst(t, srv.URL, Config{Method: http.MethodGet, Lean: true, Epoll: true, Connections: 2}, schedule.NewConstant(rate, d))
	close(done)
	checkIdentity(t, rec, rate)
	if stats.Client != ClientEpoll {
		t.Fatalf("client %s", stats.Client)
	}
	gcs := <-forced
	// stats.Start is offset 0, on the monotonic clock (no StartAt).
	lastDue := stats.Start.Add(d - time.Second/rate)
	var worst time.Duration
	for _, g := range gcs {
		worst = max(worst, g.to.Sub(g.from))
	}
	t.Logf("%d forced collections, the longest %v", len(gcs), worst)
	for _, g := range gcs {
		if g.from.Before(stats.Start) {
			continue
		}
		if !g.from.Before(lastDue) {
			break // began after the sleeping: the one before was held to its end
		}
		if !g.to.Before(lastDue) {
			t.Errorf("the first collection forced in the run began at %v and ended at %v, after the last request was due at %v: the loop held it",
				g.from.Sub(stats.Start), g.to.Sub(stats.Start), lastDue.Sub(stats.Start))
		}
		return
	}
	t.Errorf("no collection began while requests were due (from 0 to %v): the one in progress at the start was held", lastDue.Sub(stats.Start))
}
