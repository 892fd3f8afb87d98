package loadtest

import (
	"context"
	"net/url"
	"testing"
	"time"

	"github.com/openload/openload/internal/engine"
	"github.com/openload/openload/schedule"
	"github.com/openload/openload/servers/stub"
	"github.com/openload/openload/verify"
)

// TestStagesCountsExact: a run over stages with constant arrivals
// schedules exactly ⌊∫λ dt⌋ requests (worked out by hand per shape), and
// its schedule check says so; the result names the stages.
func TestStagesCountsExact(t *testing.T) {
	cfg := stub.DefaultConfig()
	cfg.Workers, cfg.Latency, cfg.Policy = 8, time.Millisecond, stub.PolicyNone
	s, err := stub.NewServer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	u, _ := url.Parse(s.URL + "/predict")
	for _, tc := range []struct {
		start  float64
		stages string
		want   int64 // ⌊∫λ dt⌋ by hand: (a+b)/2 · T per stage
	}{
		{0, "1s:40", 20},
		{0, "300ms:50,400ms:50,300ms:0", 35}, // 7.5 + 20 + 7.5
		{10, "1s:30", 20},
		{30, "500ms:0,500ms:30", 15},
	} {
		st, _ := schedule.ParseStages(tc.stages)
		res, findings, err := Run(context.Background(), Options{
			Config:   engine.Config{URL: u, Connections: 8, Timeout: 5 * time.Second, Drain: 5 * time.Second},
			Schedule: schedule.Spec{Kind: schedule.Constant, Rate: tc.start, Stages: tc.stages, Duration: schedule.StagesDuration(st)},
		})
		if err != nil {
			t.Fatal(err)
		}
		if res.Counts.Scheduled != tc.want {
			t.Errorf("%s from %v/s: scheduled %d, want ⌊∫λ dt⌋ = %d", tc.stages, tc.start, res.Counts.Scheduled, tc.want)
		}
		for _, f := range findings {
			if f.Check == "schedule" && f.Severity != verify.Pass {
				t.Errorf("%s: schedule check %v: %s", tc.stages, f.Severity, f.Message)
			}
		}
		if res.Config.Stages != schedule.FormatStages(st) {
			t.Errorf("result names stages %q, want %q", res.Config.Stages, schedule.FormatStages(st))
		}
	}
}
