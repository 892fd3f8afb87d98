package stub

import (
	"net/http"
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// The stub's Prometheus metrics are GET /stats read at scrape time: the
// collector calls Stats and turns its fields into samples, so a request
// pays nothing more than it does for /stats, and a scrape and a /stats
// taken at one instant agree. No series has a per-request label.
//
// The latencies are not histograms: the stub keeps HdrHistograms, which
// give exact-to-3-digits percentiles but no classic buckets and no sum,
// and a _bucket series made up from them would be a second truth. Their
// p50, p90, p99 and max since the start are gauges with a stat label
// (p50, p90, p99, max): not a summary, which needs a sum the stub does not
// have (promlint refuses a quantile label on anything else), and no more
// summable across stubs than a summary's quantiles are.

// sample is one value of a metric, with its label values in the order of
// the metric's label names.
type sample struct {
	v      float64
	labels []string
}

// stubMetric is one metric family: its name, help, type, label names and
// how its samples are read from a Stats snapshot.
type stubMetric struct {
	name   string
	help   string
	kind   prometheus.ValueType
	labels []string
	read   func(st *Stats, c *Config) []sample
}

func one(v float64) []sample                 { return []sample{{v: v}} }
func num[T int | int64](v T) []sample        { return one(float64(v)) }
func seconds(ms float64) []sample            { return one(ms / 1000) }
func labelled(v float64, l ...string) sample { return sample{v: v, labels: l} }

func boolValue(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// prefixCacheSample is one figure of the prefix cache, none when it is
// off: /metrics with the cache off is what it was.
func prefixCacheSample(st *Stats, v func(*PrefixCacheStats) int64) []sample {
	if st.Tokens.PrefixCache == nil {
		return nil
	}
	return num(v(st.Tokens.PrefixCache))
}

// quantiles are a Percentiles' figures in seconds, by stat label.
func quantiles(p Percentiles) []sample {
	return []sample{
		labelled(p.P50/1000, "p50"), labelled(p.P90/1000, "p90"),
		labelled(p.P99/1000, "p99"), labelled(p.Max/1000, "max"),
	}
}

// planeSamples reads one figure of each plane of the fence.
func planeSamples(f *FenceStats, v func(PlaneStats) float64) []sample {
	return []sample{labelled(v(f.Primary), "primary"), labelled(v(f.Borrowed), "borrowed")}
}

var (
	counter = prometheus.CounterValue
	gauge   = prometheus.GaugeValue
)

// stubMetrics is every metric the stub exposes, in exposition order.
// docs/REFERENCE.md's table lists the same names; TestMetricsDocumented
// checks it.
var stubMetrics = []stubMetric{
	{"stub_config_info", "The stub's configuration, as labels; the value is 1.", gauge,
		[]string{"policy", "estimator", "fence", "deadline_position", "arrival_stamp", "limit_routing"},
		func(st *Stats, c *Config) []sample {
			return []sample{labelled(1, string(c.Policy), string(c.Estimator), string(c.Fence),
				string(c.DeadlinePosition), c.ArrivalStamp, string(c.LimitRouting))}
		}},
	{"stub_model_slots", "Model calls (or sequences) that run at once: Workers, or BatchSlots when set.", gauge, nil,
		func(st *Stats, c *Config) []sample { return num(c.slots()) }},

	// Requests: received = sum(stub_requests_total) + canceled + closed + in flight.
	{"stub_requests_received_total", "Model requests received (every request but /stats, /metrics, /tokenize, /v1/models and refused bodies).", counter, nil,
		func(st *Stats, c *Config) []sample { return num(st.Total) }},
	{"stub_requests_total", "Answers written, by X-Stub-Source and X-Stub-Reason; deadline drops are source and reason \"deadline\".", counter,
		[]string{"source", "reason"},
		func(st *Stats, c *Config) []sample {
			r := st.Reasons
			return []sample{
				labelled(float64(r.Served), string(SourceModel), string(ReasonServed)),
				labelled(float64(r.QueueFull), string(SourceFallback), string(ReasonQueueFull)),
				labelled(float64(r.OverBudget), string(SourceFallback), string(ReasonOverBudget)),
				labelled(float64(r.WaitTimeout), string(SourceFallback), string(ReasonWaitTimeout)),
				labelled(float64(r.WorkerFailed), string(SourceFallback), string(ReasonWorkerFailed)),
				labelled(float64(r.RateLimited), string(SourceLimiter), string(ReasonRateLimited)),
				labelled(float64(st.Deadline.Dropped.Total), string(SourceDeadline), string(ReasonDeadline)),
			}
		}},
	{"stub_requests_canceled_total", "Model requests whose client went away before the answer.", counter, nil,
		func(st *Stats, c *Config) []sample { return num(st.Canceled) }},
	{"stub_requests_closed_total", "Model requests released by Close with a 503.", counter, nil,
		func(st *Stats, c *Config) []sample { return num(st.Closed) }},
	{"stub_requests_in_flight", "Model requests received and not yet answered.", gauge, nil,
		func(st *Stats, c *Config) []sample { return num(st.InFlight) }},

	// Queue and model occupancy.
	{"stub_queue_length", "Requests waiting in front of the model now.", gauge, nil,
		func(st *Stats, c *Config) []sample { return num(st.QueueLen) }},
	{"stub_queue_length_max", "Largest queue length since the start.", gauge, nil,
		func(st *Stats, c *Config) []sample { return num(st.MaxQueueLen) }},
	{"stub_in_model", "Model slots taken now, including calls held by a stall.", gauge, nil,
		func(st *Stats, c *Config) []sample { return num(st.InModel) }},
	{"stub_in_model_max", "Largest number of model slots taken since the start.", gauge, nil,
		func(st *Stats, c *Config) []sample { return num(st.MaxInModel) }},
	{"stub_queue_wait_seconds", "Queue wait since the start, from an HdrHistogram (3 significant digits); by stat (p50, p90, p99, max). Not a summary: no sum.", gauge,
		[]string{"stat"}, func(st *Stats, c *Config) []sample { return quantiles(st.QueueWait) }},
	{"stub_total_time_seconds", "Arrival to the answer's write since the start, from an HdrHistogram (3 significant digits), by stat (p50, p90, p99, max).", gauge,
		[]string{"stat"}, func(st *Stats, c *Config) []sample { return quantiles(st.TotalTime) }},

	// The admission gate's estimator.
	{"stub_estimator_throughput_per_second", "Model throughput the wait estimate divides by (0: unbounded).", gauge, nil,
		func(st *Stats, c *Config) []sample { return one(st.Estimator.ThroughputPerSec) }},
	{"stub_estimator_using_believed", "1 while the estimator uses the believed latency, 0 while it uses observed completions.", gauge, nil,
		func(st *Stats, c *Config) []sample { return one(boolValue(st.Estimator.UsingBelieved)) }},
	{"stub_estimator_window_completions", "Completions in the estimator's sliding window now.", gauge, nil,
		func(st *Stats, c *Config) []sample { return num(st.Estimator.WindowCompletions) }},
	{"stub_estimator_window_covered_seconds", "Time the estimator's sliding window covers now.", gauge, nil,
		func(st *Stats, c *Config) []sample { return one(st.Estimator.WindowCoveredSec) }},
	{"stub_estimator_wait_estimate_seconds", "Wait the gate would estimate for a request arriving now.", gauge, nil,
		func(st *Stats, c *Config) []sample { return seconds(st.Estimator.WaitEstimateMs) }},

	// Stalls.
	{"stub_stalls_total", "Stall windows begun.", counter, nil,
		func(st *Stats, c *Config) []sample { return num(st.Stalls) }},
	{"stub_stalled_requests_total", "Requests whose answer a stall held back.", counter, nil,
		func(st *Stats, c *Config) []sample { return num(st.StalledRequests) }},

	// Deadline gate.
	{"stub_deadline_seconds", "The deadline gate's deadline (0: off).", gauge, nil,
		func(st *Stats, c *Config) []sample { return seconds(st.Deadline.DeadlineMs) }},
	{"stub_deadline_sent_total", "Answers the deadline gate let through.", counter, nil,
		func(st *Stats, c *Config) []sample { return num(st.Deadline.Sent) }},
	{"stub_deadline_dropped_total", "Answers the deadline gate dropped, by X-Stub-Drop.", counter, []string{"reason"},
		func(st *Stats, c *Config) []sample {
			d := st.Deadline.Dropped
			return []sample{
				labelled(float64(d.Late), string(DropLate)), labelled(float64(d.NoStamp), string(DropNoStamp)),
				labelled(float64(d.BadStamp), string(DropBadStamp)), labelled(float64(d.FutureStamp), string(DropFutureStamp)),
			}
		}},
	{"stub_deadline_max_dwell_sent_seconds", "Largest dwell time of an answer sent.", gauge, nil,
		func(st *Stats, c *Config) []sample { return seconds(st.Deadline.MaxDwellSentMs) }},

	// Rate limiter. Its shards are labelled limiter_shard, not shard, which
	// openload's own metrics use for the generator's shard.
	{"stub_limiter_limit_requests_per_second", "The rate limiter's global limit (0: off).", gauge, nil,
		func(st *Stats, c *Config) []sample { return num(st.Limiter.RPS) }},
	{"stub_limiter_shards", "Independent limiter shards (0: off).", gauge, nil,
		func(st *Stats, c *Config) []sample { return num(st.Limiter.Shards) }},
	{"stub_limiter_window_seconds", "The limiter's fixed window.", gauge, nil,
		func(st *Stats, c *Config) []sample { return seconds(st.Limiter.WindowMs) }},
	{"stub_limiter_allowance_requests", "Requests one limiter shard admits per window.", gauge, nil,
		func(st *Stats, c *Config) []sample { return num(st.Limiter.Allowance) }},
	{"stub_limiter_requests_total", "The limiter's decisions, by limiter shard and decision (accepted or rejected).", counter,
		[]string{"limiter_shard", "decision"},
		func(st *Stats, c *Config) []sample {
			var out []sample
			for i, sh := range st.Limiter.PerShard {
				k := strconv.Itoa(i)
				out = append(out, labelled(float64(sh.Accepted), k, "accepted"), labelled(float64(sh.Rejected), k, "rejected"))
			}
			return out
		}},

	// Token model.
	{"stub_tokens_total", "Model output tokens written, streamed or not (fallbacks' not).", counter, nil,
		func(st *Stats, c *Config) []sample { return num(st.Tokens.OutputTokens) }},
	{"stub_streams_total", "Streamed model answers begun.", counter, nil,
		func(st *Stats, c *Config) []sample { return num(st.Tokens.Streams) }},
	{"stub_streams_completed_total", "Streamed model answers written to data: [DONE].", counter, nil,
		func(st *Stats, c *Config) []sample { return num(st.Tokens.StreamsCompleted) }},
	{"stub_sequences_active", "Sequences holding a model slot now.", gauge, nil,
		func(st *Stats, c *Config) []sample { return num(st.Tokens.ActiveSequences) }},
	{"stub_prefix_cache_queries_total", "Prompt tokens looked up in the prefix cache, as vLLM's vllm:prefix_cache_queries (absent when the cache is off).", counter, nil,
		func(st *Stats, c *Config) []sample {
			return prefixCacheSample(st, func(p *PrefixCacheStats) int64 { return p.Queries })
		}},
	{"stub_prefix_cache_hits_total", "Prompt tokens found in the prefix cache, as vLLM's vllm:prefix_cache_hits (absent when the cache is off).", counter, nil,
		func(st *Stats, c *Config) []sample {
			return prefixCacheSample(st, func(p *PrefixCacheStats) int64 { return p.Hits })
		}},
	{"stub_prefix_cache_tokens", "Tokens the prefix cache holds now, in whole blocks (absent when the cache is off).", gauge, nil,
		func(st *Stats, c *Config) []sample {
			return prefixCacheSample(st, func(p *PrefixCacheStats) int64 { return int64(p.Tokens) })
		}},
	{"stub_token_lateness_seconds", "Per completed stream, the largest flush delay past the token model's time, by stat (p50, p90, p99, max).", gauge,
		[]string{"stat"}, func(st *Stats, c *Config) []sample { return quantiles(st.Tokens.Lateness) }},

	// Borrowed plane and fence.
	{"stub_fence_intents_total", "Requests that asked for a shadow score.", counter, nil,
		func(st *Stats, c *Config) []sample { return num(st.Fence.Intents) }},
	{"stub_fence_shed_total", "Borrows the fence refused, by reason.", counter, []string{"reason"},
		func(st *Stats, c *Config) []sample {
			s := st.Fence.Shed
			return []sample{labelled(float64(s.StaleHealth), "stale-health"), labelled(float64(s.Depth), "depth"), labelled(float64(s.Budget), "budget")}
		}},
	{"stub_fence_scored_total", "Shadow scores accepted.", counter, nil,
		func(st *Stats, c *Config) []sample { return num(st.Fence.Scored) }},
	{"stub_fence_late_scores_total", "Late shadow scores, rejected (per-plane) or replayed (shared).", counter, []string{"outcome"},
		func(st *Stats, c *Config) []sample {
			return []sample{labelled(float64(st.Fence.LateRejected), "rejected"), labelled(float64(st.Fence.LateReplayed), "replayed")}
		}},
	{"stub_fence_dropped_total", "Admitted borrows that ended without a score.", counter, nil,
		func(st *Stats, c *Config) []sample { return num(st.Fence.Dropped) }},
	{"stub_fence_primary_budget_spent_by_borrowed_total", "Primary retry tokens the borrowed plane took (0 per-plane by construction).", counter, nil,
		func(st *Stats, c *Config) []sample { return num(st.Fence.PrimaryBudgetSpentByBorrowed) }},
	{"stub_fence_admitted_total", "First attempts admitted, by plane.", counter, []string{"plane"},
		func(st *Stats, c *Config) []sample {
			return planeSamples(&st.Fence, func(p PlaneStats) float64 { return float64(p.Admitted) })
		}},
	{"stub_fence_retries_spent_total", "Retry tokens taken from the plane's budget, by plane.", counter, []string{"plane"},
		func(st *Stats, c *Config) []sample {
			return planeSamples(&st.Fence, func(p PlaneStats) float64 { return float64(p.RetriesSpent) })
		}},
	{"stub_fence_compensations_total", "The plane's failed attempts that got a retry, by plane.", counter, []string{"plane"},
		func(st *Stats, c *Config) []sample {
			return planeSamples(&st.Fence, func(p PlaneStats) float64 { return float64(p.Compensations) })
		}},
	{"stub_fence_compensations_refused_total", "The plane's failed attempts that found no retry token, by plane.", counter, []string{"plane"},
		func(st *Stats, c *Config) []sample {
			return planeSamples(&st.Fence, func(p PlaneStats) float64 { return float64(p.CompensationsRefused) })
		}},
	{"stub_fence_depth", "Attempts in flight now, by plane.", gauge, []string{"plane"},
		func(st *Stats, c *Config) []sample {
			return planeSamples(&st.Fence, func(p PlaneStats) float64 { return float64(p.Depth) })
		}},
	{"stub_fence_depth_max", "Largest number of attempts in flight since the start, by plane.", gauge, []string{"plane"},
		func(st *Stats, c *Config) []sample {
			return planeSamples(&st.Fence, func(p PlaneStats) float64 { return float64(p.DepthMax) })
		}},
	{"stub_fence_budget_tokens", "Retry tokens left in the budget's window, by plane (borrowed 0 in shared mode).", gauge, []string{"plane"},
		func(st *Stats, c *Config) []sample {
			return []sample{labelled(float64(st.Fence.PrimaryTokens), "primary"), labelled(float64(st.Fence.BorrowedTokens), "borrowed")}
		}},
	{"stub_fence_revision", "The model revision now (1, then one more per revision fault).", gauge, nil,
		func(st *Stats, c *Config) []sample { return num(st.Fence.Revision) }},
	{"stub_fence_health_age_seconds", "Age of the borrowed plane's health sample (absent until the first).", gauge, nil,
		func(st *Stats, c *Config) []sample {
			if st.Fence.HealthAgeMs < 0 {
				return nil // no sample yet: no value rather than a made-up one
			}
			return seconds(st.Fence.HealthAgeMs)
		}},
	{"stub_fence_health_depth", "Borrowed-plane depth in the health sample.", gauge, nil,
		func(st *Stats, c *Config) []sample { return num(st.Fence.HealthDepth) }},
	{"stub_fence_faults_begun_total", "Injected plane faults begun, by kind.", counter, []string{"kind"},
		func(st *Stats, c *Config) []sample {
			var out []sample
			for _, k := range append(windowFaults[:len(windowFaults):len(windowFaults)], FaultRevision) {
				out = append(out, labelled(float64(st.Fence.Faults[k]), string(k)))
			}
			return out
		}},
}

// collector is the stub's prometheus.Collector.
type collector struct {
	s     *Server
	descs []*prometheus.Desc // by index in stubMetrics
}

func newCollector(s *Server) *collector {
	c := &collector{s: s, descs: make([]*prometheus.Desc, len(stubMetrics))}
	for i, m := range stubMetrics {
		c.descs[i] = prometheus.NewDesc(m.name, m.help, m.labels, nil)
	}
	return c
}

func (c *collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range c.descs {
		ch <- d
	}
}

func (c *collector) Collect(ch chan<- prometheus.Metric) {
	st := c.s.Stats()
	for i, m := range stubMetrics {
		for _, smp := range m.read(&st, &c.s.Config) {
			ch <- prometheus.MustNewConstMetric(c.descs[i], m.kind, smp.v, smp.labels...)
		}
	}
}

// Collector returns a prometheus.Collector of the stub's metrics, read
// from Stats at each collection, for a registry of your own.
func (s *Server) Collector() prometheus.Collector { return newCollector(s) }

// MetricsHandler serves the stub's metrics in Prometheus' exposition
// format, as GET /metrics does, from a registry of the stub's own (no
// global state, no Go runtime metrics), for a listener of your own.
func (s *Server) MetricsHandler() http.Handler { return s.metrics }

func newMetricsHandler(s *Server) http.Handler {
	reg := prometheus.NewRegistry()
	reg.MustRegister(newCollector(s))
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
}
