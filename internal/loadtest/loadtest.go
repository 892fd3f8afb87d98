// Package loadtest wires one run end to end: schedule → engine → recorder
// → verify, and returns the result. The CLI and the examples share it; it
// never prints. Start (session.go) assembles what a command describes, in
// one order, and returns each run judged with its objectives.
package loadtest

import (
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/openload/openload/field"
	"github.com/openload/openload/internal/engine"
	"github.com/openload/openload/internal/recorder"
	"github.com/openload/openload/result"
	"github.com/openload/openload/schedule"
	"github.com/openload/openload/verify"
)

// Options describe one run: the engine's configuration, held whole (what
// to send, how, and with which client), and what the run adds around it:
// the schedule, the recorder's outputs, the checks and the closed mode.
// Validate checks them all.
type Options struct {
	engine.Config // URL, Method, Header, Body, Connections, Timeout, Drain, … (engine.Config)

	BuiltinStub string   // description of a built-in stub target, if any
	Redact      []string // header names to redact in the result, beyond the default secrets
	Schedule    schedule.Spec
	// Sched, if set, replaces the schedule Schedule describes: a ready
	// one, such as a replay of recorded arrivals (see resolveSchedule).
	Sched schedule.Schedule
	// Shard, if enabled, sends only shard Shard.Index of Shard.Of of the
	// schedule (schedule.Shard; shard.go); with StartAt (engine.Config)
	// the shards start together.
	Shard schedule.Shard
	Log   *recorder.LogWriter // optional per-request log
	// IntervalLog, if set, receives HdrHistogram's interval log: one
	// interval per second, tags response, service and send_delay.
	IntervalLog io.Writer
	Verify      verify.Options
	// Objectives are the user's thresholds, carried with the run and
	// judged with openload's defaults once it has ended (Judged,
	// verify.Judge). Run measures and checks only: it leaves them be.
	Objectives []verify.Objective

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

	// DwellBound, if > 0, counts the answers whose Server-Timing dwell
	// exceeds it (recorder.Recorder.BoundDwell); it implies ServerTiming.
	DwellBound time.Duration

	// RequestObjectives are per-request objectives goodput counts
	// against (recorder.SetRequestObjectives); Stream marks a run of
	// streamed answers (engine.Config.Stream, recorder.StreamRun).
	RequestObjectives []recorder.RequestObjective
	// Warmup, if > 0, keeps the requests scheduled in the run's first
	// Warmup out of the headline figures and objectives: they are sent
	// and accounted for, and reported apart (recorder.Warmup).
	Warmup time.Duration

	// Request notes what the caller made of the request bodies (an
	// added Content-Type, the model named, generated prompts), for the
	// result; nil when nothing.
	Request *result.Request

	// Sessions, if set, makes each arrival of the schedule a session of
	// steps (engine.RunSessions; internal/session makes them): the
	// schedule's arrivals are users, each step a request.
	Sessions Sessions

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
func (o *Options) autoHeaders() (timing bool, classes []string) {
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

// autoHeaderNames are the headers of o.AutoHeaders that apply.
func (o *Options) autoHeaderNames() []string {
	timing, names := o.autoHeaders()
	if timing {
		names = append([]string{serverTiming}, names...)
	}
	return names
}

// engineConfig is the engine's configuration with the automatic headers
// added to what it reads: the engine reads them as it reads the asked-for
// ones; the recorder reports them only when responses carried them.
func (o *Options) engineConfig() engine.Config {
	cfg := o.Config
	timing, auto := o.autoHeaders()
	cfg.ClassHeaders = append(slices.Clip(cfg.ClassHeaders), auto...)
	cfg.ServerTiming = cfg.ServerTiming || timing
	return cfg
}

// Validate checks the options: the schedule (for a closed run, its pace),
// the engine's configuration, the closed loop, the checks' options and the
// dwell bound, each by its own type's Validate. Its errors are
// *field.Error, naming the fields of Options by their path (Schedule.Rate;
// the engine's by their promoted names, Timeout). Run calls it; a caller
// may call it first to refuse options before anything starts. As
// engine.Config's, it does not refuse a nil URL.
func (o *Options) Validate() error {
	if err := o.validateSchedule(); err != nil {
		return err
	}
	if err := field.In("Shard", o.Shard.Validate()); err != nil {
		return err
	}
	validate := o.Config.Validate
	if o.Closed {
		validate = o.Config.ValidateClosed
	}
	if err := validate(); err != nil {
		return err
	}
	if o.Closed {
		// engine.Closed, named by the fields of Options that set it.
		err := field.Rename(o.ClosedLoop().Validate(), func(f string) string {
			switch f {
			case "Users":
				return "Connections"
			case "Rate", "Duration":
				return "Schedule." + f
			}
			return f // Think
		})
		if err != nil {
			return err
		}
	}
	if err := field.In("Verify", o.Verify.Validate()); err != nil {
		return err
	}
	if err := o.validateSessions(); err != nil { // sessions.go
		return err
	}
	if o.Warmup < 0 || (o.Warmup > 0 && o.Warmup >= o.Schedule.Duration) {
		return field.Errorf("Warmup", o.Warmup, "{Warmup} must be ≥ 0 and shorter than the run (%v), got %v", o.Schedule.Duration, o.Warmup)
	}
	if o.DwellBound < 0 {
		return field.Errorf("DwellBound", o.DwellBound, "{DwellBound} must be > 0, got %v", o.DwellBound)
	}
	return nil
}

// validateSchedule checks Schedule, unless a ready schedule (Sched)
// replaces it. A closed run takes no ready schedule and paces its users
// evenly: a constant schedule, checked as one when it has a rate.
func (o *Options) validateSchedule() error {
	switch {
	case !o.Closed && o.Sched != nil:
		return nil
	case !o.Closed:
		return field.In("Schedule", o.Schedule.Validate())
	case o.Sched != nil:
		return field.Errorf("Closed", o.Closed, "{Closed} paces its users evenly: {Sched} is not supported with it")
	case o.Shard.Enabled():
		return field.Errorf("Shard", o.Shard, "{Closed} runs no schedule to split: {Shard} is not supported with it")
	case o.Schedule.Kind != "" && o.Schedule.Kind != schedule.Constant:
		return field.Errorf("Schedule.Kind", o.Schedule.Kind, "{Closed} paces its users evenly: {Schedule.Kind} %q is not supported with it", o.Schedule.Kind)
	case o.Schedule.Rate != 0:
		spec := o.Schedule
		spec.Kind = schedule.Constant
		return field.In("Schedule", spec.Validate())
	}
	return nil
}

// ClosedLoop is the closed loop the options describe (Closed: the run is
// one).
func (o *Options) ClosedLoop() engine.Closed {
	return engine.Closed{Users: o.Connections, Rate: o.Schedule.Rate, Duration: o.Schedule.Duration, Think: o.Think}
}

// Run executes the run and returns its result with the checks filled in,
// and the findings. The error is non-nil only when the run could not be
// carried out at all; a log write failure, or a client that stopped before
// the schedule's end, is reported in the error after a complete result.
func Run(ctx context.Context, o Options) (*result.Result, []verify.Finding, error) {
	if err := o.Validate(); err != nil {
		return nil, nil, fmt.Errorf("loadtest: %w", err)
	}
	o.ServerTiming = o.ServerTiming || o.DwellBound > 0
	if o.Method == "" {
		o.Method = http.MethodGet
	}
	if o.Closed {
		return runClosed(ctx, o)
	}
	if o.Sessions != nil {
		return runSessions(ctx, o) // sessions.go
	}
	sched, err := o.resolveSchedule()
	if err != nil {
		return nil, nil, err
	}
	sched = o.shardSchedule(sched) // shard.go
	res := o.newResult(sched.Name())
	res.Counts.Expected = sched.Expected()
	rec := o.newRecorder()
	stats, err := engine.Run(ctx, o.engineConfig(), sched, rec)
	if err != nil {
		return nil, nil, err
	}
	return finish(o, res, rec, stats, sched)
}

// newResult starts the result of a run, with its configuration
// (resultConfig) and the schedule's description.
func (o *Options) newResult(schedule string) *result.Result {
	return &result.Result{Tool: "openload", Config: o.resultConfig(schedule)}
}

// resultConfig is the configuration the result records: every option it
// keeps, taken here and nowhere else. What is measured (the client that
// sent, the stub's CPU time) is filled where it is measured.
func (o *Options) resultConfig(sched string) result.Config {
	c := result.Config{
		Target:          o.URL.String(),
		BuiltinStub:     o.BuiltinStub,
		StubChild:       o.StubChild,
		Method:          o.Method,
		Headers:         result.RedactHeaders(o.Header, o.Redact...),
		BodyBytes:       len(o.Body),
		Rate:            o.Schedule.Rate,
		Duration:        o.Schedule.Duration.String(),
		Connections:     o.Connections,
		Timeout:         o.Timeout.String(),
		Drain:           o.Drain.String(),
		Schedule:        sched,
		ClassHeaders:    o.ClassHeaders,
		ServerTiming:    o.ServerTiming,
		AutoHeaders:     o.autoHeaderNames(),
		StampHeader:     o.StampHeader,
		Protocol:        o.Protocol,
		MaxStreams:      o.MaxStreams,
		Insecure:        o.Insecure,
		FollowRedirects: o.FollowRedirects,
		MaxBody:         o.MaxBody,
		Request:         o.Request,
	}
	if c.Protocol == "" {
		c.Protocol = engine.HTTP1
	}
	if o.DialTimeout > 0 {
		c.DialTimeout = o.DialTimeout.String()
	}
	if o.Retry.Enabled() {
		c.Retry = o.Retry.String()
	}
	if !o.Closed {
		c.Arrival, c.Seed = o.Schedule.Kind, o.Schedule.Seed
		c.Burstiness = o.Schedule.Burstiness
		if o.Warmup > 0 {
			c.Warmup = o.Warmup.String()
		}
		if st, err := schedule.ParseStages(o.Schedule.Stages); o.Schedule.Stages != "" && err == nil {
			c.Stages = schedule.FormatStages(st)
		}
		if o.Schedule.IsAtOnce() {
			// JSON holds no +Inf: the probe is rate 0 of arrival "inf",
			// its count the result's expected count.
			c.Rate, c.Arrival = 0, schedule.AtOnce
		}
		return c
	}
	c.Mode = result.ModeClosed
	c.Users = o.Connections
	if o.Think > 0 {
		c.Think = o.Think.String()
	}
	if o.Schedule.Rate > 0 {
		c.Arrival = schedule.Constant
	}
	return c
}

// newRecorder returns the run's recorder: its log, classes, targets,
// dwell bound and interval log.
func (o Options) newRecorder() *recorder.Recorder {
	rec := recorder.New(o.Log)
	if len(o.Targets) > 0 {
		rec.TrackTargets(o.TargetNames())
	}
	rec.TrackClasses(o.ClassHeaders)
	_, auto := o.autoHeaders()
	rec.TrackClassesSeen(auto)
	o.boundDwell(rec)
	if o.Stream || o.GRPC { // a gRPC call's messages are its stream's events
		rec.StreamRun()
	}
	if o.GRPC {
		rec.TrackGRPC() // the log's grpc_status column
	}
	if o.RequestObjectives != nil {
		rec.SetRequestObjectives(o.RequestObjectives)
	}
	if o.Warmup > 0 {
		rec.SetWarmup(o.Warmup)
	}
	if o.IntervalLog != nil {
		rec.SetIntervalLog(o.IntervalLog)
	}
	return rec
}

// TargetNames are the names of the mix's targets by index, as the
// result and scoped objectives (verify.CheckScopes) call them: a
// target's Name, else "METHOD URL".
func (o *Options) TargetNames() []string {
	names := make([]string, len(o.Targets))
	for i, t := range o.Targets {
		names[i] = t.Name
		if names[i] == "" {
			m := t.Method
			if m == "" {
				m = http.MethodGet
			}
			u := ""
			if t.URL != nil {
				u = t.URL.String()
			}
			names[i] = m + " " + u
		}
	}
	return names
}

// finish fills the measured parts of res after the engine has run, and
// verifies it.
func finish(o Options, res *result.Result, rec *recorder.Recorder, stats engine.Stats, sched schedule.Schedule) (*result.Result, []verify.Finding, error) {
	var logErr error
	if o.Log != nil {
		if err := o.Log.Flush(); err != nil {
			logErr = fmt.Errorf("per-request log: %w", err)
		}
	}
	res.Started = stats.Start
	res.Elapsed = stats.End.Seconds()
	res.Interrupted = stats.Interrupted
	res.Limit = result.Limit{Connections: o.Connections, MaxInFlight: stats.MaxInFlight, Waited: stats.LimitWaited}
	if p := stats.Predial; p.Wanted > 0 {
		res.Limit.Predial = &result.Predial{Wanted: p.Wanted, Opened: p.Opened, Ms: math.Round(float64(p.Took)/1e3) / 1e3}
		if p.Err != nil {
			res.Limit.Predial.Error = p.Err.Error()
		}
	}
	res.Config.Client = stats.Client
	if r := stats.Refusal; r != nil {
		// As JSON will hold it: a body cut mid-character, or not text,
		// reads the same live and from the file.
		res.Refusal = &result.Refusal{Seq: r.Seq, Status: r.Status, Body: strings.ToValidUTF8(string(r.Body), "\uFFFD"), Cut: r.Cut}
	}
	gen := stats.Generator
	res.Generator = &gen
	if err := rec.Fill(res); err != nil {
		return res, nil, fmt.Errorf("encoding histograms: %w", err)
	}
	o.fillRetries(res, rec)
	if res.Wire != nil {
		res.Wire.Bytes = &result.Bytes{Written: stats.BytesWritten, Read: stats.BytesRead}
	}
	if err := rec.IntervalLogErr(); err != nil && logErr == nil {
		logErr = fmt.Errorf("interval log: %w", err)
	}
	if stats.LoopErr != nil {
		// The result holds every request the loop had; the schedule
		// check shows the ones it never took.
		logErr = fmt.Errorf("the client's event loop stopped: %w", stats.LoopErr)
	}
	if o.TargetStream != nil {
		res.Lazy = &result.Lazy{Waited: stats.TargetsWaited, Ended: stats.TargetsEnded}
		if stats.TargetsEnded {
			res.Lazy.AtS = math.Round(stats.ScheduleEnd.Seconds()*1e3) / 1e3
		}
		if stats.TargetsErr != nil {
			res.Lazy.Error = stats.TargetsErr.Error()
		}
	}
	span := o.Schedule.Duration.Seconds()
	if stats.Interrupted || stats.TargetsEnded {
		span = stats.ScheduleEnd.Seconds()
	}
	if span > 0 {
		res.SendRate = float64(res.Counts.Sent) / span
	}
	o.fillShard(res, sched, stats.Start, stats.Late) // shard.go
	findings := verify.Run(res, o.Verify)
	res.Checks = verify.ToChecks(findings)
	return res, findings, logErr
}

// runClosed is Run for a closed-loop run.
func runClosed(ctx context.Context, o Options) (*result.Result, []verify.Finding, error) {
	spec, cl := o.Schedule, o.ClosedLoop()
	res := o.newResult(ClosedName(cl))
	rec := o.newRecorder()
	if spec.Rate > 0 {
		sched := schedule.NewConstant(spec.Rate, spec.Duration)
		res.Counts.Expected = sched.Expected()
		rec.Correct(cl.Interval())
	}
	stats, err := engine.RunClosed(ctx, o.engineConfig(), cl, rec)
	if err != nil {
		return nil, nil, err
	}
	return finish(o, res, rec, stats, nil)
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
