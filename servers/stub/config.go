package stub

import (
	"net"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/openload/openload/field"
)

// Policy names the gate applied to a request on arrival when no worker is
// free. See the package documentation for the exact rules.
type Policy string

// The known gate policies.
const (
	// PolicyNone queues every request (FIFO); only MaxQueueWait applies.
	PolicyNone Policy = "none"
	// PolicyBounded answers with the fallback when QueueCap requests are
	// already waiting.
	PolicyBounded Policy = "bounded"
	// PolicyAdmission answers with the fallback when the estimated wait in
	// front of the model exceeds WaitBudget.
	PolicyAdmission Policy = "admission"
)

// Policies lists the known policies in the order they are documented.
var Policies = []Policy{PolicyNone, PolicyBounded, PolicyAdmission}

// Estimator names how the admission gate estimates the wait in front of the
// model.
type Estimator string

// The known estimators.
const (
	// EstimatorBelieved: wait = queue × BelievedLatency ÷ Workers.
	EstimatorBelieved Estimator = "believed"
	// EstimatorCompletions: wait = queue ÷ (completions per second observed
	// over the last Window), falling back to believed below MinSamples.
	EstimatorCompletions Estimator = "completions"
)

// Estimators lists the known estimators.
var Estimators = []Estimator{EstimatorBelieved, EstimatorCompletions}

// Config is the stub server's configuration. Every field is also a flag of
// `openload stub` (see AddFlags); the flag names are given in brackets.
type Config struct {
	Listen          string        // [--listen] address to bind; "" means 127.0.0.1:0
	Workers         int           // [--workers] concurrent model calls, > 0
	Latency         time.Duration // [--latency] real time one model call takes, >= 0
	BelievedLatency time.Duration // [--believed-latency] what the gate believes one call takes; 0 => Latency
	Policy          Policy        // [--policy] none | bounded | admission
	QueueCap        int           // [--queue-cap] bounded: a request finding QueueCap waiting gets the fallback
	WaitBudget      time.Duration // [--wait-budget] admission: largest admitted wait estimate, > 0
	Estimator       Estimator     // [--estimator] believed | completions
	Window          time.Duration // [--window] completions: sliding window length, >= Bucket
	Bucket          time.Duration // [--bucket] completions: bucket size of the window, > 0
	MinSamples      int           // [--min-samples] completions: below this many in the window use believed
	MaxQueueWait    time.Duration // [--max-queue-wait] longest wait in the queue before the fallback (wait-timeout), > 0
	StallAt         time.Duration // [--stall-at] first stall starts this long after the first model request
	StallFor        time.Duration // [--stall-for] stall length; 0 = no stalls
	StallEvery      time.Duration // [--stall-every] if > 0, stalls repeat with this period (> StallFor)

	// Deadline gate (see the package documentation).
	Deadline         time.Duration    // [--deadline] largest dwell time an answer may leave with; 0 = off
	DeadlineStatus   int              // [--deadline-status] status of a dropped answer: 503 or 204
	ArrivalStamp     string           // [--arrival-stamp] receive | header:NAME
	ClockSkew        time.Duration    // [--clock-skew] header source: the stub's clock runs this far ahead (may be negative)
	DeadlinePosition DeadlinePosition // [--deadline-position] last | before-stall (misplaced, for demonstrations)

	// Sharded rate limiter (see the package documentation).
	LimitRPS     int           // [--limit-rps] requests per second over all shards; 0 = off
	LimitShards  int           // [--limit-shards] independent limiters, 1..65536
	LimitWindow  time.Duration // [--limit-window] fixed window length, > 0
	LimitRouting LimitRouting  // [--limit-routing] random | round-robin
	LimitSeed    uint64        // [--limit-seed] seed of the random routing

	// Token model of the OpenAI-compatible endpoints (see the package
	// documentation, "Streamed answers").
	BatchSlots      int           // [--batch-slots] sequences the model decodes at once; replaces Workers as the model's slots when > 0
	Prefill         time.Duration // [--prefill] time to first token for an empty prompt, >= 0
	PrefillPerToken time.Duration // [--prefill-per-token] added to the time to first token per prompt token, >= 0
	ITL             time.Duration // [--itl] time between tokens of a sequence decoding alone, >= 0
	ITLPerSeq       time.Duration // [--itl-per-seq] added to the time between tokens per other active sequence, >= 0
	OutputTokens    int           // [--output-tokens] tokens in an answer when the request sets no max_tokens, > 0

	// Prefix cache of the token model (see the package documentation,
	// "Prefix caching"): prefill is paid only for the prompt tokens not
	// already cached.
	PrefixCacheTokens int // [--prefix-cache-tokens] tokens the cache holds at most (whole blocks); 0 = off, else >= PrefixCacheBlock
	PrefixCacheBlock  int // [--prefix-cache-block] tokens per cached block, > 0

	// H2C also serves HTTP/2 over plain TCP (prior knowledge),
	// next to HTTP/1.1 on the same port.
	H2C bool // [--h2c]

	// The primary plane's failures, the borrowed plane and the fence.
	PlaneConfig
}

// DefaultConfig returns the documented defaults: 4 workers of 50ms behind an
// admission gate with a 100ms budget and the completion-rate estimator
// (2s window of 100ms buckets, 20 samples minimum), a 400ms cap on queue
// wait, no stalls, no deadline gate and no rate limiter, listening on a
// random loopback port.
func DefaultConfig() Config {
	return Config{
		Listen:          "127.0.0.1:0",
		Workers:         4,
		Latency:         50 * time.Millisecond,
		BelievedLatency: 0,
		Policy:          PolicyAdmission,
		QueueCap:        16,
		WaitBudget:      100 * time.Millisecond,
		Estimator:       EstimatorCompletions,
		Window:          2 * time.Second,
		Bucket:          100 * time.Millisecond,
		MinSamples:      20,
		MaxQueueWait:    400 * time.Millisecond,

		DeadlineStatus:   http.StatusServiceUnavailable,
		ArrivalStamp:     ArrivalReceive,
		DeadlinePosition: PositionLast,

		LimitShards:  1,
		LimitWindow:  time.Second,
		LimitRouting: RoutingRandom,
		LimitSeed:    1,

		PlaneConfig:  defaultPlaneConfig(),
		Prefill:      20 * time.Millisecond,
		ITL:          10 * time.Millisecond,
		OutputTokens: 32,

		PrefixCacheBlock: 16,
	}
}

// AddFlags registers one flag per Config field on fs. The flag defaults are
// the DefaultConfig values, and registering sets the fields of c to them (so
// call AddFlags before adjusting c, and parse fs afterwards). FlagNames
// says which flag sets which field.
func (c *Config) AddFlags(fs *pflag.FlagSet) { c.addFlags(fs) }

// FlagNames returns, for every Config field by the name a FieldError
// gives it (PlaneConfig's promoted), the flag of AddFlags that sets it,
// without its dashes: what a caller renders the fields of Validate's
// errors by. It is the binding AddFlags makes as it defines each flag,
// so it cannot drift from the flags.
func FlagNames() map[string]string {
	return new(Config).addFlags(pflag.NewFlagSet("stub", pflag.ContinueOnError))
}

// flagBinding is AddFlags' binding of each flag to the field it sets:
// Go field → flag.
type flagBinding map[string]string

// bind records that flag sets field and returns flag, for the line that
// defines it.
func (b flagBinding) bind(field, flag string) string {
	b[field] = flag
	return flag
}

var helpField = regexp.MustCompile(`\{[A-Za-z][A-Za-z0-9]*\}`)

// resolveHelp writes a field named {Field} in the help of the flags of b
// as the flag that sets it, --flag: help text names fields, as errors do,
// and the flags they end up as are the binding's.
func (b flagBinding) resolveHelp(fs *pflag.FlagSet) {
	for _, flag := range b {
		f := fs.Lookup(flag)
		f.Usage = helpField.ReplaceAllStringFunc(f.Usage, func(m string) string {
			if other, ok := b[m[1:len(m)-1]]; ok {
				return "--" + other
			}
			return m
		})
	}
}

func (c *Config) addFlags(fs *pflag.FlagSet) flagBinding {
	d := DefaultConfig()
	b := flagBinding{}
	fs.StringVar(&c.Listen, b.bind("Listen", "listen"), d.Listen,
		"address the stub listens on (host:port; loopback unless told otherwise; port 0 picks a free port)")
	fs.IntVar(&c.Workers, b.bind("Workers", "workers"), d.Workers,
		"model concurrency: number of model calls that run at once")
	fs.DurationVar(&c.Latency, b.bind("Latency", "latency"), d.Latency,
		"real time one model call takes")
	fs.DurationVar(&c.BelievedLatency, b.bind("BelievedLatency", "believed-latency"), d.BelievedLatency,
		"latency the gate believes one model call takes (0 = same as {Latency})")
	fs.StringVar((*string)(&c.Policy), b.bind("Policy", "policy"), string(d.Policy),
		"gate in front of the model: "+joinNames(Policies))
	fs.IntVar(&c.QueueCap, b.bind("QueueCap", "queue-cap"), d.QueueCap,
		"bounded policy: a request that finds this many requests waiting gets the fallback at once")
	fs.DurationVar(&c.WaitBudget, b.bind("WaitBudget", "wait-budget"), d.WaitBudget,
		"admission policy: fallback when the estimated wait in front of the model exceeds this")
	fs.StringVar((*string)(&c.Estimator), b.bind("Estimator", "estimator"), string(d.Estimator),
		"admission wait estimator: "+joinNames(Estimators))
	fs.DurationVar(&c.Window, b.bind("Window", "window"), d.Window,
		"completions estimator: sliding window over which model completions are counted")
	fs.DurationVar(&c.Bucket, b.bind("Bucket", "bucket"), d.Bucket,
		"completions estimator: bucket size of the sliding window")
	fs.IntVar(&c.MinSamples, b.bind("MinSamples", "min-samples"), d.MinSamples,
		"completions estimator: completions needed in the window before the rate is used (else believed)")
	fs.DurationVar(&c.MaxQueueWait, b.bind("MaxQueueWait", "max-queue-wait"), d.MaxQueueWait,
		"a request that waited this long in front of the model gets the fallback (reason wait-timeout)")
	fs.DurationVar(&c.StallAt, b.bind("StallAt", "stall-at"), d.StallAt,
		"fault injection: first stall starts this long after the first model request")
	fs.DurationVar(&c.StallFor, b.bind("StallFor", "stall-for"), d.StallFor,
		"fault injection: stall length, nothing completes during a stall (0 = no stalls)")
	fs.DurationVar(&c.StallEvery, b.bind("StallEvery", "stall-every"), d.StallEvery,
		"fault injection: repeat stalls with this period, must exceed {StallFor} (0 = one stall)")

	fs.DurationVar(&c.Deadline, b.bind("Deadline", "deadline"), d.Deadline,
		"deadline gate: drop every answer whose dwell time (write time − arrival) would exceed this; exactly this passes (0 = off)")
	fs.IntVar(&c.DeadlineStatus, b.bind("DeadlineStatus", "deadline-status"), d.DeadlineStatus,
		"deadline gate: status of a dropped answer, 503 or 204 (no payload either way)")
	fs.StringVar(&c.ArrivalStamp, b.bind("ArrivalStamp", "arrival-stamp"), d.ArrivalStamp,
		"deadline gate: arrival time source, receive (the stub's clock at receipt) or header:NAME (Unix nanoseconds stamped upstream)")
	fs.DurationVar(&c.ClockSkew, b.bind("ClockSkew", "clock-skew"), d.ClockSkew,
		"fault injection: with {ArrivalStamp} header:NAME, the stub's clock runs this far ahead of the stamping clock (may be negative)")
	fs.StringVar((*string)(&c.DeadlinePosition), b.bind("DeadlinePosition", "deadline-position"), string(d.DeadlinePosition),
		"deadline gate: where the dwell time is checked: last (the only bound) or before-stall (misplaced, for demonstrations)")

	fs.IntVar(&c.LimitRPS, b.bind("LimitRPS", "limit-rps"), d.LimitRPS,
		"rate limiter: requests per second admitted over all shards, answered 429 beyond (0 = off)")
	fs.IntVar(&c.LimitShards, b.bind("LimitShards", "limit-shards"), d.LimitShards,
		"rate limiter: independent limiters, each admitting floor(rps × window ÷ shards) per window")
	fs.DurationVar(&c.LimitWindow, b.bind("LimitWindow", "limit-window"), d.LimitWindow,
		"rate limiter: fixed window length; counts reset at each window start, windows aligned to the server's creation")
	fs.StringVar((*string)(&c.LimitRouting), b.bind("LimitRouting", "limit-routing"), string(d.LimitRouting),
		"rate limiter: which shard sees a request: "+joinNames(LimitRoutings))
	fs.Uint64Var(&c.LimitSeed, b.bind("LimitSeed", "limit-seed"), d.LimitSeed,
		"rate limiter: seed of the random routing (same seed, same shard sequence)")
	fs.IntVar(&c.BatchSlots, b.bind("BatchSlots", "batch-slots"), d.BatchSlots,
		"token model: sequences decoded at once; the rest wait in the gate and queue (0 = {Workers}; when set it is the model's slot count for every request)")
	fs.DurationVar(&c.Prefill, b.bind("Prefill", "prefill"), d.Prefill,
		"token model: time to first token of an empty prompt")
	fs.DurationVar(&c.PrefillPerToken, b.bind("PrefillPerToken", "prefill-per-token"), d.PrefillPerToken,
		"token model: time to first token added per prompt token (counted with OpenAI's cl100k_base tokenizer)")
	fs.DurationVar(&c.ITL, b.bind("ITL", "itl"), d.ITL,
		"token model: time between two tokens of a sequence decoding alone")
	fs.DurationVar(&c.ITLPerSeq, b.bind("ITLPerSeq", "itl-per-seq"), d.ITLPerSeq,
		"token model: time between tokens added for each other sequence holding a slot")
	fs.IntVar(&c.OutputTokens, b.bind("OutputTokens", "output-tokens"), d.OutputTokens,
		"token model: tokens in an answer whose request sets no max_tokens")
	fs.IntVar(&c.PrefixCacheTokens, b.bind("PrefixCacheTokens", "prefix-cache-tokens"), d.PrefixCacheTokens,
		"token model: prefix cache size in tokens, shared by all requests, least recently used blocks evicted; prefill is paid only for uncached prompt tokens (0 = off)")
	fs.IntVar(&c.PrefixCacheBlock, b.bind("PrefixCacheBlock", "prefix-cache-block"), d.PrefixCacheBlock,
		"token model: tokens per prefix cache block; only whole leading blocks of a prompt are cached")
	fs.BoolVar(&c.H2C, b.bind("H2C", "h2c"), d.H2C,
		"also serve HTTP/2 without TLS (h2c, prior knowledge) on the same port")
	c.PlaneConfig.addFlags(fs, b)
	b.resolveHelp(fs)
	return b
}

func joinNames[T ~string](names []T) string {
	s := make([]string, len(names))
	for i, n := range names {
		s[i] = string(n)
	}
	return strings.Join(s, ", ")
}

// FieldError is the error Config.Validate returns: the field refused (its
// Go name, e.g. "Workers"), its value, and why.
type FieldError = field.Error

// Validate checks c and returns the first problem as a *FieldError.
func (c Config) Validate() error {
	if c.Listen != "" {
		_, port, err := net.SplitHostPort(c.Listen)
		if err != nil {
			return field.Errorf("Listen", c.Listen, "{Listen} must be host:port, got %q", c.Listen)
		}
		// Before anything starts: net.Listen would refuse it only then.
		if _, err := net.LookupPort("tcp", port); err != nil {
			return field.Errorf("Listen", c.Listen, "{Listen} %q: port must be a number in 0..65535, got %q", c.Listen, port)
		}
	}
	if c.Workers <= 0 {
		return field.Errorf("Workers", c.Workers, "{Workers} must be > 0, got %d", c.Workers)
	}
	if c.Latency < 0 {
		return field.Errorf("Latency", c.Latency, "{Latency} must be >= 0, got %v", c.Latency)
	}
	if c.BelievedLatency < 0 {
		return field.Errorf("BelievedLatency", c.BelievedLatency, "{BelievedLatency} must be >= 0, got %v", c.BelievedLatency)
	}
	if !slices.Contains(Policies, c.Policy) {
		return field.Errorf("Policy", c.Policy, "{Policy} %q is unknown (known: %s)", string(c.Policy), joinNames(Policies))
	}
	if c.Policy == PolicyBounded && c.QueueCap <= 0 {
		return field.Errorf("QueueCap", c.QueueCap, "{QueueCap} must be > 0 with {Policy} bounded, got %d", c.QueueCap)
	}
	if c.QueueCap < 0 {
		return field.Errorf("QueueCap", c.QueueCap, "{QueueCap} must be >= 0, got %d", c.QueueCap)
	}
	if c.WaitBudget <= 0 {
		return field.Errorf("WaitBudget", c.WaitBudget, "{WaitBudget} must be > 0, got %v", c.WaitBudget)
	}
	if !slices.Contains(Estimators, c.Estimator) {
		return field.Errorf("Estimator", c.Estimator, "{Estimator} %q is unknown (known: %s)", string(c.Estimator), joinNames(Estimators))
	}
	if c.Bucket <= 0 {
		return field.Errorf("Bucket", c.Bucket, "{Bucket} must be > 0, got %v", c.Bucket)
	}
	if c.Window < c.Bucket {
		return field.Errorf("Window", c.Window, "{Window} must be >= {Bucket} (%v), got %v", c.Bucket, c.Window)
	}
	if c.MinSamples < 0 {
		return field.Errorf("MinSamples", c.MinSamples, "{MinSamples} must be >= 0, got %d", c.MinSamples)
	}
	if c.MaxQueueWait <= 0 {
		return field.Errorf("MaxQueueWait", c.MaxQueueWait, "{MaxQueueWait} must be > 0, got %v", c.MaxQueueWait)
	}
	if c.StallAt < 0 {
		return field.Errorf("StallAt", c.StallAt, "{StallAt} must be >= 0, got %v", c.StallAt)
	}
	if c.StallFor < 0 {
		return field.Errorf("StallFor", c.StallFor, "{StallFor} must be >= 0, got %v", c.StallFor)
	}
	if c.StallEvery < 0 {
		return field.Errorf("StallEvery", c.StallEvery, "{StallEvery} must be >= 0, got %v", c.StallEvery)
	}
	if c.StallEvery > 0 && c.StallEvery <= c.StallFor {
		return field.Errorf("StallEvery", c.StallEvery, "{StallEvery} must be > {StallFor} (%v), got %v", c.StallFor, c.StallEvery)
	}
	if c.Deadline < 0 {
		return field.Errorf("Deadline", c.Deadline, "{Deadline} must be >= 0, got %v", c.Deadline)
	}
	if c.DeadlineStatus != http.StatusServiceUnavailable && c.DeadlineStatus != http.StatusNoContent {
		return field.Errorf("DeadlineStatus", c.DeadlineStatus, "{DeadlineStatus} must be 503 or 204, got %d", c.DeadlineStatus)
	}
	if _, err := parseArrivalStamp(c.ArrivalStamp); err != nil {
		return err
	}
	if !slices.Contains(DeadlinePositions, c.DeadlinePosition) {
		return field.Errorf("DeadlinePosition", c.DeadlinePosition, "{DeadlinePosition} %q is unknown (known: %s)", string(c.DeadlinePosition), joinNames(DeadlinePositions))
	}
	if c.LimitRPS < 0 {
		return field.Errorf("LimitRPS", c.LimitRPS, "{LimitRPS} must be >= 0, got %d", c.LimitRPS)
	}
	if c.LimitShards < 1 || c.LimitShards > maxLimitShards {
		return field.Errorf("LimitShards", c.LimitShards, "{LimitShards} must be in 1..%d, got %d", maxLimitShards, c.LimitShards)
	}
	if c.LimitWindow <= 0 {
		return field.Errorf("LimitWindow", c.LimitWindow, "{LimitWindow} must be > 0, got %v", c.LimitWindow)
	}
	if !slices.Contains(LimitRoutings, c.LimitRouting) {
		return field.Errorf("LimitRouting", c.LimitRouting, "{LimitRouting} %q is unknown (known: %s)", string(c.LimitRouting), joinNames(LimitRoutings))
	}
	if c.LimitRPS > 0 && shardAllowance(c.LimitRPS, c.LimitWindow, c.LimitShards) == 0 {
		return field.Errorf("LimitRPS", c.LimitRPS, "{LimitRPS} %d over {LimitWindow} %v is below {LimitShards} %d: each shard would admit floor(%d/s × %v ÷ %d) = 0 requests per window",
			c.LimitRPS, c.LimitWindow, c.LimitShards, c.LimitRPS, c.LimitWindow, c.LimitShards)
	}
	if c.BatchSlots < 0 {
		return field.Errorf("BatchSlots", c.BatchSlots, "{BatchSlots} must be >= 0, got %d", c.BatchSlots)
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"Prefill", c.Prefill}, {"PrefillPerToken", c.PrefillPerToken}, {"ITL", c.ITL}, {"ITLPerSeq", c.ITLPerSeq}} {
		if d.v < 0 {
			return field.Errorf(d.name, d.v, "{"+d.name+"} must be >= 0, got %v", d.v)
		}
	}
	if c.OutputTokens <= 0 || c.OutputTokens > maxOutputTokens {
		return field.Errorf("OutputTokens", c.OutputTokens, "{OutputTokens} must be in 1..%d, got %d", maxOutputTokens, c.OutputTokens)
	}
	if c.PrefixCacheBlock <= 0 {
		return field.Errorf("PrefixCacheBlock", c.PrefixCacheBlock, "{PrefixCacheBlock} must be > 0, got %d", c.PrefixCacheBlock)
	}
	if c.PrefixCacheTokens < 0 {
		return field.Errorf("PrefixCacheTokens", c.PrefixCacheTokens, "{PrefixCacheTokens} must be >= 0, got %d", c.PrefixCacheTokens)
	}
	if c.PrefixCacheTokens > 0 && c.PrefixCacheTokens < c.PrefixCacheBlock {
		return field.Errorf("PrefixCacheTokens", c.PrefixCacheTokens, "{PrefixCacheTokens} must be 0 (off) or >= {PrefixCacheBlock} (%d), got %d", c.PrefixCacheBlock, c.PrefixCacheTokens)
	}
	return c.PlaneConfig.validate()
}

// slots is the number of requests the model holds at once: BatchSlots when
// set, else Workers.
func (c Config) slots() int {
	if c.BatchSlots > 0 {
		return c.BatchSlots
	}
	return c.Workers
}

// withDefaults fills the fields whose zero value means "derive it":
// Listen "" becomes 127.0.0.1:0 and BelievedLatency 0 becomes Latency.
func (c Config) withDefaults() Config {
	if c.Listen == "" {
		c.Listen = DefaultConfig().Listen
	}
	if c.BelievedLatency == 0 {
		c.BelievedLatency = c.Latency
	}
	return c
}
