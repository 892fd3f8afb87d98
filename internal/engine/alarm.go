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
	due time.Duration
	w   *walker
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
	mu      sync.Mutex
	h       dueHeap
	al      alarm
	ring    time.Duration // when the alarm rings next
	since   func() time.Duration
	wake    func(*walker) // hands a walker whose step came due to the workers
	done    bool
	flushed bool // the drain expired: every walker goes back, due or not
}

func newThinkers(since func() time.Duration, wake func(*walker)) *thinkers {
	return &thinkers{al: newAlarm(), since: since, wake: wake}
}

// at keeps w until offset due has come.
func (t *thinkers) at(due time.Duration, w *walker) {
	t.mu.Lock()
	defer t.mu.Unlock()
	heap.Push(&t.h, thinker{due, w})
	if due < t.ring || t.flushed {
		t.ring = due
		t.al.arm(due - t.since())
	}
}

// run wakes the sessions as they come due until stop.
func (t *thinkers) run() {
	var woken []*walker
	for {
		t.mu.Lock()
		if t.done {
			t.mu.Unlock()
			t.al.close()
			return
		}
		now := t.since()
		woken = woken[:0]
		for len(t.h) > 0 && (t.h[0].due <= now || t.flushed) {
			woken = append(woken, heap.Pop(&t.h).(thinker).w)
		}
		if len(woken) > 0 {
			// Handed over without the lock: a worker may be waiting on
			// it to leave another walker here.
			t.mu.Unlock()
			for _, w := range woken {
				t.wake(w)
			}
			continue
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

// flush hands every walker back at once: the drain expired, and the
// workers end their sessions.
func (t *thinkers) flush() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.done {
		return // run has ended, and closed the alarm
	}
	t.flushed = true
	t.al.arm(0)
}

// stop ends run: every session has ended.
func (t *thinkers) stop() {
	t.mu.Lock()
	t.done = true
	t.al.arm(0)
	t.mu.Unlock()
}
