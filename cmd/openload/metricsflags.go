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
// --metrics-grace keeps serving after the end.
type metricsOptions struct {
	addr  string
	run   string
	grace time.Duration
}

// defaultMetricsGrace outlasts Prometheus's common scrape intervals up to
// 5 s, so that one scrape after the end sees the final figures.
const defaultMetricsGrace = 5 * time.Second

func (m *metricsOptions) flags(fs *pflag.FlagSet) {
	fs.StringVar(&m.addr, "metrics-addr", "", "serve live Prometheus metrics of the run on http://`HOST:PORT`/metrics from before the first send until --metrics-grace after the result is written (an empty host: every interface)")
	fs.StringVar(&m.run, "metrics-run", "", "the `id` in the metrics' run label (default: the start time, --start-at's when given, as 2006-01-02T15:04:05Z)")
	fs.DurationVar(&m.grace, "metrics-grace", defaultMetricsGrace, "keep serving the metrics this long after the result is written; set it to at least the scrape interval, so that the last scrape sees the end")
}

func (m *metricsOptions) validate(fs *pflag.FlagSet) error {
	if m.addr == "" {
		for _, name := range []string{"metrics-run", "metrics-grace"} {
			if fs.Changed(name) {
				return fmt.Errorf("--%s applies with --metrics-addr only", name)
			}
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

// liveMetrics is a run's metrics server (loadtest.Live).
type liveMetrics struct {
	exp   *metrics.Exporter
	srv   *metrics.Server
	grace time.Duration
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
	srv, err := metrics.Serve(m.addr, exp)
	if err != nil {
		return nil, fmt.Errorf("--metrics-addr %s: %v", m.addr, unwrapListen(err))
	}
	if !o.quiet {
		fmt.Fprintf(stderr, "openload: metrics on http://%s/metrics, run %q\n", srv.Addr(), id)
	}
	return &liveMetrics{exp: exp, srv: srv, grace: m.grace}, nil
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
// --metrics-addr.
func (m *metricsOptions) live(o *loadOptions, stderr io.Writer) func() (loadtest.Live, error) {
	if m.addr == "" {
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

// Stop keeps serving for the grace, then shuts the server down.
func (lm *liveMetrics) Stop() {
	time.Sleep(lm.grace)
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_ = lm.srv.Close(ctx) // the run's outcome is measured and written; a scrape cut short is Prometheus's to retry
}
