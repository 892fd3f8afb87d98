package engine

import (
	"math"
	"sync"
	"sync/atomic"
	"time"
)

// Pre-dialling.
//
// On the lean client (lean.go, and the event loop of epoll_linux.go) a
// request that finds no open connection dials one first, and since a
// request's sent time is taken with a connection in hand, the dial is in
// its send delay. The goroutine-per-connection workers take due arrivals
// in turn, so the first Connections requests of a run each dial, and at
// 160/s with 64 connections those 4 % of the requests set the run's send
// delay p99 (see docs/MEASUREMENTS.md, “Pre-dialling”). That lateness is
// the generator's way of starting, not anything a user of the service
// would see.
//
// So before the run's clock starts, begin opens the connections the run
// would open on its first requests: min(Connections, requests), at most
// predialParallel dials at a time, giving up after predialBudget or at
// the first failure (the requests then dial and fail on their own, and
// are counted as before). No scheduled time moves: the schedule's offsets
// count from the start, which comes after the dials. Stats.Predial says
// how many were opened and how long it took, and the result and the
// report show it. A server that closes a pre-dialled connection before
// its first request is handled as for any idle keep-alive connection: the
// client sees the close and dials anew (closedWhileIdle, the event loop's
// idle watch, and its check of each one it adopts). A request that fails
// on a pre-dialled connection is not re-sent, as on any fresh one
// (wire.go). With a shared start (Config.StartAt) minutes ahead, the dials
// wait until just before it (predialLead): a server's timeout for a new
// connection that sends nothing (Go's ReadHeaderTimeout, the stub's 10 s)
// would otherwise close them during the wait, and the first requests
// written on them would fail as resets.

// Predial is what the run opened before its clock started.
type Predial struct {
	Wanted int           // min(Connections, requests of the schedule); 0: not tried
	Opened int           // connections opened
	Took   time.Duration // from the first dial to the last one's end
	Err    error         // the first dial error, if any
}

const (
	// predialLead is how long before a shared start (Config.StartAt)
	// the connections are opened: the dials' budget and a margin, so
	// that they are fresh at the start (waitUntil).
	predialLead = predialBudget + 500*time.Millisecond
	// predialParallel bounds the dials in flight, so that a run of
	// thousands of connections does not overflow the server's accept
	// queue at once.
	predialParallel = 16
	// predialBudget bounds the time spent before the start: a target
	// that takes longer to accept is not a first-request cost the
	// pre-dial can remove, and the run should start anyway.
	predialBudget = time.Second
)

// predialCount is how many connections a run of n requests over conns
// connections would open on its first requests.
func predialCount(conns int, requests float64) int {
	if requests <= 0 || math.IsNaN(requests) {
		return 0
	}
	return int(min(float64(conns), math.Ceil(requests)))
}

// predial opens up to want connections of the lean client, before the
// clock starts, and keeps them for the workers (takeWarm); on the HTTP/2
// event loop, the few connections its first streams take (predialH2). It
// does nothing on other clients.
func (g *generator) predial(want int) Predial {
	if p, ok := g.predialH2(want); ok { // h2loop_linux.go
		return p
	}
	p := Predial{Wanted: want}
	if g.lean == nil || want <= 0 {
		p.Wanted = 0
		return p
	}
	begun := time.Now()
	deadline := begun.Add(min(predialBudget, g.cfg.Timeout))
	warm := make(chan *leanConn, want)
	var (
		next   atomic.Int64
		failed atomic.Bool
		mu     sync.Mutex
		wg     sync.WaitGroup
	)
	for range min(want, predialParallel) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for next.Add(1) <= int64(want) && !failed.Load() && time.Now().Before(deadline) {
				c, err := g.lean.dial(deadline)
				if err != nil {
					mu.Lock()
					if p.Err == nil {
						p.Err = err
					}
					mu.Unlock()
					failed.Store(true)
					return
				}
				warm <- c
			}
		}()
	}
	wg.Wait()
	close(warm)
	p.Took = time.Since(begun)
	p.Opened = len(warm)
	g.warm = warm
	return p
}

// takeWarm returns a pre-dialled connection, or nil when none is left.
func (g *generator) takeWarm() *leanConn {
	if g.warm == nil {
		return nil
	}
	return <-g.warm // closed: nil once empty
}
