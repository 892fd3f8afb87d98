package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/openload/openload/limitmath"
)

// runModel runs 'openload model NAME': an analytic prediction, no traffic.
// The one model is poisson (package limitmath).
func runModel(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		return usageErrorIn(stderr, "model", "want a model name: poisson")
	}
	switch args[0] {
	case "poisson":
		return runModelPoisson(args[1:], stdout, stderr)
	case "-h", "--help", "-help", "help": // the one model's help
		return runModelPoisson([]string{"--help"}, stdout, stderr)
	}
	return usageErrorIn(stderr, "model", "unknown model %q (known: poisson)", args[0])
}

const modelUsage = `openload model — analytic predictions, no traffic sent

Usage:
  openload model poisson --rate λ --limit-rps R [--limit-shards n] [--limit-window W]
                         [--limit-routing random|round-robin] [--retries k]
      what a sharded fixed-window rate limiter (openload stub --limit-*) does to Poisson
      traffic: overflow probability, 429s a second, and with retries the attempt rate and
      the share of requests that fail in the end

Examples:
  openload model poisson --rate 135 --limit-rps 150 --limit-shards 6
  openload model poisson --rate 135 --limit-rps 150 --limit-shards 6 --retries 2
  # a run's 429s next to the prediction, against 'openload stub --limit-rps 150 --limit-shards 6'
  openload -rate 135 --arrival poisson --expect-limit 150 --expect-shards 6 http://127.0.0.1:8080/
`

// modelGroups are the groups of modelFlags, in help order.
var modelGroups = []string{groupFlags, groupEnd}

// modelFlags are the flags of 'openload model poisson'.
// b records the field each sets (modelFieldFlags).
func modelFlags(in *limitmath.PoissonInput, help *bool, b fieldBinding) *pflag.FlagSet {
	fs := newFlagSet("openload model poisson")
	inGroup(fs, groupFlags, func() {
		fs.Float64Var(&in.Rate, b.bind("rate", "Rate"), 0, "offered rate λ, requests per second, Poisson arrivals (required)")
		fs.Float64Var(&in.Limit, b.bind("limit-rps", "Limit"), 0, "limit R, requests per second over all shards (required)")
		fs.IntVar(&in.Shards, b.bind("limit-shards", "Shards"), 1, "n independent limiters, each admitting ⌊R·W/n⌋ a window")
		fs.DurationVar(&in.Window, b.bind("limit-window", "Window"), time.Second, "W, the fixed window of every shard")
		fs.StringVar(&in.Routing, b.bind("limit-routing", "Routing"), limitmath.RoutingRandom, "which shard sees a request: random or round-robin")
		fs.IntVar(&in.Retries, b.bind("retries", "Retries"), 0, "k, retries of a rejected request (attempts taken as independent)")
	})
	helpFlag(fs, help)
	return fs
}

func runModelPoisson(args []string, stdout, stderr io.Writer) int {
	var in limitmath.PoissonInput
	var help bool
	fs := modelFlags(&in, &help, fieldBinding{})
	if err := parseFlags(fs, args); err != nil {
		return usageErrorIn(stderr, "model poisson", "%v", err)
	}
	if help {
		fmt.Fprint(stdout, modelUsage+"\n"+flagHelp(fs, modelGroups))
		return exitOK
	}
	if fs.NArg() > 0 {
		return usageErrorIn(stderr, "model poisson", "unexpected argument %q", fs.Arg(0))
	}
	p, err := limitmath.Predict(in)
	if err != nil {
		return usageErrorIn(stderr, "model poisson", "%v", flagError(modelFields, err))
	}
	fmt.Fprintln(stdout, "openload model poisson: a sharded fixed-window rate limiter under Poisson arrivals")
	fmt.Fprintln(stdout, "(derivation: go doc github.com/openload/openload/model)")
	fmt.Fprintln(stdout)
	writeLines(stdout, "", p.Lines())
	fmt.Fprintln(stdout)
	writeLines(stdout, "", formulaLines(p.Input))
	return exitOK
}

func writeLines(w io.Writer, indent string, lines []string) {
	for _, l := range lines {
		fmt.Fprintf(w, "%s%s\n", indent, l)
	}
}

// formulaLines states the formulas behind a prediction, in the words of
// the model's documentation.
func formulaLines(in limitmath.PoissonInput) []string {
	rate := "λ"
	if in.Retries > 0 {
		rate = "λ_eff"
	}
	var lines []string
	switch {
	case in.Shards == 1:
		lines = []string{fmt.Sprintf("formula          the window count N ~ Poisson(μ = %s·W); 429/s = E[(N − L)+] / W", rate)}
	case in.Routing == limitmath.RoutingRoundRobin:
		lines = []string{
			fmt.Sprintf("formula          round-robin spreads a window's N_tot ~ Poisson(%s·W) as evenly as it can:", rate),
			"                 429/s = E[(N_tot − n·L)+] / W, exactly what one limiter of n·L admits",
			"                 (a shard's arrivals are every n-th of the stream, Erlang gaps: not Poisson)",
		}
	default:
		lines = []string{
			fmt.Sprintf("formula          each shard's window count N ~ Poisson(μ = %s·W/n): random routing thins the", rate),
			"                 Poisson stream into n independent Poisson streams; 429/s = n·E[(N − L)+] / W",
		}
	}
	if in.Retries > 0 {
		lines = append(lines,
			"                 retries: λ_eff = λ·(1 + p + … + p^k), p = (429/s) / λ_eff, solved by iteration;",
			"                 it fits retries that land in a later window (backoff ≥ W) and underestimates",
			"                 retries made at once, which land in the window that just overflowed")
	}
	return lines
}

// modelCommand is the 'openload model poisson' command line of in.
func modelCommand(in limitmath.PoissonInput) string {
	routing := in.Routing
	if routing == "" {
		routing = limitmath.RoutingRandom
	}
	parts := []string{"openload model poisson",
		"--rate " + fmt.Sprint(in.Rate), "--limit-rps " + fmt.Sprint(in.Limit),
		fmt.Sprintf("--limit-shards %d", in.Shards), "--limit-window " + in.Window.String(),
		"--limit-routing " + routing}
	if in.Retries > 0 {
		parts = append(parts, fmt.Sprintf("--retries %d", in.Retries))
	}
	return strings.Join(parts, " ")
}
