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
// second sleeps 10 ms at a time, raw, most of its second; collections
// forced meanwhile must each take far less than that second. A loop the
// collector could not stop would hold it for most of the second; half of
// it is the bound, as a loaded machine took 101 ms (-race, in .ci/run
// beside other packages, where the bound was 100 ms).
func TestRawSleepStopsForGC(t *testing.T) {
	if !rawSleepOK() {
		t.Skip("one processor: the loop does not sleep raw")
	}
	srv := newRawServer()
	defer srv.Close()
	done := make(chan struct{})
	worst := make(chan time.Duration, 1)
	go func() {
		var w time.Duration
		for {
			select {
			case <-done:
				worst <- w
				return
			case <-time.After(50 * time.Millisecond):
			}
			t0 := time.Now()
			runtime.GC()
			w = max(w, time.Since(t0))
		}
	}()
	rec, stats := runAgainst(t, srv.URL, Config{Method: http.MethodGet, Lean: true, Epoll: true, Connections: 2}, schedule.NewConstant(100, time.Second))
	close(done)
	checkIdentity(t, rec, 100)
	if stats.Client != ClientEpoll {
		t.Fatalf("client %s", stats.Client)
	}
	w := <-worst
	t.Logf("the longest forced GC took %v", w)
	if w > 500*time.Millisecond {
		t.Errorf("a forced GC took %v while the loop slept: it should be preempted within ~10 ms", w)
	}
}
