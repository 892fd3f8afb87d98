// Package loadtest wires one run end to end: schedule → engine → recorder
// → verify, and returns the result. The CLI and the examples share it; it
// never prints.
package loadtest

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/openload/openload/internal/engine"
	"github.com/openload/openload/recorder"
	"github.com/openload/openload/schedule"
	"github.com/openload/openload/verify"
)

// Options describe one run.
type Options struct {
	URL         *url.URL
	BuiltinStub string // description of an in-process stub target, if any
	Method      string
	Header      http.Header
	Redact      []string // header names to redact in the result, beyond the default secrets
	Body        []byte
	Schedule    schedule.Spec
	Connections int
	Timeout     time.Duration
	Drain       time.Duration
	Log         *recorder.LogWriter // optional per-request log
	// ClassHeaders group responses by these headers' values.
	ClassHeaders []string
	// ServerTiming reports the Server-Timing metrics of responses.
	ServerTiming bool
	Verify       verify.Options
}

// Run executes the run and returns its result with the checks filled in,
// and the findings. The error is non-nil only when the run could not be
// carried out at all; a log write failure is reported in the error after a
// complete result.
func Run(ctx context.Context, o Options) (*recorder.Result, []verify.Finding, error) {
	sched, err := schedule.New(o.Schedule)
	if err != nil {
		return nil, nil, err
	}
	if o.Method == "" {
		o.Method = http.MethodGet
	}
	res := &recorder.Result{
		Tool: "openload",
		Config: recorder.Config{
			Target:       o.URL.String(),
			BuiltinStub:  o.BuiltinStub,
			Method:       o.Method,
			Headers:      recorder.RedactHeaders(o.Header, o.Redact...),
			BodyBytes:    len(o.Body),
			Arrival:      o.Schedule.Kind,
			Rate:         o.Schedule.Rate,
			Duration:     o.Schedule.Duration.String(),
			Seed:         o.Schedule.Seed,
			Connections:  o.Connections,
			Timeout:      o.Timeout.String(),
			Drain:        o.Drain.String(),
			Schedule:     sched.Name(),
			ClassHeaders: o.ClassHeaders,
			ServerTiming: o.ServerTiming,
		},
		Counts: recorder.Counts{Expected: sched.Expected()},
	}
	rec := recorder.New(o.Log)
	rec.TrackClasses(o.ClassHeaders)
	stats, err := engine.Run(ctx, engine.Config{
		URL:          o.URL,
		Method:       o.Method,
		Header:       o.Header,
		Body:         o.Body,
		Connections:  o.Connections,
		Timeout:      o.Timeout,
		Drain:        o.Drain,
		ClassHeaders: o.ClassHeaders,
		ServerTiming: o.ServerTiming,
	}, sched, rec)
	if err != nil {
		return nil, nil, err
	}
	var logErr error
	if o.Log != nil {
		if err := o.Log.Flush(); err != nil {
			logErr = fmt.Errorf("per-request log: %w", err)
		}
	}
	res.Started = stats.Start
	res.Elapsed = stats.End.Seconds()
	res.Interrupted = stats.Interrupted
	res.Limit = recorder.Limit{Connections: o.Connections, MaxInFlight: stats.MaxInFlight, Waited: stats.LimitWaited}
	if err := rec.Fill(res); err != nil {
		return res, nil, fmt.Errorf("encoding histograms: %w", err)
	}
	span := o.Schedule.Duration.Seconds()
	if stats.Interrupted {
		span = stats.ScheduleEnd.Seconds()
	}
	if span > 0 {
		res.SendRate = float64(res.Counts.Sent) / span
	}
	findings := verify.Run(res, o.Verify)
	res.Checks = verify.ToChecks(findings)
	return res, findings, logErr
}
