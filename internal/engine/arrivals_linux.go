package engine

import (
	"context"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/openload/openload/schedule"
	"golang.org/x/sys/unix"
)

// loopArrivals is what both event loops, HTTP/1.1's (epollLoop) and
// HTTP/2's (h2Loop), keep of the schedule and of their sleep: the next
// arrival, the arrivals due and waiting for a connection or a stream, how
// the schedule ended, and the epoll and timerfd they wait on. One home,
// so that both take arrivals, count the limit and sleep alike.
type loopArrivals struct {
	g          *generator
	stats      *Stats
	dispatched chan<- struct{} // closed when the schedule is spent or ctx cancelled

	s          schedule.Schedule
	off        time.Duration // the next arrival's offset, while scheduling
	seq        uint64
	scheduling bool
	pending    queue // due, waiting for a connection or a stream

	ep       int               // epoll descriptor
	tfd      int               // timerfd: the next arrival or deadline
	quiet    int               // epoll of tfd and the loop's eventfd alone, or -1: the beat (epoll_linux.go)
	beat     bool              // the next sleep may be on quiet
	armed    time.Duration     // when the timerfd fires, or -1
	fired    bool              // the timerfd fired and was not read (timerFired)
	gap      time.Duration     // the schedule's recent gap between arrivals, averaged (batchSleep, batchWake)
	held     time.Duration     // a slot's recent time in use, attempt to done, averaged (paced)
	bounded  bool              // batches are bounded by batchArrivals (the HTTP/1.1 loop)
	events   []unix.EpollEvent // what the last wait returned
	waited   atomic.Int64      // ns spent waiting in epoll_wait, for the run's self-monitoring
	waitFrom atomic.Int64      // when the wait under way began, since the start (ns; < 0 before it)
	inWait   atomic.Bool       // a wait is under way, from waitFrom
	rawSleep bool              // sleep in a raw epoll_wait (see blockingEpollWait)
}

func newLoopArrivals(g *generator, stats *Stats, dispatched chan<- struct{}, s schedule.Schedule, ep, tfd int) loopArrivals {
	return loopArrivals{g: g, stats: stats, dispatched: dispatched, s: s,
		ep: ep, tfd: tfd, quiet: -1, armed: -1, gap: minSleep, events: make([]unix.EpollEvent, 256), rawSleep: rawSleepOK()}
}

// abandonPending records the arrivals still waiting, in sh, as never
// sent: the drain expired.
func (a *loopArrivals) abandonPending(sh *shard) {
	for a.pending.len() > 0 {
		a.g.abandon(a.pending.pop(), sh)
	}
}

func (a *loopArrivals) endSchedule(interrupted bool) {
	a.scheduling = false
	a.g.nextDue.Store(notDue)
	a.stats.Interrupted = interrupted
	a.stats.ScheduleEnd = a.g.since()
	close(a.dispatched)
}

// take moves the arrivals due at now from the schedule to the queue,
// inUse being the loop's slots in use (for the limit's count). It
// returns the next arrival's offset, or never when the loop should not
// wake for it.
func (a *loopArrivals) take(ctx context.Context, now time.Duration, inUse int) time.Duration {
	g := a.g
	if a.scheduling && ctx.Err() != nil {
		a.endSchedule(true)
	}
	for a.scheduling && a.off <= now && a.pending.len() < maxPending {
		if inUse+a.pending.len() >= g.cfg.Connections {
			g.limitWaited.Add(1)
		}
		a.pending.push(item{seq: a.seq, off: a.off})
		g.dispatched.Add(1)
		g.taken.Add(1)
		prev := a.off
		var ok bool
		if a.off, ok = a.s.Next(); !ok {
			a.endSchedule(false)
		} else {
			g.nextDue.Store(int64(a.off))
		}
		a.gap += (max(a.off-prev, 0) - a.gap) / 8
		a.seq = seqOf(a.s, a.seq+1)
	}
	if !a.scheduling || a.pending.len() >= maxPending {
		return never
	}
	return a.off
}

// batchArrivals bounds the arrivals the HTTP/1.1 loop sends in one
// wake-up. Waking for each arrival costs CPU, so a loop sleeps at least
// minSleep and sends the arrivals due meanwhile together; but at high
// rates minSleep holds many (21 at 70,000/s), and a burst that size is
// what the server sees: against bench/target at 70,000/s its service
// time doubled after such batches, holding the connections longer, and
// the in-flight limit was reached sooner (docs/MEASUREMENTS.md,
// “batchArrivals”). So that loop's shortest sleep is the time of
// batchArrivals arrivals at the schedule's recent pace, between
// batchSleepMin and minSleep: unchanged up to about 26,000/s. The HTTP/2
// loop keeps minSleep: its batch goes out in one write per connection,
// and shorter batches cost it more CPU for no better send delay.
const (
	batchArrivals = 8
	batchSleepMin = 50 * time.Microsecond

	pacedShare     = 8
	pacedResponses = 2
)

// batchSleep is the loop's shortest sleep now.
func (a *loopArrivals) batchSleep() time.Duration {
	if !a.bounded {
		return minSleep
	}
	return min(max(batchArrivals*a.gap, batchSleepMin), minSleep)
}

// batchWake is when to wake for the arrival at next. Where arrivals come
// closer together than batchSleep, the loop waits batchSleep past next
// and sends what came due meanwhile in one wake: next is the batch's
// oldest arrival, so no request is held back longer than batchSleep by
// the batching. Timed from the last wake instead, a batch's oldest
// arrival waited less than that and the loop woke more often: at
// 11,570/s for 10 s, 28,357–28,646 context switches against
// 26,171–26,494, and 4 % more CPU (docs/MEASUREMENTS.md, "batchWake").
// Sparser arrivals go out each at its time.
func (a *loopArrivals) batchWake(next time.Duration) time.Duration {
	if d := a.batchSleep(); a.gap < d {
		return next + d
	}
	return next
}

// freed notes that a slot was in use for d, from its attempt to its done.
func (a *loopArrivals) freed(d time.Duration) { a.held += (d - a.held) / 8 }

// paced is when a loop whose arrivals wait for its in-flight limit
// (inUse slots in use) wakes to take in the responses that free its
// slots, on the beat; never when it should wake for each response.
//
// Woken by each response while arrivals waited, a loop sent and read a
// few exchanges a wake, and those wakes took CPU from a server on the
// same cores, which then answered later: a run that reached its limit
// could stay there (h2c at 36,000/s under a cap of 128: 45,313–182,205
// voluntary context switches in 10 s, send delay p99 8.7–1,753 ms;
// paced, 27,598–28,903 and 2.9–70.5 ms). Paced, it sleeps a 1/pacedShare of a slot's recent time
// in use (at most batchSleep), so a slot freed is taken that much late
// at most and the limit's capacity drops by up to about 1/(2·pacedShare)
// (docs/MEASUREMENTS.md, "paced": 0.9–2.2 % at 5.7 ms). Where the sleep
// would be shorter than batchSleepMin, or would gather fewer than
// pacedResponses responses (Little's law: inUse × sleep ÷ time in
// use), waking for each costs little and the loop does.
func (a *loopArrivals) paced(now time.Duration, inUse int) time.Duration {
	d := min(a.batchSleep(), a.held/pacedShare)
	if d < batchSleepMin || time.Duration(inUse)*d < pacedResponses*a.held {
		return never
	}
	if testPaced != nil {
		testPaced()
	}
	return now + d
}

// sleepOn sets whether the loop's next sleep is on the beat and returns
// its deadline: beat says whether the loop's state allows the beat, check
// is its next deadline, full that the arrivals waiting, if any, wait for
// the in-flight limit alone. While arrivals wait the loop stays on the
// beat only when paced, and wakes by then.
func (a *loopArrivals) sleepOn(beat bool, now, check time.Duration, inUse int, full bool) time.Duration {
	if beat && a.pending.len() > 0 {
		p := never
		if full {
			p = a.paced(now, inUse)
		}
		beat, check = p != never, min(check, p)
	}
	a.beat = beat
	return check
}

// testPaced, when set by a test, is called for each paced sleep.
var testPaced func()

// ownEvent takes an event of the loop's own descriptors, fd being its
// timerfd or its eventfd: it notes the timer (timerFired), or reads the
// eventfd and says that news came.
func (a *loopArrivals) ownEvent(fd int) (news bool) {
	if fd == a.tfd {
		a.timerFired()
		return false
	}
	var b [8]byte
	_, _ = unix.Read(fd, b[:])
	return true
}

// timerFired notes that the timerfd fired. It is not read then: arming
// it again resets its count of expirations, and so its readiness
// (timerfd_setup in fs/timerfd.c; TestTimerfdRearmClears), which saves a
// read(2) a wake; sleep reads it only when it does not arm it again.
func (a *loopArrivals) timerFired() {
	a.armed, a.fired = -1, true
}

// wait is sleep for a loop's turn: the events that ended it, none after
// a signal (EINTR: the loop takes another turn), or the error that ends
// the loop (broken) when waiting cannot go on, rather than spin.
func (a *loopArrivals) wait(now, next, check time.Duration) ([]unix.EpollEvent, error) {
	n, err := a.sleep(now, next, check)
	switch {
	case err == unix.EINTR:
		return nil, nil
	case err != nil:
		return nil, os.NewSyscallError("epoll_wait", err)
	}
	return a.events[:n], nil
}

// sleep waits until the next arrival (next, never none; batchWake), the
// next deadline (check) or an event, and returns how many
// events are in a.events. On the beat (a.beat, and the wake no further
// than rawSleepMax) the sockets' events do not end the sleep: it waits
// on a.quiet, then takes every event that came meanwhile at once.
func (a *loopArrivals) sleep(now, next, check time.Duration) (int, error) {
	wake := check
	if next != never {
		wake = min(wake, a.batchWake(next))
	}
	timeout := -1
	if wake != never && (a.armed < 0 || wake < a.armed) {
		if err := setTimerfd(a.tfd, wake-now); err == nil {
			a.armed = wake
		} else {
			timeout = int(min((wake-now+time.Millisecond-1)/time.Millisecond, 3600_000))
		}
	}
	if a.fired {
		if a.armed < 0 { // not armed again: read it, or it stays readable
			var b [8]byte
			_, _ = unix.Read(a.tfd, b[:])
		}
		a.fired = false
	}
	if testEpollWait != nil {
		return testEpollWait(a.ep, a.events, timeout)
	}
	ep := a.ep
	if a.beat && a.quiet >= 0 && wake-now <= rawSleepMax {
		ep = a.quiet // what is in now is read after the sleep, with the rest
	} else if n, err := rawEpollWait(a.ep, a.events); err == nil && n > 0 {
		return n, nil
	}
	before := a.g.since()
	a.waitFrom.Store(int64(before))
	a.inWait.Store(true)
	n, err := blockingEpollWait(ep, a.events, timeout, a.rawSleep && wake-now <= rawSleepMax)
	a.inWait.Store(false) // before the wait is added: a reader may miss it a moment, never count it twice
	a.waited.Add(int64(a.g.since() - before))
	if ep == a.quiet && err == nil {
		return rawEpollWait(a.ep, a.events)
	}
	return n, err
}

// openLoop opens an event loop's descriptors: its epoll, with its
// timerfd (the next arrival or deadline, sleep_linux.go) and its eventfd
// (news, loopInbox) in it, both marked Fd -1 for the loop's event switch.
func openLoop() (ep, tfd, efd int, err error) {
	if ep, err = unix.EpollCreate1(unix.EPOLL_CLOEXEC); err != nil {
		return -1, -1, -1, err
	}
	if tfd, err = newTimerfd(); err != nil {
		unix.Close(ep)
		return -1, -1, -1, err
	}
	if efd, err = unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC); err != nil {
		unix.Close(ep)
		unix.Close(tfd)
		return -1, -1, -1, err
	}
	for _, fd := range []int{tfd, efd} {
		if err = unix.EpollCtl(ep, unix.EPOLL_CTL_ADD, fd, &unix.EpollEvent{Events: unix.EPOLLIN, Fd: -1, Pad: int32(fd)}); err != nil {
			unix.Close(ep)
			unix.Close(tfd)
			unix.Close(efd)
			return -1, -1, -1, err
		}
	}
	return ep, tfd, efd, nil
}

// startLoop runs a loop (run) in a goroutine of wg that keeps its thread
// to the end, with its short scheduler slice (loopSlice); the run's
// self-monitoring samples how busy the loop is by its time in epoll_wait.
func (a *loopArrivals) startLoop(wg *sync.WaitGroup, run func()) {
	a.g.mon.WatchLoop(a.waitedSoFar)
	wg.Add(1)
	go func() {
		defer wg.Done()
		// The thread, with its scheduler slice, ends with the goroutine.
		runtime.LockOSThread()
		a.g.mon.LoopSlice(shortSlice())
		run()
	}()
}

// waitedSoFar is the loop's time waiting for events so far, the wait
// under way included: a loop asleep for seconds (a scenario whose rate
// is 0 at first) is idle in each of them, not busy until the wait ends,
// so that its busiest second and its whole run are one measure.
func (a *loopArrivals) waitedSoFar() time.Duration {
	w := time.Duration(a.waited.Load())
	if a.inWait.Load() {
		// The first wait of a run of scenarios begins before their
		// shared start, at a negative offset.
		w += max(0, a.g.since()-time.Duration(a.waitFrom.Load()))
	}
	return w
}

// loopInbox is where goroutines (dials, lent exchanges) leave a loop
// their news (T) and wake it, by its eventfd.
type loopInbox[T any] struct {
	mu      sync.Mutex
	efd     int  // the loop's eventfd
	closed  bool // efd is closed: no more wake-ups
	inbox   []T
	scratch []T
}

// wake tells the loop to look at its inbox and the run's contexts.
func (b *loopInbox[T]) wake() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.wakeLocked()
}

func (b *loopInbox[T]) wakeLocked() {
	if !b.closed {
		one := [8]byte{1}                // a non-zero count in either byte order
		_, _ = unix.Write(b.efd, one[:]) // EAGAIN: the counter is already set
	}
}

// tell leaves n in the inbox and wakes the loop.
func (b *loopInbox[T]) tell(n T) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.inbox = append(b.inbox, n)
	b.wakeLocked()
}

// news takes what the inbox holds; the loop's until its next call.
func (b *loopInbox[T]) news() []T {
	b.mu.Lock()
	b.scratch, b.inbox = b.inbox, b.scratch[:0]
	b.mu.Unlock()
	return b.scratch
}

// wakeOn wakes the loop when any of ctxs ends (the run's context, the
// drain); the function it returns stops that.
func (b *loopInbox[T]) wakeOn(ctxs ...context.Context) (stop func()) {
	stops := make([]func() bool, len(ctxs))
	for i, ctx := range ctxs {
		stops[i] = context.AfterFunc(ctx, b.wake)
	}
	return func() {
		for _, s := range stops {
			s()
		}
	}
}

// shut ends the wake-ups: the loop is closing its eventfd.
func (b *loopInbox[T]) shut() {
	b.mu.Lock()
	b.closed = true
	b.mu.Unlock()
}
