package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Live progress of a cluster run: every progressEvery the runner reads
// each running shard's --metrics-addr through the API server's pod proxy
// (kubectl get --raw …/pods/POD:PORT/proxy/metrics), sums the shards'
// counters and prints one line, as a local run's progress does. Without
// --metrics-addr the shards serve nothing to read, and no line is shown.

// progressEvery is how often the line is refreshed; tests shorten it.
var progressEvery = time.Second

// progressTimeout bounds one refresh's reads: a pod that does not answer
// in this long is left out of that line (the ticks it overruns are
// skipped).
const progressTimeout = 5 * time.Second

// shardFigures are the counters of one shard's /metrics.
type shardFigures struct {
	scheduled, sent, failed, inFlight float64
}

// progressSeries are the series read, by name.
var progressSeries = map[string]func(*shardFigures, float64){
	"openload_requests_scheduled_total": func(f *shardFigures, v float64) { f.scheduled += v },
	"openload_requests_sent_total":      func(f *shardFigures, v float64) { f.sent += v },
	"openload_requests_failed_total":    func(f *shardFigures, v float64) { f.failed += v },
	"openload_requests_timed_out_total": func(f *shardFigures, v float64) { f.failed += v },
	"openload_requests_in_flight":       func(f *shardFigures, v float64) { f.inFlight += v },
}

// parseFigures reads the series of progressSeries from Prometheus's
// text format, each summed over its labels.
func parseFigures(text []byte) shardFigures {
	var f shardFigures
	for _, l := range bytes.Split(text, []byte("\n")) {
		if len(l) == 0 || l[0] == '#' {
			continue
		}
		name, rest := l, []byte(nil)
		if i := bytes.IndexAny(l, "{ "); i >= 0 {
			name, rest = l[:i], l[i:]
		}
		add, ok := progressSeries[string(name)]
		if !ok {
			continue
		}
		if j := bytes.LastIndexByte(rest, '}'); j >= 0 {
			rest = rest[j+1:]
		}
		// the value, then an optional timestamp
		if fields := strings.Fields(string(rest)); len(fields) > 0 {
			if v, err := strconv.ParseFloat(fields[0], 64); err == nil {
				add(&f, v)
			}
		}
	}
	return f
}

// liveProgress is the progress line's state, fed by the watch.
type liveProgress struct {
	mu    sync.Mutex
	pods  []string // the running shards' pods
	start time.Time
	n     int
}

// seen takes the watch's latest pods and start.
func (lp *liveProgress) seen(pods []shardPod, start time.Time) {
	var names []string
	for _, sp := range pods {
		if sp.seen && !sp.gone && sp.pod.Phase == "Running" {
			names = append(names, sp.pod.Name)
		}
	}
	lp.mu.Lock()
	defer lp.mu.Unlock()
	lp.pods, lp.start = names, start
}

// run prints the line every progressEvery until stop is called; stop
// clears a line rewritten in place.
func (lp *liveProgress) run(ctx context.Context, jr *jobRunner, port int, total time.Duration, w io.Writer) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	inPlace := isTerminal(w)
	go func() {
		defer close(done)
		tick := time.NewTicker(progressEvery)
		defer tick.Stop()
		var last shardFigures
		var lastAt time.Time
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			lp.mu.Lock()
			pods, start := lp.pods, lp.start
			lp.mu.Unlock()
			if len(pods) == 0 {
				continue
			}
			sum, answered := jr.figures(ctx, pods, port)
			now := time.Now()
			if ctx.Err() != nil || answered == 0 || sum.scheduled == 0 {
				continue
			}
			if !lastAt.IsZero() {
				secs := now.Sub(lastAt).Seconds()
				elapsed := time.Duration(0)
				if !start.IsZero() {
					elapsed = now.Sub(start)
				}
				line := fmt.Sprintf("%5.1fs/%s · sent %.0f/s (scheduled %.0f/s) · in flight %.0f · errors %.0f · %d of %d shards answering",
					elapsed.Seconds(), total, (sum.sent-last.sent)/secs, (sum.scheduled-last.scheduled)/secs, sum.inFlight, sum.failed, answered, lp.n)
				if inPlace {
					fmt.Fprintf(w, "\r\033[K%s", line)
				} else {
					fmt.Fprintf(w, "openload: %s: %s\n", jr.cmd, line)
				}
			}
			last, lastAt = sum, now
		}
	}()
	return func() {
		cancel()
		<-done
		if inPlace {
			fmt.Fprint(w, "\r\033[K")
		}
	}
}

// figures reads every pod's metrics at once and sums them; answered is
// how many pods answered.
func (jr *jobRunner) figures(ctx context.Context, pods []string, port int) (sum shardFigures, answered int) {
	ctx, cancel := context.WithTimeout(ctx, progressTimeout)
	defer cancel()
	ns := jr.ns
	if ns == "" {
		ns = "default"
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, pod := range pods {
		wg.Add(1)
		go func() {
			defer wg.Done()
			b, err := jr.kc.run(ctx, nil, "get", "--raw", fmt.Sprintf("/api/v1/namespaces/%s/pods/%s:%d/proxy/metrics", ns, pod, port))
			if err != nil {
				return
			}
			f := parseFigures(b)
			mu.Lock()
			defer mu.Unlock()
			sum.scheduled += f.scheduled
			sum.sent += f.sent
			sum.failed += f.failed
			sum.inFlight += f.inFlight
			answered++
		}()
	}
	wg.Wait()
	return sum, answered
}
