package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// arrivalBins is how long the target counts arrivals after a reset, in
// milliseconds: enough for the benchmark's 60 s memory run and its drain.
const arrivalBins = 180_000

// arrivals counts the requests reaching the handler per millisecond since
// the last reset. It is the benchmark's one yardstick of schedule for
// every tool: the tools report nothing to it, and the requests of each are
// timed by the same clock at the same place.
type arrivals struct {
	start atomic.Int64 // the last reset, in monotonic ns since epoch + 1; 0 before the first
	past  atomic.Int64 // arrivals after the last bin
	bins  [arrivalBins]atomic.Int32
}

// epoch anchors the monotonic clock readings, so that a step of the wall
// clock during a run cannot move arrivals between bins.
var epoch = time.Now()

func (a *arrivals) note(now time.Time) {
	s := a.start.Load()
	if s == 0 {
		return
	}
	b := (int64(now.Sub(epoch)) + 1 - s) / int64(time.Millisecond)
	if b < 0 || b >= arrivalBins {
		a.past.Add(1)
		return
	}
	a.bins[b].Add(1)
}

// reset starts counting afresh. Arrivals racing with it may land on either
// side; the benchmark resets between runs, when no request is in flight.
func (a *arrivals) reset(now time.Time) {
	for i := range a.bins {
		a.bins[i].Store(0)
	}
	a.past.Store(0)
	a.start.Store(int64(now.Sub(epoch)) + 1)
}

// write sends the counts as "ms count" lines for the non-empty bins, then
// "past N" for the arrivals after the last bin.
func (a *arrivals) write(w io.Writer) error {
	bw := bufio.NewWriter(w)
	for i := range a.bins {
		if n := a.bins[i].Load(); n > 0 {
			fmt.Fprintf(bw, "%d %d\n", i, n)
		}
	}
	fmt.Fprintf(bw, "past %d\n", a.past.Load())
	return bw.Flush()
}

// parseArrivals reads what write wrote back into per-millisecond counts.
func parseArrivals(r io.Reader) (counts []int64, past int64, err error) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) != 2 {
			return nil, 0, fmt.Errorf("arrivals: bad line %q", sc.Text())
		}
		n, err := strconv.ParseInt(f[1], 10, 64)
		if err != nil {
			return nil, 0, fmt.Errorf("arrivals: bad line %q", sc.Text())
		}
		if f[0] == "past" {
			past = n
			continue
		}
		ms, err := strconv.Atoi(f[0])
		if err != nil || ms < 0 || ms >= arrivalBins {
			return nil, 0, fmt.Errorf("arrivals: bad line %q", sc.Text())
		}
		for len(counts) <= ms {
			counts = append(counts, 0)
		}
		counts[ms] = n
	}
	return counts, past, sc.Err()
}

// lateness gives how late each arrival came against the constant rate the
// tool was asked for (per second). Arrival k is due at t0 + k/rate; the
// target cannot know t0, the moment the tool meant its schedule to start,
// so it takes the one the median arrival implies: half the arrivals are
// later than their due time, half earlier, and a tool that holds its
// schedule has a narrow tail above the median. An arrival's time is the
// middle of its millisecond, known to ±0.5 ms, and so is the median it is
// compared with: lateness is known to within 1 ms. It is the
// tool's send delay plus the network and the target's own delay before its
// handler runs, the same for every tool. lateness returns the quantiles qs
// (in percent) in milliseconds above the median, and the largest.
func lateness(counts []int64, rate float64, qs ...float64) (late []float64, largest float64, err error) {
	if !(rate > 0) || math.IsInf(rate, 0) {
		return nil, 0, fmt.Errorf("rate %v: want a positive rate", rate)
	}
	perMS := rate / 1000
	// offset(k) = t_k − k/perMS is arrival k's due-time offset; the
	// histogram holds offset − the least offset (≥ 0), in microseconds.
	// Within a bin the last arrival has the least.
	least, k := math.Inf(1), int64(0)
	for b, n := range counts {
		if n == 0 {
			continue
		}
		k += n
		least = min(least, float64(b)+0.5-float64(k-1)/perMS)
	}
	if k == 0 {
		return nil, 0, fmt.Errorf("no arrivals")
	}
	h := hdrhistogram.New(1, 3_600_000_000, 3)
	k = 0
	for b, n := range counts {
		for range n {
			us := 1000 * (float64(b) + 0.5 - float64(k)/perMS - least)
			if err := h.RecordValue(int64(math.Round(us))); err != nil {
				return nil, 0, err
			}
			k++
		}
	}
	med := h.ValueAtQuantile(50)
	for _, q := range qs {
		late = append(late, float64(h.ValueAtQuantile(q)-med)/1000)
	}
	return late, float64(h.Max()-med) / 1000, nil
}

// lag prints how late the arrivals since the last reset came at RATE:
// "p99 p99.9 max" in milliseconds above the median (see lateness).
func lag(args []string) error {
	if len(args) != 2 {
		return fmt.Errorf("lag URL RATE")
	}
	rate, err := strconv.ParseFloat(args[1], 64)
	if err != nil {
		return fmt.Errorf("lag: rate %q: %v", args[1], err)
	}
	b, err := control(args[0], "/arrivals")
	if err != nil {
		return err
	}
	counts, past, err := parseArrivals(bytes.NewReader(b))
	if err != nil {
		return err
	}
	if past > 0 {
		return fmt.Errorf("lag: %d arrivals after the last of %d bins", past, arrivalBins)
	}
	late, largest, err := lateness(counts, rate, 99, 99.9)
	if err != nil {
		return fmt.Errorf("lag: %v", err)
	}
	fmt.Printf("%.3f %.3f %.3f\n", late[0], late[1], largest)
	return nil
}

// reset starts the target's count of arrivals afresh (GET URL/arrivals/reset).
func reset(args []string) error {
	if len(args) != 1 {
		return fmt.Errorf("reset URL")
	}
	_, err := control(args[0], "/arrivals/reset")
	return err
}
