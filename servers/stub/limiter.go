package stub

import (
	"math"
	"math/bits"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"
)

// LimitRouting names how the sharded rate limiter picks the shard that sees
// a request.
type LimitRouting string

// The known routings.
const (
	// RoutingRandom picks a shard uniformly at random from a source seeded
	// with LimitSeed, like a load balancer spreading requests over
	// independent limiter instances.
	RoutingRandom LimitRouting = "random"
	// RoutingRoundRobin picks shards 0, 1, …, n−1, 0, … in arrival order.
	RoutingRoundRobin LimitRouting = "round-robin"
)

// LimitRoutings lists the known routings.
var LimitRoutings = []LimitRouting{RoutingRandom, RoutingRoundRobin}

// maxLimitShards bounds --limit-shards (one small struct per shard).
const maxLimitShards = 1 << 16

// shardAllowance is the number of requests one shard admits per window:
//
//	floor(rps × window ÷ (shards × 1s))
//
// computed exactly in 128 bits (clamped to MaxInt64).
func shardAllowance(rps int, window time.Duration, shards int) int64 {
	if rps <= 0 || window <= 0 || shards <= 0 {
		return 0
	}
	hi, lo := bits.Mul64(uint64(rps), uint64(window))
	d := uint64(shards) * uint64(time.Second)
	if hi >= d {
		return math.MaxInt64
	}
	q, _ := bits.Div64(hi, lo, d)
	return int64(min(q, math.MaxInt64))
}

// limiter is n independent fixed-window limiters. Windows are
// [origin + k·window, origin + (k+1)·window): every shard's count resets at
// the start of each window. Safe for concurrent use.
type limiter struct {
	origin    time.Time
	window    time.Duration
	allowance int64
	routing   LimitRouting

	next   atomic.Uint64 // round-robin: requests routed so far
	rngMu  sync.Mutex
	rng    *rand.Rand // random routing
	shards []limitShard
}

type limitShard struct {
	mu                 sync.Mutex
	win                int64 // window index that used belongs to
	used               int64 // requests admitted in window win
	accepted, rejected int64 // since the start
}

func newLimiter(cfg Config, origin time.Time) *limiter {
	if cfg.LimitRPS <= 0 {
		return nil
	}
	return &limiter{
		origin:    origin,
		window:    cfg.LimitWindow,
		allowance: shardAllowance(cfg.LimitRPS, cfg.LimitWindow, cfg.LimitShards),
		routing:   cfg.LimitRouting,
		rng:       rand.New(rand.NewPCG(cfg.LimitSeed, cfg.LimitSeed)),
		shards:    make([]limitShard, cfg.LimitShards),
	}
}

// route picks the shard for the next request.
func (l *limiter) route() int {
	n := len(l.shards)
	if l.routing == RoutingRoundRobin {
		return int((l.next.Add(1) - 1) % uint64(n))
	}
	l.rngMu.Lock()
	defer l.rngMu.Unlock()
	return l.rng.IntN(n)
}

// allow routes a request arriving at now to a shard and counts it there.
// When the shard's allowance for the current window is used up, ok is false
// and reset is when that window ends.
func (l *limiter) allow(now time.Time) (shard int, ok bool, reset time.Time) {
	shard = l.route()
	k := max(int64(now.Sub(l.origin)/l.window), 0)
	sh := &l.shards[shard]
	sh.mu.Lock()
	defer sh.mu.Unlock()
	switch {
	case k > sh.win:
		sh.win, sh.used = k, 0
	case k < sh.win: // time went backwards: stay in the current window
		k = sh.win
	}
	if sh.used >= l.allowance {
		sh.rejected++
		return shard, false, l.origin.Add(time.Duration(k+1) * l.window)
	}
	sh.used++
	sh.accepted++
	return shard, true, time.Time{}
}

// retryAfter is the Retry-After value at now for a window ending at reset:
// whole seconds, rounded up, at least 1.
func retryAfter(reset, now time.Time) int64 {
	d := reset.Sub(now)
	secs := int64(d / time.Second)
	if d%time.Second > 0 {
		secs++
	}
	return max(secs, 1)
}

// stats snapshots the per-shard counts.
func (l *limiter) stats() []ShardStats {
	out := make([]ShardStats, len(l.shards))
	for i := range l.shards {
		sh := &l.shards[i]
		sh.mu.Lock()
		out[i] = ShardStats{Accepted: sh.accepted, Rejected: sh.rejected}
		sh.mu.Unlock()
	}
	return out
}
