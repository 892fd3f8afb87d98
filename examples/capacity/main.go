// Command capacity sweeps the offered rate past the capacity of a model of
// 4 workers × 50 ms (80 req/s) with constant and with Poisson arrivals,
// prints each point's measured latency beside what queueing theory and an
// ideal queue fed the very same arrivals predict, and then searches for the
// highest rate at which response p99 stays within 200 ms. See README.md in
// this folder for the curve worked out by hand.
//
//	go run ./examples/capacity          # 20 s per point, 3 runs per probe: about 12 minutes
//	go run ./examples/capacity -short   # 4 s per point, fewer rates: about 4 minutes
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math"
	"net/url"
	"os"
	"time"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/tw"

	"github.com/openload/openload/examples/internal/demo"
	"github.com/openload/openload/internal/engine"
	"github.com/openload/openload/internal/loadtest"
	"github.com/openload/openload/internal/report"
	"github.com/openload/openload/internal/sweep"
	"github.com/openload/openload/result"
	"github.com/openload/openload/schedule"
	"github.com/openload/openload/servers/stub"
	"github.com/openload/openload/verify"
)

// The model: W workers, each call S long; capacity μ = W ÷ S.
const (
	Workers = 4
	Service = 50 * time.Millisecond
)

// Capacity is μ = W ÷ S in requests per second: 80.
var Capacity = Workers / Service.Seconds()

// Rates are the offered rates swept, around the capacity.
var Rates = []float64{20, 40, 60, 70, 76, 84, 90, 100, 120}

// ShortRates are the rates of -short.
var ShortRates = []float64{40, 70, 84, 100, 120}

// Seed is the Poisson arrivals' seed.
const Seed = 1

// Ideal returns the response times an ideal FIFO queue of workers servers,
// each call exactly service long, gives the arrivals at offsets: a request
// starts when it has arrived and a server is free, and is done service
// later. Fed a run's own schedule, it is the D/D/4 (constant arrivals) or
// M/D/4 (Poisson) answer for exactly those arrivals, transient included.
func Ideal(offsets []time.Duration, workers int, service time.Duration) []time.Duration {
	free := make([]time.Duration, workers) // when each server is next free
	out := make([]time.Duration, len(offsets))
	for i, a := range offsets {
		k := 0
		for j := range free {
			if free[j] < free[k] {
				k = j
			}
		}
		done := max(a, free[k]) + service
		free[k] = done
		out[i] = done - a
	}
	return out
}

// Offsets are the schedule's offsets.
func Offsets(spec schedule.Spec) ([]time.Duration, error) {
	s, err := schedule.New(spec)
	if err != nil {
		return nil, err
	}
	var out []time.Duration
	for {
		off, ok := s.Next()
		if !ok {
			return out, nil
		}
		out = append(out, off)
	}
}

// Quantiles are q's quantiles of ds in ms, read from an HdrHistogram as
// openload reads its own.
func Quantiles(ds []time.Duration, qs ...float64) []float64 {
	h := result.NewHistogram()
	for _, d := range ds {
		_ = h.RecordValue(d.Microseconds())
	}
	out := make([]float64, len(qs))
	for i, q := range qs {
		out[i] = float64(h.ValueAtQuantile(q)) / 1000
	}
	return out
}

// DDcP99 is the closed form for constant arrivals (README): below capacity
// nothing waits, response = S; above it the request due at t waits
// (λ/μ − 1)·t, so the p-quantile over a run of T is S + p·(λ/μ − 1)·T.
func DDcP99(rate float64, T time.Duration) float64 {
	ms := Service.Seconds() * 1000
	if rate <= Capacity {
		return ms
	}
	return ms + 0.99*(rate/Capacity-1)*T.Seconds()*1000
}

// ErlangC is the probability that an arrival waits in M/M/c with offered
// load a = λ ÷ (1/S) (in servers), a < c.
func ErlangC(c int, a float64) float64 {
	term, sum := 1.0, 0.0
	for k := range c {
		if k > 0 {
			term *= a / float64(k)
		}
		sum += term
	}
	top := term * a / float64(c) * float64(c) / (float64(c) - a) // a^c/c! · c/(c−a)
	return top / (sum + top)
}

// MDcP99 is the M/D/c approximation of the README: an arrival waits with
// probability C (Erlang C), and a wait's tail is exponential at twice the
// M/M/c rate (deterministic service halves the mean wait), so
// P(W > t) ≈ C·e^(−2(cμ₁ − λ)t) and p99 = S + ln(C/0.01) ÷ (2(cμ₁ − λ)). +Inf
// at or above capacity.
func MDcP99(rate float64) float64 {
	if rate >= Capacity {
		return math.Inf(1)
	}
	c := ErlangC(Workers, rate*Service.Seconds())
	ms := Service.Seconds() * 1000
	if c <= 0.01 {
		return ms
	}
	return ms + 1000*math.Log(c/0.01)/(2*(Capacity-rate))
}

// Row is one measured point beside its predictions.
type Row struct {
	Arrival  string
	Point    sweep.Point
	Ideal    []float64 // p50, p99 of the ideal queue on the same arrivals, ms
	Formula  float64   // closed-form p99, ms
	Duration time.Duration
}

// newStub starts the model behind no gate, with a wait cap far beyond any
// run, so that above capacity the queue grows as the theory says.
func newStub() (*stub.Server, *url.URL, error) {
	cfg := stub.DefaultConfig()
	cfg.Workers, cfg.Latency, cfg.Policy, cfg.MaxQueueWait = Workers, Service, stub.PolicyNone, time.Hour
	s, err := stub.NewServer(cfg)
	if err != nil {
		return nil, nil, err
	}
	u, err := url.Parse(s.URL + "/predict")
	return s, u, err
}

// Base is a point's run: rate set by the sweep.
func Base(u *url.URL, kind string, d time.Duration) loadtest.Options {
	return loadtest.Options{
		Config:   engine.Config{URL: u, Connections: 512, Timeout: time.Minute, Drain: time.Minute},
		Schedule: schedule.Spec{Kind: kind, Seed: Seed, Duration: d},
	}
}

// Sweep runs the rates with one arrival process against a fresh stub and
// returns each point beside its predictions.
func Sweep(ctx context.Context, kind string, rates []float64, d time.Duration, onPoint func(sweep.Point)) ([]Row, error) {
	s, u, err := newStub()
	if err != nil {
		return nil, err
	}
	defer s.Close()
	sw, err := sweep.Run(ctx, sweep.Options{Base: Base(u, kind, d), Rates: rates, Pause: time.Second, OnPoint: onPoint})
	if err != nil {
		return nil, err
	}
	var rows []Row
	for _, p := range sw.Points {
		spec := Base(u, kind, d).Schedule
		spec.Rate = p.Rate
		offs, err := Offsets(spec)
		if err != nil {
			return nil, err
		}
		r := Row{Arrival: kind, Point: p, Ideal: Quantiles(Ideal(offs, Workers, Service), 50, 99), Duration: d}
		if kind == schedule.Constant {
			r.Formula = DDcP99(p.Rate, d)
		} else {
			r.Formula = MDcP99(p.Rate)
		}
		rows = append(rows, r)
	}
	return rows, nil
}

// Table prints the rows.
func Table(w io.Writer, rows []Row) error {
	t := tablewriter.NewTable(w,
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithAlignment(tw.Alignment{tw.AlignLeft, tw.AlignRight, tw.AlignRight, tw.AlignRight, tw.AlignRight, tw.AlignRight, tw.AlignRight, tw.AlignRight, tw.AlignRight, tw.AlignRight}),
		tablewriter.WithHeaderAlignment(tw.AlignRight),
	)
	t.Header("arrivals", "offered/s", "completed/s", "p50 ideal", "p50 measured", "p99 formula", "p99 ideal", "p99 measured", "service p99", "send delay p99")
	for _, r := range rows {
		res := r.Point.Result
		formula := "∞"
		if !math.IsInf(r.Formula, 1) {
			formula = fmt.Sprintf("%.1f", r.Formula)
		}
		if err := t.Append([]string{r.Arrival, fmt.Sprint(r.Point.Rate), fmt.Sprintf("%.1f", r.Point.Completed()),
			fmt.Sprintf("%.1f", r.Ideal[0]), fmt.Sprintf("%.1f", res.Response.P50),
			formula, fmt.Sprintf("%.1f", r.Ideal[1]), fmt.Sprintf("%.1f", res.Response.P99),
			fmt.Sprintf("%.1f", res.Service.P99), fmt.Sprintf("%.1f", res.SendDelay.P99)}); err != nil {
			return err
		}
	}
	return t.Render()
}

// Search finds the highest constant rate at which response p99 ≤ 200 ms.
func Search(ctx context.Context, d time.Duration, repeats int) (*sweep.Search, error) {
	s, u, err := newStub()
	if err != nil {
		return nil, err
	}
	defer s.Close()
	slo, err := verify.ParseObjective("response.p99<=200ms")
	if err != nil {
		return nil, err
	}
	base := Base(u, schedule.Constant, d)
	base.Objectives = []verify.Objective{slo}
	return sweep.RunSearch(ctx, sweep.SearchOptions{
		Options: sweep.Options{Base: base, Pause: 500 * time.Millisecond, EarlyStop: true},
		From:    20, To: 320, Precision: 0.02, Repeats: repeats,
	})
}

func main() {
	runLength := loadtest.RunLength(flag.CommandLine, "point", 20*time.Second, 4*time.Second)
	short := flag.Lookup("short")
	flag.Parse()
	dur := runLength()
	rates := Rates
	if short.Value.String() == "true" {
		rates = ShortRates
	}
	repeats := 3
	demo.Main("capacity", func(ctx context.Context) error { return run(ctx, os.Stdout, os.Stderr, rates, dur, repeats) })
}

func run(ctx context.Context, stdout, stderr io.Writer, rates []float64, d time.Duration, repeats int) error {
	fmt.Fprintf(stdout, "capacity: model %d workers × %v (capacity %g req/s), %v per point\n\n", Workers, Service, Capacity, d)
	var rows []Row
	for _, kind := range []string{schedule.Constant, schedule.Poisson} {
		rs, err := Sweep(ctx, kind, rates, d, func(p sweep.Point) {
			fmt.Fprintf(stderr, "done: %s %g/s: response p99 %.1f ms\n", kind, p.Rate, p.Result.Response.P99)
		})
		if err != nil {
			return err
		}
		rows = append(rows, rs...)
	}
	if err := Table(stdout, rows); err != nil {
		return err
	}
	fmt.Fprintln(stdout, "\nms; ideal = a FIFO queue of 4 servers × exactly 50 ms fed the run's own arrivals;")
	fmt.Fprintln(stdout, "formula = D/D/4 (constant) or the M/D/4 approximation (poisson) of the README.")
	sd := min(d, 10*time.Second)
	fmt.Fprintf(stdout, "\ncapacity search for response.p99<=200ms, constant arrivals, %v per run, %d run(s) per probe:\n\n", sd, repeats)
	s, err := Search(ctx, sd, repeats)
	if err != nil {
		return err
	}
	f := sweep.SearchFile(s)
	return report.SearchTable(stdout, &f)
}
