package stub

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
)

func TestDefaultConfigIsValid(t *testing.T) {
	if err := DefaultConfig().Validate(); err != nil {
		t.Fatalf("DefaultConfig().Validate() = %v", err)
	}
}

func TestValidate(t *testing.T) {
	cases := []struct {
		name   string
		change func(*Config)
		want   []string // substrings of the error; nil = valid
	}{
		{"defaults", func(*Config) {}, nil},
		{"latency zero allowed", func(c *Config) { c.Latency = 0 }, nil},
		{"listen empty means default", func(c *Config) { c.Listen = "" }, nil},
		{"stall at zero with stall", func(c *Config) { c.StallFor = time.Second }, nil},
		{"stall every above for", func(c *Config) { c.StallFor, c.StallEvery = time.Second, 2*time.Second }, nil},
		{"queue cap zero ok unless bounded", func(c *Config) { c.QueueCap = 0 }, nil},
		{"window equals bucket", func(c *Config) { c.Window, c.Bucket = time.Second, time.Second }, nil},
		{"min samples zero", func(c *Config) { c.MinSamples = 0 }, nil},
		{"deadline on", func(c *Config) { c.Deadline = 50 * time.Millisecond }, nil},
		{"deadline status 204", func(c *Config) { c.DeadlineStatus = 204 }, nil},
		{"arrival header", func(c *Config) { c.ArrivalStamp = "header:X-Arrival-Ns" }, nil},
		{"clock skew negative", func(c *Config) { c.ClockSkew = -time.Second }, nil},
		{"deadline before-stall", func(c *Config) { c.DeadlinePosition = PositionBeforeStall }, nil},
		{"limit 4 rps over 4 shards", func(c *Config) { c.LimitRPS, c.LimitShards = 4, 4 }, nil},
		{"limit 1 rps over 4 shards in 4s windows", func(c *Config) { c.LimitRPS, c.LimitShards, c.LimitWindow = 1, 4, 4*time.Second }, nil},
		{"limit round-robin", func(c *Config) { c.LimitRouting = RoutingRoundRobin }, nil},
		{"limit off ignores allowance", func(c *Config) { c.LimitRPS, c.LimitShards = 0, 100 }, nil},
		{"token model all zero", func(c *Config) { c.Prefill, c.PrefillPerToken, c.ITL, c.ITLPerSeq, c.BatchSlots = 0, 0, 0, 0, 0 }, nil},

		{"listen not host:port", func(c *Config) { c.Listen = "localhost" }, []string{"Listen", `"localhost"`}},
		{"workers negative", func(c *Config) { c.Workers = -3 }, []string{"Workers must be > 0, got -3"}},
		{"workers zero", func(c *Config) { c.Workers = 0 }, []string{"Workers", "got 0"}},
		{"latency negative", func(c *Config) { c.Latency = -time.Millisecond }, []string{"Latency", "-1ms"}},
		{"believed negative", func(c *Config) { c.BelievedLatency = -time.Second }, []string{"BelievedLatency", "-1s"}},
		{"policy unknown", func(c *Config) { c.Policy = "lifo" }, []string{"Policy", `"lifo"`, "none, bounded, admission"}},
		{"policy empty", func(c *Config) { c.Policy = "" }, []string{"Policy", "none, bounded, admission"}},
		{"queue cap zero bounded", func(c *Config) { c.Policy, c.QueueCap = PolicyBounded, 0 }, []string{"QueueCap", "got 0"}},
		{"queue cap negative", func(c *Config) { c.QueueCap = -1 }, []string{"QueueCap", "got -1"}},
		{"wait budget zero", func(c *Config) { c.WaitBudget = 0 }, []string{"WaitBudget", "got 0s"}},
		{"wait budget negative", func(c *Config) { c.WaitBudget = -time.Second }, []string{"WaitBudget", "-1s"}},
		{"estimator unknown", func(c *Config) { c.Estimator = "ewma" }, []string{"Estimator", `"ewma"`, "believed, completions"}},
		{"bucket zero", func(c *Config) { c.Bucket = 0 }, []string{"Bucket", "got 0s"}},
		{"window below bucket", func(c *Config) { c.Window, c.Bucket = 50*time.Millisecond, 100*time.Millisecond }, []string{"Window", "Bucket", "50ms"}},
		{"min samples negative", func(c *Config) { c.MinSamples = -1 }, []string{"MinSamples", "got -1"}},
		{"max queue wait zero", func(c *Config) { c.MaxQueueWait = 0 }, []string{"MaxQueueWait", "got 0s"}},
		{"stall at negative", func(c *Config) { c.StallAt = -time.Second }, []string{"StallAt", "-1s"}},
		{"stall for negative", func(c *Config) { c.StallFor = -time.Second }, []string{"StallFor", "-1s"}},
		{"stall every negative", func(c *Config) { c.StallEvery = -time.Second }, []string{"StallEvery", "-1s"}},
		{"batch slots negative", func(c *Config) { c.BatchSlots = -1 }, []string{"BatchSlots must be >= 0, got -1"}},
		{"prefill negative", func(c *Config) { c.Prefill = -time.Millisecond }, []string{"Prefill must be >= 0", "-1ms"}},
		{"prefill per token negative", func(c *Config) { c.PrefillPerToken = -time.Microsecond }, []string{"PrefillPerToken", "-1µs"}},
		{"prefix cache tokens negative", func(c *Config) { c.PrefixCacheTokens = -1 }, []string{"PrefixCacheTokens must be >= 0, got -1"}},
		{"prefix cache block zero", func(c *Config) { c.PrefixCacheBlock = 0 }, []string{"PrefixCacheBlock must be > 0, got 0"}},
		{"prefix cache block negative", func(c *Config) { c.PrefixCacheBlock = -16 }, []string{"PrefixCacheBlock must be > 0, got -16"}},
		{"prefix cache below a block", func(c *Config) { c.PrefixCacheTokens = 8 }, []string{"PrefixCacheTokens must be 0 (off) or >= PrefixCacheBlock (16), got 8"}},
		{"prefix cache one block", func(c *Config) { c.PrefixCacheTokens = 16 }, nil},
		{"itl negative", func(c *Config) { c.ITL = -time.Millisecond }, []string{"ITL must be >= 0", "-1ms"}},
		{"itl per seq negative", func(c *Config) { c.ITLPerSeq = -time.Millisecond }, []string{"ITLPerSeq", "-1ms"}},
		{"output tokens zero", func(c *Config) { c.OutputTokens = 0 }, []string{"OutputTokens must be in 1..65536, got 0"}},
		{"output tokens too many", func(c *Config) { c.OutputTokens = 1 << 20 }, []string{"OutputTokens", "1048576"}},
		{"stall every equals for", func(c *Config) { c.StallFor, c.StallEvery = time.Second, time.Second }, []string{"StallEvery", "StallFor"}},
		{"stall every below for", func(c *Config) { c.StallFor, c.StallEvery = 2*time.Second, time.Second }, []string{"StallEvery", "got 1s"}},

		{"deadline negative", func(c *Config) { c.Deadline = -time.Millisecond }, []string{"Deadline must be >= 0, got -1ms"}},
		{"deadline status 200", func(c *Config) { c.DeadlineStatus = 200 }, []string{"DeadlineStatus must be 503 or 204, got 200"}},
		{"deadline status 0", func(c *Config) { c.DeadlineStatus = 0 }, []string{"DeadlineStatus", "got 0"}},
		{"arrival unknown", func(c *Config) { c.ArrivalStamp = "wall" }, []string{"ArrivalStamp", `"wall"`, "receive, header:NAME"}},
		{"arrival empty", func(c *Config) { c.ArrivalStamp = "" }, []string{"ArrivalStamp", `""`}},
		{"arrival header without name", func(c *Config) { c.ArrivalStamp = "header:" }, []string{"ArrivalStamp", `"header:"`, "not a valid header name"}},
		{"arrival header bad name", func(c *Config) { c.ArrivalStamp = "header:X Arrival" }, []string{"ArrivalStamp", `"X Arrival"`}},
		{"deadline position unknown", func(c *Config) { c.DeadlinePosition = "first" }, []string{"DeadlinePosition", `"first"`, "last, before-stall"}},
		{"limit rps negative", func(c *Config) { c.LimitRPS = -5 }, []string{"LimitRPS must be >= 0, got -5"}},
		{"limit shards zero", func(c *Config) { c.LimitShards = 0 }, []string{"LimitShards", "got 0"}},
		{"limit shards too many", func(c *Config) { c.LimitShards = 1 << 20 }, []string{"LimitShards", "got 1048576"}},
		{"limit window zero", func(c *Config) { c.LimitWindow = 0 }, []string{"LimitWindow must be > 0, got 0s"}},
		{"limit window negative", func(c *Config) { c.LimitWindow = -time.Second }, []string{"LimitWindow", "got -1s"}},
		{"limit routing unknown", func(c *Config) { c.LimitRouting = "hash" }, []string{"LimitRouting", `"hash"`, "random, round-robin"}},
		{"limit below shards", func(c *Config) { c.LimitRPS, c.LimitShards = 3, 4 }, []string{"LimitRPS 3 over LimitWindow 1s is below LimitShards 4", "= 0"}},
		{"limit below shards in a short window", func(c *Config) { c.LimitRPS, c.LimitShards, c.LimitWindow = 100, 2, 10*time.Millisecond },
			[]string{"LimitRPS 100", "LimitShards 2", "10ms"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := testConfig(tc.change).Validate()
			if tc.want == nil {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Validate() = nil, want error containing %q", tc.want)
			}
			msg := err.Error()
			if strings.Contains(msg, "\n") {
				t.Errorf("error is not one line: %q", msg)
			}
			// It names the field first, by its Go name.
			var fe *FieldError
			if !errors.As(err, &fe) || !strings.HasPrefix(msg, fe.Field) || reflect.ValueOf(Config{}).FieldByName(fe.Field).Kind() == reflect.Invalid {
				t.Errorf("Validate() = %v (%T), want a FieldError naming a field of Config first", err, err)
			}
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("Validate() = %q, want it to contain %q", msg, w)
				}
			}
			if _, err := NewServer(testConfig(tc.change)); err == nil {
				t.Errorf("NewServer accepted an invalid config")
			}
		})
	}
}

func TestAddFlags(t *testing.T) {
	var cfg Config
	fs := pflag.NewFlagSet("stub", pflag.ContinueOnError)
	cfg.AddFlags(fs)
	if cfg != DefaultConfig() {
		t.Fatalf("after AddFlags cfg = %+v, want DefaultConfig %+v", cfg, DefaultConfig())
	}
	names := []string{"listen", "workers", "latency", "believed-latency", "policy", "queue-cap",
		"wait-budget", "estimator", "window", "bucket", "min-samples", "max-queue-wait",
		"stall-at", "stall-for", "stall-every",
		"deadline", "deadline-status", "arrival-stamp", "clock-skew", "deadline-position",
		"limit-rps", "limit-shards", "limit-window", "limit-routing", "limit-seed", "h2c",
		"shadow-share", "fence", "primary-fail", "primary-budget", "borrow-workers", "borrow-latency",
		"borrow-depth", "borrow-fail", "borrow-budget", "budget-window", "health-every", "health-max-age",
		"borrow-slow-factor", "plane-faults", "plane-seed",
		"batch-slots", "prefill", "prefill-per-token", "itl", "itl-per-seq", "output-tokens",
		"prefix-cache-tokens", "prefix-cache-block"}
	for _, n := range names {
		f := fs.Lookup(n)
		if f == nil {
			t.Errorf("flag --%s not registered", n)
			continue
		}
		if strings.TrimSpace(f.Usage) == "" {
			t.Errorf("flag --%s has no help text", n)
		}
	}
	count := 0
	fs.VisitAll(func(*pflag.Flag) { count++ })
	if count != len(names) {
		t.Errorf("%d flags registered, want %d", count, len(names))
	}

	err := fs.Parse([]string{"--listen=127.0.0.1:9999", "--workers=8", "--latency=20ms",
		"--believed-latency=30ms", "--policy=bounded", "--queue-cap=3", "--wait-budget=1s",
		"--estimator=believed", "--window=5s", "--bucket=250ms", "--min-samples=7",
		"--max-queue-wait=2s", "--stall-at=1s", "--stall-for=200ms", "--stall-every=3s",
		"--deadline=80ms", "--deadline-status=204", "--arrival-stamp=header:X-Arrival-Ns", "--clock-skew=-5ms",
		"--deadline-position=before-stall", "--limit-rps=100", "--limit-shards=4", "--limit-window=2s",
		"--limit-routing=round-robin", "--limit-seed=42",
		"--shadow-share=0.5", "--fence=shared", "--primary-fail=0.1", "--primary-budget=3", "--borrow-workers=5",
		"--borrow-latency=7ms", "--borrow-depth=9", "--borrow-fail=0.2", "--borrow-budget=4", "--budget-window=2s",
		"--health-every=50ms", "--health-max-age=150ms", "--borrow-slow-factor=3",
		"--plane-faults=stale-health@1s+2s,revision@3s", "--plane-seed=9",
		"--batch-slots=64", "--prefill=30ms", "--prefill-per-token=100us", "--itl=15ms", "--itl-per-seq=200us", "--output-tokens=50",
		"--prefix-cache-tokens=4096", "--prefix-cache-block=32"})
	if err != nil {
		t.Fatal(err)
	}
	want := Config{
		Listen: "127.0.0.1:9999", Workers: 8, Latency: 20 * time.Millisecond,
		BelievedLatency: 30 * time.Millisecond, Policy: PolicyBounded, QueueCap: 3,
		WaitBudget: time.Second, Estimator: EstimatorBelieved, Window: 5 * time.Second,
		Bucket: 250 * time.Millisecond, MinSamples: 7, MaxQueueWait: 2 * time.Second,
		StallAt: time.Second, StallFor: 200 * time.Millisecond, StallEvery: 3 * time.Second,
		Deadline: 80 * time.Millisecond, DeadlineStatus: 204, ArrivalStamp: "header:X-Arrival-Ns",
		ClockSkew: -5 * time.Millisecond, DeadlinePosition: PositionBeforeStall,
		LimitRPS: 100, LimitShards: 4, LimitWindow: 2 * time.Second, LimitRouting: RoutingRoundRobin, LimitSeed: 42,
		PlaneConfig: PlaneConfig{ShadowShare: 0.5, Fence: FenceShared, PrimaryFail: 0.1, PrimaryBudget: 3, BorrowWorkers: 5,
			BorrowLatency: 7 * time.Millisecond, BorrowDepth: 9, BorrowFail: 0.2, BorrowBudget: 4, BudgetWindow: 2 * time.Second,
			HealthEvery: 50 * time.Millisecond, HealthMaxAge: 150 * time.Millisecond, SlowFactor: 3,
			PlaneFaults: "stale-health@1s+2s,revision@3s", PlaneSeed: 9},
		BatchSlots: 64, Prefill: 30 * time.Millisecond, PrefillPerToken: 100 * time.Microsecond,
		ITL: 15 * time.Millisecond, ITLPerSeq: 200 * time.Microsecond, OutputTokens: 50,
		PrefixCacheTokens: 4096, PrefixCacheBlock: 32,
	}
	if cfg != want {
		t.Errorf("parsed cfg = %+v\nwant %+v", cfg, want)
	}
	if err := cfg.Validate(); err != nil {
		t.Errorf("parsed config invalid: %v", err)
	}
}

func TestNewUnstartedServerFillsDefaults(t *testing.T) {
	s, err := NewUnstartedServer(testConfig(func(c *Config) {
		c.Listen = ""
		c.Latency = 70 * time.Millisecond
		c.BelievedLatency = 0
	}))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.Config.BelievedLatency != 70*time.Millisecond {
		t.Errorf("BelievedLatency = %v, want Latency 70ms", s.Config.BelievedLatency)
	}
	if s.Config.Listen != "127.0.0.1:0" {
		t.Errorf("Listen = %q, want 127.0.0.1:0", s.Config.Listen)
	}
	if s.URL != "" {
		t.Errorf("URL set before Start: %q", s.URL)
	}
}
