package main

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/pflag"

	"github.com/openload/openload/internal/retry"
	"github.com/openload/openload/limitmath"
	"github.com/openload/openload/result"
	"github.com/openload/openload/schedule"
)

// retryOptions are the flags of retries (--retries and the --retry-*
// flags, bound to the run's retry.Policy but for --retry-on, parsed by
// validate; package retry documents the policy) and of the limiter
// expectation printed after a run (--expect-*; package limitmath).
type retryOptions struct {
	on string

	expectLimit   float64
	expectShards  int
	expectWindow  time.Duration
	expectRouting string

	expect *limitmath.PoissonInput // set by validateExpect with --expect-limit
}

// retryFlagNames are the flags that mean something only with --retries.
var retryFlagNames = []string{"retry-on", "retry-backoff", "retry-jitter", "retry-budget", "retry-min-per-sec", "retry-budget-window"}

// expectFlagNames are the flags that mean something only with
// --expect-limit.
var expectFlagNames = []string{"expect-shards", "expect-window", "expect-routing"}

// flags registers the retry flags (group Retries), bound to p but for
// --retry-on, and the --expect-* flags (group Model expectations).
func (r *retryOptions) flags(fs *pflag.FlagSet, b, expect fieldBinding, p *retry.Policy) {
	inGroup(fs, groupRetries, func() {
		// --retries is the --expect-* model's k too.
		fs.IntVar(&p.Retries, expect.bind(b.bind("retries", "Retry.Retries"), "Retries"), 0,
			"retry a request answered with a --retry-on status or error up to this many times (0: never); a retried request keeps its schedule, so its response time runs to the final answer")
		fs.StringVar(&r.on, b.bind("retry-on", "Retry.On"), "429,503",
			"with --retries: statuses and error kinds to retry, comma-separated; kinds: refused, reset, timeout, tls, other")
		fs.DurationVar(&p.Backoff, b.bind("retry-backoff", "Retry.Backoff"), 100*time.Millisecond,
			"with --retries: base backoff D; retry i (from 0) waits, after the answer it retries, a time drawn from D·2^i (i capped at 10) per --retry-jitter; the worker waits too, so a backoff counts in --connections")
		fs.StringVar((*string)(&p.Jitter), b.bind("retry-jitter", "Retry.Jitter"), string(retry.JitterFull),
			"with --retries: full (uniform in [0, D·2^i)), equal (D·2^i/2 + uniform in [0, D·2^i/2)) or none (D·2^i); the draws are a function of --seed and the request, so runs reproduce")
		fs.Float64Var(&p.Budget, b.bind("retry-budget", "Retry.Budget"), 0.1,
			"with --retries: over every --retry-budget-window, retries ≤ this share of first attempts (in [0, 1]) + --retry-min-per-sec × the window; a retry past it is refused and the request ends with its last answer")
		fs.Float64Var(&p.MinPerSec, b.bind("retry-min-per-sec", "Retry.MinPerSec"), 10,
			"with --retries: retries a second allowed on top of --retry-budget (× the window: at least 1)")
		fs.DurationVar(&p.Window, b.bind("retry-budget-window", "Retry.Window"), 10*time.Second,
			"with --retries: the sliding window of the retry budget")
	})
	inGroup(fs, groupExpect, func() {
		fs.Float64Var(&r.expectLimit, expect.bind("expect-limit", "Limit"), 0,
			"after the run, print the 429s a second observed (every attempt) next to what the Poisson limiter model predicts for this limit R, requests/s over all shards, at --rate (see 'openload model poisson')")
		fs.IntVar(&r.expectShards, expect.bind("expect-shards", "Shards"), 1, "with --expect-limit: the limiter's independent shards n")
		fs.DurationVar(&r.expectWindow, expect.bind("expect-window", "Window"), time.Second, "with --expect-limit: the limiter's fixed window W")
		fs.StringVar(&r.expectRouting, expect.bind("expect-routing", "Routing"), limitmath.RoutingRandom, "with --expect-limit: how requests reach the shards, random or round-robin")
	})
}

// validate checks what is about the command line (--retry-* flags given
// without --retries), parses --retry-on into o.run.Retry and gives the
// policy --seed. The policy's values are retry.Policy.Validate's to check.
func (r *retryOptions) validate(fs *pflag.FlagSet, o *loadOptions) error {
	p := &o.run.Retry
	p.Seed = o.run.Schedule.Seed
	if p.Retries == 0 {
		for _, name := range retryFlagNames {
			if fs.Changed(name) {
				return fmt.Errorf("--%s applies only with --retries 1 or more", name)
			}
		}
		return nil
	}
	on, err := retry.ParseOn(r.on)
	if err != nil {
		return fmt.Errorf("--retry-on %q: %v", r.on, err)
	}
	p.On = on
	return nil
}

// validateExpect checks the --expect-* flags and sets r.expect; it comes
// after the run's own values were checked, as the model reads --rate and
// --retries.
func (r *retryOptions) validateExpect(fs *pflag.FlagSet, o *loadOptions) error {
	if !fs.Changed("expect-limit") {
		for _, name := range expectFlagNames {
			if fs.Changed(name) {
				return fmt.Errorf("--%s applies only with --expect-limit", name)
			}
		}
		return nil
	}
	switch {
	case o.run.Closed:
		return errors.New("--expect-limit predicts for Poisson arrivals at --rate: not for a --closed run")
	case o.replay.arrivals != "":
		return errors.New("--expect-limit predicts for Poisson arrivals at --rate: not for --arrivals")
	}
	in := limitmath.PoissonInput{Rate: o.run.Schedule.Rate, Limit: r.expectLimit, Shards: r.expectShards, Window: r.expectWindow,
		Routing: r.expectRouting, Retries: o.run.Retry.Retries}
	if err := in.Validate(); err != nil {
		return flagError(expectFields, err)
	}
	r.expect = &in
	return nil
}

// minBackoff is the shortest wait before a first retry under p.
func minBackoff(p retry.Policy) time.Duration {
	switch p.Jitter {
	case retry.JitterNone:
		return p.Backoff
	case retry.JitterEqual:
		return p.Backoff / 2
	}
	return 0
}

// printExpectation writes, after the report of a run with --expect-limit,
// the model's prediction for the run's rate next to what the run observed:
// 429 answers (every attempt) ÷ the run's duration, and with retries the
// attempts a second. It writes nothing without --expect-limit.
func (r *retryOptions) printExpectation(w io.Writer, o *loadOptions, res *result.Result) {
	if r.expect == nil {
		return
	}
	p, err := limitmath.Predict(*r.expect)
	if err != nil { // validated; cannot happen
		fmt.Fprintf(w, "\nlimiter  no prediction: %v\n", err)
		return
	}
	spec := o.run.Schedule
	d := spec.Duration.Seconds()
	fmt.Fprintf(w, "\nlimiter  the model's prediction for this run (%s):\n", modelCommand(*r.expect))
	writeLines(w, "  ", p.Lines())
	// A Poisson schedule's own rate differs from --rate by about
	// √(rate ÷ duration); the limiter saw the schedule's, so the
	// prediction is also given at it.
	var own *limitmath.Prediction
	if spec.Kind == schedule.Poisson && res.Counts.Scheduled > 0 {
		in := *r.expect
		in.Rate = float64(res.Counts.Scheduled) / d
		if q, err := limitmath.Predict(in); err == nil {
			own = &q
		}
	}
	n429 := res.AttemptStatus(429)
	fmt.Fprintf(w, "observed 429/s %.3f (%d answers 429, every attempt counted, ÷ %v)\n", float64(n429)/d, n429, spec.Duration)
	pred := func(f func(limitmath.Prediction) float64) string {
		s := fmt.Sprintf("%.3f at --rate %s/s", f(p), schedule.FormatRate(spec.Rate))
		if own != nil {
			s += fmt.Sprintf(" · %.3f at this schedule's own rate, %.3f/s (%d arrivals ÷ %v)", f(*own), own.Input.Rate, res.Counts.Scheduled, spec.Duration)
		}
		return s
	}
	fmt.Fprintf(w, "         predicted %s\n", pred(func(p limitmath.Prediction) float64 { return p.RejectPerSec }))
	if res.Retries != nil {
		att := res.Retries.FirstAttempts + res.Retries.RetriesSent
		fmt.Fprintf(w, "observed attempts/s %.3f (%d first attempts + %d retries, ÷ %v)\n", float64(att)/d, res.Retries.FirstAttempts, res.Retries.RetriesSent, spec.Duration)
		fmt.Fprintf(w, "         predicted %s\n", pred(func(p limitmath.Prediction) float64 { return p.EffectiveRate }))
	}
	if spec.Kind != schedule.Poisson {
		fmt.Fprintf(w, "note     the model assumes Poisson arrivals; this run's were %s, which overflow a window less often\n", spec.Kind)
	}
	if pol := o.run.Retry; pol.Retries > 0 && minBackoff(pol) < r.expect.Window {
		fmt.Fprintf(w, "note     retries can come back within the window that rejected them (backoff from %v, window %v): the model, which takes attempts as independent, then underestimates\n",
			minBackoff(pol), r.expect.Window)
	}
	if res.Retries != nil && res.Retries.RefusedByBudget > 0 {
		fmt.Fprintf(w, "note     the retry budget refused %d retries; the model assumes every rejected request retries\n", res.Retries.RefusedByBudget)
	}
	if res.Interrupted {
		fmt.Fprintln(w, "note     the run was interrupted: the observed rates are divided by the whole --duration")
	}
}
