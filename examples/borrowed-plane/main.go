// Command borrowed-plane shows what an admission fence in front of a
// borrowed evaluation plane protects: the stub's default model (4 workers
// × 50 ms, capacity 80 req/s, admission gate) offered 120 req/s (1.5×,
// Poisson, seed 1); half the requests also ask for a shadow score on a
// borrowed plane (10 workers × 100 ms); 5 % of primary attempts fail and are
// retried against a primary budget of 10 a second. Each plane fault is
// injected in turn (from a quarter of the run, for half of it; the
// revision change at half), under both fence modes, and the table gives
// the fence's sheds per 100 intents by reason, late scores, the primary
// budget the borrowed plane spent, the primary compensations refused and
// the response time of the answers. See README.md in this folder.
//
//	go run ./examples/borrowed-plane          # 10 s per run, 12 runs, about 2½ minutes
//	go run ./examples/borrowed-plane -short   # 3 s per run
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/tw"

	"github.com/openload/openload/examples/internal/demo"
	"github.com/openload/openload/internal/engine"
	"github.com/openload/openload/internal/loadtest"
	"github.com/openload/openload/result"
	"github.com/openload/openload/schedule"
	"github.com/openload/openload/servers/stub"
)

// The fixed load: 1.5× the default model's capacity of 80 req/s.
const (
	Rate = 120.0
	Seed = 1
)

// The planes: half the requests ask for a shadow score; the borrowed plane
// has 10 workers × 100 ms (capacity 100 a second, 10× less when slowed)
// and a depth limit of 16; 5 % of primary attempts fail. The rest is the
// stub's defaults: primary budget 10 and borrowed budget 5 a second,
// health every 100 ms with a max age of 300 ms.
const (
	ShadowShare   = 0.5
	BorrowWorkers = 10
	BorrowLatency = 100 * time.Millisecond
	BorrowDepth   = 16
	PrimaryFail   = 0.05
)

// Faults are the rows: none, then each plane fault.
var Faults = []stub.PlaneFaultKind{"", stub.FaultStaleHealth, stub.FaultBorrowSlow, stub.FaultPrimarySaturate, stub.FaultLateScore, stub.FaultRevision}

// FaultSpec is the --plane-faults value of kind in a run of length d: a
// window from d/4 for d/2, or the revision change at d/2.
func FaultSpec(kind stub.PlaneFaultKind, d time.Duration) string {
	switch kind {
	case "":
		return ""
	case stub.FaultRevision:
		return fmt.Sprintf("revision@%v", d/2)
	}
	return fmt.Sprintf("%s@%v+%v", kind, d/4, d/2)
}

// Config is the stub's configuration of one run.
func Config(kind stub.PlaneFaultKind, mode stub.FenceMode, d time.Duration) stub.Config {
	cfg := stub.DefaultConfig()
	cfg.ShadowShare = ShadowShare
	cfg.BorrowWorkers, cfg.BorrowLatency, cfg.BorrowDepth = BorrowWorkers, BorrowLatency, BorrowDepth
	cfg.PrimaryFail = PrimaryFail
	cfg.Fence = mode
	cfg.PlaneFaults = FaultSpec(kind, d)
	return cfg
}

// Outcome is what one run measured: openload's result (with the
// X-Stub-Shadow and X-Stub-Reason class tables) and the stub's /stats.
type Outcome struct {
	Fault  stub.PlaneFaultKind
	Mode   stub.FenceMode
	Result *result.Result
	Stats  stub.Stats
}

// Shadow is openload's count of answers with X-Stub-Shadow v.
func (o Outcome) Shadow(v stub.Shadow) int64 { return o.class("X-Stub-Shadow")[string(v)] }

func (o Outcome) class(h string) map[string]int64 {
	for _, c := range o.Result.Classes {
		if c.Header == h {
			return c.Counts()
		}
	}
	return nil
}

// Per100 is n per 100 intents.
func (o Outcome) Per100(n int64) float64 {
	if o.Stats.Fence.Intents == 0 {
		return 0
	}
	return 100 * float64(n) / float64(o.Stats.Fence.Intents)
}

// Run runs one fault under one fence mode against a fresh in-process stub.
func Run(ctx context.Context, kind stub.PlaneFaultKind, mode stub.FenceMode, d time.Duration) (Outcome, error) {
	res, st, err := demo.AgainstStub(ctx, Config(kind, mode, d), loadtest.Options{
		Config: engine.Config{
			Connections:  1024,
			Timeout:      10 * time.Second,
			Drain:        5 * time.Second,
			ClassHeaders: []string{"X-Stub-Shadow", "X-Stub-Reason"},
		},
		Schedule: schedule.Spec{Kind: schedule.Poisson, Rate: Rate, Duration: d, Seed: Seed},
	})
	if err != nil {
		return Outcome{}, err
	}
	return Outcome{Fault: kind, Mode: mode, Result: res, Stats: st}, nil
}

// Consistent checks what every run must show: every request answered,
// openload's X-Stub-Shadow counts equal to the fence's (the answers say
// what the fence decided), and per-plane not one primary token spent by
// the borrowed plane.
func Consistent(o Outcome) error {
	r, f := o.Result, o.Stats.Fence
	name := fmt.Sprintf("%s/%s", faultName(o.Fault), o.Mode)
	switch {
	case !r.Counts.Balanced() || r.Counts.Completed != r.Counts.Scheduled:
		return fmt.Errorf("%s: counts %+v: every request should complete", name, r.Counts)
	case o.Shadow(stub.ShadowShedStale) != f.Shed.StaleHealth || o.Shadow(stub.ShadowShedDepth) != f.Shed.Depth || o.Shadow(stub.ShadowShedBudget) != f.Shed.Budget:
		return fmt.Errorf("%s: openload saw shed %d/%d/%d, the fence %+v", name,
			o.Shadow(stub.ShadowShedStale), o.Shadow(stub.ShadowShedDepth), o.Shadow(stub.ShadowShedBudget), f.Shed)
	case o.Shadow(stub.ShadowScored)+o.Shadow(stub.ShadowLateRejected) != f.Borrowed.Admitted:
		return fmt.Errorf("%s: openload saw %d admitted intents, the fence %d", name, o.Shadow(stub.ShadowScored)+o.Shadow(stub.ShadowLateRejected), f.Borrowed.Admitted)
	case o.Shadow(stub.ShadowNone) != r.Counts.Completed-f.Intents:
		return fmt.Errorf("%s: %d answers without an intent, %d completed − %d intents", name, o.Shadow(stub.ShadowNone), r.Counts.Completed, f.Intents)
	case o.Mode == stub.FencePerPlane && f.PrimaryBudgetSpentByBorrowed != 0:
		return fmt.Errorf("%s: the borrowed plane spent %d primary tokens", name, f.PrimaryBudgetSpentByBorrowed)
	}
	return nil
}

func faultName(k stub.PlaneFaultKind) string {
	if k == "" {
		return "none"
	}
	return string(k)
}

// Table prints outcomes, one row each, in two tables of at most 100
// columns (183 as one): what the fence shed, then what the primary
// plane spent and the latencies; a line under them says the short
// headers in full.
func Table(w io.Writer, outs []Outcome) error {
	r := tw.AlignRight
	newTable := func(head ...string) *tablewriter.Table {
		a := tw.Alignment{tw.AlignLeft, tw.AlignLeft}
		for range head[2:] {
			a = append(a, r)
		}
		t := tablewriter.NewTable(w, tablewriter.WithHeaderAutoFormat(tw.Off), tablewriter.WithAlignment(a))
		t.Header(head)
		return t
	}
	shed := newTable("fault", "fence", "intents", "shed/100 stale", "depth", "budget", "late rej/repl")
	spent := newTable("fault", "fence", "by borrowed", "comp", "refused", "worker-failed", "resp p50", "resp p99")
	for _, o := range outs {
		f := o.Stats.Fence
		if err := shed.Append([]string{
			faultName(o.Fault), string(o.Mode), fmt.Sprint(f.Intents),
			fmt.Sprintf("%.1f", o.Per100(f.Shed.StaleHealth)), fmt.Sprintf("%.1f", o.Per100(f.Shed.Depth)), fmt.Sprintf("%.1f", o.Per100(f.Shed.Budget)),
			fmt.Sprintf("%d/%d", f.LateRejected, f.LateReplayed),
		}); err != nil {
			return err
		}
		if err := spent.Append([]string{
			faultName(o.Fault), string(o.Mode), fmt.Sprint(f.PrimaryBudgetSpentByBorrowed),
			fmt.Sprint(f.Primary.Compensations), fmt.Sprint(f.Primary.CompensationsRefused), fmt.Sprint(o.Stats.Reasons.WorkerFailed),
			fmt.Sprintf("%.1f", o.Result.Response.P50), fmt.Sprintf("%.1f", o.Result.Response.P99),
		}); err != nil {
			return err
		}
	}
	if err := shed.Render(); err != nil {
		return err
	}
	if err := spent.Render(); err != nil {
		return err
	}
	fmt.Fprintln(w, "by borrowed = primary spent by borrowed: the primary plane's retry tokens borrowed attempts took")
	_, err := fmt.Fprintln(w, "comp = primary comp: its compensations · refused: those refused · resp p50, p99 in ms")
	return err
}

// Timeline prints the fence's per-second timeline of one fault under both
// modes side by side (the stub's /stats fence.timeline), each second with
// the faults active in it.
func Timeline(w io.Writer, shared, perPlane Outcome) error {
	r := tw.AlignRight
	t := tablewriter.NewTable(w,
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithAlignment(tw.Alignment{r, tw.AlignLeft, r, r, r, r, r, r, r, r}),
	)
	t.Header("s", "faults", "shared: spent by borrowed", "late repl", "primary refused",
		"per-plane: shed stale", "depth", "budget", "late rej", "primary refused")
	sh, pp := shared.Stats.Fence.Timeline, perPlane.Stats.Fence.Timeline
	for i := range max(len(sh), len(pp)) {
		var a, b stub.FenceSecond
		if i < len(sh) {
			a = sh[i]
		}
		if i < len(pp) {
			b = pp[i]
		}
		faults := a.Faults
		if len(faults) == 0 {
			faults = b.Faults
		}
		if err := t.Append([]string{
			fmt.Sprint(i), strings.Trim(fmt.Sprint(faults), "[]"),
			fmt.Sprint(a.PrimarySpentByBorrowed), fmt.Sprint(a.LateReplayed), fmt.Sprint(a.PrimaryRefused),
			fmt.Sprint(b.ShedStale), fmt.Sprint(b.ShedDepth), fmt.Sprint(b.ShedBudget), fmt.Sprint(b.LateRejected), fmt.Sprint(b.PrimaryRefused),
		}); err != nil {
			return err
		}
	}
	return t.Render()
}

func main() {
	runLength := loadtest.RunLength(flag.CommandLine, "run", 10*time.Second, 3*time.Second)
	statsOut := flag.String("stats", "", "write the fence object of /stats of the per-plane borrow-slow run to this file")
	flag.Parse()
	dur := runLength()
	demo.Main("borrowed-plane", func(ctx context.Context) error { return run(ctx, os.Stdout, dur, *statsOut) })
}

func run(ctx context.Context, w io.Writer, dur time.Duration, statsOut string) error {
	fmt.Fprintf(w, "borrowed-plane: model 4 workers × 50 ms (capacity 80 req/s) behind the admission gate; Poisson %v req/s\n", Rate)
	fmt.Fprintf(w, "(1.5× capacity, seed %d), %v per run; %.0f %% of requests ask for a shadow score on a borrowed plane of\n", Seed, dur, 100*ShadowShare)
	fmt.Fprintf(w, "%d workers × %v (depth limit %d); %.0f %% of primary attempts fail, retried once against 10 tokens a second;\n",
		BorrowWorkers, BorrowLatency, BorrowDepth, 100*PrimaryFail)
	fmt.Fprintf(w, "each fault from %v for %v (revision at %v)\n\n", dur/4, dur/2, dur/2)
	var outs []Outcome
	var failed error
	for _, k := range Faults {
		for _, m := range stub.FenceModes {
			o, err := Run(ctx, k, m, dur)
			if err != nil {
				return err
			}
			if err := ctx.Err(); err != nil {
				return err
			}
			fmt.Fprintf(os.Stderr, "done: %s, %s: %d scheduled, %d intents\n", faultName(k), m, o.Result.Counts.Scheduled, o.Stats.Fence.Intents)
			if err := Consistent(o); err != nil {
				failed = errors.Join(failed, err)
			}
			if statsOut != "" && k == stub.FaultBorrowSlow && m == stub.FencePerPlane {
				b, err := json.MarshalIndent(o.Stats.Fence, "", "  ")
				if err != nil {
					return err
				}
				if err := os.WriteFile(statsOut, append(b, '\n'), 0o644); err != nil {
					return err
				}
			}
			outs = append(outs, o)
		}
	}
	if err := Table(w, outs); err != nil {
		return err
	}
	for i := 0; i+1 < len(outs); i += 2 {
		if k := outs[i].Fault; k == stub.FaultBorrowSlow || k == stub.FaultLateScore {
			fmt.Fprintf(w, "\nper second, %s (the stub's fence.timeline; seconds from the first request):\n", k)
			if err := Timeline(w, outs[i], outs[i+1]); err != nil {
				return err
			}
		}
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "shed/100 = borrows the fence refused per 100 intents (stale health, depth limit, empty borrowed budget), from /stats;")
	fmt.Fprintln(w, "openload's X-Stub-Shadow counts equal them in every run · late rej/repl = late scores rejected (per-plane) / replayed (shared)")
	fmt.Fprintln(w, "primary spent by borrowed = primary (shared: the one) budget tokens taken by the borrowed plane's retries and replays")
	fmt.Fprintln(w, "primary comp / refused = failed primary attempts retried / refused for want of a token · worker-failed = answers the gate")
	fmt.Fprintln(w, "gave in the model's place after a failure · resp = response time (done − scheduled) of every answer, client-side, ms")
	return failed
}
