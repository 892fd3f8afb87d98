package stub

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestModelAnswer(t *testing.T) {
	s := startServer(t, testConfig(func(c *Config) { c.Latency = 5 * time.Millisecond }), nil)
	if !strings.HasPrefix(s.URL, "http://127.0.0.1:") {
		t.Fatalf("URL = %q, want loopback", s.URL)
	}
	c := newClient(t)
	r := do(context.Background(), c, http.MethodPost, s.URL+"/predict")
	if r.err != nil {
		t.Fatal(r.err)
	}
	if r.status != 200 || r.source != "model" || r.reason != "served" {
		t.Fatalf("got %d %q %q, want 200 model served", r.status, r.source, r.reason)
	}
	var body struct {
		Source string   `json:"source"`
		Reason string   `json:"reason"`
		Items  []string `json:"items"`
	}
	if err := json.Unmarshal(r.body, &body); err != nil || body.Source != "model" || body.Reason != "served" || len(body.Items) == 0 {
		t.Fatalf("body %s (err %v)", r.body, err)
	}
	if r.timing == nil {
		t.Fatal("missing or malformed Server-Timing")
	}
	if len(r.timing) != 3 {
		t.Errorf("Server-Timing metrics = %v, want queue, model, total", r.timing)
	}
	// Lower bounds only: a slow machine makes these longer, never shorter.
	if r.timing["model"] < 5 {
		t.Errorf("model dur %.3fms < latency 5ms", r.timing["model"])
	}
	if r.timing["total"] < r.timing["queue"]+r.timing["model"] {
		t.Errorf("total %.3f < queue %.3f + model %.3f", r.timing["total"], r.timing["queue"], r.timing["model"])
	}
	st := s.Stats()
	checkAccounting(t, st)
	if st.Total != 1 || st.Sources.Model != 1 || st.QueueWait.Count != 1 || st.TotalTime.Count != 1 {
		t.Errorf("stats %+v", st)
	}
	if st.TotalTime.Max < 5 {
		t.Errorf("total_ms max = %v, want >= 5", st.TotalTime.Max)
	}
}

func TestServerTimingFormat(t *testing.T) {
	cases := []struct {
		tm   timings
		want string
	}{
		{timings{queue: 12345 * time.Microsecond, model: 50012 * time.Microsecond, total: 62400 * time.Microsecond},
			"queue;dur=12.345, model;dur=50.012, total;dur=62.400"},
		{timings{total: time.Second, stall: 250 * time.Millisecond},
			"queue;dur=0.000, model;dur=0.000, total;dur=1000.000, stall;dur=250.000"},
		{timings{total: 2 * time.Millisecond, dwell: 1500 * time.Microsecond, hasDwell: true},
			"queue;dur=0.000, model;dur=0.000, total;dur=2.000, dwell;dur=1.500"},
		{timings{total: time.Millisecond, stall: time.Millisecond, dwell: -3 * time.Millisecond, hasDwell: true},
			"queue;dur=0.000, model;dur=0.000, total;dur=1.000, stall;dur=1.000, dwell;dur=-3.000"},
		{timings{total: time.Millisecond, hasDwell: true}, // dwell exactly 0 is still reported
			"queue;dur=0.000, model;dur=0.000, total;dur=1.000, dwell;dur=0.000"},
	}
	for _, tc := range cases {
		if got := tc.tm.header(); got != tc.want {
			t.Errorf("header() = %q, want %q", got, tc.want)
		}
	}
}

func TestStatsEndpoint(t *testing.T) {
	s := startServer(t, testConfig(func(c *Config) { c.Latency = 0 }), nil)
	c := newClient(t)
	for _, path := range []string{"/predict", "/", "/stats"} { // POST /stats is a model request
		if r := do(context.Background(), c, http.MethodPost, s.URL+path); r.err != nil || r.source != "model" {
			t.Fatalf("POST %s: %v %q", path, r.err, r.source)
		}
	}
	r := do(context.Background(), c, http.MethodGet, s.URL+"/stats")
	if r.err != nil || r.status != 200 || r.source != "" {
		t.Fatalf("GET /stats: %v %d source %q", r.err, r.status, r.source)
	}
	var st Stats
	if err := json.Unmarshal(r.body, &st); err != nil {
		t.Fatalf("decode /stats: %v\n%s", err, r.body)
	}
	if st.Total != 3 || st.Sources.Model != 3 || st.Reasons.Served != 3 || st.Policy != PolicyAdmission ||
		st.Estimator.Name != EstimatorCompletions || !st.Estimator.UsingBelieved {
		t.Errorf("stats = %s", r.body)
	}
	// The JSON shape other tools read.
	var raw map[string]any
	_ = json.Unmarshal(r.body, &raw)
	for _, k := range []string{"total", "in_flight", "sources", "reasons", "canceled", "closed", "queue_len",
		"max_queue_len", "in_model", "max_in_model", "estimator", "stalls", "stalled_requests", "queue_wait_ms", "total_ms",
		"deadline", "limiter"} {
		if _, ok := raw[k]; !ok {
			t.Errorf("/stats lacks %q", k)
		}
	}
	for _, k := range []string{"served", "queue_full", "over_budget", "wait_timeout", "rate_limited"} {
		if _, ok := raw["reasons"].(map[string]any)[k]; !ok {
			t.Errorf("/stats reasons lacks %q", k)
		}
	}
	for _, k := range []string{"model", "fallback", "limiter"} {
		if _, ok := raw["sources"].(map[string]any)[k]; !ok {
			t.Errorf("/stats sources lacks %q", k)
		}
	}
	dl, _ := raw["deadline"].(map[string]any)
	for _, k := range []string{"deadline_ms", "status", "arrival_stamp", "clock_skew_ms", "position", "sent", "dropped", "max_dwell_sent_ms"} {
		if _, ok := dl[k]; !ok {
			t.Errorf("/stats deadline lacks %q", k)
		}
	}
	for _, k := range []string{"late", "no_stamp", "bad_stamp", "future_stamp", "total"} {
		if _, ok := dl["dropped"].(map[string]any)[k]; !ok {
			t.Errorf("/stats deadline.dropped lacks %q", k)
		}
	}
	for _, k := range []string{"rps", "shards", "window_ms", "routing", "seed", "per_shard_allowance", "accepted", "rejected", "per_shard"} {
		if _, ok := raw["limiter"].(map[string]any)[k]; !ok {
			t.Errorf("/stats limiter lacks %q", k)
		}
	}
	for _, k := range []string{"p50", "p90", "p99", "max", "count"} {
		if _, ok := raw["total_ms"].(map[string]any)[k]; !ok {
			t.Errorf("/stats total_ms lacks %q", k)
		}
	}
}

// blockingModel is a callHook whose model calls finish only when released,
// one per token, so tests control exactly when workers free up.
// Calls also end when the server closes, like real model calls.
type blockingModel struct {
	tokens      chan struct{}
	closing     <-chan struct{}
	cur, maxCur atomic.Int64
}

func newBlockingModel() *blockingModel { return &blockingModel{tokens: make(chan struct{}, 1000)} }

// install makes m the model of s (call it on the unstarted server).
func (b *blockingModel) install(s *Server) {
	b.closing = s.closing
	s.callHook = b.call
}

func (b *blockingModel) call(ctx context.Context, _ *http.Request) bool {
	n := b.cur.Add(1)
	for {
		m := b.maxCur.Load()
		if n <= m || b.maxCur.CompareAndSwap(m, n) {
			break
		}
	}
	defer b.cur.Add(-1)
	select {
	case <-b.tokens:
		return true
	case <-ctx.Done():
		return false
	case <-b.closing:
		return false
	}
}

func (b *blockingModel) release(n int) {
	for range n {
		b.tokens <- struct{}{}
	}
}

// serveAll lets the model finish the calls of chs's requests and checks
// that each was answered by the model.
func (b *blockingModel) serveAll(t *testing.T, chs ...<-chan result) {
	t.Helper()
	b.release(len(chs))
	for i, ch := range chs {
		if r := <-ch; r.err != nil || r.source != "model" {
			t.Errorf("request %d: got %q %v, want model", i, r.source, r.err)
		}
	}
}

// lineUp sends a request to each of paths in turn, each once the one
// before holds the model's one worker or waits in its queue, so that the
// first holds the worker and the others wait in the order given. It
// returns their answers to come.
func lineUp(t *testing.T, s *Server, c *http.Client, paths ...string) []<-chan result {
	t.Helper()
	var chs []<-chan result
	for i, p := range paths {
		chs = append(chs, goDo(context.Background(), c, s.URL+p))
		waitFor(t, s, p+" in line", func(st Stats) bool { return st.InModel == 1 && st.QueueLen == i })
	}
	return chs
}

func TestFIFOOrder(t *testing.T) {
	model := newBlockingModel()
	var mu sync.Mutex
	var order []string
	cfg := testConfig(func(c *Config) {
		c.Workers, c.Policy, c.MaxQueueWait = 1, PolicyNone, time.Minute
	})
	s := startServer(t, cfg, func(s *Server) {
		model.install(s)
		s.grantHook = func(r *http.Request) {
			mu.Lock()
			order = append(order, r.URL.Path)
			mu.Unlock()
		}
	})
	c := newClient(t)
	names := []string{"/a", "/b", "/c", "/d", "/e", "/f"}
	// One at a time, so that the arrival order is known.
	model.serveAll(t, lineUp(t, s, c, names...)...)
	mu.Lock()
	defer mu.Unlock()
	if strings.Join(order, " ") != strings.Join(names, " ") {
		t.Fatalf("grant order %v, want arrival order %v", order, names)
	}
	st := s.Stats()
	checkAccounting(t, st)
	if st.MaxQueueLen != len(names)-1 {
		t.Errorf("max_queue_len = %d, want %d", st.MaxQueueLen, len(names)-1)
	}
}

func TestWorkerConcurrencyLimit(t *testing.T) {
	const workers, requests = 3, 12
	model := newBlockingModel()
	cfg := testConfig(func(c *Config) {
		c.Workers, c.Policy, c.MaxQueueWait = workers, PolicyNone, time.Minute
	})
	s := startServer(t, cfg, model.install)
	c := newClient(t)
	var results []<-chan result
	for range requests {
		results = append(results, goDo(context.Background(), c, s.URL+"/predict"))
	}
	// A granted slot shows in InModel just before its call starts, so wait
	// for the calls too.
	waitFor(t, s, "all requests in", func(st Stats) bool {
		return st.InModel == workers && st.QueueLen == requests-workers && model.cur.Load() == workers
	})
	// Release one call at a time: the freed slot goes to a waiter and the
	// model never runs more than `workers` calls.
	for i := range requests {
		model.release(1)
		// The freed slot is handed to the oldest waiter, which then enters
		// the model: the running count returns to min(workers, left).
		want := int64(min(workers, requests-i-1))
		waitFor(t, s, "one more served, next one in", func(st Stats) bool {
			return st.Sources.Model == int64(i+1) && model.cur.Load() == want
		})
		if n := model.maxCur.Load(); n > workers {
			t.Fatalf("%d model calls ran at once, limit %d", n, workers)
		}
	}
	for _, ch := range results {
		if r := <-ch; r.err != nil || r.source != "model" {
			t.Fatalf("%v %q", r.err, r.source)
		}
	}
	st := s.Stats()
	checkAccounting(t, st)
	if st.MaxInModel != workers || model.maxCur.Load() != workers {
		t.Errorf("max in model: server %d, observed %d, want %d", st.MaxInModel, model.maxCur.Load(), workers)
	}
	if st.InModel != 0 || st.QueueLen != 0 {
		t.Errorf("after all done: in_model %d queue_len %d", st.InModel, st.QueueLen)
	}
}

func TestBoundedQueueFull(t *testing.T) {
	model := newBlockingModel()
	cfg := testConfig(func(c *Config) {
		c.Workers, c.Policy, c.QueueCap, c.MaxQueueWait = 1, PolicyBounded, 2, time.Minute
	})
	s := startServer(t, cfg, model.install)
	c := newClient(t)
	// a takes the worker, b finds 0 waiting and joins, c finds cap-1 = 1
	// waiting and joins.
	abc := lineUp(t, s, c, "/a", "/b", "/c")
	// d finds exactly QueueCap waiting: fallback at once.
	d := do(context.Background(), c, http.MethodPost, s.URL+"/d")
	if d.err != nil || d.status != 200 || d.source != "fallback" || d.reason != "queue-full" {
		t.Fatalf("d: %v %d %q %q, want 200 fallback queue-full", d.err, d.status, d.source, d.reason)
	}
	if d.timing["model"] != 0 {
		t.Errorf("fallback model dur = %v, want 0", d.timing["model"])
	}
	if !strings.Contains(string(d.body), `"source":"fallback"`) || !strings.Contains(string(d.body), `"reason":"queue-full"`) {
		t.Errorf("fallback body %s", d.body)
	}
	model.serveAll(t, abc...)
	st := s.Stats()
	checkAccounting(t, st)
	if st.Reasons.QueueFull != 1 || st.Reasons.Served != 3 {
		t.Errorf("reasons %+v", st.Reasons)
	}
	if st.QueueWait.Count != 3 || st.TotalTime.Count != 4 {
		t.Errorf("histogram counts queue %d total %d, want 3 and 4", st.QueueWait.Count, st.TotalTime.Count)
	}
}

// Believed estimator end to end: 1 worker believed at 100ms, budget 100ms.
// With the worker busy, a request finding 0 waiting estimates 0, finding 1
// estimates exactly 100ms = budget (admitted), finding 2 estimates 200ms.
func TestAdmissionBudgetBoundary(t *testing.T) {
	model := newBlockingModel()
	cfg := testConfig(func(c *Config) {
		c.Workers, c.Policy, c.Estimator = 1, PolicyAdmission, EstimatorBelieved
		c.BelievedLatency, c.WaitBudget, c.MaxQueueWait = 100*time.Millisecond, 100*time.Millisecond, time.Minute
	})
	s := startServer(t, cfg, model.install)
	c := newClient(t)
	ab := lineUp(t, s, c, "/a", "/b")
	if st := s.Stats(); st.Estimator.WaitEstimateMs != 100 || !st.Estimator.UsingBelieved || st.Estimator.ThroughputPerSec != 10 {
		t.Fatalf("estimator %+v, want wait 100ms at 10/s believed", st.Estimator)
	}
	cc := goDo(context.Background(), c, s.URL+"/c") // estimate == budget: admitted
	waitFor(t, s, "c queued", func(st Stats) bool { return st.QueueLen == 2 })
	d := do(context.Background(), c, http.MethodPost, s.URL+"/d") // 200ms > budget
	if d.err != nil || d.source != "fallback" || d.reason != "over-budget" {
		t.Fatalf("d: %v %q %q, want fallback over-budget", d.err, d.source, d.reason)
	}
	model.serveAll(t, ab[0], ab[1], cc)
	st := s.Stats()
	checkAccounting(t, st)
	if st.Reasons.OverBudget != 1 || st.Reasons.Served != 3 {
		t.Errorf("reasons %+v", st.Reasons)
	}
}

func TestMaxQueueWait(t *testing.T) {
	cfg := testConfig(func(c *Config) {
		c.Workers, c.Latency, c.Policy, c.MaxQueueWait = 1, time.Minute, PolicyNone, 100*time.Millisecond
	})
	s := startServer(t, cfg, nil)
	c := newClient(t)
	ctxA, cancelA := context.WithCancel(context.Background())
	defer cancelA()
	a := goDo(ctxA, c, s.URL+"/a") // holds the only worker for a minute
	waitFor(t, s, "a in model", func(st Stats) bool { return st.InModel == 1 })
	b := do(context.Background(), c, http.MethodPost, s.URL+"/b")
	if b.err != nil || b.status != 200 || b.source != "fallback" || b.reason != "wait-timeout" {
		t.Fatalf("b: %v %d %q %q, want 200 fallback wait-timeout", b.err, b.status, b.source, b.reason)
	}
	if b.timing["queue"] < 100 {
		t.Errorf("b queue dur %.3fms, want >= MaxQueueWait 100ms", b.timing["queue"])
	}
	st := s.Stats()
	if st.Reasons.WaitTimeout != 1 || st.QueueLen != 0 || st.QueueWait.Count != 1 || st.QueueWait.Max < 100 {
		t.Errorf("stats after wait-timeout: %+v", st)
	}
	cancelA()
	<-a
	// The cancel is counted (abandon) before the handler gives its worker
	// back, so the two are waited for together: a worker never given
	// back times out here, as the check below would fail.
	st = waitFor(t, s, "a canceled and its worker given back", func(st Stats) bool { return st.Canceled == 1 && st.InModel == 0 })
	checkAccounting(t, st)
	if st.InModel != 0 {
		t.Errorf("in_model %d after cancel", st.InModel)
	}
}

func TestClientGoneLeavesQueue(t *testing.T) {
	model := newBlockingModel()
	cfg := testConfig(func(c *Config) {
		c.Workers, c.Policy, c.MaxQueueWait = 1, PolicyNone, time.Minute
	})
	s := startServer(t, cfg, model.install)
	c := newClient(t)
	a := goDo(context.Background(), c, s.URL+"/a")
	waitFor(t, s, "a in model", func(st Stats) bool { return st.InModel == 1 })
	ctxB, cancelB := context.WithCancel(context.Background())
	b := goDo(ctxB, c, s.URL+"/b")
	waitFor(t, s, "b queued", func(st Stats) bool { return st.QueueLen == 1 })
	cc := goDo(context.Background(), c, s.URL+"/c")
	waitFor(t, s, "c queued", func(st Stats) bool { return st.QueueLen == 2 })
	cancelB()
	if r := <-b; r.err == nil {
		t.Fatalf("b: want a client error after cancel, got %d", r.status)
	}
	waitFor(t, s, "b left the queue", func(st Stats) bool { return st.QueueLen == 1 && st.Canceled == 1 })
	model.serveAll(t, a, cc)
	st := s.Stats()
	checkAccounting(t, st)
	if st.Sources.Model != 2 || st.InModel != 0 {
		t.Errorf("stats %+v", st)
	}
}

// A request arriving during a stall cannot complete before the stall ends.
// Assert only a lower bound on elapsed time: safe on a slow machine.
func TestStallHoldsModelAnswer(t *testing.T) {
	const stallAt, stallFor = 100 * time.Millisecond, 300 * time.Millisecond
	cfg := testConfig(func(c *Config) {
		c.Workers, c.Latency, c.Policy = 2, 10*time.Millisecond, PolicyNone
		c.StallAt, c.StallFor = stallAt, stallFor
	})
	s := startServer(t, cfg, nil)
	c := newClient(t)
	t0 := time.Now() // the server's stall clock starts after t0
	if r := do(context.Background(), c, http.MethodPost, s.URL+"/first"); r.err != nil {
		t.Fatal(r.err)
	}
	time.Sleep(time.Until(t0.Add(stallAt + 50*time.Millisecond))) // inside the stall
	r := do(context.Background(), c, http.MethodPost, s.URL+"/during")
	if r.err != nil || r.source != "model" {
		t.Fatalf("%v %q", r.err, r.source)
	}
	// The stall ends at first+400ms and first >= t0. Without the stall this
	// request would be done at about t0+160ms.
	if el := r.done.Sub(t0); el < stallAt+stallFor {
		t.Fatalf("request during the stall done %v after start, before the stall end %v", el, stallAt+stallFor)
	}
	st := s.Stats()
	checkAccounting(t, st)
	if st.Stalls != 1 {
		t.Errorf("stalls = %d, want 1", st.Stalls)
	}
	if r.timing["stall"] > 0 && st.StalledRequests == 0 {
		t.Errorf("answer reports a stall but stalled_requests = 0")
	}
}

// Fallbacks are frozen by a stall too: a queue-full answer decided at once
// is written only when the stall (starting at the first request) ends.
func TestStallHoldsFallback(t *testing.T) {
	const stallFor = 300 * time.Millisecond
	model := newBlockingModel()
	cfg := testConfig(func(c *Config) {
		c.Workers, c.Policy, c.QueueCap, c.MaxQueueWait = 1, PolicyBounded, 1, time.Minute
		c.StallAt, c.StallFor = 0, stallFor
	})
	s := startServer(t, cfg, model.install)
	c := newClient(t)
	t0 := time.Now()
	ab := lineUp(t, s, c, "/a", "/b") // a starts the stall clock and the stall
	r := do(context.Background(), c, http.MethodPost, s.URL+"/c")
	if r.err != nil || r.source != "fallback" || r.reason != "queue-full" {
		t.Fatalf("c: %v %q %q", r.err, r.source, r.reason)
	}
	if el := r.done.Sub(t0); el < stallFor {
		t.Fatalf("fallback written %v after start, inside the %v stall", el, stallFor)
	}
	model.serveAll(t, ab...)
	st := s.Stats()
	checkAccounting(t, st)
	if st.StalledRequests < 1 || st.Stalls != 1 {
		t.Errorf("stalled_requests %d stalls %d", st.StalledRequests, st.Stalls)
	}
}

// Close with requests in the model, in the queue and held by a stall
// returns promptly, answers them 503, and leaves no goroutine behind.
func TestCloseReleasesWaiters(t *testing.T) {
	cfg := testConfig(func(c *Config) {
		c.Workers, c.Latency, c.MaxQueueWait = 1, time.Minute, time.Minute
		c.Policy, c.QueueCap = PolicyBounded, 4
		c.StallFor = time.Minute // from the first request on: holds the queue-full fallback
	})
	s, err := NewServer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	tr := &http.Transport{}
	c := &http.Client{Transport: tr}
	var results []<-chan result
	for range 5 {
		results = append(results, goDo(context.Background(), c, s.URL+"/predict"))
	}
	waitFor(t, s, "1 in model and 4 queued", func(st Stats) bool { return st.InModel == 1 && st.QueueLen == 4 })
	results = append(results, goDo(context.Background(), c, s.URL+"/predict")) // queue-full, stalled
	waitFor(t, s, "6th request in", func(st Stats) bool { return st.Total == 6 })
	start := time.Now()
	s.Close()
	// Without the release, Close would wait for Shutdown's grace to run
	// out (shutdownGrace), then for the holds to end (a minute each, or
	// until the connections' close reaches them). So it must return
	// before that grace ends: an order of two instants, where this was a
	// bound of 10 s on "promptly" (which a release left to the grace
	// passed).
	if end := time.Now(); !end.Before(start.Add(shutdownGrace)) {
		t.Errorf("Close took %v: not before Shutdown's grace of %v ran out, so the waiters were not released", end.Sub(start), shutdownGrace)
	}
	for _, ch := range results {
		if r := <-ch; r.err == nil && r.status != http.StatusServiceUnavailable {
			t.Errorf("released request got %d %q, want 503 or an error", r.status, r.source)
		}
	}
	st := s.Stats()
	checkAccounting(t, st)
	if st.Closed != 6 {
		t.Errorf("closed = %d, want 6", st.Closed)
	}
	s.Close() // idempotent
	if err := s.Start(); err == nil {
		t.Error("Start after Close succeeded")
	}
	tr.CloseIdleConnections()
	goleak.VerifyNone(t)
}

func TestStartTwice(t *testing.T) {
	s := startServer(t, DefaultConfig(), nil)
	if err := s.Start(); err == nil {
		t.Fatal("second Start succeeded")
	}
}

func TestHandlerWithHTTPTest(t *testing.T) {
	s, err := NewUnstartedServer(testConfig(func(c *Config) { c.Latency = time.Millisecond }))
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()
	defer s.Close() // runs first: releases waiters before ts.Close waits for handlers
	c := newClient(t)
	r := do(context.Background(), c, http.MethodPost, ts.URL+"/predict")
	if r.err != nil || r.source != "model" {
		t.Fatalf("%v %q", r.err, r.source)
	}
	if s.URL != "" {
		t.Errorf("URL = %q for an unstarted server", s.URL)
	}
	if st := s.Stats(); st.Sources.Model != 1 {
		t.Errorf("stats %+v", st)
	}
}
