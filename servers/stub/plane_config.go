package stub

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/openload/openload/field"
)

// PlaneConfig configures the primary plane's failures and compensations,
// the borrowed evaluation plane and the fence between them (see the
// package documentation, "The borrowed plane"). It is embedded in Config:
// its fields are Config's, and flags of `openload stub`.
type PlaneConfig struct {
	ShadowShare   float64       // [--shadow-share] share of requests that also ask for a shadow score, 0..1; 0 = off
	Fence         FenceMode     // [--fence] shared | per-plane
	PrimaryFail   float64       // [--primary-fail] share of primary attempts that fail (an injected worker timeout), 0..1
	PrimaryBudget int           // [--primary-budget] primary retry tokens per --budget-window (shared mode: the one budget)
	BorrowWorkers int           // [--borrow-workers] borrowed plane concurrency, > 0
	BorrowLatency time.Duration // [--borrow-latency] time one borrowed attempt takes, >= 0
	BorrowDepth   int           // [--borrow-depth] per-plane: borrowed depth (queued + scoring) at which a borrow is refused, > 0
	BorrowFail    float64       // [--borrow-fail] share of borrowed attempts that fail, 0..1
	BorrowBudget  int           // [--borrow-budget] per-plane: borrowed retry tokens per --budget-window
	BudgetWindow  time.Duration // [--budget-window] both budgets refill to their size at each window, > 0
	HealthEvery   time.Duration // [--health-every] the borrowed plane publishes a health sample this often, > 0
	HealthMaxAge  time.Duration // [--health-max-age] per-plane: a borrow is refused when the sample is older, > 0
	SlowFactor    int           // [--borrow-slow-factor] borrow-slow fault: borrowed attempts take this many times --borrow-latency, >= 1
	PlaneFaults   string        // [--plane-faults] fault list, e.g. stale-health@5s+3s,revision@25s
	PlaneSeed     uint64        // [--plane-seed] seed of the failure draws
}

func defaultPlaneConfig() PlaneConfig {
	return PlaneConfig{
		Fence:         FencePerPlane,
		PrimaryBudget: 10,
		BorrowWorkers: 2,
		BorrowLatency: 20 * time.Millisecond,
		BorrowDepth:   8,
		BorrowBudget:  5,
		BudgetWindow:  time.Second,
		HealthEvery:   100 * time.Millisecond,
		HealthMaxAge:  300 * time.Millisecond,
		SlowFactor:    10,
		PlaneSeed:     1,
	}
}

// addFlags is AddFlags' part for the PlaneConfig fields, bound in b.
func (c *PlaneConfig) addFlags(fs *pflag.FlagSet, b flagBinding) {
	d := defaultPlaneConfig()
	fs.Float64Var(&c.ShadowShare, b.bind("ShadowShare", "shadow-share"), d.ShadowShare,
		"borrowed plane: share of requests that also ask for a shadow score, 0..1 (0 = off); X-Stub-Shadow says what became of it")
	fs.StringVar((*string)(&c.Fence), b.bind("Fence", "fence"), string(d.Fence),
		"borrowed plane: admission fence: "+joinNames(FenceModes)+" (shared: one gate and one retry budget for both planes)")
	fs.Float64Var(&c.PrimaryFail, b.bind("PrimaryFail", "primary-fail"), d.PrimaryFail,
		"primary plane: share of model attempts that fail, 0..1; a failure is retried once if the primary budget has a token")
	fs.IntVar(&c.PrimaryBudget, b.bind("PrimaryBudget", "primary-budget"), d.PrimaryBudget,
		"primary plane: retry tokens per {BudgetWindow} (in shared mode, the one budget of both planes)")
	fs.IntVar(&c.BorrowWorkers, b.bind("BorrowWorkers", "borrow-workers"), d.BorrowWorkers,
		"borrowed plane: attempts scored at once")
	fs.DurationVar(&c.BorrowLatency, b.bind("BorrowLatency", "borrow-latency"), d.BorrowLatency,
		"borrowed plane: time one attempt takes")
	fs.IntVar(&c.BorrowDepth, b.bind("BorrowDepth", "borrow-depth"), d.BorrowDepth,
		"borrowed plane: per-plane fence refuses a borrow when this many are queued or scoring")
	fs.Float64Var(&c.BorrowFail, b.bind("BorrowFail", "borrow-fail"), d.BorrowFail,
		"borrowed plane: share of attempts that fail, 0..1 (retried once against the borrowed budget)")
	fs.IntVar(&c.BorrowBudget, b.bind("BorrowBudget", "borrow-budget"), d.BorrowBudget,
		"borrowed plane: per-plane retry tokens per {BudgetWindow}")
	fs.DurationVar(&c.BudgetWindow, b.bind("BudgetWindow", "budget-window"), d.BudgetWindow,
		"both planes: retry budgets refill to their size at each window, from the first request")
	fs.DurationVar(&c.HealthEvery, b.bind("HealthEvery", "health-every"), d.HealthEvery,
		"borrowed plane: a health sample is published this often")
	fs.DurationVar(&c.HealthMaxAge, b.bind("HealthMaxAge", "health-max-age"), d.HealthMaxAge,
		"borrowed plane: per-plane fence refuses a borrow when the health sample is older (or missing)")
	fs.IntVar(&c.SlowFactor, b.bind("SlowFactor", "borrow-slow-factor"), d.SlowFactor,
		"fault injection: during borrow-slow, borrowed attempts take this many times {BorrowLatency} and fail")
	fs.StringVar(&c.PlaneFaults, b.bind("PlaneFaults", "plane-faults"), d.PlaneFaults,
		"fault injection: comma-separated KIND@START+LENGTH from the first request ("+joinNames(windowFaults)+"), or revision@START")
	fs.Uint64Var(&c.PlaneSeed, b.bind("PlaneSeed", "plane-seed"), d.PlaneSeed,
		"seed of the primary and borrowed failure draws")
}

func (c PlaneConfig) validate() error {
	share := func(name string, v float64) error {
		if !(v >= 0 && v <= 1) {
			return field.Errorf(name, v, "{"+name+"} must be in 0..1, got %v", v)
		}
		return nil
	}
	if err := share("ShadowShare", c.ShadowShare); err != nil {
		return err
	}
	if !slices.Contains(FenceModes, c.Fence) {
		return field.Errorf("Fence", c.Fence, "{Fence} %q is unknown (known: %s)", string(c.Fence), joinNames(FenceModes))
	}
	if err := share("PrimaryFail", c.PrimaryFail); err != nil {
		return err
	}
	if err := share("BorrowFail", c.BorrowFail); err != nil {
		return err
	}
	for _, n := range []struct {
		name string
		v    int
		min  int
	}{{"PrimaryBudget", c.PrimaryBudget, 0}, {"BorrowWorkers", c.BorrowWorkers, 1}, {"BorrowDepth", c.BorrowDepth, 1},
		{"BorrowBudget", c.BorrowBudget, 0}, {"SlowFactor", c.SlowFactor, 1}} {
		if n.v < n.min {
			return field.Errorf(n.name, n.v, "{"+n.name+"} must be >= %d, got %d", n.min, n.v)
		}
	}
	if c.BorrowLatency < 0 {
		return field.Errorf("BorrowLatency", c.BorrowLatency, "{BorrowLatency} must be >= 0, got %v", c.BorrowLatency)
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"BudgetWindow", c.BudgetWindow}, {"HealthEvery", c.HealthEvery}, {"HealthMaxAge", c.HealthMaxAge}} {
		if d.v <= 0 {
			return field.Errorf(d.name, d.v, "{"+d.name+"} must be > 0, got %v", d.v)
		}
	}
	_, err := parsePlaneFaults(c.PlaneFaults)
	return err
}

// PlaneFaultKind names an injected plane fault.
type PlaneFaultKind string

// The plane faults. Each but revision holds for a window.
const (
	// FaultStaleHealth: the borrowed plane publishes no health sample.
	FaultStaleHealth PlaneFaultKind = "stale-health"
	// FaultBorrowSlow: borrowed attempts begun in the window take
	// SlowFactor × BorrowLatency and fail (too slow), so they ask for a
	// retry and the borrowed depth climbs to its limit.
	FaultBorrowSlow PlaneFaultKind = "borrow-slow"
	// FaultPrimarySaturate: every primary attempt fails, and no request
	// asks for a shadow score (the borrower idles).
	FaultPrimarySaturate PlaneFaultKind = "primary-saturate"
	// FaultLateScore: scores delivered in the window arrive after the
	// fence gave up on their borrow.
	FaultLateScore PlaneFaultKind = "late-score"
	// FaultRevision: the model moves to its next revision at an instant.
	FaultRevision PlaneFaultKind = "revision"
)

var windowFaults = []PlaneFaultKind{FaultStaleHealth, FaultBorrowSlow, FaultPrimarySaturate, FaultLateScore}

// planeFault is one entry of PlaneFaults, in offsets from the first
// request: [at, at+dur), dur 0 for a revision.
type planeFault struct {
	kind    PlaneFaultKind
	at, dur time.Duration
}

// parsePlaneFaults reads "KIND@START+LENGTH,…" and "revision@START".
func parsePlaneFaults(s string) ([]planeFault, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	bad := func(item, format string, args ...any) error {
		return field.Errorf("PlaneFaults", s, "{PlaneFaults} %q: %s", item, fmt.Sprintf(format, args...))
	}
	var out []planeFault
	for item := range strings.SplitSeq(s, ",") {
		item = strings.TrimSpace(item)
		kind, when, ok := strings.Cut(item, "@")
		if !ok {
			return nil, bad(item, "want KIND@START+LENGTH or revision@START")
		}
		f := planeFault{kind: PlaneFaultKind(kind)}
		start, length, hasLen := strings.Cut(when, "+")
		var err error
		if f.at, err = time.ParseDuration(start); err != nil || f.at < 0 {
			return nil, bad(item, "start %q is not a duration >= 0", start)
		}
		switch {
		case f.kind == FaultRevision:
			if hasLen {
				return nil, bad(item, "revision is an instant, it takes no +LENGTH")
			}
		case slices.Contains(windowFaults, f.kind):
			if !hasLen {
				return nil, bad(item, "%s needs +LENGTH", kind)
			}
			if f.dur, err = time.ParseDuration(length); err != nil || f.dur <= 0 {
				return nil, bad(item, "length %q is not a duration > 0", length)
			}
		default:
			return nil, bad(item, "unknown fault %q (known: %s, %s)", kind, joinNames(windowFaults), FaultRevision)
		}
		out = append(out, f)
	}
	return out, nil
}

// faultActive reports whether a fault of kind holds at offset d.
func faultActive(faults []planeFault, kind PlaneFaultKind, d time.Duration) bool {
	for _, f := range faults {
		if f.kind == kind && d >= f.at && d < f.at+f.dur {
			return true
		}
	}
	return false
}
