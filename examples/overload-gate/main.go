// Command overload-gate runs the overload experiment: a model of 4 workers
// × 50 ms (capacity 80 req/s) behind each gate the stub offers, at 2× and 4×
// its capacity, and prints one table of what users got. See README.md in
// this folder for the reasoning each row is checked against.
//
//	go run ./examples/overload-gate          # 40 s per cell, about 7 minutes
//	go run ./examples/overload-gate -short   # 10 s per cell
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/tw"

	"github.com/openload/openload/examples/internal/demo"
	"github.com/openload/openload/internal/engine"
	"github.com/openload/openload/internal/loadtest"
	"github.com/openload/openload/internal/report"
	"github.com/openload/openload/result"
	"github.com/openload/openload/schedule"
	"github.com/openload/openload/servers/stub"
)

// Row is one gate configuration of the matrix.
type Row struct {
	Name string
	Set  func(*stub.Config)
}

// Rows are the gates compared, in the order of the README.
var Rows = []Row{
	{"admission, belief correct (50ms), completions", func(c *stub.Config) {}},
	{"admission, model 2× slow, believed", func(c *stub.Config) {
		c.Latency, c.BelievedLatency, c.Estimator = 100*time.Millisecond, 50*time.Millisecond, stub.EstimatorBelieved
	}},
	{"admission, model 2× slow, completions", func(c *stub.Config) {
		c.Latency, c.BelievedLatency, c.Estimator = 100*time.Millisecond, 50*time.Millisecond, stub.EstimatorCompletions
	}},
	{"bounded, cap 12", func(c *stub.Config) { c.Policy, c.QueueCap = stub.PolicyBounded, 12 }},
	{"bounded, cap 48", func(c *stub.Config) { c.Policy, c.QueueCap = stub.PolicyBounded, 48 }},
}

// Rates are the offered loads: 2× and 4× the default model's capacity.
var Rates = []float64{160, 320}

// Cell is the measured outcome of one row at one rate.
type Cell struct {
	Row      string
	Rate     float64
	Result   *result.Result
	Stats    stub.Stats
	Model    int64
	Fallback map[string]int64 // by reason
}

// ModelShare is the share of all scheduled requests answered by the model.
func (c Cell) ModelShare() float64 {
	if c.Result.Counts.Scheduled == 0 {
		return 0
	}
	return float64(c.Model) / float64(c.Result.Counts.Scheduled)
}

// RunCell runs one row at one rate for d against a fresh in-process stub.
func RunCell(ctx context.Context, row Row, rate float64, d time.Duration) (Cell, error) {
	cfg := stub.DefaultConfig()
	row.Set(&cfg)
	res, st, err := demo.AgainstStub(ctx, cfg, loadtest.Options{
		Config: engine.Config{
			Connections:  1024,
			Timeout:      10 * time.Second,
			Drain:        5 * time.Second,
			ClassHeaders: []string{"X-Stub-Source", "X-Stub-Reason"},
			ServerTiming: true,
		},
		Schedule: schedule.Spec{Kind: schedule.Constant, Rate: rate, Duration: d},
	})
	if err != nil {
		return Cell{}, err
	}
	c := Cell{Row: row.Name, Rate: rate, Result: res, Stats: st, Model: res.Classes[0].Counts()["model"], Fallback: res.Classes[1].Counts()}
	// By reason: "served" is the model's answer and (none) no answer, neither a fallback.
	delete(c.Fallback, "served")
	delete(c.Fallback, result.NoClass)
	return c, nil
}

// Table prints the cells as one table.
func Table(w io.Writer, cells []Cell) error {
	t := tablewriter.NewTable(w,
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithAlignment(tw.Alignment{tw.AlignRight, tw.AlignLeft, tw.AlignRight, tw.AlignRight, tw.AlignRight, tw.AlignRight, tw.AlignRight, tw.AlignRight, tw.AlignRight, tw.AlignRight}),
	)
	t.Header("req/s", "gate", "p50 ms", "p95 ms", "p99 ms", "model share", "queue-full", "over-budget", "wait-timeout", "errors+unfin.")
	for _, c := range cells {
		r := c.Result
		if err := t.Append([]string{
			fmt.Sprint(c.Rate), c.Row,
			fmt.Sprintf("%.1f", r.Response.P50), fmt.Sprintf("%.1f", r.Response.P95), fmt.Sprintf("%.1f", r.Response.P99),
			fmt.Sprintf("%.1f %%", 100*c.ModelShare()),
			fmt.Sprint(c.Fallback["queue-full"]), fmt.Sprint(c.Fallback["over-budget"]), fmt.Sprint(c.Fallback["wait-timeout"]),
			fmt.Sprint(r.Counts.Errors + r.Counts.Timeouts + r.Counts.Unfinished),
		}); err != nil {
			return err
		}
	}
	return t.Render()
}

func main() {
	runLength := loadtest.RunLength(flag.CommandLine, "cell", 40*time.Second, 10*time.Second)
	flag.Parse()
	dur := runLength()
	demo.Main("overload-gate", func(ctx context.Context) error { return run(ctx, os.Stdout, os.Stderr, dur) })
}

func run(ctx context.Context, stdout, stderr io.Writer, dur time.Duration) error {
	fmt.Fprintf(stdout, "overload-gate: model 4 workers × 50 ms (capacity 80 req/s), %v per cell, %d cells\n\n", dur, len(Rows)*len(Rates))
	var cells []Cell
	for _, rate := range Rates {
		for _, row := range Rows {
			c, err := RunCell(ctx, row, rate, dur)
			if err != nil {
				return err
			}
			fmt.Fprintf(stderr, "done: %v req/s, %s: %s\n", rate, row.Name, report.CountsLine(c.Result.Counts))
			cells = append(cells, c)
			if ctx.Err() != nil {
				break
			}
		}
	}
	if err := Table(stdout, cells); err != nil {
		return err
	}
	fmt.Fprintln(stdout, "\nresponse time = done − scheduled, over all requests (model and fallback answers).")
	fmt.Fprintln(stdout, "model share = model answers ÷ scheduled; fallback counts by X-Stub-Reason.")
	return nil
}
