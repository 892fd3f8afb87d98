package stub

import (
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// Stats is a snapshot of the server-side truth, as served by GET /stats.
//
// Accounting: every model request counted in Total ends in exactly one of
// Sources.Model, Sources.Fallback, Sources.Limiter (answers sent),
// Deadline.Dropped.Total (answers the deadline gate dropped), Canceled (the
// client went away first) or Closed (released by Close with a 503), or is
// still InFlight.
type Stats struct {
	Policy Policy `json:"policy"`
	// Total counts model requests received (every request but GET /stats).
	Total    int64 `json:"total"`
	InFlight int64 `json:"in_flight"`
	// Sources and Reasons count the answers sent: with the deadline gate on,
	// those that passed it (dropped answers count in Deadline.Dropped only).
	Sources  SourceCounts `json:"sources"`
	Reasons  ReasonCounts `json:"reasons"`
	Canceled int64        `json:"canceled"`
	Closed   int64        `json:"closed"`

	QueueLen    int `json:"queue_len"`     // requests waiting in front of the model now
	MaxQueueLen int `json:"max_queue_len"` // largest QueueLen seen
	InModel     int `json:"in_model"`      // worker slots taken now (including calls held by a stall)
	MaxInModel  int `json:"max_in_model"`  // largest InModel seen; never above the slots (Workers, or BatchSlots when set)

	Estimator EstimatorStats `json:"estimator"`

	Stalls          int64 `json:"stalls"`           // stall windows begun so far
	StalledRequests int64 `json:"stalled_requests"` // requests whose answer a stall held back

	Deadline DeadlineStats `json:"deadline"`
	Limiter  LimiterStats  `json:"limiter"`
	Fence    FenceStats    `json:"fence"`
	Tokens   TokenStats    `json:"tokens"`

	// QueueWait is the time from arrival to getting a worker (model answers)
	// or to leaving the queue (wait-timeout fallbacks); requests rejected on
	// arrival never queue and are not in it. TotalTime is arrival to the
	// moment the answer is written, for every answer (rate-limited answers
	// and deadline drops included).
	QueueWait Percentiles `json:"queue_wait_ms"`
	TotalTime Percentiles `json:"total_ms"`
}

// TokenStats are the counts of the token model (the OpenAI-compatible
// endpoints). A streamed answer counts in Sources when its head is written
// (at the first token); Streams - StreamsCompleted - (streams still
// running) were cut: the client went away or the server closed.
type TokenStats struct {
	ActiveSequences  int64 `json:"active_sequences"`  // sequences holding a model slot now
	Streams          int64 `json:"streams"`           // streamed model answers begun
	StreamsCompleted int64 `json:"streams_completed"` // streamed model answers written to data: [DONE]
	OutputTokens     int64 `json:"output_tokens"`     // model tokens written, streamed or not (fallbacks' not)
	// Lateness has, per completed stream, the largest delay of a token's
	// flush past the time the token model gave it: how far the stub
	// itself fell behind its own pace (a slow reader counts too, as its
	// writes block).
	Lateness Percentiles `json:"token_lateness_ms"`
	// PrefixCache is the prefix cache's figures; nil (absent) when it is
	// off, so that /stats is what it was.
	PrefixCache *PrefixCacheStats `json:"prefix_cache,omitempty"`
}

// PrefixCacheStats counts the prefix cache's work in tokens, as vLLM's
// vllm:prefix_cache_queries and vllm:prefix_cache_hits do: hits ÷ queries
// is the hit rate.
type PrefixCacheStats struct {
	Queries int64 `json:"queries"` // prompt tokens looked up
	Hits    int64 `json:"hits"`    // of which found cached
	Tokens  int   `json:"tokens"`  // tokens held now (whole blocks)
}

// SourceCounts counts answers sent per X-Stub-Source.
type SourceCounts struct {
	Model    int64 `json:"model"`
	Fallback int64 `json:"fallback"`
	Limiter  int64 `json:"limiter"`
}

// ReasonCounts counts answers sent per X-Stub-Reason.
type ReasonCounts struct {
	Served       int64 `json:"served"`
	QueueFull    int64 `json:"queue_full"`
	OverBudget   int64 `json:"over_budget"`
	WaitTimeout  int64 `json:"wait_timeout"`
	RateLimited  int64 `json:"rate_limited"`
	WorkerFailed int64 `json:"worker_failed"`
}

// DeadlineStats describes the deadline gate: its configuration and what it
// let through or dropped. The counts and MaxDwellSentMs stay 0 while the
// gate is off (DeadlineMs 0).
type DeadlineStats struct {
	DeadlineMs   float64          `json:"deadline_ms"`
	Status       int              `json:"status"`        // status of a dropped answer
	ArrivalStamp string           `json:"arrival_stamp"` // receive | header:NAME
	ClockSkewMs  float64          `json:"clock_skew_ms"`
	Position     DeadlinePosition `json:"position"`
	// Sent counts answers that passed the gate; Dropped those it dropped.
	Sent    int64      `json:"sent"`
	Dropped DropCounts `json:"dropped"`
	// MaxDwellSentMs is the largest dwell time of an answer sent. With
	// position last it never exceeds DeadlineMs; with before-stall it can.
	MaxDwellSentMs float64 `json:"max_dwell_sent_ms"`
}

// DropCounts counts the deadline gate's drops per X-Stub-Drop reason.
type DropCounts struct {
	Late        int64 `json:"late"`
	NoStamp     int64 `json:"no_stamp"`
	BadStamp    int64 `json:"bad_stamp"`
	FutureStamp int64 `json:"future_stamp"`
	Total       int64 `json:"total"` // sum of the above
}

func (d *DropCounts) add(r DropReason) {
	switch r {
	case DropLate:
		d.Late++
	case DropNoStamp:
		d.NoStamp++
	case DropBadStamp:
		d.BadStamp++
	case DropFutureStamp:
		d.FutureStamp++
	}
	d.Total++
}

// LimiterStats describes the sharded rate limiter: its configuration and
// its decisions, in total and per shard. A rejected request is counted here
// when the limiter decides; its 429 is counted in Sources.Limiter when sent.
type LimiterStats struct {
	RPS       int          `json:"rps"` // 0 = off; the rest is then zero
	Shards    int          `json:"shards"`
	WindowMs  float64      `json:"window_ms"`
	Routing   LimitRouting `json:"routing"`
	Seed      uint64       `json:"seed"`
	Allowance int64        `json:"per_shard_allowance"` // requests one shard admits per window
	Accepted  int64        `json:"accepted"`
	Rejected  int64        `json:"rejected"`
	PerShard  []ShardStats `json:"per_shard"` // index = shard
}

// ShardStats counts one limiter shard's decisions since the start.
type ShardStats struct {
	Accepted int64 `json:"accepted"`
	Rejected int64 `json:"rejected"`
}

// EstimatorStats describes the admission gate's wait estimator now.
type EstimatorStats struct {
	Name Estimator `json:"name"`
	// ThroughputPerSec is the model throughput the estimate divides by:
	// the observed completion rate, or Workers ÷ BelievedLatency when
	// UsingBelieved. 0 means unbounded (believed latency 0).
	ThroughputPerSec float64 `json:"throughput_per_s"`
	UsingBelieved    bool    `json:"using_believed"`
	// WindowCompletions and WindowCoveredSec are the completions counted in
	// the sliding window and the time the window covers (completions
	// estimator only).
	WindowCompletions int64   `json:"window_completions"`
	WindowCoveredSec  float64 `json:"window_covered_s"`
	// WaitEstimateMs is the wait the gate would estimate for a request
	// arriving now.
	WaitEstimateMs float64 `json:"wait_estimate_ms"`
}

// Percentiles summarises a server-side histogram, in milliseconds.
type Percentiles struct {
	Count int64   `json:"count"`
	P50   float64 `json:"p50"`
	P90   float64 `json:"p90"`
	P99   float64 `json:"p99"`
	Max   float64 `json:"max"`
}

// Histogram range: 1µs .. 1h, 3 significant digits, values in microseconds.
const (
	histLowest  = 1
	histHighest = int64(time.Hour / time.Microsecond)
	histDigits  = 3
)

func durMs(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func newHist() *hdrhistogram.Histogram {
	return hdrhistogram.New(histLowest, histHighest, histDigits)
}

// recordDuration records d in microseconds, clamped into the histogram range.
func recordDuration(h *hdrhistogram.Histogram, d time.Duration) {
	us := int64(d / time.Microsecond)
	us = max(us, 0)
	us = min(us, histHighest)
	_ = h.RecordValue(us) // cannot fail: clamped into range
}

func percentiles(h *hdrhistogram.Histogram) Percentiles {
	ms := func(us int64) float64 { return float64(us) / 1000 }
	return Percentiles{
		Count: h.TotalCount(),
		P50:   ms(h.ValueAtQuantile(50)),
		P90:   ms(h.ValueAtQuantile(90)),
		P99:   ms(h.ValueAtQuantile(99)),
		Max:   ms(h.Max()),
	}
}
