package engine

import (
	"runtime"
	"testing"

	"golang.org/x/sys/unix"
)

// shortSlice changes the slice of its thread only: policy and nice value
// stay as they were (a user's `nice openload` keeps its meaning).
func TestShortSliceKeepsNice(t *testing.T) {
	type got struct {
		slice        uint64
		policy       uint32
		nice, before int
		ret          int64
		err          error
	}
	ch := make(chan got)
	go func() {
		// The thread's attributes change: it ends with the goroutine.
		runtime.LockOSThread()
		var g got
		tid := unix.Gettid()
		if g.err = unix.Setpriority(unix.PRIO_PROCESS, tid, 7); g.err != nil {
			ch <- g
			return
		}
		g.before, _ = unix.Getpriority(unix.PRIO_PROCESS, tid)
		g.ret = int64(shortSlice())
		a, err := unix.SchedGetAttr(0, 0)
		if err != nil {
			g.err = err
			ch <- g
			return
		}
		g.slice, g.policy, g.nice = a.Runtime, a.Policy, int(a.Nice)
		ch <- g
	}()
	g := <-ch
	if g.err != nil {
		t.Skipf("scheduler attributes not available here: %v", g.err)
	}
	if g.policy != unix.SCHED_NORMAL || g.nice != 7 {
		t.Errorf("after shortSlice: policy %d, nice %d; want %d, 7 (getpriority said %d before)", g.policy, g.nice, unix.SCHED_NORMAL, g.before)
	}
	// The kernel may not take custom slices; when shortSlice says it did,
	// the thread has it.
	if g.ret != 0 && (g.ret != int64(loopSlice) || g.slice != uint64(loopSlice)) {
		t.Errorf("shortSlice returned %d, the thread's slice is %d ns; want both %d", g.ret, g.slice, int64(loopSlice))
	}
	t.Logf("slice %d ns", g.slice)
}
