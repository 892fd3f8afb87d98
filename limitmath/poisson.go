package limitmath

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/openload/openload/field"
)

// Routings: how requests are spread over the limiter's shards.
const (
	RoutingRandom     = "random"      // each request to a shard drawn uniformly
	RoutingRoundRobin = "round-robin" // request j to shard j mod n
)

// Routings lists the routing names Validate accepts ("" means random).
var Routings = []string{RoutingRandom, RoutingRoundRobin}

// Bounds that keep a prediction fast: PoissonTail walks O(√μ) terms, and
// the retry iteration calls it once a step.
const (
	// MaxWindowCount bounds the mean number of attempts a window, λ·W·(k+1).
	MaxWindowCount = 1e9
	// MaxRetries bounds the retries per request.
	MaxRetries = 100
	// MaxShards bounds the shards, which keeps n·L within an int.
	MaxShards = 1000000
	// MaxIterations bounds the retry fixed-point iteration.
	MaxIterations = 10000
	// Tolerance is the relative step at which the iteration stops.
	Tolerance = 1e-9
)

// PoissonInput describes the traffic and the limiter.
type PoissonInput struct {
	Rate    float64       // offered rate λ, requests/s, Poisson
	Limit   float64       // limit R, requests/s over all shards
	Shards  int           // n, each with its own windows
	Window  time.Duration // W, the length of a fixed window
	Routing string        // RoutingRandom ("" too) or RoutingRoundRobin
	Retries int           // k, retries of a rejected request
}

// FieldError is the error Validate returns: the field refused (its Go
// name, e.g. "Shards"), its value, and why.
type FieldError = field.Error

// PerShardAllowance is the requests a shard admits a window:
// L = ⌊R·W/n⌋, where a value within 1e-9 of an integer counts as that
// integer (so 0.7/s × 10s / 7 allows 1, not 0). Limiters that claim to
// follow this model should use it.
func PerShardAllowance(limit float64, shards int, window time.Duration) int {
	x := limit * window.Seconds() / float64(shards)
	if r := math.Round(x); math.Abs(x-r) < 1e-9 {
		return int(r)
	}
	return int(math.Floor(x))
}

// Validate checks the input and returns the first problem as a
// *FieldError.
func (in PoissonInput) Validate() error {
	switch {
	case math.IsNaN(in.Rate) || math.IsInf(in.Rate, 0) || in.Rate <= 0:
		return field.Errorf("Rate", in.Rate, "{Rate} must be a finite number > 0, got %v", in.Rate)
	case math.IsNaN(in.Limit) || math.IsInf(in.Limit, 0) || in.Limit <= 0:
		return field.Errorf("Limit", in.Limit, "{Limit} must be a finite number > 0, got %v", in.Limit)
	case in.Shards < 1 || in.Shards > MaxShards:
		return field.Errorf("Shards", in.Shards, "{Shards} must be between 1 and %d, got %d", MaxShards, in.Shards)
	case in.Window <= 0:
		return field.Errorf("Window", in.Window, "{Window} must be > 0, got %v", in.Window)
	case in.Retries < 0 || in.Retries > MaxRetries:
		return field.Errorf("Retries", in.Retries, "{Retries} must be between 0 and %d, got %d", MaxRetries, in.Retries)
	}
	switch in.Routing {
	case "", RoutingRandom, RoutingRoundRobin:
	default:
		return field.Errorf("Routing", in.Routing, "{Routing} %q: unknown routing (known: %s)", in.Routing, strings.Join(Routings, ", "))
	}
	w := in.Window.Seconds()
	if rw := in.Limit * w; rw > MaxWindowCount*float64(in.Shards) {
		return field.Errorf("Limit", in.Limit, "{Limit}×window %s over {Shards} %d is more than %s a shard window: too large to model",
			num(rw), in.Shards, num(MaxWindowCount))
	} else if PerShardAllowance(in.Limit, in.Shards, in.Window) < 1 {
		return field.Errorf("Shards", in.Shards, "{Shards} %d is more than {Limit}×window %s: each shard would allow 0 requests",
			in.Shards, num(rw))
	}
	if m := in.Rate * w * float64(in.Retries+1); m > MaxWindowCount {
		return field.Errorf("Rate", in.Rate, "{Rate}×window×({Retries}+1) %s is more than %s attempts a window: too large to model",
			num(m), num(MaxWindowCount))
	}
	return nil
}

// logPoisson is ln P(N = k) for N ~ Poisson(μ), μ > 0.
func logPoisson(mu float64, k int) float64 {
	lg, _ := math.Lgamma(float64(k) + 1)
	return -mu + float64(k)*math.Log(mu) - lg
}

// tailEps is the relative size below which a term no longer changes a sum.
const tailEps = 1e-17

// PoissonTail returns, for N ~ Poisson(mu), the overflow probability
// P(N > L) and the expected excess E[(N − L)+] = Σ_{k>L} (k − L)·P(N = k).
// For L < mu it uses the finite forms 1 − Σ_{k≤L} P(N = k) and
// mu − L + Σ_{k≤L} (L − k)·P(N = k); for L ≥ mu it sums the upper tail,
// where the finite forms would cancel. See the package documentation. For
// L < 0 it returns 1 and mu − L; for mu negative, infinite or NaN, NaNs.
func PoissonTail(mu float64, L int) (pOver, expExcess float64) {
	switch {
	case math.IsNaN(mu) || math.IsInf(mu, 0) || mu < 0:
		return math.NaN(), math.NaN()
	case L < 0:
		return 1, mu - float64(L)
	case mu == 0:
		return 0, 0
	}
	if float64(L) >= mu {
		// Terms fall from k = L+1 on, since μ/(k+1) < 1.
		var s0, s1 float64
		p := math.Exp(logPoisson(mu, L+1))
		for k := L + 1; p > 0; k++ {
			s0 += p
			s1 += float64(k-L) * p
			if p < tailEps*s0 && float64(k-L)*p < tailEps*s1 {
				break
			}
			p *= mu / float64(k+1)
		}
		return s0, s1
	}
	// Terms fall from k = L down, since k/μ < 1.
	var c0, c1 float64
	p := math.Exp(logPoisson(mu, L))
	for k := L; k >= 0 && p > 0; k-- {
		c0 += p
		c1 += float64(L-k) * p
		if p < tailEps*c0 && float64(L-k)*p < tailEps*c1 {
			break
		}
		p *= float64(k) / mu
	}
	return max(0, 1-c0), mu - float64(L) + c1
}

// Prediction is what Predict returns. Rates are per second; shares are
// fractions of 1.
type Prediction struct {
	Input             PoissonInput
	PerShardAllowance int     // L = ⌊R·W/n⌋
	ShardMean         float64 // mean attempts a shard window, λ_eff·W/n
	POverflow         float64 // probability a shard's window gets more than L
	RejectPerSec      float64 // 429s a second, rejected retries included
	RejectShare       float64 // p: rejected share of attempts, RejectPerSec/EffectiveRate
	EffectiveRate     float64 // λ_eff: offered rate plus retries
	Iterations        int     // steps of the retry fixed point; 0 without retries
	FinalFailShare    float64 // share of requests whose k+1 attempts are all rejected, p^(k+1)
}

// limiter evaluates the limiter at an attempt rate: the overflow
// probability of a shard window and the rejections a second.
func limiter(in PoissonInput, L int, rate float64) (pOver, rejectPerSec float64) {
	w := in.Window.Seconds()
	n := in.Shards
	if in.Routing == RoutingRoundRobin {
		// E[(C−L)+] = E[(N_tot − nL)+]/n; P(C > L) from two excesses.
		total := rate * w
		_, e := PoissonTail(total, n*L)
		_, eNext := PoissonTail(total, n*L+n)
		return max(0, (e-eNext)/float64(n)), e / w
	}
	pOver, e := PoissonTail(rate*w/float64(n), L)
	return pOver, float64(n) * e / w
}

// Predict evaluates the model; see the package documentation.
func Predict(in PoissonInput) (Prediction, error) {
	if err := in.Validate(); err != nil {
		return Prediction{}, err
	}
	if in.Routing == "" {
		in.Routing = RoutingRandom
	}
	L := PerShardAllowance(in.Limit, in.Shards, in.Window)
	share := func(rate float64) float64 {
		_, rej := limiter(in, L, rate)
		return rej / rate
	}
	rate, iters := in.Rate, 0
	if in.Retries > 0 {
		for {
			if iters == MaxIterations {
				return Prediction{}, fmt.Errorf("model: the retry load did not settle in %d steps (last %.6g/s)", MaxIterations, rate)
			}
			iters++
			p := share(rate)
			// 1 + p + … + p^k, by Horner.
			s := 1.0
			for range in.Retries {
				s = 1 + p*s
			}
			next := in.Rate * s
			done := math.Abs(next-rate) <= Tolerance*next
			rate = next
			if done {
				break
			}
		}
	}
	pOver, rej := limiter(in, L, rate)
	p := rej / rate
	return Prediction{
		Input:             in,
		PerShardAllowance: L,
		ShardMean:         rate * in.Window.Seconds() / float64(in.Shards),
		POverflow:         pOver,
		RejectPerSec:      rej,
		RejectShare:       p,
		EffectiveRate:     rate,
		Iterations:        iters,
		FinalFailShare:    math.Pow(p, float64(in.Retries+1)),
	}, nil
}

// Lines describes the inputs and the prediction, one fact a line, for the
// CLI to print.
func (p Prediction) Lines() []string {
	in := p.Input
	n := in.Shards
	lines := []string{
		fmt.Sprintf("offered          %s/s, Poisson", num(in.Rate)),
		fmt.Sprintf("limit            %s/s over %d shard%s, %v windows, %s routing", num(in.Limit), n, plural(n), in.Window, in.Routing),
		fmt.Sprintf("per shard        %d a window = ⌊%s/s × %v / %d⌋ (in effect %s/s in all)",
			p.PerShardAllowance, num(in.Limit), in.Window, n, num(float64(n*p.PerShardAllowance)/in.Window.Seconds())),
	}
	if in.Retries > 0 {
		lines = append(lines,
			fmt.Sprintf("retries          up to %d a request, attempts taken as independent", in.Retries),
			fmt.Sprintf("attempts         %s/s with retries (fixed point in %d steps)", num(p.EffectiveRate), p.Iterations))
	}
	return append(lines,
		fmt.Sprintf("shard window     mean %s attempts; P(more than %d) = %s", num(p.ShardMean), p.PerShardAllowance, prob(p.POverflow)),
		fmt.Sprintf("rejected (429)   %s/s, %s of attempts", num(p.RejectPerSec), percent(p.RejectShare)),
		fmt.Sprintf("failed requests  %s (all %d attempt%s rejected)", percent(p.FinalFailShare), in.Retries+1, plural(in.Retries+1)),
	)
}

// num prints a count or rate with up to 3 decimals and no trailing zeros.
func num(x float64) string {
	s := strconv.FormatFloat(x, 'f', 3, 64)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}

// prob prints a probability to 4 significant digits.
func prob(x float64) string { return strconv.FormatFloat(x, 'g', 4, 64) }

// percent prints a share as a percentage to 3 significant digits.
func percent(x float64) string { return strconv.FormatFloat(100*x, 'g', 3, 64) + "%" }

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
