package loadtest

import (
	"context"
	"math"
	"net/url"
	"testing"
	"time"

	"github.com/openload/openload/internal/engine"
	"github.com/openload/openload/result"
	"github.com/openload/openload/schedule"
	"github.com/openload/openload/servers/stub"
)

// TestShadowFaultWindow runs 50/s for 4 s against an in-process stub whose
// borrowed plane publishes no health sample in [1 s, 2 s) from its first
// request (stale-health@1s+1s), half the requests asking for a shadow
// score, and reads X-Stub-Shadow back per second and per 100 of the rest.
//
// Where shed-stale answers can end: samples come every 50 ms, so the last
// one before the window is at most 50 ms before 1 s and the fence (max
// age 150 ms) refuses from at least 1.1 s − 50 ms on, until the first
// sample at or after 2 s, at most 50 ms after it: refusals in stub time
// [1.05 s, 2.05 s). The stub's clock starts at its first request, δ ≥ 0
// after openload's, and an answer ends after its refusal (a 5 ms model
// call and loopback): in openload's seconds, every shed-stale answer ends
// at 1.05 s or later (second ≥ 1) and before 2.05 s + δ + the call, in
// second 2 at the latest unless δ and the call take 0.95 s. So: none in
// seconds 0 and 3, some in second 1 (refusals from 1.1 s to 2 s at about
// 25 intents/s).
func TestShadowFaultWindow(t *testing.T) {
	cfg := stub.DefaultConfig()
	cfg.Workers = 4
	cfg.Latency = 5 * time.Millisecond
	cfg.Policy = stub.PolicyNone
	cfg.MaxQueueWait = 5 * time.Second
	cfg.ShadowShare = 0.5
	cfg.Fence = stub.FencePerPlane
	cfg.HealthEvery = 50 * time.Millisecond
	cfg.HealthMaxAge = 150 * time.Millisecond
	cfg.PlaneFaults = "stale-health@1s+1s"
	s, err := stub.NewServer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	u, _ := url.Parse(s.URL + "/predict")
	const h = "X-Stub-Shadow"
	res, _, err := Run(context.Background(), Options{
		Config:   engine.Config{URL: u, Connections: 8, Timeout: 10 * time.Second, Drain: 10 * time.Second, ClassHeaders: []string{h}},
		Schedule: schedule.Spec{Kind: schedule.Constant, Rate: 50, Duration: 4 * time.Second},
	})
	if err != nil {
		t.Fatal(err)
	}
	if c := res.Counts; c.Completed != 200 || !c.Balanced() {
		t.Fatalf("counts %+v", c)
	}

	perSec := make([]int64, len(res.Timeline))
	var inSeconds int64
	for i, sec := range res.Timeline {
		perSec[i] = sec.Classes[h]["shed-stale"]
		for _, n := range sec.Classes[h] {
			inSeconds += n
		}
	}
	if inSeconds != 200 {
		t.Errorf("per-second class counts sum to %d, want every request (200)", inSeconds)
	}
	for i, n := range perSec {
		if n > 0 && i != 1 && i != 2 {
			t.Errorf("second %d: %d shed-stale answers, outside the window's seconds 1–2 (per second %v)", i, n, perSec)
		}
	}
	if len(perSec) < 2 || perSec[1] == 0 {
		t.Errorf("no shed-stale answer in second 1, inside the window (per second %v)", perSec)
	}

	f := s.Stats().Fence
	t.Logf("shed-stale per second %v; stub: %d intents, shed %+v, shed_per_100 %.3f", perSec, f.Intents, f.Shed, f.ShedPer100)
	var table result.ClassTable
	for _, ct := range res.Classes {
		if ct.Header == h {
			table = ct
		}
	}
	counts := table.Counts()
	if counts["shed-stale"] != f.Shed.StaleHealth || 200-counts["none"] != f.Intents {
		t.Fatalf("table %v; stub: %d intents, shed %+v", counts, f.Intents, f.Shed)
	}
	var shed float64
	for _, v := range table.Values {
		switch v.Value {
		case "shed-stale":
			if want := 100 * float64(f.Shed.StaleHealth) / float64(f.Intents); math.Abs(v.Per100Rest-want) > 1e-9 {
				t.Errorf("shed-stale per 100 of the rest %.3f, the stub's stale sheds per 100 intents %.3f", v.Per100Rest, want)
			}
			shed += v.Per100Rest
		case "shed-depth", "shed-budget":
			shed += v.Per100Rest
		}
	}
	if shed == 0 || math.Abs(shed-f.ShedPer100) > 1e-9 {
		t.Errorf("shed per 100 of the rest %.3f, the stub's shed_per_100 %.3f", shed, f.ShedPer100)
	}
}
