package loadtest

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/url"
	"strconv"
	"time"

	"github.com/openload/openload/internal/engine"
	"github.com/openload/openload/result"
	"github.com/openload/openload/verify"
)

// The run assembled once. A command describes a run (Setup: the options
// with their objectives, and the pieces only the caller has); Start
// assembles it in one order, whatever the command: live metrics first (a
// listener that cannot bind costs nothing), then the target (the built-in
// stub when the run has no URL), then the caller's preparation of the
// request (which may ask the target). The Rig it returns runs and
// judges: a run, each run of a sweep, a search or repeats, or scenarios
// at once, each returned as an Outcome whose objectives are judged
// (verify.Judge). The caller renders the outcome and closes the rig
// once its outputs are written.

// Outcome is one judged run: its result (checks and objectives stored in
// it), the checks' findings, and the objectives evaluated with openload's
// defaults and the class of the whole (verify.Outcome).
type Outcome struct {
	Result   *result.Result
	Findings []verify.Finding
	verify.Outcome
}

// Judged runs o (Run) and judges its objectives (o.Objectives) on the
// result. The error is Run's: with a nil Result the run could not be
// carried out; with a Result, it was measured and judged, and only a file
// could not be written.
func Judged(ctx context.Context, o Options) (Outcome, error) {
	res, findings, err := Run(ctx, o)
	return judge(res, findings, o.Objectives), err
}

// judge is the outcome of a run that ended in res (none when nil), with
// objs judged on it.
func judge(res *result.Result, findings []verify.Finding, objs []verify.Objective) Outcome {
	if res == nil {
		return Outcome{}
	}
	return Outcome{Result: res, Findings: findings, Outcome: verify.Judge(res, objs)}
}

// Live serves the live figures of a rig's runs (the CLI's Prometheus
// listener, bound from its flags).
type Live interface {
	// Observe is the engine's hook for one run, whose series carry
	// labels (nil for a run of one).
	Observe(labels map[string]string) func(engine.Live)
	// Stop ends serving; the rig calls it last (Close).
	Stop()
}

// Stub is the built-in stub that a run without a URL is sent to, started
// by the caller: the CLI runs it in a child process of its own binary.
type Stub struct {
	URL         *url.URL
	Description string // result.Config.BuiltinStub
	// Child: it runs in a process of its own, so that the generator's
	// figures are openload's alone (Options.StubChild).
	Child bool
	// Stop stops it and returns the CPU time a child used in its life
	// (0 in openload's process); a second call returns the same.
	Stop func() time.Duration
}

// Setup is what a command describes.
type Setup struct {
	// Options is the run; with Scenarios, the whole's checks (Verify)
	// and objectives (Objectives, scoped or not).
	Options Options
	// Scenarios, if any, run at once instead of Options (RunScenarios).
	Scenarios []Scenario
	// Live, if set, starts the live metrics (nil Live: none).
	Live func() (Live, error)
	// StartStub starts the built-in stub for options without a URL, and
	// may complete them for it (what the stub's answers carry).
	StartStub func(o *Options) (Stub, error)
	// Prepare, if set, completes a run's request once its target is
	// known and before anything is sent (a path of the built-in stub, a
	// model asked of the target); scenario is the scenario's name, empty
	// for a run of one.
	Prepare func(ctx context.Context, scenario string, o *Options) error
	// Ended, if set, is called as a run of one ends, before the built-in
	// stub stops (the CLI clears its progress line there).
	Ended func()
}

// Stage is the step of Start that failed (StartError).
type Stage int

// The steps of Start, in order.
const (
	StageLive    Stage = iota + 1 // starting the live metrics
	StageStub                     // starting the built-in stub
	StagePrepare                  // preparing a run's request
)

// StartError is Start's error: the step that failed, and for a scenario's
// preparation, its name.
type StartError struct {
	Stage    Stage
	Scenario string
	Err      error
}

func (e *StartError) Error() string {
	if e.Scenario != "" {
		return fmt.Sprintf("scenario %q: %v", e.Scenario, e.Err)
	}
	return e.Err.Error()
}

func (e *StartError) Unwrap() error { return e.Err }

// Rig is a run assembled by Start (a test rig: the target, live metrics
// and the prepared requests, set up once for the runs it makes): Options and Scenarios are
// completed (the target's URL, the prepared requests).
type Rig struct {
	Options   Options
	Scenarios []Scenario
	live      Live
	stub      *Stub
	ended     func()
	points    int
}

// Start assembles s: live metrics, the target, the requests' preparation,
// in that order. On an error (a *StartError) what was started is stopped.
func Start(ctx context.Context, s Setup) (*Rig, error) {
	ss := &Rig{Options: s.Options, Scenarios: s.Scenarios, ended: s.Ended}
	fail := func(stage Stage, scenario string, err error) (*Rig, error) {
		ss.Close()
		return nil, &StartError{Stage: stage, Scenario: scenario, Err: err}
	}
	if s.Live != nil {
		live, err := s.Live()
		if err != nil {
			return fail(StageLive, "", err)
		}
		ss.live = live
	}
	if len(s.Scenarios) > 0 {
		ss.Scenarios = append([]Scenario(nil), s.Scenarios...)
		for i := range ss.Scenarios {
			sc := &ss.Scenarios[i]
			if err := prepare(ctx, s.Prepare, sc.Name, &sc.Options); err != nil {
				return fail(StagePrepare, sc.Name, err)
			}
		}
		return ss, nil
	}
	if o := &ss.Options; o.URL == nil {
		if s.StartStub == nil {
			return fail(StageStub, "", errors.New("the run has no URL, and no built-in stub to send to"))
		}
		st, err := s.StartStub(o)
		if err != nil {
			return fail(StageStub, "", err)
		}
		ss.stub = &st
		o.URL, o.BuiltinStub, o.StubChild = st.URL, st.Description, st.Child
	}
	if err := prepare(ctx, s.Prepare, "", &ss.Options); err != nil {
		return fail(StagePrepare, "", err)
	}
	return ss, nil
}

func prepare(ctx context.Context, p func(context.Context, string, *Options) error, name string, o *Options) error {
	if p == nil {
		return nil
	}
	return p(ctx, name, o)
}

// observe is the live hook of a run with labels, nil without live
// metrics.
func (s *Rig) observe(labels map[string]string) func(engine.Live) {
	if s.live == nil {
		return nil
	}
	return s.live.Observe(labels)
}

// Run runs the rig's run of one and judges it. A built-in stub in a
// child process is stopped once the run has ended, so that its CPU time
// goes in the result (result.Config.StubCPUSeconds).
func (s *Rig) Run(ctx context.Context) (Outcome, error) {
	o := s.Options
	o.Observe = s.observe(nil)
	oc, err := Judged(ctx, o)
	if s.ended != nil {
		s.ended()
	}
	if s.stub != nil && s.stub.Child && oc.Result != nil {
		oc.Result.Config.StubCPUSeconds = math.Round(s.stub.Stop().Seconds()*1000) / 1000
	}
	return oc, err
}

// Point runs o, one run of several (a sweep's point, a search's probe, a
// repeat), and judges it; its live series is its own, labelled with its
// number (from 1, in the order run) and rate. Its signature is
// sweep.RunFunc's.
func (s *Rig) Point(ctx context.Context, o Options) (Outcome, error) {
	s.points++
	o.Observe = s.observe(map[string]string{"point": strconv.Itoa(s.points), "rate": strconv.FormatFloat(o.Schedule.Rate, 'g', -1, 64)})
	return Judged(ctx, o)
}

// RunScenarios runs the rig's scenarios at once (the package's
// RunScenarios), each a live series of its own, and judges the whole
// with Options.Objectives.
func (s *Rig) RunScenarios(ctx context.Context) (Outcome, error) {
	scs := append([]Scenario(nil), s.Scenarios...)
	for i := range scs {
		scs[i].Options.Observe = s.observe(map[string]string{"scenario": scs[i].Name})
	}
	res, findings, err := RunScenarios(ctx, scs, s.Options.Verify)
	return judge(res, findings, s.Options.Objectives), err
}

// Close stops the built-in stub, then the live metrics: call it once the
// outputs are written, so that a last scrape sees the end.
func (s *Rig) Close() {
	if s.stub != nil {
		s.stub.Stop()
	}
	if s.live != nil {
		s.live.Stop()
	}
}
