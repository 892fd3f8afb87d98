package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/openload/openload/internal/kube"
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

// shardFigures are the figures of one shard's /metrics (or of several,
// summed: add).
type shardFigures struct {
	scheduled, sent, completed, failed, inFlight float64
	// start is the run's offset 0 in Unix seconds, the instant it waits
	// for while it waits; 0 not served.
	start float64
}

// add adds g's counters to f's; the start is the latest.
func (f *shardFigures) add(g shardFigures) {
	f.scheduled += g.scheduled
	f.sent += g.sent
	f.completed += g.completed
	f.failed += g.failed
	f.inFlight += g.inFlight
	f.start = max(f.start, g.start)
}

// progressSeries are the series read, by name.
var progressSeries = map[string]func(*shardFigures, float64){
	"openload_requests_scheduled_total": func(f *shardFigures, v float64) { f.scheduled += v },
	"openload_requests_sent_total":      func(f *shardFigures, v float64) { f.sent += v },
	"openload_requests_completed_total": func(f *shardFigures, v float64) { f.completed += v },
	"openload_requests_failed_total":    func(f *shardFigures, v float64) { f.failed += v },
	"openload_requests_timed_out_total": func(f *shardFigures, v float64) { f.failed += v },
	"openload_requests_in_flight":       func(f *shardFigures, v float64) { f.inFlight += v },
	"openload_run_start_time_seconds":   func(f *shardFigures, v float64) { f.start = max(f.start, v) },
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
				line := fmt.Sprintf("%.1fs/%s · sent %.0f/s of %.0f/s · in flight %.0f · errors %.0f · %d of %d shards answering",
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
	for _, f := range jr.podFigures(ctx, pods, port) {
		if f != nil {
			sum.add(*f)
			answered++
		}
	}
	return sum, answered
}

// podFigures reads every pod's metrics at once, through the API
// server's pod proxy: each pod's figures, nil for a pod that did not
// answer.
func (jr *jobRunner) podFigures(ctx context.Context, pods []string, port int) []*shardFigures {
	ctx, cancel := context.WithTimeout(ctx, progressTimeout)
	defer cancel()
	ns := jr.ns
	if ns == "" {
		ns = "default"
	}
	out := make([]*shardFigures, len(pods))
	var wg sync.WaitGroup
	for i, pod := range pods {
		wg.Go(func() {
			b, err := jr.kc.run(ctx, nil, "get", "--raw", fmt.Sprintf("/api/v1/namespaces/%s/pods/%s:%d/proxy/metrics", ns, pod, port))
			if err != nil {
				return
			}
			f := parseFigures(b)
			out[i] = &f
		})
	}
	wg.Wait()
	return out
}

// jobLive is what 'k8s status' shows of a Job's shards beside their
// pods' states: each running shard's figures, read as the live progress
// reads them (podFigures), and where the run is.
type jobLive struct {
	port    int             // the shards' --metrics-addr port; 0 none
	figs    []*shardFigures // by shard; nil: not running, or no answer
	planned time.Duration   // the schedule's length (kube.AnnotationPlanned); 0 unknown
	startAt time.Time       // the Job's fixed start, when it has one
}

// readLive reads the running shards' figures of a Job that has not
// ended.
func (jr *jobRunner) readLive(ctx context.Context, st kube.JobStatus, pods []shardPod) jobLive {
	live := jobLive{port: metricsPortOf(st.Args), figs: make([]*shardFigures, len(pods)), planned: st.Planned}
	live.startAt, _ = time.Parse(time.RFC3339, st.StartAt)
	if live.port == 0 || st.Ended() {
		return live
	}
	var names []string
	var idx []int
	for i, sp := range pods {
		if sp.seen && !sp.gone && sp.pod.Phase == "Running" {
			names, idx = append(names, sp.pod.Name), append(idx, i)
		}
	}
	for k, f := range jr.podFigures(ctx, names, live.port) {
		live.figs[idx[k]] = f
	}
	return live
}

// shard is shard i's figures as a status line ends: " · sent 480 ·
// completed 478 · failed 2", or "".
func (live jobLive) shard(i int) string {
	f := live.figs[i]
	if f == nil {
		return ""
	}
	return fmt.Sprintf(" · sent %.0f · completed %.0f · failed %.0f", f.sent, f.completed, f.failed)
}

// total is the line of the shards' figures summed, and where the run
// is: "live: 12s of 20s · sent 1440 · completed 1430 · failed 2 · in
// flight 8 · 3 of 4 shards answering".
func (live jobLive) total(n int, now time.Time) string {
	if live.port == 0 {
		return "live figures: none, the run serves no --metrics-addr to read them from (a run given --metrics-addr :9464 serves them)"
	}
	var sum shardFigures
	answered := 0
	for _, f := range live.figs {
		if f != nil {
			sum.add(*f)
			answered++
		}
	}
	start := live.startAt
	if sum.start > 0 {
		sec, frac := math.Modf(sum.start)
		start = time.Unix(int64(sec), int64(frac*1e9))
	}
	at := "start not set yet"
	if !start.IsZero() {
		if d := now.Sub(start); d >= 0 {
			at = d.Round(time.Second).String()
			if live.planned > 0 {
				at += " of " + live.planned.String()
			}
		} else {
			at = fmt.Sprintf("starts in %v", (-d).Round(time.Second))
		}
	}
	if answered == 0 {
		return fmt.Sprintf("live: %s · no shard's figures yet (0 of %d shards answering)", at, n)
	}
	return fmt.Sprintf("live: %s · sent %.0f · completed %.0f · failed %.0f · in flight %.0f · %d of %d shards answering",
		at, sum.sent, sum.completed, sum.failed, sum.inFlight, answered, n)
}

// metricsPortOf is the port a Job's shards serve their metrics on, read
// from their arguments (--metrics-addr=:9464); 0 none.
func metricsPortOf(args []string) int {
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, "--metrics-addr="); ok {
			return portOf(v)
		}
	}
	return 0
}

// portOf is the port of a host:port address; 0 when it has none.
func portOf(addr string) int {
	_, ps, err := net.SplitHostPort(addr)
	if err != nil {
		return 0
	}
	p, _ := strconv.Atoi(ps)
	return p
}
