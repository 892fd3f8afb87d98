// Package limitmath predicts what a sharded fixed-window rate limiter does to
// Poisson traffic: how often a shard's window overflows, how many requests
// it rejects (429) per second, and, when clients retry, how much load the
// retries add and how many users fail in the end.
//
// The point it makes: a service limited to R requests per second answers
// 429 while its average load is below R. Poisson traffic brings more than
// the allowance into a window whenever it happens to, and splitting the
// limit over n independent shards makes each allowance small next to its
// fluctuations, so the shards overflow far more often than one limiter
// would.
//
// # The limiter
//
// The limit R (requests per second over all shards) is split over n shards.
// Each shard counts the requests routed to it in fixed windows of length W,
// whose boundaries do not depend on the traffic, and rejects every request
// past its allowance
//
//	L = ⌊R·W/n⌋
//
// in a window (PerShardAllowance; a product within 1e-9 of an integer
// counts as that integer). This is the per-shard allowance of the stub's
// sharded limiter. The floor may leave a limit in effect, n·L/W, below R.
//
// # Random routing keeps each shard Poisson
//
// Arrivals form a Poisson process of rate λ. Sending each one to a shard
// drawn uniformly and independently of everything else is thinning: each
// shard sees a Poisson process of rate λ/n, independent of the others, since
// an independent coin per arrival keeps increments independent. A shard's
// count in a window is then
//
//	N ~ Poisson(μ),   μ = λ·W/n,   P(N = k) = e^(−μ)·μ^k / k!
//
// Its window overflows with probability P(N > L), and it rejects on average
//
//	E[(N − L)+] = Σ_{k>L} (k − L)·P(N = k)
//	            = μ − L + Σ_{k≤L} (L − k)·P(N = k)
//
// requests a window (the second form because E[N − L] = μ − L). So
//
//	rejections/s = n · E[(N − L)+] / W.
//
// PoissonTail computes P(N > L) and E[(N − L)+]. When L < μ it uses the
// finite forms, 1 − Σ_{k≤L} P(N = k) and the second line above; when L ≥ μ
// the answers are small and the finite forms would subtract nearly equal
// numbers, so it sums the upper tail itself. Either way it starts at the
// term next to L, taken from lgamma, and walks away from μ with the ratio
// P(N = k+1)/P(N = k) = μ/(k+1), stopping once the terms no longer change
// the sums (they fall faster than geometrically), so a call costs
// O(√μ + 1) terms, not O(L).
//
// # Round-robin routing does not
//
// Round-robin sends arrival j to shard j mod n. The choice depends on the
// order of the arrivals, not on an independent coin, so thinning does not
// apply: a shard sees every n-th arrival, its gaps are sums of n exponential
// gaps (Erlang(n, λ)), and its arrivals form a renewal process whose count
// in a window has a variance near μ/n instead of μ. Its windows overflow far
// less often.
//
// The model conditions on the whole stream. The window holds
// N_tot ~ Poisson(λ·W) arrivals with consecutive indices. The index of the
// first is the number of arrivals before the window, which is independent
// of N_tot (independent increments) and, once a run has seen a few n
// arrivals, uniform modulo n: the phase. Given N_tot = q·n + s, 0 ≤ s < n,
// a shard gets q+1 of them for s of the n phases and q for the others, so
// its count C has
//
//	E[(C − L)+ | N_tot] = (1 − s/n)·(q − L)+ + (s/n)·(q + 1 − L)+
//	                    = (N_tot − n·L)+ / n
//
// (for q ≥ L both terms count; for q < L neither does). Hence
//
//	E[(C − L)+] = E[(N_tot − n·L)+] / n,   rejections/s = E[(N_tot − n·L)+] / W:
//
// round-robin spreads each window as evenly as it can and rejects exactly
// what one unsharded limiter with allowance n·L would. A shard's window
// overflows when C > L, which given N_tot has probability min((N_tot − n·L)+, n)/n, so
//
//	P(C > L) = (E[(N_tot − n·L)+] − E[(N_tot − n·L − n)+]) / n.
//
// This is the count of an Erlang-n renewal process started in its
// stationary state (uniform phase), so it is exact in steady state, not an
// approximation; it leaves out only a run's first few n arrivals.
//
// # Retries
//
// With k retries, each rejected request is tried again, up to k times. The
// model treats the offered requests plus their retries as one Poisson
// stream of rate λ_eff through the same limiter, and the attempts of one
// request as independent, each rejected with the share p(λ_eff) =
// rejections/s ÷ λ_eff. A request then makes 1 + p + … + p^k attempts on
// average, so
//
//	λ_eff = λ · (1 + p + p² + … + p^k),   p = p(λ_eff).
//
// Predict solves this by iteration from λ_0 = λ: λ_{t+1} = λ·Σ_j p(λ_t)^j.
// The rejected share grows with the load, so the iterates increase, bounded
// by (k+1)·λ, and converge to the smallest solution (the one a service
// reaches from a quiet start). It stops when a step changes λ_eff by less
// than 1e-9 of it, and fails after 10000 steps. Then
//
//	429s/s = λ_eff · p = λ · (p + p² + … + p^(k+1))   (rejected retries included)
//	users who fail in the end = p^(k+1)               (all k+1 attempts rejected)
//
// Taking attempts as independent fits retries that land in a later window,
// after a backoff of a window or more. It does not fit retries made at once,
// which land in the window that just overflowed: against a simulation the
// model then predicts too few 429s below the limit and too many in
// overload, and far too few requests that fail in the end (see
// docs/MEASUREMENTS.md, “Retry model against a simulation”). Under
// round-robin, retries at once have an exact answer instead: every attempt
// in a window after its first n·L is rejected and none before, so a request
// either passes at once or fails all k+1 attempts:
//
//	failing share = E[(N_tot − n·L)+] / (λ·W),   429s/s = (k+1)·E[(N_tot − n·L)+] / W.
package limitmath
