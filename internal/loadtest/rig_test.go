package loadtest

import (
	"context"
	"errors"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/openload/openload/internal/engine"
	"github.com/openload/openload/schedule"
	"github.com/openload/openload/servers/stub"
	"github.com/openload/openload/verify"
)

// steps records what a rig did, in order.
type steps []string

func (s *steps) add(step string) { *s = append(*s, step) }

// fakeLive is a Live that records the labels of each run.
type fakeLive struct{ steps *steps }

func (l fakeLive) Observe(labels map[string]string) func(engine.Live) {
	l.steps.add("observe " + labels["point"] + labels["scenario"])
	return nil
}
func (l fakeLive) Stop() { l.steps.add("live stop") }

// TestSessionOrder: Start assembles in one order (live metrics, the
// built-in stub for a run without a URL, the preparation), a run comes
// back judged with its objectives (openload's defaults with them), the
// stub of a run of one stops as the run ends, and Close stops the live
// metrics last.
func TestRigOrder(t *testing.T) {
	var did steps
	cfg := stub.DefaultConfig()
	cfg.Latency, cfg.Policy = time.Millisecond, stub.PolicyNone
	slo, err := verify.ParseObjective("response.p99<=10s")
	if err != nil {
		t.Fatal(err)
	}
	setup := Setup{
		Options: Options{
			Config:     engine.Config{Connections: 4, Timeout: 10 * time.Second, Drain: 10 * time.Second},
			Schedule:   schedule.Spec{Kind: schedule.Constant, Rate: 50, Duration: 200 * time.Millisecond},
			Objectives: []verify.Objective{slo},
		},
		Live: func() (Live, error) { did.add("live"); return fakeLive{&did}, nil },
		StartStub: func(o *Options) (Stub, error) {
			did.add("stub")
			s, err := stub.NewServer(cfg)
			if err != nil {
				return Stub{}, err
			}
			u, _ := url.Parse(s.URL + "/predict")
			return Stub{URL: u, Description: "a test's", Child: true, Stop: func() time.Duration { did.add("stub stop"); s.Close(); return 0 }}, nil
		},
		Prepare: func(_ context.Context, scenario string, o *Options) error {
			did.add("prepare " + o.URL.Path + scenario)
			return nil
		},
		Ended: func() { did.add("ended") },
	}
	s, err := Start(context.Background(), setup)
	if err != nil {
		t.Fatal(err)
	}
	oc, err := s.Run(context.Background())
	if err != nil || oc.Result == nil {
		t.Fatalf("run: %v", err)
	}
	s.Close()
	want := []string{"live", "stub", "prepare /predict", "observe ", "ended", "stub stop", "stub stop", "live stop"}
	if !slices.Equal(did, want) {
		t.Errorf("steps %q, want %q", did, want)
	}
	if c := oc.Result.Config; c.BuiltinStub != "a test's" || !c.StubChild {
		t.Errorf("result's stub %q, child %v", c.BuiltinStub, c.StubChild)
	}
	n := len(verify.WithDefault(setup.Options.Objectives))
	if len(oc.Objectives) != n || n < 2 || oc.Objectives[0].Objective.Expr != slo.Expr || !oc.Objectives[1].Objective.Default ||
		len(oc.Result.SLOs) != n || oc.Class != verify.ClassOf(oc.Result) {
		t.Errorf("judged %+v, stored %+v, class %v", oc.Objectives, oc.Result.SLOs, oc.Class)
	}
}

// TestSessionStartFails: a step that fails says which, and what was
// started before it is stopped.
func TestRigStartFails(t *testing.T) {
	var did steps
	bad := errors.New("no")
	_, err := Start(context.Background(), Setup{
		Live:      func() (Live, error) { return fakeLive{&did}, nil },
		StartStub: func(*Options) (Stub, error) { return Stub{}, bad },
	})
	var se *StartError
	if !errors.As(err, &se) || se.Stage != StageStub || !errors.Is(err, bad) || !slices.Equal(did, []string{"live stop"}) {
		t.Errorf("error %v (%+v), steps %q", err, se, did)
	}
	u, _ := url.Parse("http://127.0.0.1:1/")
	_, err = Start(context.Background(), Setup{
		Scenarios: []Scenario{{Name: "a", Options: Options{Config: engine.Config{URL: u}}}},
		Prepare:   func(context.Context, string, *Options) error { return bad },
	})
	if !errors.As(err, &se) || se.Stage != StagePrepare || se.Scenario != "a" || !strings.HasPrefix(err.Error(), `scenario "a": `) {
		t.Errorf("scenario's preparation: %v (%+v)", err, se)
	}
}
