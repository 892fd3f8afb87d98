package engine

import (
	"context"
	"sync"

	"github.com/openload/openload/schedule"
)

// A client sends one open run's arrivals. It is given the schedule, each
// arrival an offset and a seq, the request being the run's picked by seq
// (targets.go), and the generator g: the drain, the clock and the sink.
// It reports, through its sink shards (sink.go), exactly one record per
// arrival: the stamps in the recorder's order (scheduled ≤ sent ≤ … ≤
// done, recorder/stamps.go), the bytes, the outcome and the attempts
// (sends, wire.go). What every path shares is written once: attempts and
// re-sends (sends, resendRule, h2Bounces), head reading (heads.go),
// stream reading and its stamps (stream.go, stamp.go), the drain and
// the timeouts (the generator). TestClientContract holds every row of
// clients to one known answer.
type client interface {
	// start sends until the schedule is spent or ctx is cancelled, in
	// goroutines it adds to wg, and closes the dispatched channel it was
	// opened with once it will take no further arrival.
	start(ctx context.Context, wg *sync.WaitGroup)
}

// clientRow is one way to send a run: open returns nil when the run's
// configuration is not this row's to send.
type clientRow struct {
	path   string // Stats.Path
	client string // Stats.Client
	open   func(g *generator, s schedule.Schedule, stats *Stats, dispatched chan<- struct{}) client
}

// The rows of clients, Stats.Path.
const (
	PathH2Loop  = "h2-loop"  // HTTP/2 on the event loop (h2loop_linux.go)
	PathH1Loop  = "h1-loop"  // HTTP/1.1 on the event loop (epoll_linux.go)
	PathLean    = "lean"     // the lean HTTP/1.1 client, a goroutine a connection (lean.go)
	PathNetHTTP = "net/http" // net/http's client: HTTP/1.1, and HTTP/2 by x/net's transport (h2.go)
)

// clients are the ways an open run can send, the first that accepts the
// run sends it. The loops accept what they can send on this platform
// (Config.Epoll, the protocol; neither makes retries); the goroutine
// paths accept the rest, by the transport begin connected (connect).
// Adding a client — another protocol — is one more row, and one more
// path in the contract.
var clients = []clientRow{
	{PathH2Loop, ClientEpoll, func(g *generator, s schedule.Schedule, st *Stats, d chan<- struct{}) client {
		if l := newH2Loop(g, s, st, d); l != nil {
			return l
		}
		return nil
	}},
	{PathH1Loop, ClientEpoll, func(g *generator, s schedule.Schedule, st *Stats, d chan<- struct{}) client {
		if l := newEpollLoop(g, s, st, d); l != nil {
			return l
		}
		return nil
	}},
	{PathLean, ClientLean, func(g *generator, s schedule.Schedule, st *Stats, d chan<- struct{}) client {
		if g.lean == nil {
			return nil
		}
		return &workers{g: g, s: s, stats: st, dispatched: d}
	}},
	{PathNetHTTP, ClientNetHTTP, func(g *generator, s schedule.Schedule, st *Stats, d chan<- struct{}) client {
		return &workers{g: g, s: s, stats: st, dispatched: d}
	}},
}

// openClient is the first row of clients that accepts g's run, and its
// client.
func openClient(g *generator, s schedule.Schedule, stats *Stats, dispatched chan<- struct{}) (clientRow, client) {
	for _, row := range clients {
		if c := row.open(g, s, stats, dispatched); c != nil {
			return row, c
		}
	}
	panic("engine: no client for the run") // the last row takes any
}

// workers is the goroutine paths' client: a dispatcher that queues the
// arrivals as they come due, and cfg.Connections workers that each send
// one at a time, by the lean client or net/http's (worker.do).
type workers struct {
	g          *generator
	s          schedule.Schedule
	stats      *Stats
	dispatched chan<- struct{}
}

func (c *workers) start(ctx context.Context, wg *sync.WaitGroup) {
	g := c.g
	for range g.cfg.Connections {
		wg.Add(1)
		go func() {
			defer wg.Done()
			g.worker()
		}()
	}
	go func() {
		defer close(c.dispatched)
		g.dispatch(ctx, c.s, c.stats)
		close(g.due)
	}()
}
