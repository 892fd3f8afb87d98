// Command rate-limit-429 runs Poisson traffic at 135 requests/s (90 % of
// the limit) against the stub's 150 requests/s rate limiter: one shard, six
// shards with random routing and six with round-robin, with and without one
// retry, and prints the 429s a second each row observed next to what the
// analytic model (package limitmath) predicts, with the standard error of the
// observation. See README.md in this folder for the derivation and the
// reading of each row.
//
//	go run ./examples/rate-limit-429            # 300 s per row, rows in parallel: about 5 minutes
//	go run ./examples/rate-limit-429 -short     # 30 s per row
//	go run ./examples/rate-limit-429 -d 2m      # any length
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"sync"
	"time"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/tw"

	"github.com/openload/openload/examples/internal/demo"
	"github.com/openload/openload/internal/engine"
	"github.com/openload/openload/internal/loadtest"
	"github.com/openload/openload/internal/report"
	"github.com/openload/openload/internal/retry"
	"github.com/openload/openload/limitmath"
	"github.com/openload/openload/result"
	"github.com/openload/openload/schedule"
	"github.com/openload/openload/servers/stub"
)

// The experiment.
const (
	Rate   = 135.0       // offered, Poisson, requests/s: 90 % of the limit
	Limit  = 150         // the limit over all shards, requests/s
	Window = time.Second // every shard's fixed window
	Seed   = 1           // of the arrivals (the same in every row), the jitter and the random routing
)

// Row is one limiter and retry configuration.
type Row struct {
	Name    string
	Shards  int
	Routing stub.LimitRouting
	Retries int
	Backoff time.Duration // base of the backoff; with JitterEqual a retry waits [Backoff/2, Backoff)
	Jitter  retry.Jitter
	// InModel is false for a row outside the model's assumptions: retries
	// made at once land in the window that just rejected them.
	InModel bool
}

// backoff: equal jitter from a 2 s base waits uniform in [1 s, 2 s), one to
// two windows, so a retry never lands in the window that rejected it.
const backoff = 2 * time.Second

// Rows are the configurations, in the order of the README.
var Rows = []Row{
	{"1 shard", 1, stub.RoutingRandom, 0, 0, "", true},
	{"6 shards, random", 6, stub.RoutingRandom, 0, 0, "", true},
	{"6 shards, round-robin", 6, stub.RoutingRoundRobin, 0, 0, "", true},
	{"1 shard", 1, stub.RoutingRandom, 1, backoff, retry.JitterEqual, true},
	{"6 shards, random", 6, stub.RoutingRandom, 1, backoff, retry.JitterEqual, true},
	{"6 shards, round-robin", 6, stub.RoutingRoundRobin, 1, backoff, retry.JitterEqual, true},
	{"6 shards, random", 6, stub.RoutingRandom, 1, 0, retry.JitterNone, false},
}

// RetryLabel describes a row's retries.
func (r Row) RetryLabel() string {
	switch {
	case r.Retries == 0:
		return "none"
	case r.Backoff == 0:
		return "1, at once"
	}
	return fmt.Sprintf("1, after %v–%v", r.Backoff/2, r.Backoff)
}

// Input is the model's input for the row.
func (r Row) Input() limitmath.PoissonInput {
	return limitmath.PoissonInput{Rate: Rate, Limit: Limit, Shards: r.Shards, Window: Window, Routing: string(r.Routing), Retries: r.Retries}
}

// Cell is the outcome of one row.
type Cell struct {
	Row      Row
	Duration time.Duration
	Result   *result.Result
	Server   stub.LimiterStats // the stub's own count of its decisions
	// Nominal is the prediction at Rate; Pred at the schedule's own rate,
	// its arrivals ÷ Duration (see Realized), which the comparison uses.
	Nominal  limitmath.Prediction
	Pred     limitmath.Prediction
	Realized float64
	Observed float64 // 429 answers (every attempt) ÷ Duration
	SE       float64 // standard error of Observed, from batch means
	Batch    time.Duration
	// ModelSE is the standard error the model itself gives Observed
	// without retries (per-window rejections are then independent with a
	// known variance); 0 with retries.
	ModelSE float64
}

// Z is (observed − predicted) ÷ SE.
func (c Cell) Z() float64 { return (c.Observed - c.Pred.RejectPerSec) / c.SE }

// Tolerance is how far observed may lie from predicted and still agree:
// 2 standard errors, plus, with retries, the 20 % the independent-attempts
// approximation is good to when retries land in later windows (see
// docs/MEASUREMENTS.md, “Retry model against a simulation”). A row outside
// the model's assumptions has none.
func (c Cell) Tolerance() float64 {
	if !c.Row.InModel {
		return math.NaN()
	}
	t := 2 * c.SE
	if c.Row.Retries > 0 {
		t += 0.2 * c.Pred.RejectPerSec
	}
	return t
}

// Agree reports whether observed and predicted agree within Tolerance.
func (c Cell) Agree() bool { return math.Abs(c.Observed-c.Pred.RejectPerSec) <= c.Tolerance() }

// Realized is the rate of the seeded schedule the rows share: its arrivals
// ÷ d. It is a property of the schedule, known before any request is sent:
// a Poisson count has a standard deviation of √(λ·d), so a schedule's own
// rate differs from λ by about √(λ/d) (0.67/s at 300 s), which moves the
// predictions by more than their standard error. The model is therefore
// evaluated at the rate the limiter was actually offered.
func Realized(d time.Duration) float64 {
	s := schedule.NewPoisson(Rate, d, Seed)
	n := 0
	for _, ok := s.Next(); ok; _, ok = s.Next() {
		n++
	}
	return float64(n) / d.Seconds()
}

// RunRow runs one row for d against a fresh in-process stub.
func RunRow(ctx context.Context, row Row, d time.Duration) (Cell, error) {
	nominal, err := limitmath.Predict(row.Input())
	if err != nil {
		return Cell{}, err
	}
	realized := Realized(d)
	in := row.Input()
	in.Rate = realized
	pred, err := limitmath.Predict(in)
	if err != nil {
		return Cell{}, err
	}
	cfg := stub.DefaultConfig()
	// A model far from saturation: only the limiter answers 429, and the
	// admitted requests are answered at once.
	cfg.Workers, cfg.Latency, cfg.Policy = 64, 0, stub.PolicyNone
	cfg.LimitRPS, cfg.LimitShards, cfg.LimitWindow, cfg.LimitRouting, cfg.LimitSeed = Limit, row.Shards, Window, row.Routing, Seed
	var policy retry.Policy
	if row.Retries > 0 {
		on, _ := retry.ParseOn("429")
		// A budget that never binds (every rejected request may retry, as
		// the model assumes): 100 % of first attempts + 10/s over 10 s.
		policy = retry.Policy{On: on, Retries: row.Retries, Backoff: row.Backoff, Jitter: row.Jitter, Seed: Seed,
			Budget: 1, MinPerSec: 10, Window: 10 * time.Second}
	}
	res, st, err := demo.AgainstStub(ctx, cfg, loadtest.Options{
		Config:   engine.Config{Connections: 256, Timeout: 10 * time.Second, Drain: 5 * time.Second, Retry: policy},
		Schedule: schedule.Spec{Kind: schedule.Poisson, Rate: Rate, Duration: d, Seed: Seed},
	})
	if err != nil {
		return Cell{}, err
	}
	c := Cell{Row: row, Duration: d, Result: res, Server: st.Limiter, Nominal: nominal, Pred: pred, Realized: realized}
	c.Observed = float64(res.AttemptStatus(429)) / d.Seconds()
	c.Batch = batchLength(d)
	c.SE = BatchSE(res.Timeline, d, c.Batch)
	if row.Retries == 0 {
		c.ModelSE = ModelSE(in, pred.PerShardAllowance, d)
	}
	return c, nil
}

// RunAll runs every row for d, all at once (each against its own stub);
// the rows share the arrival times (the same seed), which makes their
// differences sharper than independent runs would.
func RunAll(ctx context.Context, rows []Row, d time.Duration) ([]Cell, error) {
	cells := make([]Cell, len(rows))
	errs := make([]error, len(rows))
	var wg sync.WaitGroup
	for i, row := range rows {
		wg.Go(func() { cells[i], errs[i] = RunRow(ctx, row, d) })
	}
	wg.Wait()
	return cells, errors.Join(errs...)
}

// batchLength is the batch of the batch-means standard error: 1/30 of the
// run in whole seconds, at least 5 s, so that a batch is long next to the
// 1–2 s by which a retry's 429 follows its first attempt's.
func batchLength(d time.Duration) time.Duration {
	return max((d / 30).Truncate(time.Second), 5*time.Second)
}

// BatchSE is the standard error of the 429 rate from the per-second 429
// counts of the timeline (every attempt, by the second it was answered):
// the seconds of [0, d) are cut into batches of length b, the rate of each
// batch is its count ÷ b, and SE = sd(batch rates) ÷ √(batches). Batches
// much longer than the window and than the backoff are nearly independent
// even though neighbouring seconds are not (a second of the timeline
// straddles two windows of the stub, whose clock started a little earlier,
// and a retry lands a second or two after its first attempt).
func BatchSE(tl []result.Second, d, b time.Duration) float64 {
	per := int(b / time.Second)
	n := int(d/time.Second) / per
	if n < 2 {
		return math.NaN()
	}
	rates := make([]float64, n)
	for i := range n * per {
		if i < len(tl) {
			rates[i/per] += float64(tl[i].RateLimited) / b.Seconds()
		}
	}
	var mean, ss float64
	for _, r := range rates {
		mean += r / float64(n)
	}
	for _, r := range rates {
		ss += (r - mean) * (r - mean)
	}
	return math.Sqrt(ss/float64(n-1)) / math.Sqrt(float64(n))
}

// ModelSE is the standard error of the 429 rate of a run of length d
// without retries, from the model: the rejections of one window are
// (N − L)+ summed over the shards (random routing: n independent
// Poisson(λW/n) counts) or (N_tot − n·L)+ (round-robin, and one shard),
// independent from window to window, so over d/W windows
// SE = √(Var(rejections a window) ÷ (d/W)) ÷ W.
func ModelSE(in limitmath.PoissonInput, L int, d time.Duration) float64 {
	w := in.Window.Seconds()
	var v float64
	if in.Routing == limitmath.RoutingRoundRobin || in.Shards == 1 {
		v = excessVariance(in.Rate*w, in.Shards*L)
	} else {
		v = float64(in.Shards) * excessVariance(in.Rate*w/float64(in.Shards), L)
	}
	return math.Sqrt(v/(d.Seconds()/w)) / w
}

// excessVariance is Var((N − L)+) for N ~ Poisson(mu), summed term by term
// from the mode outwards until the terms no longer matter.
func excessVariance(mu float64, L int) float64 {
	var e1, e2 float64
	lg := func(k int) float64 { l, _ := math.Lgamma(float64(k) + 1); return l }
	for k := L + 1; ; k++ {
		p := math.Exp(-mu + float64(k)*math.Log(mu) - lg(k))
		x := float64(k - L)
		e1 += x * p
		e2 += x * x * p
		if float64(k) > mu && x*x*p < 1e-18*e2 {
			break
		}
	}
	return e2 - e1*e1
}

// Table prints the cells as one table.
func Table(w io.Writer, cells []Cell) error {
	t := tablewriter.NewTable(w,
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithAlignment(tw.Alignment{tw.AlignLeft, tw.AlignLeft, tw.AlignRight, tw.AlignRight, tw.AlignRight, tw.AlignRight, tw.AlignRight, tw.AlignRight, tw.AlignLeft, tw.AlignRight, tw.AlignRight, tw.AlignRight}),
	)
	realized := "at λ̂"
	if len(cells) > 0 {
		realized = fmt.Sprintf("at λ̂ = %.2f", cells[0].Realized)
	}
	t.Header("limiter (150/s)", "retry", fmt.Sprintf("predicted 429/s at λ = %v", Rate), "predicted "+realized, "observed 429/s", "SE", "model SE", "z", "agree?", "attempts/s pred · obs", "failed pred · obs", "server 429s")
	for _, c := range cells {
		r := c.Result
		agree := "no"
		switch {
		case !c.Row.InModel:
			agree = "outside model"
		case c.Agree():
			agree = fmt.Sprintf("yes (±%.2f)", c.Tolerance())
		default:
			agree = fmt.Sprintf("no (±%.2f)", c.Tolerance())
		}
		modelSE := "—"
		if c.ModelSE > 0 {
			modelSE = fmt.Sprintf("%.3f", c.ModelSE)
		}
		attempts := r.Counts.Sent
		if r.Retries != nil {
			attempts += r.Retries.RetriesSent
		}
		failed := float64(r.Status["429"]) / float64(r.Counts.Scheduled)
		if err := t.Append([]string{
			c.Row.Name, c.Row.RetryLabel(),
			fmt.Sprintf("%.3f", c.Nominal.RejectPerSec), fmt.Sprintf("%.3f", c.Pred.RejectPerSec), fmt.Sprintf("%.3f", c.Observed),
			fmt.Sprintf("%.3f", c.SE), modelSE, fmt.Sprintf("%+.2f", c.Z()), agree,
			fmt.Sprintf("%.2f · %.2f", c.Pred.EffectiveRate, float64(attempts)/c.Duration.Seconds()),
			fmt.Sprintf("%.3f%% · %.3f%%", 100*c.Pred.FinalFailShare, 100*failed),
			fmt.Sprint(c.Server.Rejected),
		}); err != nil {
			return err
		}
	}
	return t.Render()
}

func main() {
	runLength := loadtest.RunLength(flag.CommandLine, "row", 300*time.Second, 30*time.Second)
	flag.Parse()
	dur := runLength()
	demo.Main("rate-limit-429", func(ctx context.Context) error { return run(ctx, os.Stdout, os.Stderr, dur) })
}

func run(ctx context.Context, stdout, stderr io.Writer, dur time.Duration) error {
	fmt.Fprintf(stdout, "rate-limit-429: Poisson %v/s against %d/s in %v windows, %v per row, %d rows at once (same arrivals, seed %d: %.0f of them, λ̂ = %.3f/s)\n\n",
		Rate, Limit, Window, dur, len(Rows), Seed, Realized(dur)*dur.Seconds(), Realized(dur))
	cells, err := RunAll(ctx, Rows, dur)
	if err != nil {
		return err
	}
	for _, c := range cells {
		fmt.Fprintf(stderr, "done: %s, retry %s: %s", c.Row.Name, c.Row.RetryLabel(), report.CountsLine(c.Result.Counts))
		if r := c.Result.Retries; r != nil {
			fmt.Fprintf(stderr, " · retries sent %d · refused by budget %d", r.RetriesSent, r.RefusedByBudget)
		}
		fmt.Fprintln(stderr)
	}
	if err := Table(stdout, cells); err != nil {
		return err
	}
	fmt.Fprintf(stdout, `
λ̂ = the schedule's own rate (its arrivals ÷ %v); z, agree, and the predictions of attempts/s and
failed are at λ̂. observed 429/s = 429 answers, every attempt, ÷ %v; SE from batch means over %v
batches; model SE = the SE the model gives a run this long (rows without retries). agree: |observed −
predicted at λ̂| ≤ 2 SE, + 20 %% of predicted with retries (the independent-attempts approximation).
failed = requests whose every attempt got 429. server 429s = the stub's own count of its rejections.
`, dur, dur, cells[0].Batch)
	return nil
}
