package verify

import (
	"strings"
	"testing"

	"github.com/openload/openload/result"
	"github.com/openload/openload/schedule"
)

// probe is a throughput probe's result: 160 due at 0, 16 connections,
// the queue spread over 3 seconds of sends, send delay far over budget.
func probe() *result.Result {
	return &result.Result{
		Config:    result.Config{Arrival: schedule.AtOnce, Rate: 0, Duration: "0s"},
		Counts:    result.Counts{Expected: 160, Scheduled: 160, Sent: 160, Completed: 160},
		SendDelay: result.Percentiles{P50: 900, P99: 1900},
		Limit:     result.Limit{Connections: 16, MaxInFlight: 16, Waited: 144},
		Timeline: []result.Second{
			{Scheduled: 160, Sent: 60, Completed: 44},
			{Sent: 60, Completed: 60},
			{Sent: 40, Completed: 56},
		},
	}
}

// The probe's checks: its count is the one asked for; its late sends are
// its queue, said so and passed, where an ordinary run warns.
func TestAtOnceChecks(t *testing.T) {
	fs := Run(probe(), Options{})
	if w := Worst(fs); w != Pass {
		t.Errorf("worst %s: %+v", w, fs)
	}
	for check, want := range map[string]string{
		"schedule":         "scheduled 160 = the 160 asked for, all due at offset 0 (rate inf)",
		"send dips":        "all 160 due at offset 0 (rate inf): each second sent what 16 connections let through, by design",
		"send delay":       "p50 900.000 ms, p99 1900.000 ms: the queue the probe made by design",
		"connection limit": "bound by design (rate inf): 144 of 160 requests waited for one of 16 connections",
	} {
		if f := find(t, fs, check); !strings.Contains(f.Message, want) {
			t.Errorf("%s: %q, want %q", check, f.Message, want)
		}
	}
	// The same figures as an ordinary run warn.
	ord := probe()
	ord.Config = result.Config{Arrival: schedule.Constant, Rate: 160, Duration: "1s"}
	for _, check := range []string{"send dips", "send delay", "connection limit"} {
		if f := find(t, Run(ord, Options{}), check); f.Severity != Warn {
			t.Errorf("ordinary run's %s: %s %q, want WARN", check, f.Severity, f.Message)
		}
	}
	// A count short of the one asked for fails.
	short := probe()
	short.Counts = result.Counts{Expected: 160, Scheduled: 150, Sent: 150, Completed: 150}
	if f := find(t, Run(short, Options{}), "schedule"); f.Severity != Fail || f.Message != "scheduled 150 ≠ the 160 asked for at once (rate inf)" {
		t.Errorf("short count: %s %q", f.Severity, f.Message)
	}
	// Without a connection that bound, a late send is the generator's:
	// the ordinary warning stands.
	free := probe()
	free.Limit.Waited = 0
	if f := find(t, Run(free, Options{}), "send delay"); f.Severity != Warn {
		t.Errorf("probe whose limit never bound: send delay %s %q, want WARN", f.Severity, f.Message)
	}
}
