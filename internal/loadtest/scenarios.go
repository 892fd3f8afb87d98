package loadtest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/openload/openload/result"
	"github.com/openload/openload/verify"
)

// Scenarios: several named arrival processes in one run (k6's scenarios,
// each its own arrival-rate executor). Each scenario is a run of its own
// (Run): its own schedule, exact and checked against its own ∫λ dt, its
// own connections (Options.Connections: scenarios do not share a limit,
// so that one scenario's slow answers cannot delay another's sends), its
// own timeline and send-delay checks. All start at one instant
// (engine.Config.StartAt), so that their timelines add second by second;
// the whole is their union (result.Union), checked again as a whole.

// Scenario is one named arrival process of a run and what it sends.
type Scenario struct {
	Name    string
	Options Options
	// StartAfter delays the scenario's start past the run's shared one
	// (k6's startTime): its schedule's offset 0 is then, and its
	// timeline adds to the whole's from that second on.
	StartAfter time.Duration
}

// scenarioLead is how far ahead of now the scenarios' shared start is
// set when none was asked for: time for each to open its connections.
const scenarioLead = 500 * time.Millisecond

// RunScenarios runs the scenarios at once and returns their union, each
// scenario's own result in its Scenarios, with the whole's findings.
// A scenario that fails to start fails the run before any sends (they
// wait for the shared start); the results of the others are then not
// made.
func RunScenarios(ctx context.Context, scs []Scenario, vo verify.Options) (*result.Result, []verify.Finding, error) {
	if len(scs) == 0 {
		return nil, nil, errors.New("loadtest: no scenarios")
	}
	names := map[string]bool{}
	for _, sc := range scs {
		switch {
		case sc.Name == "":
			return nil, nil, errors.New("loadtest: a scenario without a name")
		case names[sc.Name]:
			return nil, nil, fmt.Errorf("loadtest: scenario %q given twice", sc.Name)
		case sc.StartAfter < 0:
			return nil, nil, fmt.Errorf("loadtest: scenario %q: a start %v before the run's", sc.Name, sc.StartAfter)
		case sc.Options.Closed:
			return nil, nil, fmt.Errorf("loadtest: scenario %q: a closed loop is not a scenario: scenarios are open arrival processes", sc.Name)
		case sc.Options.Shard != scs[0].Options.Shard:
			return nil, nil, fmt.Errorf("loadtest: scenario %q: another shard than scenario %q's: a split run splits every scenario alike", sc.Name, scs[0].Name)
		}
		names[sc.Name] = true
		if err := sc.Options.Validate(); err != nil {
			return nil, nil, fmt.Errorf("loadtest: scenario %q: %w", sc.Name, err)
		}
	}
	start := scs[0].Options.StartAt
	if start.IsZero() {
		start = time.Now().Add(scenarioLead)
	}
	parts := make([]result.Scenario, len(scs))
	errs := make([]error, len(scs))
	var wg sync.WaitGroup
	for i, sc := range scs {
		o := sc.Options
		o.StartAt = start.Add(sc.StartAfter)
		wg.Go(func() {
			res, _, err := Run(ctx, o)
			parts[i], errs[i] = result.Scenario{Name: sc.Name, Result: res}, err
		})
	}
	wg.Wait()
	var fileErr error
	for i, err := range errs {
		if err == nil {
			continue
		}
		if parts[i].Result == nil {
			return nil, nil, fmt.Errorf("scenario %q: %w", scs[i].Name, err)
		}
		// Measured, but a file could not be written: keep the figures.
		fileErr = errors.Join(fileErr, fmt.Errorf("scenario %q: %w", scs[i].Name, err))
	}
	res, err := result.Union(parts)
	if err != nil {
		return nil, nil, err
	}
	findings := verify.Run(res, vo)
	res.Checks = verify.ToChecks(findings)
	return res, findings, fileErr
}
