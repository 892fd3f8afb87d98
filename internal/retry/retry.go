// Package retry is a run's retry policy: which answers are retried, how
// long each retry waits, and the budget that bounds retries by the first
// attempts around them. It decides; the engine (internal/engine/retry.go)
// sends the retries and keeps each request's one record.
//
// A request whose attempt is answered with a status, or fails with an
// error kind, in Policy.On is tried again, up to Policy.Retries times,
// after a backoff, while the budget allows.
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
package retry

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/openload/openload/field"
	"github.com/openload/openload/internal/recorder"
	"github.com/openload/openload/internal/splitmix"
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

// MaxRetries bounds Policy.Retries (the analytic model's bound).
const MaxRetries = 100

// maxDoublings caps the exponent of the backoff base.
const maxDoublings = 10

// Policy is a run's retry policy. The zero value retries nothing.
type Policy struct {
	On      On
	Retries int           // retries per request, 0 … MaxRetries; 0 is off
	Backoff time.Duration // base of the first retry's backoff, ≥ 0
	Jitter  Jitter        // "" means JitterFull
	Seed    uint64        // of the jitter
	// The budget: retries ≤ Budget × first attempts + MinPerSec × Window
	// over every window of length Window (see type Budget).
	Budget    float64
	MinPerSec float64
	Window    time.Duration
}

// Enabled reports whether the policy retries anything.
func (p Policy) Enabled() bool { return p.Retries > 0 && !p.On.Empty() }

// Validate checks the policy. Its errors are *field.Error, naming the
// fields of Policy. Retries is checked always; the rest only when the
// policy retries anything (Enabled).
func (p Policy) Validate() error {
	if p.Retries < 0 || p.Retries > MaxRetries {
		return field.Errorf("Retries", p.Retries, "{Retries} must be between 0 and %d, got %d", MaxRetries, p.Retries)
	}
	if !p.Enabled() {
		return nil
	}
	switch {
	case p.Backoff < 0:
		return field.Errorf("Backoff", p.Backoff, "{Backoff} must be ≥ 0, got %v", p.Backoff)
	case p.Jitter != "" && !slices.Contains(Jitters, p.Jitter):
		return field.Errorf("Jitter", p.Jitter, "{Jitter} %q is unknown (known: full, equal, none)", string(p.Jitter))
	case math.IsNaN(p.Budget) || p.Budget < 0 || p.Budget > 1:
		return field.Errorf("Budget", p.Budget, "{Budget} must be between 0 and 1, got %v", p.Budget)
	case math.IsNaN(p.MinPerSec) || math.IsInf(p.MinPerSec, 0) || p.MinPerSec < 0:
		return field.Errorf("MinPerSec", p.MinPerSec, "{MinPerSec} must be a finite number ≥ 0, got %v", p.MinPerSec)
	case p.Window <= 0:
		return field.Errorf("Window", p.Window, "{Window} must be > 0, got %v", p.Window)
	case p.MinPerSec*p.Window.Seconds() < 1:
		return field.Errorf("MinPerSec", p.MinPerSec,
			"{MinPerSec} × {Window} must be ≥ 1 (the burst of retries the budget allows), got %v/s × %v", p.MinPerSec, p.Window)
	}
	return nil
}

// NewBudget returns the budget of p, a policy that passed Validate (which
// checks what NewBudget does), on the clock now.
func (p Policy) NewBudget(now func() time.Duration) *Budget {
	return newBudget(p.Budget, p.MinPerSec, p.Window, now)
}

// String describes the policy: "up to 1 retry on 429,503, backoff 2s equal
// jitter, budget 10% + 10/s over 10s".
func (p Policy) String() string {
	if !p.Enabled() {
		return "no retries"
	}
	j := p.Jitter
	if j == "" {
		j = JitterFull
	}
	s := "retries"
	if p.Retries == 1 {
		s = "retry"
	}
	return fmt.Sprintf("up to %d %s on %s, backoff %v %s jitter, budget %s%% + %s/s over %v",
		p.Retries, s, p.On, p.Backoff, j,
		strconv.FormatFloat(100*p.Budget, 'f', -1, 64), strconv.FormatFloat(p.MinPerSec, 'f', -1, 64), p.Window)
}

// Base is b_i, the base of retry i's backoff: Backoff × 2^min(i, 10).
func (p Policy) Base(i int) time.Duration {
	d := p.Backoff
	for range min(max(i, 0), maxDoublings) {
		d *= 2
	}
	return d
}

// Wait is the backoff before retry i of request seq (see the section on
// backoff above).
func (p Policy) Wait(seq uint64, i int) time.Duration {
	b := p.Base(i)
	u := unit(p.Seed, seq, uint64(i))
	switch p.Jitter {
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
	x := seed ^ splitmix.Gamma
	for _, v := range [...]uint64{seq, i} {
		x = splitmix.Mix(x + v*0xbf58476d1ce4e5b9 + splitmix.Gamma)
	}
	return splitmix.Unit(x)
}

// On is the set of answers a run retries on: HTTP statuses and error kinds
// (refused, reset, timeout, tls, other).
type On struct {
	Statuses []int
	Kinds    []recorder.ErrorKind
}

// Kinds are the error kinds a run can retry on.
var Kinds = []recorder.ErrorKind{recorder.KindRefused, recorder.KindReset, recorder.KindTimeout, recorder.KindTLS, recorder.KindOther}

// ParseOn reads a comma-separated list of statuses (100–599) and error
// kinds, e.g. "429,503,refused". Duplicates are kept once; the order of the
// input is kept for String.
func ParseOn(s string) (On, error) {
	var on On
	if strings.TrimSpace(s) == "" {
		return on, errors.New("empty list: give statuses and/or error kinds, e.g. 429,503,refused")
	}
	for item := range strings.SplitSeq(s, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			return On{}, errors.New("empty item in the list")
		}
		if item[0] >= '0' && item[0] <= '9' {
			code, err := strconv.Atoi(item)
			if err != nil || code < 100 || code > 599 {
				return On{}, fmt.Errorf("%q is not an HTTP status (100–599)", item)
			}
			if !slices.Contains(on.Statuses, code) {
				on.Statuses = append(on.Statuses, code)
			}
			continue
		}
		i := slices.IndexFunc(Kinds, func(k recorder.ErrorKind) bool { return k.String() == strings.ToLower(item) })
		if i < 0 {
			return On{}, fmt.Errorf("%q is neither a status nor an error kind (known kinds: refused, reset, timeout, tls, other)", item)
		}
		if !slices.Contains(on.Kinds, Kinds[i]) {
			on.Kinds = append(on.Kinds, Kinds[i])
		}
	}
	return on, nil
}

// Empty reports whether the set holds nothing.
func (o On) Empty() bool { return len(o.Statuses) == 0 && len(o.Kinds) == 0 }

// String lists the set as ParseOn reads it: statuses, then kinds.
func (o On) String() string {
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
func (o On) Match(r *recorder.Record) bool {
	switch r.Outcome {
	case recorder.Completed:
		return slices.Contains(o.Statuses, r.Status)
	case recorder.Failed, recorder.TimedOut:
		return slices.Contains(o.Kinds, r.Kind)
	}
	return false
}
