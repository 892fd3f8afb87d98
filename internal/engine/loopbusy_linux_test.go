package engine

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/openload/openload/schedule"
)

// TestLoopAsleepIsIdle: an event loop asleep through its first seconds
// (a stage at rate 0, as a scenario starting later has) is idle in each
// of them, not busy until its wait ends: its busiest second is no busier
// than the loop did work, never the 100 % it read while the whole run
// read 0 %. The wait under way counts as waiting (waitedSoFar).
func TestLoopAsleepIsIdle(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok")) }))
	defer srv.Close()
	s := schedule.NewConstantStages(0, []schedule.Stage{{Duration: 2500 * time.Millisecond, Target: 0}, {Duration: 500 * time.Millisecond, Target: 20}})
	// Without a start instant, and with one (a run of scenarios: the
	// loop's first wait begins before it, at a negative offset).
	for _, at := range []time.Duration{0, 300 * time.Millisecond} {
		cfg := Config{Lean: true, Epoll: true}
		if at > 0 {
			cfg.StartAt = time.Now().Add(at)
		}
		_, stats := runAgainst(t, srv.URL, cfg, s)
		g := stats.Generator
		if stats.Client != ClientEpoll {
			t.Skipf("client %s: no event loop", stats.Client)
		}
		// Two whole seconds asleep are sampled; a busy second would be
		// counted busy in the whole run too, so the peak over a second
		// is at most the whole's busy time over that second: LoopBusy ×
		// the run's seconds.
		if whole := g.LoopBusy * g.WallSeconds; g.PeakLoopBusy > whole+0.01 {
			t.Errorf("start in %v: busiest second %.3f, but the loop was busy %.3f s in all (%.3f of %.1f s)", at, g.PeakLoopBusy, whole, g.LoopBusy, g.WallSeconds)
		}
	}
}
