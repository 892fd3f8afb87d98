package stub

import (
	"context"
	"encoding/json"
	"math"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestShardAllowance(t *testing.T) {
	cases := []struct {
		rps    int
		window time.Duration
		shards int
		want   int64
	}{
		{100, time.Second, 1, 100},
		{100, time.Second, 4, 25},
		{100, time.Second, 3, 33}, // floor(33.3)
		{4, time.Second, 4, 1},
		{3, time.Second, 4, 0}, // limit below shards
		{1, 4 * time.Second, 4, 1},
		{1, 4*time.Second - 1, 4, 0},
		{100, 10 * time.Millisecond, 2, 0}, // floor(0.5)
		{1000, 10 * time.Millisecond, 3, 3},
		{1, time.Nanosecond, 1, 0},
		{0, time.Second, 1, 0},
		{math.MaxInt, time.Hour, 1, math.MaxInt64}, // clamped, not wrapped
		{1_000_000, 24 * time.Hour, 7, 12_342_857_142},
	}
	for _, tc := range cases {
		if got := shardAllowance(tc.rps, tc.window, tc.shards); got != tc.want {
			t.Errorf("shardAllowance(%d, %v, %d) = %d, want %d", tc.rps, tc.window, tc.shards, got, tc.want)
		}
	}
}

func TestRetryAfter(t *testing.T) {
	reset := time.Unix(1_000_000, 0)
	for left, want := range map[time.Duration]int64{
		700 * time.Millisecond:  1,
		time.Second:             1,
		time.Second + 1:         2, // rounded up
		2500 * time.Millisecond: 3,
		10 * time.Second:        10,
		time.Nanosecond:         1,
		0:                       1, // at least 1
		-300 * time.Millisecond: 1,
		3600*time.Second - 1:    3600,
	} {
		if got := retryAfter(reset, reset.Add(-left)); got != want {
			t.Errorf("retryAfter with %v left = %d, want %d", left, got, want)
		}
	}
}

func newTestLimiter(t *testing.T, change func(*Config)) (*limiter, time.Time) {
	t.Helper()
	cfg := testConfig(func(c *Config) {
		c.LimitRPS = 1
		change(c)
	})
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	origin := newFakeClock().now()
	return newLimiter(cfg, origin), origin
}

// Fixed windows aligned to the origin: a shard admits its allowance per
// window, and its count resets at the window's start instant.
func TestLimiterWindowReset(t *testing.T) {
	l, t0 := newTestLimiter(t, func(c *Config) { c.LimitRPS, c.LimitWindow = 4, time.Second })
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	expect := func(now time.Time, wantOK bool, wantReset time.Time) {
		t.Helper()
		_, ok, reset := l.allow(now)
		if ok != wantOK || !reset.Equal(wantReset) {
			t.Fatalf("allow at %v = (%v, %v), want (%v, %v)", now.Sub(t0), ok, reset.Sub(t0), wantOK, wantReset.Sub(t0))
		}
	}
	for range 4 {
		expect(at(300*time.Millisecond), true, time.Time{})
	}
	expect(at(300*time.Millisecond), false, at(time.Second))
	expect(at(999*time.Millisecond), false, at(time.Second)) // last instant of window 0
	for range 4 {
		expect(at(time.Second), true, time.Time{}) // window 1 starts exactly at 1s
	}
	expect(at(1500*time.Millisecond), false, at(2*time.Second))
	// After a gap the windows stay aligned to the origin, not to the
	// first request after the gap.
	expect(at(10500*time.Millisecond), true, time.Time{})
	for range 3 {
		expect(at(10900*time.Millisecond), true, time.Time{})
	}
	expect(at(10999*time.Millisecond), false, at(11*time.Second))
	// Time going backwards stays in the current window.
	expect(at(5*time.Second), false, at(11*time.Second))
	got := l.stats()
	if want := []ShardStats{{Accepted: 12, Rejected: 5}}; !slices.Equal(got, want) {
		t.Errorf("stats %+v, want %+v", got, want)
	}
}

// Each shard admits floor(rps × window ÷ shards) per window, independently
// of the others: one shard running out does not affect the rest.
func TestLimiterPerShardAllowance(t *testing.T) {
	l, t0 := newTestLimiter(t, func(c *Config) {
		c.LimitRPS, c.LimitShards, c.LimitWindow, c.LimitRouting = 10, 3, time.Second, RoutingRoundRobin
	})
	if l.allowance != 3 { // floor(10 × 1 ÷ 3)
		t.Fatalf("allowance = %d, want 3", l.allowance)
	}
	var admitted [3]int
	for range 15 { // 5 per shard
		if shard, ok, _ := l.allow(t0); ok {
			admitted[shard]++
		}
	}
	if admitted != [3]int{3, 3, 3} {
		t.Errorf("admitted per shard %v, want 3 each", admitted)
	}
	want := []ShardStats{{3, 2}, {3, 2}, {3, 2}}
	if got := l.stats(); !slices.Equal(got, want) {
		t.Errorf("stats %+v, want %+v", got, want)
	}
	// Next window: every shard has its full allowance again.
	for i := range 9 {
		if shard, ok, _ := l.allow(t0.Add(time.Second)); !ok || shard != i%3 {
			t.Fatalf("request %d of window 1: shard %d ok %v", i, shard, ok)
		}
	}
}

// Round-robin spreads any multiple of n requests exactly evenly, also when
// they are routed concurrently.
func TestLimiterRoundRobinEven(t *testing.T) {
	const shards, goroutines, each = 7, 8, 7 * 25
	l, t0 := newTestLimiter(t, func(c *Config) {
		c.LimitRPS, c.LimitShards, c.LimitRouting = 1_000_000, shards, RoutingRoundRobin
	})
	var wg sync.WaitGroup
	for range goroutines {
		wg.Go(func() {
			for range each {
				l.allow(t0)
			}
		})
	}
	wg.Wait()
	for i, sh := range l.stats() {
		if sh.Accepted != goroutines*each/shards || sh.Rejected != 0 {
			t.Errorf("shard %d: %+v, want %d accepted", i, sh, goroutines*each/shards)
		}
	}
}

// Random routing is a pure function of the seed and the request order.
func TestLimiterRandomDeterministic(t *testing.T) {
	seq := func(seed uint64) []int {
		l, _ := newTestLimiter(t, func(c *Config) {
			c.LimitRPS, c.LimitShards, c.LimitRouting, c.LimitSeed = 1000, 5, RoutingRandom, seed
		})
		out := make([]int, 500)
		for i := range out {
			out[i] = l.route()
		}
		return out
	}
	a, b, other := seq(42), seq(42), seq(43)
	if !slices.Equal(a, b) {
		t.Fatal("same seed, different shard sequences")
	}
	if slices.Equal(a, other) {
		t.Error("seeds 42 and 43 give the same shard sequence")
	}
	var seen [5]int
	for _, s := range a {
		seen[s]++
	}
	for i, n := range seen {
		if n == 0 {
			t.Errorf("shard %d never chosen in 500 random routes: %v", i, seen)
		}
	}
}

// fakeLimitClock is a limiter clock the test moves; safe for concurrent use.
type fakeLimitClock struct {
	origin time.Time
	off    atomic.Int64
}

func (c *fakeLimitClock) now() time.Time          { return c.origin.Add(time.Duration(c.off.Load())) }
func (c *fakeLimitClock) set(d time.Duration)     { c.off.Store(int64(d)) }
func (c *fakeLimitClock) install(s *Server)       { c.origin = s.lim.origin; s.limitClock = c.now }
func newFakeLimitClock(s *Server) *fakeLimitClock { c := &fakeLimitClock{}; c.install(s); return c }

// The wire contract of a rate-limited answer, and that a rejected request
// never reaches the queue or the model.
func TestLimiter429(t *testing.T) {
	var calls atomic.Int64
	var clk *fakeLimitClock
	cfg := testConfig(func(c *Config) {
		c.LimitRPS, c.LimitWindow = 1, 10*time.Second // 10 per window
		c.Deadline = time.Minute                      // limiter answers pass the deadline gate too
	})
	s := startServer(t, cfg, func(s *Server) {
		clk = newFakeLimitClock(s)
		s.callHook = func(context.Context, *http.Request) bool { calls.Add(1); return true }
	})
	c := newClient(t)
	clk.set(2500 * time.Millisecond)
	for i := range 10 {
		if r := do(context.Background(), c, http.MethodPost, s.URL+"/predict"); r.err != nil || r.status != 200 || r.source != "model" {
			t.Fatalf("request %d: %v %d %q, want 200 model", i, r.err, r.status, r.source)
		}
	}
	r := do(context.Background(), c, http.MethodPost, s.URL+"/predict")
	if r.err != nil {
		t.Fatal(r.err)
	}
	if r.status != 429 || r.source != "limiter" || r.reason != "rate-limited" {
		t.Fatalf("11th request: %d %q %q, want 429 limiter rate-limited", r.status, r.source, r.reason)
	}
	if got := r.header.Get("Retry-After"); got != "8" { // ceil(10s − 2.5s)
		t.Errorf("Retry-After = %q, want 8", got)
	}
	var body struct{ Source, Reason string }
	if err := json.Unmarshal(r.body, &body); err != nil || body.Source != "limiter" || body.Reason != "rate-limited" ||
		r.header.Get("Content-Type") != "application/json" {
		t.Errorf("body %q (%v), content type %q", r.body, err, r.header.Get("Content-Type"))
	}
	if r.timing == nil || r.timing["model"] != 0 {
		t.Errorf("Server-Timing %q", r.header.Get("Server-Timing"))
	}
	if _, ok := r.timing["dwell"]; !ok {
		t.Errorf("Server-Timing %q lacks the dwell", r.header.Get("Server-Timing"))
	}

	clk.set(9999 * time.Millisecond) // 1ms left: still at least 1
	if r := do(context.Background(), c, http.MethodPost, s.URL+"/predict"); r.status != 429 || r.header.Get("Retry-After") != "1" {
		t.Errorf("at 9.999s: %d Retry-After %q, want 429 and 1", r.status, r.header.Get("Retry-After"))
	}
	clk.set(10 * time.Second) // the next window
	if r := do(context.Background(), c, http.MethodPost, s.URL+"/predict"); r.status != 200 {
		t.Errorf("new window: %d %q, want 200", r.status, r.source)
	}

	st := s.Stats()
	checkAccounting(t, st)
	if calls.Load() != 11 || st.Sources.Model != 11 || st.QueueWait.Count != 11 {
		t.Errorf("model calls %d, model answers %d, queued %d: want 11 (rejected requests never reach the model)",
			calls.Load(), st.Sources.Model, st.QueueWait.Count)
	}
	l := st.Limiter
	if l.RPS != 1 || l.Shards != 1 || l.WindowMs != 10000 || l.Allowance != 10 || l.Accepted != 11 || l.Rejected != 2 ||
		!slices.Equal(l.PerShard, []ShardStats{{11, 2}}) || st.Sources.Limiter != 2 || st.Reasons.RateLimited != 2 {
		t.Errorf("limiter stats %+v, sources %+v", l, st.Sources)
	}
}

// Many clients at once against a frozen window: the limiter admits exactly
// its allowance per shard and answers every other request 429.
func TestLimiterConcurrent(t *testing.T) {
	const shards, allowance, requests = 4, 10, 100
	for _, routing := range LimitRoutings {
		t.Run(string(routing), func(t *testing.T) {
			cfg := testConfig(func(c *Config) {
				c.Latency, c.Policy, c.MaxQueueWait = 0, PolicyNone, time.Minute
				c.LimitRPS, c.LimitShards, c.LimitRouting = shards*allowance, shards, routing
			})
			s := startServer(t, cfg, func(s *Server) { newFakeLimitClock(s) }) // frozen at the origin
			c := newClient(t)
			var wg sync.WaitGroup
			var ok, limited atomic.Int64
			for range requests {
				wg.Go(func() {
					r := do(context.Background(), c, http.MethodPost, s.URL+"/predict")
					switch {
					case r.err != nil:
						t.Error(r.err)
					case r.status == 200:
						ok.Add(1)
					case r.status == 429 && r.header.Get("Retry-After") == "1":
						limited.Add(1)
					default:
						t.Errorf("%d %q Retry-After %q", r.status, r.source, r.header.Get("Retry-After"))
					}
				})
			}
			wg.Wait()
			st := s.Stats()
			checkAccounting(t, st)
			if ok.Load()+limited.Load() != requests || st.Limiter.Accepted != ok.Load() || st.Limiter.Rejected != limited.Load() {
				t.Errorf("client saw %d ok, %d limited; limiter %+v", ok.Load(), limited.Load(), st.Limiter)
			}
			for i, sh := range st.Limiter.PerShard {
				if sh.Accepted > allowance || (sh.Rejected > 0 && sh.Accepted != allowance) {
					t.Errorf("shard %d: %+v with allowance %d", i, sh, allowance)
				}
			}
			if routing == RoutingRoundRobin && ok.Load() != shards*allowance {
				t.Errorf("round-robin admitted %d, want exactly %d", ok.Load(), shards*allowance)
			}
		})
	}
}
