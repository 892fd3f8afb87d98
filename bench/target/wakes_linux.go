package main

import (
	"flag"
	"fmt"
	"runtime"
	"slices"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// wakes measures what it costs this machine to sleep and wake, apart
// from any work done awake: one thread sleeps -every on a timerfd in an
// epoll set, -n times, as openload's event loop does on its beat, and the
// CPU its wakes took (user and system, getrusage RUSAGE_THREAD) is divided
// by their number. A generator that must send within 0.5 ms of the
// schedule wakes at least every 0.5 ms however few requests it sends, so
// at low rates this is the floor of its CPU (docs/BENCHMARKS.md, where
// issue 35's last two goals stand).
func wakes(args []string) error {
	fs := flag.NewFlagSet("wakes", flag.ContinueOnError)
	every := fs.Duration("every", 500*time.Microsecond, "how long each sleep is")
	n := fs.Int("n", 10000, "how many wakes")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *every <= 0 || *n <= 0 {
		return fmt.Errorf("wakes: -every and -n must be positive")
	}
	w, err := measureWakes(*every, *n)
	if err != nil {
		return err
	}
	fmt.Printf("%.1f µs of CPU per wake, woken late by p50 %.0f µs, p99 %.0f µs (%d wakes every %v in %v)\n",
		us(w.cpu), us(w.lateP50), us(w.lateP99), *n, *every, w.took.Round(time.Millisecond))
	return nil
}

func us(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

// wakeStats is what measureWakes found: the thread's CPU per wake, how
// late its wakes came (from just before the timer was armed, so a system
// call's time over), and the time it all took.
type wakeStats struct {
	cpu, lateP50, lateP99, took time.Duration
}

// measureWakes sleeps n times for every. How late a wake comes is a floor
// under any generator's send delay on this machine: one that sleeps until
// its next send sends that late, whatever it does awake.
func measureWakes(every time.Duration, n int) (wakeStats, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	ep, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return wakeStats{}, err
	}
	defer unix.Close(ep)
	tfd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_CLOEXEC|unix.TFD_NONBLOCK)
	if err != nil {
		return wakeStats{}, err
	}
	defer unix.Close(tfd)
	if err := unix.EpollCtl(ep, unix.EPOLL_CTL_ADD, tfd, &unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(tfd)}); err != nil {
		return wakeStats{}, err
	}
	events := make([]unix.EpollEvent, 1)
	spec := unix.ItimerSpec{Value: unix.NsecToTimespec(int64(every))}
	late := make([]time.Duration, n)
	var b [8]byte
	before, err := threadCPU()
	if err != nil {
		return wakeStats{}, err
	}
	start := time.Now()
	for i := range n {
		armed := time.Now()
		if err := unix.TimerfdSettime(tfd, 0, &spec, nil); err != nil {
			return wakeStats{}, err
		}
		// A raw epoll_wait, as the loop's: the Go runtime does not hand
		// the thread's P away, which would cost wakes of its own.
		for {
			_, _, e := syscall.RawSyscall6(unix.SYS_EPOLL_PWAIT, uintptr(ep), uintptr(unsafe.Pointer(&events[0])), 1, ^uintptr(0), 0, 0)
			if e != unix.EINTR {
				break
			}
		}
		late[i] = time.Since(armed) - every
		_, _ = unix.Read(tfd, b[:])
	}
	took := time.Since(start)
	after, err := threadCPU()
	if err != nil {
		return wakeStats{}, err
	}
	slices.Sort(late)
	return wakeStats{cpu: (after - before) / time.Duration(n), lateP50: late[n/2], lateP99: late[n*99/100], took: took}, nil
}

// threadCPU is the calling thread's CPU time so far, user and system.
func threadCPU() (time.Duration, error) {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_THREAD, &ru); err != nil {
		return 0, err
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), nil
}
