// Command deadline-gate shows what a deadline gate trades: a model of 4
// workers × 50 ms (capacity 80 req/s) behind the stub's default admission
// gate, offered 160 req/s (2× capacity, Poisson, seed 1), with the deadline
// gate at T = 50 … 300 ms. For each T it prints the share of requests
// dropped, the dwell of the answers sent (p99 and max, server-reported),
// their response time (client-side) and the violations: answers sent with a
// dwell above T, which must be 0. Then it replays the recorded arrivals of
// one run against a changed gate, and shows what a misplaced gate does
// under stalls. See README.md in this folder.
//
//	go run ./examples/deadline-gate          # 20 s per run, 9 runs, about 3 minutes
//	go run ./examples/deadline-gate -short   # 3 s per run
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

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/tw"

	"github.com/openload/openload/examples/internal/demo"
	"github.com/openload/openload/internal/engine"
	"github.com/openload/openload/internal/loadtest"
	"github.com/openload/openload/internal/recorder"
	"github.com/openload/openload/result"
	"github.com/openload/openload/schedule"
	"github.com/openload/openload/servers/stub"
)

// The fixed overload: 2× the default model's capacity.
const (
	Rate = 160.0
	Seed = 1
)

// StampHeader carries each request's scheduled time (openload's
// --stamp-header); the gate reads the arrival from it (the stub's
// --arrival-stamp header:X-Arrival), so dwell runs from the moment the
// user arrived, any delay in openload included.
const StampHeader = "X-Arrival"

// Deadlines are the values of T swept.
var Deadlines = []time.Duration{50 * time.Millisecond, 75 * time.Millisecond, 100 * time.Millisecond,
	150 * time.Millisecond, 200 * time.Millisecond, 300 * time.Millisecond}

// The replay: the arrivals recorded in the run at RecordT are replayed
// against a gate at ReplayT.
const (
	RecordT = 150 * time.Millisecond
	ReplayT = 100 * time.Millisecond
)

// Stalls of the position demonstration: 250 ms every second, from 300 ms
// after the first request (the stub's --stall-at, --stall-for,
// --stall-every), with the gate at StallT.
const (
	StallAt    = 300 * time.Millisecond
	StallFor   = 250 * time.Millisecond
	StallEvery = time.Second
	StallT     = 100 * time.Millisecond
)

// Gate is one configuration of the stub's deadline gate.
type Gate struct {
	Deadline time.Duration
	Position stub.DeadlinePosition
	Stall    bool // inject the stalls above
}

// Config is the stub's configuration for g: the default model and
// admission gate, the deadline gate reading openload's stamp.
func (g Gate) Config() stub.Config {
	cfg := stub.DefaultConfig()
	cfg.Deadline = g.Deadline
	if g.Position != "" {
		cfg.DeadlinePosition = g.Position // else last, the default
	}
	cfg.ArrivalStamp = "header:" + StampHeader
	if g.Stall {
		cfg.StallAt, cfg.StallFor, cfg.StallEvery = StallAt, StallFor, StallEvery
	}
	return cfg
}

func (g Gate) String() string {
	s := "last"
	if g.Position != "" {
		s = string(g.Position)
	}
	if g.Stall {
		s += fmt.Sprintf(", stalls %v every %v", StallFor, StallEvery)
	}
	return s
}

// Outcome is what one run measured.
type Outcome struct {
	Label  string
	Gate   Gate
	Result *result.Result
	Stats  stub.Stats // the stub's /stats after the run
	// Sent counts the answers sent (status 200), Dropped the answers the
	// gate dropped (503), Model the model answers among those sent.
	Sent, Dropped, Model int64
	// Response is the response time (done − scheduled) of the answers
	// sent, from the per-request log: what their users waited.
	Response result.Percentiles
	Log      string // the per-request log (--log)
}

// Violations counts the answers sent whose Server-Timing dwell exceeded
// T, and Checked the answers that reported a dwell (openload's
// --dwell-bound T).
func (o Outcome) Violations() int64 { return o.Result.DwellBound.Over }

// Checked is the number of answers checked against T.
func (o Outcome) Checked() int64 { return o.Result.DwellBound.Answers }

// StubBoundHeld reports the stub's own view: the largest dwell it sent
// is ≤ T.
func (o Outcome) StubBoundHeld() bool {
	return o.Stats.Deadline.MaxDwellSentMs <= float64(o.Gate.Deadline)/float64(time.Millisecond)
}

// Share is n over all scheduled requests.
func (o Outcome) Share(n int64) float64 {
	if o.Result.Counts.Scheduled == 0 {
		return 0
	}
	return float64(n) / float64(o.Result.Counts.Scheduled)
}

// Spec is the sweep's schedule: Poisson at Rate for d, seeded, so every
// run of the sweep sees the same arrivals.
func Spec(d time.Duration) schedule.Spec {
	return schedule.Spec{Kind: schedule.Poisson, Rate: Rate, Duration: d, Seed: Seed}
}

// Run runs one gate against a fresh in-process stub, with the schedule
// spec describes or, when sched is not nil, sched (a replay). The
// per-request log goes to logPath.
func Run(ctx context.Context, label string, g Gate, spec schedule.Spec, sched schedule.Schedule, logPath string) (Outcome, error) {
	f, err := os.Create(logPath)
	if err != nil {
		return Outcome{}, err
	}
	defer f.Close()
	res, st, err := demo.AgainstStub(ctx, g.Config(), loadtest.Options{
		Config: engine.Config{
			Connections:  1024,
			Timeout:      10 * time.Second,
			Drain:        5 * time.Second,
			ClassHeaders: []string{"X-Stub-Source"},
			ServerTiming: true,
			StampHeader:  StampHeader,
		},
		Schedule:   spec,
		Sched:      sched,
		Log:        recorder.NewLogWriter(f),
		DwellBound: g.Deadline,
	})
	if err != nil {
		return Outcome{}, err
	}
	o := Outcome{Label: label, Gate: g, Result: res, Stats: st, Log: logPath,
		Sent: res.Status["200"], Dropped: res.Status["503"], Model: res.Classes[0].Counts()[string(stub.SourceModel)]}
	if o.Response, err = sentResponse(logPath); err != nil {
		return Outcome{}, err
	}
	return o, nil
}

// sentResponse summarises the response time of the 200s in a log.
func sentResponse(path string) (result.Percentiles, error) {
	f, err := os.Open(path)
	if err != nil {
		return result.Percentiles{}, err
	}
	defer f.Close()
	h := result.NewHistogram()
	lr := recorder.NewLogReader(f, path)
	for lr.Scan() {
		if e := lr.Entry(); e.Status == 200 {
			_ = h.RecordValue(min(max(int64((e.Done-e.Scheduled)/time.Microsecond), 0), result.HistHighest))
		}
	}
	return result.Summarize(h), lr.Err()
}

// Table prints outcomes, one row each.
func Table(w io.Writer, outs []Outcome) error {
	right := tw.AlignRight
	t := tablewriter.NewTable(w,
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithAlignment(tw.Alignment{tw.AlignLeft, right, tw.AlignLeft, right, right, right, right, right, right, right, right, right, right}),
	)
	t.Header("run", "T ms", "gate", "scheduled", "dropped", "model sent", "dwell p99", "dwell max", "stub max dwell", "resp p99", "resp max", "checked", "violations")
	for _, o := range outs {
		r := o.Result
		if err := t.Append([]string{
			o.Label, fmt.Sprint(o.Gate.Deadline.Milliseconds()), o.Gate.String(),
			fmt.Sprint(r.Counts.Scheduled),
			fmt.Sprintf("%.1f %%", 100*o.Share(o.Dropped)), fmt.Sprintf("%.1f %%", 100*o.Share(o.Model)),
			fmt.Sprintf("%.1f", r.DwellBound.Dwell.P99), fmt.Sprintf("%.1f", r.DwellBound.Dwell.Max),
			fmt.Sprintf("%.1f", o.Stats.Deadline.MaxDwellSentMs),
			fmt.Sprintf("%.1f", o.Response.P99), fmt.Sprintf("%.1f", o.Response.Max),
			fmt.Sprint(o.Checked()), fmt.Sprint(o.Violations()),
		}); err != nil {
			return err
		}
	}
	return t.Render()
}

// Consistent checks what every run must show, whatever the load: every
// request accounted for, openload's answers and drops equal to the stub's,
// and every answer checked. It returns the first problem.
func Consistent(o Outcome) error {
	r, st := o.Result, o.Stats
	switch {
	case !r.Counts.Balanced() || r.Counts.Completed != r.Counts.Scheduled:
		return fmt.Errorf("%s: counts %+v: every request should complete", o.Label, r.Counts)
	case o.Sent != st.Deadline.Sent || o.Dropped != st.Deadline.Dropped.Total:
		return fmt.Errorf("%s: openload saw %d sent and %d dropped, the stub %d and %d", o.Label, o.Sent, o.Dropped, st.Deadline.Sent, st.Deadline.Dropped.Total)
	case o.Sent+o.Dropped != r.Counts.Completed:
		return fmt.Errorf("%s: %d sent + %d dropped ≠ %d completed", o.Label, o.Sent, o.Dropped, r.Counts.Completed)
	case o.Checked() != o.Sent || r.DwellBound.Unreported != 0:
		return fmt.Errorf("%s: %d answers checked of %d sent (%d without a dwell)", o.Label, o.Checked(), o.Sent, r.DwellBound.Unreported)
	}
	return nil
}

func main() {
	runLength := loadtest.RunLength(flag.CommandLine, "run", 20*time.Second, 3*time.Second)
	logs := flag.String("logs", "", "keep the per-request logs in this folder (default: a temporary folder, removed)")
	flag.Parse()
	dur := runLength()
	demo.Main("deadline-gate", func(ctx context.Context) error { return run(ctx, os.Stdout, dur, *logs) })
}

func run(ctx context.Context, w io.Writer, dur time.Duration, logs string) error {
	if logs == "" {
		dir, err := os.MkdirTemp("", "deadline-gate")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		logs = dir
	} else if err := os.MkdirAll(logs, 0o755); err != nil {
		return err
	}
	spec := Spec(dur)
	fmt.Fprintf(w, "deadline-gate: model 4 workers × 50 ms (capacity 80 req/s) behind the admission gate (100 ms budget);\n")
	fmt.Fprintf(w, "Poisson %v req/s (2× capacity, seed %d), %v per run; openload stamps each request's scheduled time in %s\n", Rate, Seed, dur, StampHeader)
	fmt.Fprintf(w, "and the gate measures dwell from it (--arrival-stamp header:%s)\n\n", StampHeader)

	var all []Outcome
	do := func(label string, g Gate, sched schedule.Schedule, logName string) (Outcome, error) {
		o, err := Run(ctx, label, g, spec, sched, filepath.Join(logs, logName))
		if err != nil {
			return o, err
		}
		if err := ctx.Err(); err != nil {
			return o, err
		}
		fmt.Fprintf(os.Stderr, "done: %s, T %v, gate %s: scheduled %d, sent %d, dropped %d, violations %d\n",
			label, g.Deadline, g, o.Result.Counts.Scheduled, o.Sent, o.Dropped, o.Violations())
		all = append(all, o)
		return o, Consistent(o)
	}

	// 1. The sweep.
	var sweep []Outcome
	var recorded Outcome
	for _, T := range Deadlines {
		o, err := do("sweep", Gate{Deadline: T}, nil, fmt.Sprintf("sweep-%dms.csv", T.Milliseconds()))
		if err != nil {
			return err
		}
		sweep = append(sweep, o)
		if T == RecordT {
			recorded = o
		}
	}
	fmt.Fprintln(w, "1. the sweep: the deadline gate last, T from 50 to 300 ms")
	if err := Table(w, sweep); err != nil {
		return err
	}

	// 2. The replay of one run's recorded arrivals against a changed gate.
	replay, err := schedule.OpenReplay(recorded.Log, schedule.ReplayOptions{Speed: 1})
	if err != nil {
		return err
	}
	rep, err := do("replay", Gate{Deadline: ReplayT}, replay, "replay.csv")
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "\n2. replay: the arrivals of the T = %v run, read from its --log (%d arrivals), replayed with --arrivals against T = %v\n",
		RecordT, replay.Len(), ReplayT)
	if err := Table(w, []Outcome{rep}); err != nil {
		return err
	}
	fmt.Fprintf(w, "   replay check: %s\n", checkMessage(rep.Result, "schedule"))

	// 3. The gate's position under stalls.
	last, err := do("position", Gate{Deadline: StallT, Stall: true}, nil, "stall-last.csv")
	if err != nil {
		return err
	}
	early, err := do("position", Gate{Deadline: StallT, Position: stub.PositionBeforeStall, Stall: true}, nil, "stall-before.csv")
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "\n3. the gate's position: stalls of %v every %v from %v, T = %v, the gate last vs checked before the stall\n",
		StallFor, StallEvery, StallAt, StallT)
	if err := Table(w, []Outcome{last, early}); err != nil {
		return err
	}

	// The bound, over every run.
	var checkedLast, violLast int64
	runsLast, stubLast := 0, true
	for _, o := range all {
		if o.Gate.Position == stub.PositionBeforeStall {
			continue
		}
		runsLast++
		checkedLast += o.Checked()
		violLast += o.Violations()
		stubLast = stubLast && o.StubBoundHeld()
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "dropped = answers the gate dropped (503) ÷ scheduled · model sent = model answers sent ÷ scheduled")
	fmt.Fprintln(w, "dwell p99/max = Server-Timing dwell of the answers sent (200s; openload's dwell_bound.dwell, drops left out), ms")
	fmt.Fprintln(w, "stub max dwell = the stub's /stats max_dwell_sent_ms · resp = response time (done − scheduled) of the 200s, client-side, ms")
	fmt.Fprintln(w, "checked = answers (200s) whose dwell openload compared with T (--dwell-bound T) · violations = those with dwell > T")
	fmt.Fprintf(w, "\ngate last: %d answers sent and checked over %d runs, %d violations; the stub's max_dwell_sent_ms ≤ T in every run: %v\n",
		checkedLast, runsLast, violLast, stubLast)
	fmt.Fprintf(w, "gate before the stall: %d of %d answers sent with dwell > T (max %.1f ms, stub %.1f ms)\n",
		early.Violations(), early.Checked(), early.Result.DwellBound.Dwell.Max, early.Stats.Deadline.MaxDwellSentMs)
	if violLast != 0 || !stubLast {
		return errors.New("the bound did not hold with the gate last")
	}
	return nil
}

func checkMessage(res *result.Result, name string) string {
	if c, ok := res.Check(name); ok {
		return c.Severity + ": " + c.Message
	}
	return "no " + name + " check"
}
