package loadtest

import (
	"context"
	"net/url"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/openload/openload/recorder"
	"github.com/openload/openload/schedule"
	"github.com/openload/openload/targets/stub"
	"github.com/openload/openload/verify"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// runStub runs rate/s for d with one connection against an in-process stub
// with a 2 ms model, stalled for stall (0: no stall) from 500 ms after its
// first request.
func runStub(t *testing.T, rate float64, d, stall time.Duration) *recorder.Result {
	t.Helper()
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
		t.Fatal(err)
	}
	defer s.Close()
	u, _ := url.Parse(s.URL + "/predict")
	res, _, err := Run(context.Background(), Options{
		URL:         u,
		Schedule:    schedule.Spec{Kind: schedule.Constant, Rate: rate, Duration: d},
		Connections: 1,
		Timeout:     30 * time.Second,
		Drain:       30 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestStallShowsInResponseNotService: with one connection, a 1 s stall
// holds the only connection; the ~100 requests due meanwhile wait inside
// openload. Their wait is send delay, so response time (from the schedule)
// carries the stall while service time (from the send) does not: of 200
// requests only the one caught in the stall has a long service time, far
// beyond the 1 % tail. A closed-loop tool would report that service time.
func TestStallShowsInResponseNotService(t *testing.T) {
	res := runStub(t, 100, 2*time.Second, time.Second)
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
	// two agree within the send delay's max, and both stay far below the
	// stall-sized values of the test above.
	if d := res.Response.P99 - res.Service.P99; d < 0 || d > res.SendDelay.Max+0.01 {
		t.Errorf("response p99 %.3f − service p99 %.3f = %.3f ms, want within [0, send delay max %.3f]",
			res.Response.P99, res.Service.P99, d, res.SendDelay.Max)
	}
	if res.Response.P99 > 250 {
		t.Errorf("response p99 %.3f ms without a stall", res.Response.P99)
	}
}

func find(cs []recorder.Check, name string) recorder.Check {
	for _, c := range cs {
		if c.Name == name {
			return c
		}
	}
	return recorder.Check{}
}
