package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"net/url"
	"time"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/tw"

	"github.com/openload/openload/internal/engine"
	"github.com/openload/openload/internal/loadtest"
	"github.com/openload/openload/internal/recorder"
	"github.com/openload/openload/internal/report"
	"github.com/openload/openload/internal/sweep"
	"github.com/openload/openload/schedule"
	"github.com/openload/openload/servers/stub"
)

// Batching is experiment 2: a rate sweep against a continuous-batching
// stub. Every answer holds a slot for prefill + (tokens − 1) × ITL, and the
// ITL grows by ITLPerSeq for each other sequence in a slot, so time in a
// slot grows with occupancy until the slots are full: the knee.
type Batching struct {
	Rates     []float64     // offered rates, requests per second
	Duration  time.Duration // of each point
	Slots     int           // --batch-slots
	Prefill   time.Duration // --prefill
	ITL       time.Duration // --itl
	ITLPerSeq time.Duration // --itl-per-seq
	Tokens    int           // output tokens per answer (max_tokens)
	TTFT      time.Duration // the goodput objectives: ttft<=TTFT,tpot<=TPOT
	TPOT      time.Duration
}

// FullSweep is README.md's experiment 2; ShortSweep its CI version.
var (
	FullSweep = Batching{Rates: []float64{6, 12, 18, 24, 30, 36, 42}, Duration: 10 * time.Second,
		Slots: 16, Prefill: 30 * time.Millisecond, ITL: 10 * time.Millisecond, ITLPerSeq: time.Millisecond, Tokens: 21,
		TTFT: 500 * time.Millisecond, TPOT: 20 * time.Millisecond}
	ShortSweep = func() Batching {
		b := FullSweep
		b.Rates, b.Duration = []float64{6, 18, 24, 30, 42}, 2*time.Second
		return b
	}()
)

func (b Batching) String() string {
	return fmt.Sprintf("stub with %d batch slots, prefill %v, %d tokens %v apart + %v per other active sequence; rates %v/s, %v each; goodput against %s",
		b.Slots, b.Prefill, b.Tokens, b.ITL, b.ITLPerSeq, b.Rates, b.Duration, b.objectives())
}

func (b Batching) objectives() string {
	return fmt.Sprintf("ttft<=%v,tpot<=%v", b.TTFT, b.TPOT)
}

// HandPoint is README.md's hand calculation for one offered rate.
type HandPoint struct {
	Rate      float64
	Occupancy float64 // n, mean sequences in a slot
	ITL       float64 // ms, itl + itl_per_seq × (n − 1); TPOT is the same
	Hold      float64 // ms in a slot: prefill + (tokens − 1) × ITL
	Completed float64 // served per s, steady state: the rate below the knee, slots / hold past it
	Tokens    float64 // output tokens per s
	TTFTp99   float64 // ms from the schedule: prefill, plus the queue's wait past the knee
	Goodput   float64 // per s meeting both objectives
}

// Hand works a rate out by Little's law. Below the knee the occupancy is
// n = λ·S(n) with S(n) = P + (T − 1)·(I + d·(n − 1)), linear in n:
// n = λ·(P + (T−1)(I − d)) / (1 − λ(T−1)d). It reaches the slots at the
// knee; past it n = slots, the server completes slots / S(slots) a second,
// and the queue grows by the difference: a request scheduled at t waits
// (λ − μ)·t / μ for a slot, so TTFT p99 ≈ P + (λ − μ)/μ · 0.99·D.
func (b Batching) Hand(rate float64) HandPoint {
	ms := func(d time.Duration) float64 { return float64(d) / 1e6 }
	gaps := float64(b.Tokens - 1)
	p, i, d := ms(b.Prefill)/1e3, ms(b.ITL)/1e3, ms(b.ITLPerSeq)/1e3 // seconds
	n := rate * (p + gaps*(i-d)) / (1 - rate*gaps*d)
	full := n < 0 || n >= float64(b.Slots) // n < 0: no finite occupancy below the slots
	if full {
		n = float64(b.Slots)
	}
	itl := i + d*(n-1)
	hold := p + gaps*itl
	h := HandPoint{Rate: rate, Occupancy: n, ITL: itl * 1e3, Hold: hold * 1e3, Completed: rate, TTFTp99: p * 1e3}
	if full {
		mu := n / hold
		h.Completed = math.Min(rate, mu)
		h.TTFTp99 += 1e3 * math.Max(rate-mu, 0) / mu * 0.99 * b.Duration.Seconds()
	}
	h.Tokens = h.Completed * float64(b.Tokens)
	if h.ITL <= ms(b.TPOT) && h.TTFTp99 <= ms(b.TTFT) {
		h.Goodput = h.Completed
	}
	return h
}

// Knee is the offered rate at which the occupancy reaches the slots.
func (b Batching) Knee() float64 {
	gaps := float64(b.Tokens - 1)
	p, i, d := b.Prefill.Seconds(), b.ITL.Seconds(), b.ITLPerSeq.Seconds()
	s := float64(b.Slots)
	return s / (p + gaps*(i+d*(s-1)))
}

// Sweep runs the rates, lowest first, against one fresh in-process stub.
func (b Batching) Sweep(ctx context.Context, onPoint func(sweep.Point)) (*sweep.Sweep, error) {
	cfg := stub.DefaultConfig()
	cfg.Policy = stub.PolicyNone
	cfg.MaxQueueWait = time.Hour // past the knee requests wait for a slot, none is turned away
	cfg.BatchSlots = b.Slots
	cfg.Prefill, cfg.PrefillPerToken = b.Prefill, 0
	cfg.ITL, cfg.ITLPerSeq = b.ITL, b.ITLPerSeq
	cfg.OutputTokens = b.Tokens
	s, err := stub.NewServer(cfg)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	u, err := url.Parse(s.URL + "/v1/chat/completions")
	if err != nil {
		return nil, err
	}
	objs, err := recorder.ParseRequestObjectives(b.objectives())
	if err != nil {
		return nil, err
	}
	wait := 2*b.Duration + 30*time.Second // longer than any backlog the highest rate makes
	body := fmt.Appendf(nil, `{"model":"stub","messages":[{"role":"user","content":"hi"}],"max_tokens":%d,"stream":true,"stream_options":{"include_usage":true}}`, b.Tokens)
	return sweep.Run(ctx, sweep.Options{
		Base: loadtest.Options{
			Config: engine.Config{
				URL: u, Method: "POST", Body: body,
				Connections: 1024, Timeout: wait, Drain: wait,
				Lean: true, Epoll: true, Stream: true,
			},
			BuiltinStub: fmt.Sprintf("%d batch slots, prefill %v, itl %v + %v per other sequence, policy none",
				b.Slots, b.Prefill, b.ITL, b.ITLPerSeq),
			Schedule:          schedule.Spec{Kind: schedule.Constant, Duration: b.Duration},
			RequestObjectives: objs,
		},
		Rates:   b.Rates,
		Pause:   500 * time.Millisecond,
		OnPoint: onPoint,
	})
}

// PrintSweep writes the hand calculation, then the sweep's table.
func PrintSweep(w io.Writer, b Batching, sw *sweep.Sweep) error {
	fmt.Fprintf(w, "streaming, experiment 2: %s\n\n", b)
	fmt.Fprintf(w, "=== by hand (README.md): knee at %.1f/s, where the occupancy reaches %d slots\n\n", b.Knee(), b.Slots)
	t := tablewriter.NewTable(w,
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithAlignment(tw.Alignment{tw.AlignRight, tw.AlignRight, tw.AlignRight, tw.AlignRight, tw.AlignRight, tw.AlignRight, tw.AlignRight, tw.AlignRight}),
		tablewriter.WithHeaderAlignment(tw.AlignRight),
	)
	t.Header("offered/s", "occupancy n", "ITL = TPOT", "time in slot", "served/s", "goodput/s", "tokens/s", "TTFT p99")
	for _, r := range b.Rates {
		h := b.Hand(r)
		if err := t.Append([]string{fmt.Sprintf("%g", r), fmt.Sprintf("%.2f", h.Occupancy), fmt.Sprintf("%.2f", h.ITL),
			fmt.Sprintf("%.0f", h.Hold), fmt.Sprintf("%.1f", h.Completed), fmt.Sprintf("%.1f", h.Goodput),
			fmt.Sprintf("%.0f", h.Tokens), fmt.Sprintf("%.0f", h.TTFTp99)}); err != nil {
			return err
		}
	}
	if err := t.Render(); err != nil {
		return err
	}
	fmt.Fprintf(w, "\n=== measured (openload sweep --stream --slo-request '%s')\n\n", b.objectives())
	if err := report.SweepTable(w, sweep.SweepFile(sw).Points, sw.Knee); err != nil {
		return err
	}
	if sw.Knee >= 0 {
		fmt.Fprintf(w, "knee: %g/s (%s)\n", sw.Points[sw.Knee].Rate, sw.KneeWhy)
	}
	return nil
}
