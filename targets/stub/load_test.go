package stub

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"
)

// An open-loop run at about twice the model's capacity: 4 workers × 20ms =
// 200 calls/s, offered 400 requests/s for 3s. The admission gate must keep
// the model busy (model share ≈ capacity ÷ offered = 0.5) and keep every
// admitted request's queue wait near the budget.
func TestOverloadAdmission(t *testing.T) {
	if testing.Short() {
		t.Skip("3s load run")
	}
	const (
		workers  = 4
		latency  = 20 * time.Millisecond
		budget   = 100 * time.Millisecond
		rate     = 400.0 // requests per second
		duration = 3 * time.Second
	)
	cfg := testConfig(func(c *Config) {
		c.Workers, c.Latency = workers, latency
		c.Policy, c.Estimator, c.WaitBudget = PolicyAdmission, EstimatorCompletions, budget
		// Well above budget+call+slack below, so that an ungated queue
		// (waits growing to MaxQueueWait) fails the queue-wait bound.
		c.MaxQueueWait = time.Second
	})
	s := startServer(t, cfg, nil)
	c := newClient(t)

	var (
		mu       sync.Mutex
		model    int
		fallback int
		errs     int
		maxQueue float64 // largest server-side queue wait of a model answer, ms
		wg       sync.WaitGroup
	)
	send := func() {
		defer wg.Done()
		r := do(context.Background(), c, http.MethodPost, s.URL+"/predict")
		mu.Lock()
		defer mu.Unlock()
		switch {
		case r.err != nil || r.status != 200:
			errs++
			if errs <= 3 {
				t.Logf("request failed: %v status %d", r.err, r.status)
			}
		case r.source == "model":
			model++
			maxQueue = max(maxQueue, r.timing["queue"])
		case r.source == "fallback":
			fallback++
		}
	}
	// Open loop: every tick issue all requests due by now, whether or not
	// earlier ones have returned (a late tick issues several).
	start := time.Now()
	ticker := time.NewTicker(2 * time.Millisecond)
	sent := 0
	for now := range ticker.C {
		el := now.Sub(start)
		if el >= duration {
			break
		}
		for due := int(el.Seconds() * rate); sent < due; sent++ {
			wg.Add(1)
			go send()
		}
	}
	ticker.Stop()
	issueTime := time.Since(start)
	wg.Wait()
	runTime := time.Since(start)

	st := s.Stats()
	answered := model + fallback
	share := float64(model) / float64(answered)
	t.Logf("sent %d in %v (%.0f/s), model %d fallback %d errors %d, model share %.2f, "+
		"max model queue wait %.1fms; server: queue_wait %+v, estimator %+v, reasons %+v",
		sent, issueTime.Round(time.Millisecond), float64(sent)/issueTime.Seconds(), model, fallback, errs, share,
		maxQueue, st.QueueWait, st.Estimator, st.Reasons)

	if errs != 0 {
		t.Errorf("%d requests failed", errs)
	}
	checkAccounting(t, st)
	if int(st.Sources.Model) != model || int(st.Sources.Fallback) != fallback {
		t.Errorf("server counts model %d fallback %d, client saw %d and %d", st.Sources.Model, st.Sources.Fallback, model, fallback)
	}
	if st.MaxInModel > workers {
		t.Errorf("max_in_model %d > workers %d", st.MaxInModel, workers)
	}
	// Hard bound: the model cannot complete more than workers calls per
	// latency over the whole run (time.Sleep never returns early).
	if limit := int(float64(workers)*runTime.Seconds()/latency.Seconds()) + workers; model > limit {
		t.Errorf("model answered %d, more than its capacity allows in %v (%d)", model, runTime, limit)
	}
	// Statistical: the ideal share is 200/400 = 0.5. The band is wide because
	// (a) on a slow or busy machine (race detector, 2 cores shared with the
	// client) real calls take longer than 20ms and the client may not reach
	// 400/s, which moves the share down or up; (b) the first fraction of a
	// second runs on the believed estimate and the queue fills. The lower
	// bound only catches a gate that rejects nearly everything: a loaded
	// machine has pushed the share far below the ideal (see
	// docs/MEASUREMENTS.md, “TestOverloadAdmission”). 0.75 means the gate
	// let far more in than the model can serve within budget.
	if share < 0.05 || share > 0.75 {
		t.Errorf("model share %.2f outside [0.05, 0.75] (capacity/offered ≈ 0.5)", share)
	}
	if st.Reasons.OverBudget == 0 {
		t.Errorf("no over-budget fallbacks at 2× capacity")
	}
	// Every admitted request was estimated to wait at most the budget; its
	// real wait can exceed that by about one call (the estimate counts only
	// the requests ahead, not the call in progress) plus slack: the process
	// being descheduled, and the model slowing down after the estimate was
	// taken (the rate lags by up to a window). The slack covers what
	// oversubscribed cores have added (see docs/MEASUREMENTS.md,
	// “TestOverloadAdmission”); budget+call+slack = 420ms is still far below
	// the 1s that an ungated queue reaches (queue wait grows to MaxQueueWait
	// at 2× overload).
	const slack = 300 * time.Millisecond
	if bound := ms(budget + latency + slack); maxQueue > bound {
		t.Errorf("a model answer waited %.1fms in the queue, bound budget+call+slack = %.0fms", maxQueue, bound)
	}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
