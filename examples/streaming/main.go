// Command streaming shows time to first token measured from the schedule
// next to time to first token measured from the send, on the stub's
// streaming endpoint saturated under an open load. A server with 4 batch
// slots, each answer holding its slot for 400 ms (50 ms prefill, then 35
// more tokens 10 ms apart), gets 20 requests a second: twice what it can
// serve. The load runs twice:
//
//   - with 4 connections, as a benchmark with a concurrency limit equal to
//     the server's batch does: the requests that cannot be sent wait inside
//     openload, so TTFT from the send stays at the prefill while TTFT from
//     the schedule shows what users waited;
//   - with 64 connections: the requests wait in the server's queue instead,
//     after their send, and both TTFTs show it.
//
// README.md works the figures out by hand; the program prints both
// reports, openload diff's TTFT comparison, and the hand calculation next
// to what it measured.
//
//	go run ./examples/streaming           # 10 s per run, about 40 s
//	go run ./examples/streaming -short    # 3 s per run (what CI runs)
//	go run ./examples/streaming -o DIR    # also keep DIR/pool.json and DIR/queue.json
//	go run ./examples/streaming -sweep    # experiment 2: a rate sweep through a batching server's knee
//	go run ./examples/streaming -sweep -short
//
// The prompt set for --body-file is generated: go generate ./examples/streaming/.
package main

//go:generate sh -c "go run ./prompts > prompts.jsonl"

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"time"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/tw"

	"github.com/openload/openload/examples/internal/demo"
	"github.com/openload/openload/internal/engine"
	"github.com/openload/openload/internal/loadtest"
	"github.com/openload/openload/internal/recorder"
	"github.com/openload/openload/internal/report"
	"github.com/openload/openload/internal/sweep"
	"github.com/openload/openload/result"
	"github.com/openload/openload/schedule"
	"github.com/openload/openload/servers/stub"
)

// Scenario is one saturation experiment.
type Scenario struct {
	Rate     float64       // requests per second
	Duration time.Duration // length of the schedule
	Slots    int           // the stub's batch slots, and the pool run's connections
	Prefill  time.Duration // the stub's time to first token
	ITL      time.Duration // the stub's time between tokens
	Tokens   int           // output tokens per answer (max_tokens)
	SLO      time.Duration // the TTFT objective goodput counts against
}

// Full is README.md's experiment; Short its CI version.
var (
	Full  = Scenario{Rate: 20, Duration: 10 * time.Second, Slots: 4, Prefill: 50 * time.Millisecond, ITL: 10 * time.Millisecond, Tokens: 36, SLO: 500 * time.Millisecond}
	Short = func() Scenario { s := Full; s.Duration = 3 * time.Second; return s }()
)

// hold is how long one answer holds its slot: S = prefill + (tokens − 1) × ITL.
func (sc Scenario) hold() time.Duration {
	return sc.Prefill + time.Duration(sc.Tokens-1)*sc.ITL
}

func (sc Scenario) String() string {
	return fmt.Sprintf("stub with %d batch slots, prefill %v, %d tokens %v apart (each answer holds its slot %v: %.1f answers/s at most), %s/s for %v",
		sc.Slots, sc.Prefill, sc.Tokens, sc.ITL, sc.hold(), float64(sc.Slots)/sc.hold().Seconds(), schedule.FormatRate(sc.Rate), sc.Duration)
}

// body is the one request every run sends.
func (sc Scenario) body() []byte {
	return fmt.Appendf(nil, `{"model":"stub","messages":[{"role":"user","content":"hi"}],"max_tokens":%d,"stream":true,"stream_options":{"include_usage":true}}`, sc.Tokens)
}

// Run runs the scenario with conns connections against a fresh in-process
// stub and returns the result.
func (sc Scenario) Run(ctx context.Context, conns int) (*result.Result, error) {
	cfg := stub.DefaultConfig()
	cfg.Policy = stub.PolicyNone
	cfg.MaxQueueWait = time.Hour // nothing is turned away: the experiment is about waiting
	cfg.BatchSlots = sc.Slots
	cfg.Prefill, cfg.PrefillPerToken = sc.Prefill, 0
	cfg.ITL, cfg.ITLPerSeq = sc.ITL, 0
	s, err := stub.NewServer(cfg)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	u, err := url.Parse(s.URL + "/v1/chat/completions")
	if err != nil {
		return nil, err
	}
	wait := 2*sc.Duration + 30*time.Second // longer than any wait the backlog makes
	res, _, err := loadtest.Run(ctx, loadtest.Options{
		Config: engine.Config{
			URL: u, Method: "POST", Body: sc.body(),
			Connections: conns, Timeout: wait, Drain: wait,
			Lean: true, Epoll: true, Stream: true,
		},
		BuiltinStub:       fmt.Sprintf("%d batch slots, prefill %v, itl %v, policy none", sc.Slots, sc.Prefill, sc.ITL),
		Schedule:          schedule.Spec{Kind: schedule.Constant, Rate: sc.Rate, Duration: sc.Duration},
		RequestObjectives: []recorder.RequestObjective{{Metric: "ttft", Max: sc.SLO}},
	})
	return res, err
}

// Hand is the hand calculation of README.md for one hold time S: with c
// connections and arrivals I apart, request k is sent when request k − c
// is done, so it waits w_k = ⌊k/c⌋ × L with L = S − c·I, and its TTFT from
// the schedule is w_k + prefill; from the send, the prefill.
type Hand struct {
	N, Met                        int64
	Lag                           time.Duration
	P50, P90, P99, Mean, FromSend float64 // ms
}

// handFor works the figures out for hold time s.
func (sc Scenario) handFor(s time.Duration) Hand {
	n := int64(sc.Rate * sc.Duration.Seconds())
	c := int64(sc.Slots)
	interval := time.Duration(float64(time.Second) / sc.Rate)
	lag := s - time.Duration(c)*interval
	pre := float64(sc.Prefill) / 1e6
	lagMs := float64(lag) / 1e6
	// HdrHistogram's percentile q of n values is the value of rank
	// ⌊q·n + ½⌋; rank r holds group ⌊(r − 1)/c⌋.
	at := func(q float64) float64 {
		r := max(int64(q*float64(n)+0.5), 1)
		return pre + lagMs*float64((r-1)/c)
	}
	h := Hand{N: n, Lag: lag, P50: at(0.5), P90: at(0.9), P99: at(0.99), FromSend: pre}
	groups := (n + c - 1) / c
	h.Mean = pre + lagMs*float64(groups-1)/2 // every group holds c requests when c divides n
	for k := range n {
		if time.Duration(k/c)*lag+sc.Prefill <= sc.SLO {
			h.Met++
		}
	}
	return h
}

// metWithin counts the values of a result's histogram metric at or below
// d: the requests a TTFT objective of d would count.
func metWithin(res *result.Result, metric string, d time.Duration) (int64, error) {
	h, err := res.Histogram(metric)
	if err != nil {
		return 0, err
	}
	var n int64
	for _, b := range h.Distribution() {
		if b.To <= d.Microseconds() {
			n += b.Count
		}
	}
	return n, nil
}

// Print writes both reports, the pool run's TTFT diff and the hand
// calculation next to what was measured.
func Print(w io.Writer, sc Scenario, pool, queue *result.Result) error {
	fmt.Fprintf(w, "streaming: %s\n\n", sc)
	fmt.Fprintf(w, "=== %d connections: requests that find every connection busy wait inside openload (openload -c %d --stream)\n\n", sc.Slots, sc.Slots)
	if err := report.Text(w, pool); err != nil {
		return err
	}
	fmt.Fprintf(w, "\n=== 64 connections: requests wait in the server's queue, after their send (openload -c 64 --stream)\n\n")
	if err := report.Text(w, queue); err != nil {
		return err
	}
	fmt.Fprintf(w, "\n=== openload diff pool.json (TTFT part)\n")
	if err := report.TTFTSendVsSchedule(w, pool.Stream.TTFTService, pool.Stream.TTFTResponse); err != nil {
		return err
	}
	fmt.Fprintf(w, "\n=== hand calculation (README.md) next to the measured values\n\n")
	return HandTable(w, sc, pool, queue)
}

// HandTable writes the hand calculation, with the nominal hold time and
// with the one measured (the pool run's service time p50), next to both
// runs' measured TTFT.
func HandTable(w io.Writer, sc Scenario, pool, queue *result.Result) error {
	nominal := sc.handFor(sc.hold())
	measuredS := time.Duration(pool.Service.P50 * float64(time.Millisecond))
	withS := sc.handFor(measuredS)
	t := tablewriter.NewTable(w,
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithAlignment(tw.Alignment{tw.AlignLeft, tw.AlignRight, tw.AlignRight, tw.AlignRight, tw.AlignRight, tw.AlignRight, tw.AlignRight}),
		tablewriter.WithHeaderAlignment(tw.AlignRight),
	)
	t.Header("TTFT, ms", "from send p50", "from schedule p50", "p90", "p99", "mean", fmt.Sprintf("met ttft≤%v", sc.SLO))
	f := func(v float64) string { return fmt.Sprintf("%.0f", v) }
	row := func(name string, h Hand) []string {
		return []string{name, f(h.FromSend), f(h.P50), f(h.P90), f(h.P99), f(h.Mean), fmt.Sprintf("%d of %d", h.Met, h.N)}
	}
	measured := func(name string, res *result.Result) ([]string, error) {
		s := res.Stream
		met := int64(0)
		if s.Goodput != nil {
			met = s.Goodput.Met
		}
		return []string{name, f(s.TTFTService.P50), f(s.TTFTResponse.P50), f(s.TTFTResponse.P90), f(s.TTFTResponse.P99), f(s.TTFTResponse.Mean),
			fmt.Sprintf("%d of %d", met, res.Counts.Scheduled)}, nil
	}
	rows := [][]string{
		row(fmt.Sprintf("by hand, S = %v (L = %v)", sc.hold(), nominal.Lag), nominal),
		row(fmt.Sprintf("by hand, S = %v measured (L = %v)", measuredS.Round(time.Millisecond), withS.Lag.Round(time.Millisecond)), withS),
	}
	for _, m := range []struct {
		name string
		res  *result.Result
	}{{fmt.Sprintf("measured, -c %d", sc.Slots), pool}, {"measured, -c 64", queue}} {
		r, err := measured(m.name, m.res)
		if err != nil {
			return err
		}
		rows = append(rows, r)
	}
	for _, r := range rows {
		if err := t.Append(r); err != nil {
			return err
		}
	}
	if err := t.Render(); err != nil {
		return err
	}
	bySend, err := metWithin(pool, "ttft_service", sc.SLO)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "with -c %d, a TTFT objective of %v counted from the send is met by %d of %d requests; counted from the schedule, by %d\n",
		sc.Slots, sc.SLO, bySend, pool.Counts.Scheduled, pool.Stream.Goodput.Met)
	fmt.Fprintf(w, "S measured = the -c %d run's service time p50 (done − sent), what one answer really held its slot and connection for\n", sc.Slots)
	return nil
}

func main() {
	short := flag.Bool("short", false, "run the scaled-down version: 3 s per run (2 s per sweep point)")
	out := flag.String("o", "", "also write pool.json and queue.json into this directory")
	sweepFlag := flag.Bool("sweep", false, "run experiment 2 instead: a rate sweep against the batching stub")
	flag.Parse()
	if *sweepFlag {
		b := FullSweep
		if *short {
			b = ShortSweep
		}
		demo.Main("streaming", func(ctx context.Context) error { return runSweep(ctx, b, os.Stdout, os.Stderr) })
		return
	}
	sc := Full
	if *short {
		sc = Short
	}
	demo.Main("streaming", func(ctx context.Context) error { return run(ctx, sc, *out, os.Stdout, os.Stderr) })
}

func runSweep(ctx context.Context, b Batching, stdout, stderr io.Writer) error {
	sw, err := b.Sweep(ctx, func(p sweep.Point) {
		fmt.Fprintf(stderr, "streaming: %g/s done, %.1f completed/s\n", p.Rate, p.Completed())
	})
	if err != nil {
		return err
	}
	if ctx.Err() != nil {
		return errors.New("interrupted")
	}
	return PrintSweep(stdout, b, sw)
}

func run(ctx context.Context, sc Scenario, out string, stdout, stderr io.Writer) error {
	fmt.Fprintf(stderr, "streaming: %d connections, %v ...\n", sc.Slots, sc.Duration)
	pool, err := sc.Run(ctx, sc.Slots)
	if err != nil {
		return err
	}
	if ctx.Err() == nil {
		fmt.Fprintf(stderr, "streaming: 64 connections, %v ...\n", sc.Duration)
	}
	queue, err := sc.Run(ctx, 64)
	if err != nil {
		return err
	}
	if ctx.Err() != nil {
		return errors.New("interrupted")
	}
	if out != "" {
		for name, res := range map[string]*result.Result{"pool.json": pool, "queue.json": queue} {
			if err := demo.WriteResult(filepath.Join(out, name), res); err != nil {
				return err
			}
		}
	}
	return Print(stdout, sc, pool, queue)
}
