// Command coordinated-omission shows coordinated omission on the stub model
// server: a 1 ms model behind one connection, 100 requests per second for
// 100 s, and one 10 s stall in the middle. It runs the same load twice, as a
// closed loop (one user paced to the rate, what most load tools do) and as
// openload's open model, and prints both reports, the two runs side by side,
// the open run's service time next to its response time, and the hand
// calculation of README.md next to what was measured.
//
//	go run ./examples/coordinated-omission          # 100 s per mode, about 3.5 minutes
//	go run ./examples/coordinated-omission -short   # 200/s for 3 s, 1 s stall: the CI version
//	go run ./examples/coordinated-omission -o DIR   # also write DIR/closed.json and DIR/open.json
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/openload/openload/examples/internal/demo"
	"github.com/openload/openload/internal/engine"
	"github.com/openload/openload/internal/loadtest"
	"github.com/openload/openload/internal/report"
	"github.com/openload/openload/result"
	"github.com/openload/openload/schedule"
	"github.com/openload/openload/servers/stub"
)

// Scenario is one stall experiment.
type Scenario struct {
	Rate     float64       // requests per second, both modes
	Duration time.Duration // length of the schedule
	Latency  time.Duration // model latency of the stub (one worker)
	StallAt  time.Duration // the stall starts this long after the stub's first request
	StallFor time.Duration // stall length
}

// Full is the demonstration of README.md: stall [45 s, 55 s) of a 100 s run.
var Full = Scenario{Rate: 100, Duration: 100 * time.Second, Latency: time.Millisecond, StallAt: 45 * time.Second, StallFor: 10 * time.Second}

// Short is the scaled-down version for CI: stall [1 s, 2 s) of a 3 s run at
// 200/s.
var Short = Scenario{Rate: 200, Duration: 3 * time.Second, Latency: time.Millisecond, StallAt: time.Second, StallFor: time.Second}

func (sc Scenario) String() string {
	return fmt.Sprintf("stub model 1 worker × %v, %s/s for %v over one connection, one %v stall from %v",
		sc.Latency, schedule.FormatRate(sc.Rate), sc.Duration, sc.StallFor, sc.StallAt)
}

// Run runs the scenario in one mode, closed or open, against a fresh
// in-process stub (so that each run has its own stall clock) and returns
// the result. Both modes use one connection: the closed loop has one user,
// the open model one connection, so requests due during the stall wait
// inside openload and that wait is send delay.
func (sc Scenario) Run(ctx context.Context, closed bool) (*result.Result, error) {
	cfg := stub.DefaultConfig()
	cfg.Workers = 1
	cfg.Latency = sc.Latency
	cfg.Policy = stub.PolicyNone
	cfg.MaxQueueWait = time.Hour // nothing is turned away: the demonstration is about waiting
	cfg.StallAt = sc.StallAt
	cfg.StallFor = sc.StallFor
	res, _, err := demo.AgainstStub(ctx, cfg, loadtest.Options{
		Config: engine.Config{
			Connections: 1,
			Timeout:     sc.StallFor + 30*time.Second, // longer than the stall: the stalled request completes
			Drain:       sc.StallFor + 30*time.Second,
		},
		BuiltinStub: fmt.Sprintf("1 worker × %v, policy none, one %v stall %v after its first request", sc.Latency, sc.StallFor, sc.StallAt),
		Schedule:    schedule.Spec{Kind: schedule.Constant, Rate: sc.Rate, Duration: sc.Duration},
		Closed:      closed,
	})
	return res, err
}

// Print writes both reports, the diff of the two runs, the open run's
// service vs response time and the hand calculation next to the measured
// values.
func Print(w io.Writer, sc Scenario, closed, open *result.Result) error {
	fmt.Fprintf(w, "coordinated omission: %s\n\n", sc)
	fmt.Fprintf(w, "=== closed loop: 1 user paced to %s/s, skipping the slots it misses while it waits (openload --closed -c 1)\n\n", schedule.FormatRate(sc.Rate))
	if err := report.Text(w, closed); err != nil {
		return err
	}
	fmt.Fprintf(w, "\nresult: %s\n", report.Verdict(closed.Checks))
	fmt.Fprintf(w, "\n=== open model: every request at its scheduled time, one connection (openload -c 1)\n\n")
	if err := report.Text(w, open); err != nil {
		return err
	}
	fmt.Fprintf(w, "\nresult: %s\n", report.Verdict(open.Checks))

	fmt.Fprintf(w, "\n=== openload diff closed.json open.json\n\n")
	if err := report.Compare(w, "response", "closed.json", closed, closed.Response, "open.json", open, open.Response); err != nil {
		return err
	}
	fmt.Fprintf(w, "\n=== openload diff open.json\n\n")
	if err := report.ServiceVsResponse(w, "open.json", open, open.Service, open.Response); err != nil {
		return err
	}
	fmt.Fprintf(w, "\n=== hand calculation (README.md) next to the measured values\n\n")
	return HandTable(w, sc, closed, open)
}

func main() {
	short := flag.Bool("short", false, "run the scaled-down version: 200/s for 3 s with a 1 s stall")
	out := flag.String("o", "", "also write closed.json and open.json into this directory")
	flag.Parse()
	sc := Full
	if *short {
		sc = Short
	}
	demo.Main("coordinated-omission", func(ctx context.Context) error { return run(ctx, sc, *out, os.Stdout, os.Stderr) })
}

func run(ctx context.Context, sc Scenario, out string, stdout, stderr io.Writer) error {
	if out != "" {
		// Before the runs, not after: a directory that cannot be made
		// fails now rather than after both runs' minutes.
		if err := os.MkdirAll(out, 0o755); err != nil {
			return err
		}
	}
	fmt.Fprintf(stderr, "coordinated-omission: closed loop, %v ...\n", sc.Duration)
	closed, err := sc.Run(ctx, true)
	if err != nil {
		return err
	}
	if ctx.Err() == nil {
		fmt.Fprintf(stderr, "coordinated-omission: open model, %v ...\n", sc.Duration)
	}
	open, err := sc.Run(ctx, false)
	if err != nil {
		return err
	}
	if ctx.Err() != nil {
		return errors.New("interrupted")
	}
	if out != "" {
		for name, res := range map[string]*result.Result{"closed.json": closed, "open.json": open} {
			if err := demo.WriteResult(filepath.Join(out, name), res); err != nil {
				return err
			}
		}
	}
	return Print(stdout, sc, closed, open)
}
