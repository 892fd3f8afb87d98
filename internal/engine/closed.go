package engine

// Closed mode exists to show what closed-loop tools report, side by side
// with the open result; see RunClosed.

import (
	"context"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/openload/openload/field"
	"github.com/openload/openload/internal/recorder"
	"github.com/openload/openload/schedule"
)

// Closed describes a closed-loop run: Users users that each send a request,
// wait for its response (and Think), and send again.
type Closed struct {
	Users int // number of users, each with at most one request in flight; > 0
	// Rate paces the whole run, in requests per second (0: no pacing, each
	// user sends again as soon as it is ready).
	Rate     float64
	Duration time.Duration // no request is started at or after this offset; > 0
	Think    time.Duration // pause after each response before the user is ready again; ≥ 0
}

// Validate checks cl. Its errors are *field.Error, naming the fields of
// Closed.
func (cl Closed) Validate() error {
	switch {
	case cl.Users <= 0:
		return field.Errorf("Users", cl.Users, "{Users} must be > 0, got %d", cl.Users)
	case cl.Duration <= 0:
		return field.Errorf("Duration", cl.Duration, "{Duration} must be > 0, got %v", cl.Duration)
	case math.IsNaN(cl.Rate) || math.IsInf(cl.Rate, 0) || cl.Rate < 0:
		return field.Errorf("Rate", cl.Rate, "{Rate} must be a finite number ≥ 0, got %v", cl.Rate)
	case cl.Think < 0:
		return field.Errorf("Think", cl.Think, "{Think} must be ≥ 0, got %v", cl.Think)
	}
	return nil
}

// Interval is the expected interval between one user's requests when the
// run is paced: Users ÷ Rate (0 without a rate). It is the interval
// HdrHistogram's coordinated-omission correction must assume.
func (c Closed) Interval() time.Duration {
	if c.Rate <= 0 {
		return 0
	}
	return time.Duration(math.Round(float64(c.Users) / c.Rate * float64(time.Second)))
}

// user is one closed-loop user of a paced run.
type user struct {
	slots chan item   // capacity 1: the dispatcher hands a slot only to a free user
	busy  atomic.Bool // from being handed a slot until ready for the next one
}

// RunClosed runs a closed loop against cfg.URL and adds one record per
// request issued to rec. cfg.Connections is ignored: each user has its own
// connection.
//
// # Paced (Rate > 0)
//
// The pacing schedule is the constant schedule of the rate over the
// duration, N = ⌊Rate·Duration⌋ slots at t_j = j/Rate, dealt round-robin:
// slot j belongs to user j mod Users, so each user is paced to one request
// every Users/Rate. One dispatcher walks the slots as the open engine walks
// its schedule. A slot whose user is free is handed to it, and the request
// is recorded with the slot's time as its scheduled time. A slot whose user
// is still waiting for an earlier response (or thinking) is skipped: it is
// never sent and never caught up later, as with a closed tool's throughput
// timer. Skipped slots are added to rec with AddSkipped at the end, so
//
//	issued + skipped = N
//
// unless the run was interrupted (slots not yet reached are neither).
//
// # Unpaced (Rate == 0)
//
// Each user sends again as soon as it is ready (the previous response read,
// plus Think) until Duration. A request's scheduled time is the moment its
// user was ready, so send delay measures only the generator.
//
// In both modes a request's three timestamps mean what they mean in the
// open engine, every request gets exactly one outcome, and requests still in
// flight at the end get cfg.Drain to finish. Cancelling ctx stops new
// requests.
func RunClosed(ctx context.Context, cfg Config, cl Closed, rec *recorder.Recorder) (Stats, error) {
	if err := cl.Validate(); err != nil {
		return Stats{}, fmt.Errorf("engine: closed: %w", err)
	}
	cfg.Connections = cl.Users
	cfg = cfg.mixed()                       // targets.go
	if err := cfg.check(true); err != nil { // config.go
		return Stats{}, err
	}
	var stats Stats
	predial := cl.Users
	if cl.Rate > 0 {
		predial = predialCount(cl.Users, cl.Rate*cl.Duration.Seconds())
	}
	g := begin(ctx, cfg, rec, &stats, nil, predial, nil)
	defer g.release()

	var (
		wg    sync.WaitGroup
		skips []int64 // per second, written by the dispatcher only
	)
	// dispatchDone is closed when no new request will be started.
	dispatchDone := make(chan struct{})
	if cl.Rate > 0 {
		users := make([]*user, cl.Users)
		for i := range users {
			u := &user{slots: make(chan item, 1)}
			users[i] = u
			wg.Add(1)
			go func() {
				defer wg.Done()
				g.pacedUser(u, cl.Think)
			}()
		}
		go func() {
			defer close(dispatchDone)
			skips = g.pace(ctx, schedule.NewConstant(cl.Rate, cl.Duration), users, &stats)
			for _, u := range users {
				close(u.slots)
			}
		}()
	} else {
		stop := make(chan struct{})
		var seq atomic.Uint64
		for range cl.Users {
			wg.Add(1)
			go func() {
				defer wg.Done()
				g.freeUser(stop, cl, &seq)
			}()
		}
		go func() {
			defer close(dispatchDone)
			t := time.NewTimer(cl.Duration - g.since())
			select {
			case <-t.C:
			case <-ctx.Done():
				stats.Interrupted = true
			}
			t.Stop()
			stats.ScheduleEnd = g.since()
			close(stop)
		}()
	}
	g.windDown(ctx, dispatchDone, &wg)

	// The recorder goroutine is done: rec is ours again.
	for i, n := range skips {
		rec.AddSkipped(time.Duration(i)*time.Second, n)
	}
	g.finish(ctx, &stats)
	return stats, nil
}

// pace walks the pacing schedule: it sleeps until each slot is due, hands
// the slot to its user if that user is free and skips it otherwise. It
// returns the skipped slots per second.
func (g *generator) pace(ctx context.Context, s *schedule.ConstantSchedule, users []*user, stats *Stats) []int64 {
	sl := newSleeper()
	defer sl.close()
	var skips []int64
	n := int64(len(users))
	for j := range s.Count() {
		off := s.Offset(j)
		for {
			if ctx.Err() != nil {
				stats.Interrupted = true
				stats.ScheduleEnd = g.since()
				return skips
			}
			now := g.since()
			if off <= now {
				break
			}
			sl.sleep(min(off-now, maxSleep))
		}
		u := users[j%n]
		if u.busy.Load() {
			sec := int(off / time.Second)
			for len(skips) <= sec {
				skips = append(skips, 0)
			}
			skips[sec]++
			stats.Skipped++
			continue
		}
		// A free user has taken its previous slot out of the channel, so
		// this send never blocks.
		u.busy.Store(true)
		g.taken.Add(1)
		u.slots <- item{seq: uint64(j), off: off}
		stats.Dispatched++
	}
	stats.ScheduleEnd = g.since()
	return skips
}

// pacedUser sends the slots it is handed, one at a time, and is busy from
// the hand-over until its response is read and its think time is over.
func (g *generator) pacedUser(u *user, think time.Duration) {
	w := g.newWorker()
	for it := range u.slots {
		w.issue(it)
		if think > 0 {
			g.pause(think, nil)
		}
		u.busy.Store(false)
	}
}

// freeUser sends, waits for the response and think time, and sends again,
// until the duration is reached or stop is closed. Each request is
// scheduled at the moment its user was ready: the previous done plus think.
func (g *generator) freeUser(stop <-chan struct{}, cl Closed, seq *atomic.Uint64) {
	w := g.newWorker()
	ready := g.since()
	for ready < cl.Duration {
		select {
		case <-stop:
			return
		default:
		}
		g.taken.Add(1)
		done := w.issue(item{seq: seq.Add(1) - 1, off: ready})
		ready = done + cl.Think
		if cl.Think > 0 && ready < cl.Duration && !g.pause(ready-g.since(), stop) {
			return
		}
	}
}

// pause waits d. It returns false early when stop is closed or the drain
// expires. It uses the runtime's timers, which wake about 1 ms late on
// Linux; a late wake-up after think time shows as send delay.
func (g *generator) pause(d time.Duration, stop <-chan struct{}) bool {
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-stop:
		return false
	case <-g.drain.Done():
		return false
	}
}
