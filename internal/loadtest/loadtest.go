// Package loadtest wires one run end to end: schedule → engine → recorder
// → verify, and returns the result. The CLI and the examples share it; it
// never prints.
package loadtest

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/openload/openload/internal/engine"
	"github.com/openload/openload/internal/retry"
	"github.com/openload/openload/recorder"
	"github.com/openload/openload/schedule"
	"github.com/openload/openload/verify"
)

// Options describe one run.
type Options struct {
	URL         *url.URL
	BuiltinStub string // description of a built-in stub target, if any
	Method      string
	Header      http.Header
	Redact      []string // header names to redact in the result, beyond the default secrets
	Body        []byte
	Schedule    schedule.Spec
	// Sched, if set, replaces the schedule Schedule describes: a ready
	// one, such as a replay of recorded arrivals (see resolveSchedule).
	Sched       schedule.Schedule
	Connections int
	Timeout     time.Duration
	Drain       time.Duration
	Log         *recorder.LogWriter // optional per-request log
	// IntervalLog, if set, receives HdrHistogram's interval log: one
	// interval per second, tags response, service and send_delay.
	IntervalLog io.Writer
	// Progress, if set, gets a snapshot about once a second (open model).
	Progress func(engine.Progress)
	// ClassHeaders group responses by these headers' values.
	ClassHeaders []string
	// ServerTiming reports the Server-Timing metrics of responses.
	ServerTiming bool
	Verify       verify.Options

	// AutoHeaders are response headers read without being asked, usually
	// DefaultAutoHeaders(): Server-Timing, unless ServerTiming is set,
	// and class headers besides ClassHeaders, within
	// recorder.MaxClassHeaders. Each is reported only when responses
	// carried it.
	AutoHeaders []string

	// Closed runs Connections users in a closed loop (engine.RunClosed)
	// instead of the open schedule: paced to Schedule.Rate, or as fast as
	// they go when Schedule.Rate is 0, for Schedule.Duration, pausing Think
	// after each response. Schedule.Kind must then be constant (or empty).
	// A paced closed run also records the coordinated-omission-corrected
	// response histogram, with one user's interval Connections ÷ Rate.
	Closed bool
	Think  time.Duration

	// StampHeader names a request header that carries each request's
	// scheduled time, Unix ns (engine.Config.StampHeader).
	StampHeader string
	// DwellBound, if > 0, counts the answers whose Server-Timing dwell
	// exceeds it (recorder.Recorder.BoundDwell); it implies ServerTiming.
	DwellBound time.Duration

	// Protocol is engine.HTTP1 (also when empty), engine.HTTP2 or
	// engine.H2C; MaxStreams caps the streams per HTTP/2 connection (0:
	// the server's limit); TLS, if set, configures TLS for https URLs.
	Protocol   string
	MaxStreams int
	TLS        *tls.Config
	// Lean uses the engine's lean HTTP/1.1 path where it applies
	// (engine.Config); the CLI turns it on unless --net-http.
	Lean bool
	// Epoll drives the lean path with the engine's event loop where it
	// applies (engine.Config); the CLI turns it on unless --no-epoll.
	Epoll bool

	// Retry is the retry policy (package retry); the zero value retries
	// nothing.
	Retry retry.Policy

	// Insecure skips TLS certificate verification; FollowRedirects follows
	// up to engine.MaxRedirects redirects per request; MaxBody, if > 0,
	// caps the response body bytes read (engine.Config).
	Insecure        bool
	FollowRedirects bool
	MaxBody         int64

	// StubChild: the built-in stub (BuiltinStub) runs in a child process,
	// so the generator's figures are openload's alone; without it they
	// include the stub's work.
	StubChild bool
}

// DefaultAutoHeaders are the response headers the CLI reads without being
// asked: what servers, the stub among them, say about their answers. Keep
// the list short: each class header in it takes one of the
// recorder.MaxClassHeaders a run can track.
func DefaultAutoHeaders() []string { return []string{serverTiming, "X-Stub-Source"} }

const serverTiming = "Server-Timing"

// autoHeaders splits o.AutoHeaders into those that apply: Server-Timing
// unless ServerTiming asked for it anyway, and the class headers that
// ClassHeaders does not name and that fit.
func (o Options) autoHeaders() (timing bool, classes []string) {
	for _, h := range o.AutoHeaders {
		h = http.CanonicalHeaderKey(h)
		switch {
		case h == serverTiming:
			timing = !o.ServerTiming
		case !slices.ContainsFunc(o.ClassHeaders, func(c string) bool { return strings.EqualFold(c, h) }) &&
			!slices.Contains(classes, h) && len(o.ClassHeaders)+len(classes) < recorder.MaxClassHeaders:
			classes = append(classes, h)
		}
	}
	return timing, classes
}

// Run executes the run and returns its result with the checks filled in,
// and the findings. The error is non-nil only when the run could not be
// carried out at all; a log write failure, or a client that stopped before
// the schedule's end, is reported in the error after a complete result.
func Run(ctx context.Context, o Options) (*recorder.Result, []verify.Finding, error) {
	o.ServerTiming = o.ServerTiming || o.DwellBound > 0
	if o.Closed {
		return runClosed(ctx, o)
	}
	sched, err := o.resolveSchedule()
	if err != nil {
		return nil, nil, err
	}
	res := o.newResult(sched.Name())
	res.Config.Arrival = o.Schedule.Kind
	res.Config.Seed = o.Schedule.Seed
	res.Counts.Expected = sched.Expected()
	rec := o.newRecorder()
	stats, err := engine.Run(ctx, o.engineConfig(), sched, rec)
	if err != nil {
		return nil, nil, err
	}
	return finish(o, res, rec, stats)
}

// newResult starts the result of a run: the configuration both modes
// share, with the schedule's description.
func (o *Options) newResult(schedule string) *recorder.Result {
	if o.Method == "" {
		o.Method = http.MethodGet
	}
	return &recorder.Result{
		Tool: "openload",
		Config: recorder.Config{
			Target:       o.URL.String(),
			BuiltinStub:  o.BuiltinStub,
			StubChild:    o.StubChild,
			Method:       o.Method,
			Headers:      recorder.RedactHeaders(o.Header, o.Redact...),
			BodyBytes:    len(o.Body),
			Rate:         o.Schedule.Rate,
			Duration:     o.Schedule.Duration.String(),
			Connections:  o.Connections,
			Timeout:      o.Timeout.String(),
			Drain:        o.Drain.String(),
			Schedule:     schedule,
			ClassHeaders: o.ClassHeaders,
			ServerTiming: o.ServerTiming,
			AutoHeaders:  o.autoHeaderNames(),
			StampHeader:  o.StampHeader,
		},
	}
}

// autoHeaderNames are the headers of o.AutoHeaders that apply.
func (o Options) autoHeaderNames() []string {
	timing, names := o.autoHeaders()
	if timing {
		names = append([]string{serverTiming}, names...)
	}
	return names
}

// newRecorder returns the run's recorder: its log, classes, dwell bound
// and interval log.
func (o Options) newRecorder() *recorder.Recorder {
	rec := recorder.New(o.Log)
	rec.TrackClasses(o.ClassHeaders)
	_, auto := o.autoHeaders()
	rec.TrackClassesSeen(auto)
	o.boundDwell(rec)
	if o.IntervalLog != nil {
		rec.SetIntervalLog(o.IntervalLog)
	}
	return rec
}

func (o Options) engineConfig() engine.Config {
	timing, auto := o.autoHeaders()
	return engine.Config{
		URL:          o.URL,
		Method:       o.Method,
		Header:       o.Header,
		Body:         o.Body,
		Connections:  o.Connections,
		Timeout:      o.Timeout,
		Drain:        o.Drain,
		ClassHeaders: append(slices.Clip(o.ClassHeaders), auto...),
		ServerTiming: o.ServerTiming || timing,
		StampHeader:  http.CanonicalHeaderKey(o.StampHeader),
		Progress:     o.Progress,
		Protocol:     o.Protocol,
		MaxStreams:   o.MaxStreams,
		TLS:          o.TLS,
		Lean:         o.Lean,
		Epoll:        o.Epoll,
		Retry:        o.Retry,

		Insecure:        o.Insecure,
		FollowRedirects: o.FollowRedirects,
		MaxBody:         o.MaxBody,
	}
}

// finish fills the measured parts of res after the engine has run, and
// verifies it.
func finish(o Options, res *recorder.Result, rec *recorder.Recorder, stats engine.Stats) (*recorder.Result, []verify.Finding, error) {
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
	if p := stats.Predial; p.Wanted > 0 {
		res.Limit.Predial = &recorder.Predial{Wanted: p.Wanted, Opened: p.Opened, Ms: math.Round(float64(p.Took)/1e3) / 1e3}
		if p.Err != nil {
			res.Limit.Predial.Error = p.Err.Error()
		}
	}
	res.Config.Protocol, res.Config.MaxStreams, res.Config.Client = o.Protocol, o.MaxStreams, stats.Client
	res.Config.Insecure, res.Config.FollowRedirects, res.Config.MaxBody = o.Insecure, o.FollowRedirects, o.MaxBody
	if res.Config.Protocol == "" {
		res.Config.Protocol = engine.HTTP1
	}
	gen := stats.Generator
	res.Generator = &gen
	if err := rec.Fill(res); err != nil {
		return res, nil, fmt.Errorf("encoding histograms: %w", err)
	}
	o.fillRetries(res, rec)
	if err := rec.IntervalLogErr(); err != nil && logErr == nil {
		logErr = fmt.Errorf("interval log: %w", err)
	}
	if stats.LoopErr != nil {
		// The result holds every request the loop had; the schedule
		// check shows the ones it never took.
		logErr = fmt.Errorf("the client's event loop stopped: %w", stats.LoopErr)
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

// runClosed is Run for a closed-loop run.
func runClosed(ctx context.Context, o Options) (*recorder.Result, []verify.Finding, error) {
	spec := o.Schedule
	cl := engine.Closed{Users: o.Connections, Rate: spec.Rate, Duration: spec.Duration, Think: o.Think}
	switch {
	case o.Sched != nil:
		return nil, nil, fmt.Errorf("closed mode paces its users evenly: a ready schedule (%s) is not supported", o.Sched.Name())
	case spec.Kind != "" && spec.Kind != schedule.Constant:
		return nil, nil, fmt.Errorf("closed mode paces users evenly: arrival %q is not supported", spec.Kind)
	case spec.Rate < 0 || spec.Duration <= 0:
		return nil, nil, fmt.Errorf("closed mode: rate must be ≥ 0 and duration > 0, got %v and %v", spec.Rate, spec.Duration)
	}
	res := o.newResult(ClosedName(cl))
	res.Config.Mode = recorder.ModeClosed
	res.Config.Users = o.Connections
	if o.Think > 0 {
		res.Config.Think = o.Think.String()
	}
	rec := o.newRecorder()
	if spec.Rate > 0 {
		sched := schedule.NewConstant(spec.Rate, spec.Duration)
		res.Config.Arrival = schedule.Constant
		res.Counts.Expected = sched.Expected()
		rec.Correct(cl.Interval())
	}
	stats, err := engine.RunClosed(ctx, o.engineConfig(), cl, rec)
	if err != nil {
		return nil, nil, err
	}
	return finish(o, res, rec, stats)
}

// ClosedName describes a closed run: "closed loop: 1 user paced to 100/s
// for 1m40s" or "closed loop: 4 users, think 10ms, unpaced for 10s".
func ClosedName(cl engine.Closed) string {
	users := fmt.Sprintf("%d users", cl.Users)
	if cl.Users == 1 {
		users = "1 user"
	}
	think := ""
	if cl.Think > 0 {
		think = fmt.Sprintf(", think %s", cl.Think)
	}
	if cl.Rate > 0 {
		return fmt.Sprintf("closed loop: %s%s paced to %s/s for %s", users, think, schedule.FormatRate(cl.Rate), cl.Duration)
	}
	return fmt.Sprintf("closed loop: %s%s, unpaced, for %s", users, think, cl.Duration)
}
