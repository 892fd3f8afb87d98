package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/pflag"

	"github.com/openload/openload/internal/engine"
	"github.com/openload/openload/internal/loadtest"
	"github.com/openload/openload/internal/metrics"
)

// metricsOptions are the flags of live Prometheus metrics (package
// metrics): --metrics-addr serves them, --metrics-run names the run,
// --metrics-grace keeps serving after the end; --metrics-push sends them
// (pushflags.go).
type metricsOptions struct {
	addr  string
	run   string
	grace time.Duration
	push  pushOptions
}

// defaultMetricsGrace is how long the metrics wait, at most, for the
// scrape that follows the final figures: the server closes as soon as
// that scrape is served, so the grace costs only when none comes. 30 s is
// twice the most common scrape interval (15 s, Prometheus's example
// configuration) and the interval of kube-prometheus-stack's monitors:
// the 5 s it replaced lost the finals of 2-3 runs in 4 under the shipped
// PodMonitor's 10 s.
const defaultMetricsGrace = 30 * time.Second

func (m *metricsOptions) flags(fs *pflag.FlagSet) {
	fs.StringVar(&m.addr, "metrics-addr", "", "serve live Prometheus metrics of the run on http://`HOST:PORT`/metrics from before the first send until it is scraped once after the result is written, --metrics-grace at most (an empty host: every interface)")
	fs.StringVar(&m.run, "metrics-run", "", "the `id` in the metrics' run label (default: the start time, --start-at's when given, as 2006-01-02T15:04:05Z)")
	fs.DurationVar(&m.grace, "metrics-grace", defaultMetricsGrace, "after the result is written, keep serving the metrics until one scrape has read the final figures, this long at most; set it above the scrape interval")
	m.push.flags(fs)
}

func (m *metricsOptions) validate(fs *pflag.FlagSet) error {
	if err := m.push.validate(fs); err != nil {
		return err
	}
	if m.addr == "" {
		if fs.Changed("metrics-grace") {
			return errors.New("--metrics-grace applies with --metrics-addr only")
		}
		if fs.Changed("metrics-run") && m.push.url == "" {
			return errors.New("--metrics-run applies with --metrics-addr or --metrics-push only")
		}
		return nil
	}
	if err := metrics.CheckAddr(m.addr); err != nil {
		return fmt.Errorf("--metrics-addr %v", err)
	}
	if m.grace < 0 {
		return fmt.Errorf("--metrics-grace must be ≥ 0, got %v", m.grace)
	}
	return nil
}

// liveMetrics is a run's metrics server and pusher (loadtest.Live),
// either nil when its flag is not given.
type liveMetrics struct {
	exp    *metrics.Exporter
	srv    *metrics.Server
	grace  time.Duration
	push   *metrics.Pusher
	m      *metricsOptions
	quiet  bool
	stderr io.Writer
}

// start binds --metrics-addr and serves the exporter's registry, with the
// run label (and shard, when sharded) on every series. It is called
// before anything is sent, so that a port in use costs nothing.
func (m *metricsOptions) start(o *loadOptions, stderr io.Writer) (*liveMetrics, error) {
	id := m.run
	if id == "" {
		// Shards given one --start-at share it, and so one run id.
		at := o.run.StartAt
		if at.IsZero() {
			at = time.Now()
		}
		id = at.UTC().Format("2006-01-02T15:04:05Z")
	}
	labels := map[string]string{"run": id}
	if sh := o.run.Shard; sh.Enabled() {
		labels["shard"] = sh.String()
	}
	exp := metrics.New(labels)
	// Buckets up to twice the timeout: response time and TTFT from the
	// schedule add the send delay to it; more would cost series and tell
	// nothing.
	exp.SetMaxLatency(2 * o.run.Timeout)
	lm := &liveMetrics{exp: exp, grace: m.grace, m: m, quiet: o.quiet, stderr: stderr}
	if m.addr != "" {
		srv, err := metrics.Serve(m.addr, exp)
		if err != nil {
			return nil, fmt.Errorf("--metrics-addr %s: %v", m.addr, unwrapListen(err))
		}
		lm.srv = srv
		if !o.quiet {
			fmt.Fprintf(stderr, "openload: metrics on http://%s/metrics, run %q\n", srv.Addr(), id)
		}
	}
	lm.push = m.push.start(exp, id, o.quiet, stderr) // pushflags.go
	return lm, nil
}

// unwrapListen drops the "listen tcp ADDR:" the flag's message repeats.
func unwrapListen(err error) error {
	for {
		u := errors.Unwrap(err)
		if u == nil {
			return err
		}
		err = u
	}
}

// live is a run's loadtest.Setup.Live: start, nil without
// --metrics-addr and --metrics-push.
func (m *metricsOptions) live(o *loadOptions, stderr io.Writer) func() (loadtest.Live, error) {
	if m.addr == "" && m.push.url == "" {
		return nil
	}
	return func() (loadtest.Live, error) {
		lm, err := m.start(o, stderr)
		if err != nil {
			return nil, err // no *liveMetrics(nil) in the interface
		}
		return lm, nil
	}
}

// Observe returns the Observe hook of a run with these labels (scenario;
// point and rate), for loadtest.Rig.
func (lm *liveMetrics) Observe(labels map[string]string) func(engine.Live) {
	return lm.exp.Source(labels).Observe
}

// Stop makes the final push, then keeps serving until a scrape has read
// the final figures, the grace at most, then shuts the server down.
func (lm *liveMetrics) Stop() {
	if lm.push != nil {
		stopPush(lm.push, lm.m.push.shown(), lm.quiet, lm.stderr) // pushflags.go
	}
	if lm.srv == nil {
		return
	}
	noteGrace() // signal.go: a second signal now cuts only this wait
	wait, cancelWait := context.WithTimeout(context.Background(), lm.grace)
	lm.exp.FinalScraped(wait)
	cancelWait()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_ = lm.srv.Close(ctx) // the run's outcome is measured and written; a scrape cut short is Prometheus's to retry
}
