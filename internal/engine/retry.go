package engine

// Retries. A request whose attempt is answered with a status, or fails with
// an error kind, in Retry.On is tried again, up to Retry.Retries times, after
// a backoff, while the retry budget allows.
//
// # One request, its original schedule
//
// A retry is part of the request it retries: the request keeps its
// scheduled time and its one record and outcome (the final attempt's), so
// scheduled == completed + errors + timeouts + unfinished still holds and
// the count of requests is the schedule's. Its timestamps (recorder.Record):
//
//	scheduled  the arrival, as for any request
//	sent       the first attempt's sent
//	done       the final attempt's done
//	response   = done − scheduled: the wait for the final answer, backoffs included
//	send delay = sent − scheduled: the generator's lateness, as before
//	service    = done − the final attempt's sent: what the server took on it
//
// and response = send delay + retry delay + service, where the retry delay
// (the earlier attempts and the backoff waits) is the final attempt's sent −
// the first attempt's sent.
//
// # The worker waits
//
// A retry is made by the worker that ran the first attempt: it sleeps the
// backoff, then sends again. The request holds that worker all along, so a
// request waiting out a backoff counts in the in-flight limit (and in max in
// flight) exactly like one waiting for its answer: when backoffs keep every
// worker busy, due requests wait inside openload and that wait shows as
// their send delay, and the report says the limit bound. This is what a
// client with a bounded pool of callers that retry inline does; it makes a
// retry storm visible instead of letting it grow without bound. Each attempt
// has its own Config.Timeout.
//
// When the drain expires during a backoff, the request is abandoned
// (unfinished, done at that moment), like one still in flight.
//
// # Backoff and jitter
//
// Retry i (i = 0 for the first retry) waits, from the moment the attempt
// before it ended, a time drawn from the base b_i = Backoff × 2^min(i, 10):
//
//	JitterFull   uniform in [0, b_i)              (the default)
//	JitterEqual  b_i/2 + uniform in [0, b_i/2)
//	JitterNone   exactly b_i
//
// The uniform draw is a pure function of (Seed, the request's sequence
// number, i), not of the order in which workers happen to run, so the same
// seed gives every request the same waits on every run.
//
// # Budget
//
// A retry is also subject to the run's retry budget (Budget): every first
// attempt is counted when it starts, and a retry is asked for when it is
// decided, before its backoff (as gRPC's retry throttling and Finagle's
// retry budget do). A refused retry ends the request with the answer of its
// last attempt at once, and the record says the budget refused it.

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/openload/openload/recorder"
)

// Jitter names how a backoff is drawn from its base.
type Jitter string

// The jitters; see the section on backoff above.
const (
	JitterFull  Jitter = "full"
	JitterEqual Jitter = "equal"
	JitterNone  Jitter = "none"
)

// Jitters lists the known jitters.
var Jitters = []Jitter{JitterFull, JitterEqual, JitterNone}

// MaxRetries bounds Retry.Retries (the analytic model's bound).
const MaxRetries = 100

// maxDoublings caps the exponent of the backoff base.
const maxDoublings = 10

// Retry is a run's retry policy. The zero value retries nothing.
type Retry struct {
	On      RetryOn
	Retries int           // retries per request, 0 … MaxRetries; 0 is off
	Backoff time.Duration // base of the first retry's backoff, ≥ 0
	Jitter  Jitter        // "" means JitterFull
	Seed    uint64        // of the jitter
	// The budget: retries ≤ Budget × first attempts + MinPerSec × Window
	// over every window of length Window (see Budget).
	Budget    float64
	MinPerSec float64
	Window    time.Duration
}

// Enabled reports whether the policy retries anything.
func (r Retry) Enabled() bool { return r.Retries > 0 && !r.On.Empty() }

// Validate checks the policy; errors name the CLI flags.
func (r Retry) Validate() error {
	if !r.Enabled() {
		return nil
	}
	switch {
	case r.Retries < 0 || r.Retries > MaxRetries:
		return fmt.Errorf("--retries must be between 0 and %d, got %d", MaxRetries, r.Retries)
	case r.Backoff < 0:
		return fmt.Errorf("--retry-backoff must be ≥ 0, got %v", r.Backoff)
	case r.Jitter != "" && !slices.Contains(Jitters, r.Jitter):
		return fmt.Errorf("--retry-jitter %q is unknown (known: full, equal, none)", string(r.Jitter))
	case math.IsNaN(r.Budget) || r.Budget < 0 || r.Budget > 1:
		return fmt.Errorf("--retry-budget must be between 0 and 1, got %v", r.Budget)
	case math.IsNaN(r.MinPerSec) || math.IsInf(r.MinPerSec, 0) || r.MinPerSec < 0:
		return fmt.Errorf("--retry-min-per-sec must be a finite number ≥ 0, got %v", r.MinPerSec)
	case r.Window <= 0:
		return fmt.Errorf("--retry-budget-window must be > 0, got %v", r.Window)
	case r.MinPerSec*r.Window.Seconds() < 1:
		return fmt.Errorf("--retry-min-per-sec × --retry-budget-window must be ≥ 1 (the burst of retries the budget allows), got %v/s × %v", r.MinPerSec, r.Window)
	}
	return nil
}

// String describes the policy: "up to 1 retry on 429,503, backoff 2s equal
// jitter, budget 10% + 10/s over 10s".
func (r Retry) String() string {
	if !r.Enabled() {
		return "no retries"
	}
	j := r.Jitter
	if j == "" {
		j = JitterFull
	}
	s := "retries"
	if r.Retries == 1 {
		s = "retry"
	}
	return fmt.Sprintf("up to %d %s on %s, backoff %v %s jitter, budget %s%% + %s/s over %v",
		r.Retries, s, r.On, r.Backoff, j,
		strconv.FormatFloat(100*r.Budget, 'f', -1, 64), strconv.FormatFloat(r.MinPerSec, 'f', -1, 64), r.Window)
}

// Base is b_i, the base of retry i's backoff: Backoff × 2^min(i, 10).
func (r Retry) Base(i int) time.Duration {
	d := r.Backoff
	for range min(max(i, 0), maxDoublings) {
		d *= 2
	}
	return d
}

// Wait is the backoff before retry i of request seq (see the section on
// backoff above).
func (r Retry) Wait(seq uint64, i int) time.Duration {
	b := r.Base(i)
	u := unit(r.Seed, seq, uint64(i))
	switch r.Jitter {
	case JitterNone:
		return b
	case JitterEqual:
		return b/2 + time.Duration(u*float64(b-b/2))
	}
	return time.Duration(u * float64(b))
}

// unit is a uniform draw in [0, 1) that depends only on its arguments:
// splitmix64's finaliser over a mix of them.
func unit(seed, seq, i uint64) float64 {
	x := seed ^ 0x9e3779b97f4a7c15
	for _, v := range [...]uint64{seq, i} {
		x += v*0xbf58476d1ce4e5b9 + 0x9e3779b97f4a7c15
		x ^= x >> 30
		x *= 0xbf58476d1ce4e5b9
		x ^= x >> 27
		x *= 0x94d049bb133111eb
		x ^= x >> 31
	}
	return float64(x>>11) / (1 << 53)
}

// RetryOn is the set of answers a run retries on: HTTP statuses and error
// kinds (refused, reset, timeout, tls, other).
type RetryOn struct {
	Statuses []int
	Kinds    []recorder.ErrorKind
}

// RetryKinds are the error kinds a run can retry on.
var RetryKinds = []recorder.ErrorKind{recorder.KindRefused, recorder.KindReset, recorder.KindTimeout, recorder.KindTLS, recorder.KindOther}

// ParseRetryOn reads a comma-separated list of statuses (100–599) and error
// kinds, e.g. "429,503,refused". Duplicates are kept once; the order of the
// input is kept for String.
func ParseRetryOn(s string) (RetryOn, error) {
	var on RetryOn
	if strings.TrimSpace(s) == "" {
		return on, errors.New("empty list: give statuses and/or error kinds, e.g. 429,503,refused")
	}
	for item := range strings.SplitSeq(s, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			return RetryOn{}, errors.New("empty item in the list")
		}
		if item[0] >= '0' && item[0] <= '9' {
			code, err := strconv.Atoi(item)
			if err != nil || code < 100 || code > 599 {
				return RetryOn{}, fmt.Errorf("%q is not an HTTP status (100–599)", item)
			}
			if !slices.Contains(on.Statuses, code) {
				on.Statuses = append(on.Statuses, code)
			}
			continue
		}
		i := slices.IndexFunc(RetryKinds, func(k recorder.ErrorKind) bool { return k.String() == strings.ToLower(item) })
		if i < 0 {
			return RetryOn{}, fmt.Errorf("%q is neither a status nor an error kind (known kinds: refused, reset, timeout, tls, other)", item)
		}
		if !slices.Contains(on.Kinds, RetryKinds[i]) {
			on.Kinds = append(on.Kinds, RetryKinds[i])
		}
	}
	return on, nil
}

// Empty reports whether the set holds nothing.
func (o RetryOn) Empty() bool { return len(o.Statuses) == 0 && len(o.Kinds) == 0 }

// String lists the set as ParseRetryOn reads it: statuses, then kinds.
func (o RetryOn) String() string {
	parts := make([]string, 0, len(o.Statuses)+len(o.Kinds))
	for _, c := range o.Statuses {
		parts = append(parts, strconv.Itoa(c))
	}
	for _, k := range o.Kinds {
		parts = append(parts, k.String())
	}
	return strings.Join(parts, ",")
}

// Match reports whether the attempt r ended in an answer to retry: a
// response with a listed status, or a failure or timeout of a listed kind.
// An attempt abandoned at the end of the drain is never retried.
func (o RetryOn) Match(r *recorder.Record) bool {
	switch r.Outcome {
	case recorder.Completed:
		return slices.Contains(o.Statuses, r.Status)
	case recorder.Failed, recorder.TimedOut:
		return slices.Contains(o.Kinds, r.Kind)
	}
	return false
}

// retrier is a run's retry state.
type retrier struct {
	policy Retry
	budget *Budget
}

// check is Validate for the engine: the error says where it comes from.
func (r Retry) check() error {
	if err := r.Validate(); err != nil {
		return fmt.Errorf("engine: retry: %v", err)
	}
	return nil
}

// newRetrier returns the retry state of a run whose policy passed check,
// or nil when the policy retries nothing.
func newRetrier(p Retry, now func() time.Duration) *retrier {
	if !p.Enabled() {
		return nil
	}
	return &retrier{policy: p, budget: newBudget(p.Budget, p.MinPerSec, p.Window, now)}
}

// attempt sends the request and, under a retry policy, retries it; see the
// top of this file. It returns the request's one record.
func (w *worker) attempt(it item) recorder.Record {
	rt := w.g.retry
	if rt == nil {
		return w.do(it)
	}
	rt.budget.First()
	r := w.do(it)
	if !r.WasSent || !rt.policy.On.Match(&r) {
		return r
	}
	// What every attempt wrote, re-sends included (wire.go), adds up.
	first := r.Sent
	tx := sendsOf(&r)
	var earlier []recorder.Attempt
	retries := 0
	for i := 0; ; i++ {
		if i == rt.policy.Retries {
			r.RetryExhausted = true
			break
		}
		if !rt.budget.Retry() {
			r.RetryRefused = true
			break
		}
		earlier = append(earlier, recorder.Attempt{Sent: r.Sent, Done: r.Done, Status: r.Status, Kind: r.Kind})
		lastSent := r.Sent
		if !w.g.pause(rt.policy.Wait(it.seq, i), nil) {
			// The drain expired while the request waited for its retry.
			done := w.g.since()
			return recorder.Record{
				Seq: it.seq, Scheduled: it.off, Sent: first, Done: done, WasSent: true,
				Outcome: recorder.Unfinished, Kind: recorder.KindUnfinished,
				Attempts: tx.attempts, Resends: tx.resends, Retries: retries, Earlier: earlier, LastSent: lastSent,
			}
		}
		r = w.do(it)
		retries++
		tx.add(sendsOf(&r))
		if !r.WasSent || !rt.policy.On.Match(&r) {
			break
		}
	}
	if len(earlier) > 0 {
		r.LastSent = sendsOf(&r).last // the final try's last sent
		r.Earlier = earlier
		r.Sent = first
	}
	r.Attempts, r.Resends, r.Retries = tx.attempts, tx.resends, retries
	return r
}

// sendsOf is what one try's record says it wrote (only the counts and the
// first sent time are used).
func sendsOf(r *recorder.Record) sends {
	s := sends{first: r.Sent, last: r.Sent, attempts: r.Attempts, resends: r.Resends}
	if r.Resends > 0 {
		s.last = r.LastSent
	}
	return s
}
