package loadtest

import (
	"context"
	"errors"
	"net/url"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/openload/openload/field"
	"github.com/openload/openload/internal/engine"
	"github.com/openload/openload/result"
	"github.com/openload/openload/schedule"
	"github.com/openload/openload/servers/stub"
	"github.com/openload/openload/verify"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// runStub runs rate/s for d with one connection against an in-process stub
// with a 2 ms model, stalled for stall (0: no stall) from 500 ms after its
// first request.
func runStub(t *testing.T, rate float64, d, stall time.Duration) *result.Result {
	t.Helper()
	res, err := stubRun(rate, d, stall)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// stalledRun is the run of TestStallShowsInResponseNotService, 100/s for
// 2 s with a 1 s stall, made once for the test binary: the test without
// a stall compares its own run with it.
var stalledRun = sync.OnceValues(func() (*result.Result, error) { return stubRun(100, 2*time.Second, time.Second) })

// stubRun is runStub, returning its error.
func stubRun(rate float64, d, stall time.Duration) (*result.Result, error) {
	cfg := stub.DefaultConfig()
	cfg.Workers = 1
	cfg.Latency = 2 * time.Millisecond
	cfg.Policy = stub.PolicyNone
	cfg.MaxQueueWait = time.Minute
	if stall > 0 {
		cfg.StallAt = 500 * time.Millisecond
		cfg.StallFor = stall
	}
	s, err := stub.NewServer(cfg)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	u, _ := url.Parse(s.URL + "/predict")
	res, _, err := Run(context.Background(), Options{
		Config:   engine.Config{URL: u, Connections: 1, Timeout: 30 * time.Second, Drain: 30 * time.Second},
		Schedule: schedule.Spec{Kind: schedule.Constant, Rate: rate, Duration: d},
	})
	return res, err
}

// TestStallShowsInResponseNotService: with one connection, a 1 s stall
// holds the only connection; the ~100 requests due meanwhile wait inside
// openload. Their wait is send delay, so response time (from the schedule)
// carries the stall while service time (from the send) does not: of 200
// requests only the one caught in the stall has a long service time, far
// beyond the 1 % tail. A closed-loop tool would report that service time.
func TestStallShowsInResponseNotService(t *testing.T) {
	res, err := stalledRun()
	if err != nil {
		t.Fatal(err)
	}
	c := res.Counts
	if c.Scheduled != 200 || c.Completed != 200 || !c.Balanced() {
		t.Fatalf("counts %+v", c)
	}
	// The request due just before the stall's end waited about the whole
	// stall; p99 (the 3rd longest of 200) is within 30 ms of it. 500 ms
	// leaves room for any scheduling noise.
	if res.Response.P99 < 500 {
		t.Errorf("response p99 %.3f ms, want ≥ 500 ms (most of the 1 s stall)", res.Response.P99)
	}
	// Service time p99 is a 2 ms model call plus loopback; a tenth of the
	// response p99 (≥ 50 ms) is a bound no busy machine reaches.
	if res.Service.P99 > res.Response.P99/10 {
		t.Errorf("service p99 %.3f ms not far below response p99 %.3f ms", res.Service.P99, res.Response.P99)
	}
	if res.Service.Max < 500 {
		t.Errorf("service max %.3f ms: the one request caught in the stall should show it", res.Service.Max)
	}
	if res.Limit.Waited == 0 {
		t.Error("the one connection bound during the stall, but the limit was not reported")
	}
	if find(res.Checks, "connection limit").Severity != string(verify.Warn) {
		t.Errorf("checks: %+v", res.Checks)
	}
}

// TestNoStallResponseAgreesWithService is the reverse: without a stall and
// with a connection that keeps up (100/s of 2 ms calls), requests leave on
// time, so response time is service time plus a small send delay.
func TestNoStallResponseAgreesWithService(t *testing.T) {
	res := runStub(t, 100, time.Second, 0)
	c := res.Counts
	if c.Scheduled != 100 || c.Completed != 100 || !c.Balanced() {
		t.Fatalf("counts %+v", c)
	}
	// response = service + send delay for each request; at the p99 the
	// two agree within the send delay's max.
	if d := res.Response.P99 - res.Service.P99; d < 0 || d > res.SendDelay.Max+0.01 {
		t.Errorf("response p99 %.3f − service p99 %.3f = %.3f ms, want within [0, send delay max %.3f]",
			res.Response.P99, res.Service.P99, d, res.SendDelay.Max)
	}
	// And no stall shows: the stalled run of the test above, on the same
	// machine, has a response p99 above this one's by at least half its
	// 1 s stall (its requests wait about all of it, which a busy machine
	// only lengthens). A stall that came without being asked for (in the
	// stub, or in openload) closes that gap. (This was a bound: under
	// 250 ms, then 500 ms, which measured the machine as much.)
	stalled, err := stalledRun()
	if err != nil {
		t.Fatal(err)
	}
	if gap := stalled.Response.P99 - res.Response.P99; gap < 500 {
		t.Errorf("response p99 %.3f ms without a stall, %.3f ms with a 1 s one: want them apart by at least half the stall, 500 ms",
			res.Response.P99, stalled.Response.P99)
	}
}

func find(cs []result.Check, name string) result.Check {
	for _, c := range cs {
		if c.Name == name {
			return c
		}
	}
	return result.Check{}
}

// Validate names every refused value by its path in Options: the
// schedule's, the engine's (promoted), and a closed run's, whose
// engine.Closed is built from Options' own fields; Run refuses the same
// options before anything starts.
func TestValidate(t *testing.T) {
	ok := func() Options {
		return Options{
			Config:   engine.Config{Connections: 2, Timeout: time.Second},
			Schedule: schedule.Spec{Kind: schedule.Constant, Rate: 10, Duration: time.Second},
		}
	}
	if o := ok(); o.Validate() != nil {
		t.Fatalf("valid options: %v", o.Validate())
	}
	for _, c := range []struct {
		set   func(*Options)
		field string
		want  string
	}{
		{func(o *Options) { o.Schedule.Rate = 0.5 }, "Schedule.Rate", "Schedule.Rate 0.5 × Schedule.Duration 1s = 0.5: the schedule holds no request"},
		{func(o *Options) { o.Schedule.Kind = "bursty" }, "Schedule.Kind", `Schedule.Kind "bursty": unknown arrival process (known: constant, poisson, gamma)`},
		{func(o *Options) { o.Timeout = 0 }, "Timeout", "Timeout must be > 0, got 0s"},
		{func(o *Options) { o.Retry.Retries = 101 }, "Retry.Retries", "Retry.Retries must be between 0 and 100, got 101"},
		{func(o *Options) { o.Verify.DipRatio = 2 }, "Verify.DipRatio", "Verify.DipRatio must be between 0 and 1, got 2"},
		{func(o *Options) { o.DwellBound = -1 }, "DwellBound", "DwellBound must be > 0, got -1ns"},
		// A ready schedule replaces Schedule, which is then not checked.
		{func(o *Options) { o.Schedule, o.Sched = schedule.Spec{}, schedule.NewConstant(1, time.Second) }, "", ""},
		// Closed: unpaced with rate 0; the users are Connections, their
		// pace and length Schedule's.
		{func(o *Options) { o.Closed, o.Schedule.Rate = true, 0 }, "", ""},
		{func(o *Options) { o.Closed, o.Think = true, -time.Second }, "Think", "Think must be ≥ 0, got -1s"},
		{func(o *Options) { o.Closed, o.Schedule.Rate, o.Schedule.Duration = true, 0, 0 }, "Schedule.Duration", "Schedule.Duration must be > 0, got 0s"},
		{func(o *Options) { o.Closed, o.Schedule.Rate = true, -1 }, "Schedule.Rate", "Schedule.Rate must be > 0, got -1"},
		{func(o *Options) { o.Closed, o.Schedule.Kind = true, schedule.Poisson }, "Schedule.Kind",
			`Closed paces its users evenly: Schedule.Kind "poisson" is not supported with it`},
		{func(o *Options) { o.Closed, o.Sched = true, schedule.NewConstant(1, time.Second) }, "Closed",
			"Closed paces its users evenly: Sched is not supported with it"},
	} {
		o := ok()
		c.set(&o)
		err := o.Validate()
		var fe *field.Error
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%+v: %v", o, err)
		case c.want != "" && (!errors.As(err, &fe) || fe.Field != c.field || err.Error() != c.want):
			t.Errorf("%s: %v (%T), want %q", c.field, err, err, c.want)
		}
		if c.want == "" {
			continue
		}
		o.URL, _ = url.Parse("http://127.0.0.1:1/")
		if _, _, err := Run(context.Background(), o); err == nil || err.Error() != "loadtest: "+c.want {
			t.Errorf("Run: %v, want loadtest: %s", err, c.want)
		}
	}
}
