package engine

import (
	"container/heap"
	"sync"
	"time"
)

// Think times end on the dispatcher's clock, not the runtime's timers,
// which wake about a millisecond late on Linux (sleep_linux.go): that
// lateness would be send delay of openload's making in every step after
// a think. One goroutine (thinkers.run) wakes every session whose step
// came due, sleeping until the earliest on an alarm that a session with
// an earlier due time re-arms.

// alarm is a sleep that another goroutine can cut short by re-arming it:
// a timerfd on Linux (alarm_linux.go), else a runtime timer and a poke.
type alarm interface {
	arm(d time.Duration) // ring d from now, replacing the last arm
	wait()               // until it rings
	close()
}

// pokeAlarm is the alarm of the runtime's timers.
type pokeAlarm struct {
	mu   sync.Mutex
	at   time.Time
	poke chan struct{}
}

func newPokeAlarm() *pokeAlarm { return &pokeAlarm{poke: make(chan struct{}, 1)} }

func (a *pokeAlarm) arm(d time.Duration) {
	a.mu.Lock()
	a.at = time.Now().Add(d)
	a.mu.Unlock()
	select {
	case a.poke <- struct{}{}:
	default:
	}
}

func (a *pokeAlarm) wait() {
	for {
		a.mu.Lock()
		d := time.Until(a.at)
		a.mu.Unlock()
		if d <= 0 {
			return
		}
		t := time.NewTimer(d)
		select {
		case <-t.C:
			return
		case <-a.poke:
			t.Stop()
		}
	}
}

func (a *pokeAlarm) close() {}

// thinker is a session waiting for its step's due time.
type thinker struct {
	due  time.Duration
	wake chan struct{}
}

type dueHeap []thinker

func (h dueHeap) Len() int           { return len(h) }
func (h dueHeap) Less(i, j int) bool { return h[i].due < h[j].due }
func (h dueHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *dueHeap) Push(x any)        { *h = append(*h, x.(thinker)) }
func (h *dueHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// thinkers are the sessions waiting out a think time.
type thinkers struct {
	mu    sync.Mutex
	h     dueHeap
	al    alarm
	ring  time.Duration // when the alarm rings next
	since func() time.Duration
	done  bool
}

func newThinkers(since func() time.Duration) *thinkers {
	return &thinkers{al: newAlarm(), since: since}
}

// at returns a channel closed when offset due has come.
func (t *thinkers) at(due time.Duration) <-chan struct{} {
	ch := make(chan struct{})
	t.mu.Lock()
	defer t.mu.Unlock()
	heap.Push(&t.h, thinker{due, ch})
	if due < t.ring {
		t.ring = due
		t.al.arm(due - t.since())
	}
	return ch
}

// run wakes the sessions as they come due until stop.
func (t *thinkers) run() {
	for {
		t.mu.Lock()
		if t.done {
			t.mu.Unlock()
			t.al.close()
			return
		}
		now := t.since()
		for len(t.h) > 0 && t.h[0].due <= now {
			close(heap.Pop(&t.h).(thinker).wake)
		}
		d := maxSleep
		if len(t.h) > 0 {
			d = min(t.h[0].due-now, maxSleep)
		}
		t.ring = now + d
		t.al.arm(d) // under the lock: a session's earlier arm comes after it
		t.mu.Unlock()
		t.al.wait()
	}
}

// stop ends run; the sessions still waiting wait on the drain.
func (t *thinkers) stop() {
	t.mu.Lock()
	t.done = true
	t.al.arm(0)
	t.mu.Unlock()
}
