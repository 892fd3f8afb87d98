package stub

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"golang.org/x/net/http/httpguts"

	"github.com/openload/openload/field"
)

// DeadlinePosition says where the deadline gate checks the dwell time.
type DeadlinePosition string

// The known deadline gate positions.
const (
	// PositionLast checks immediately before the answer is written, after
	// every point where the request can wait. Only this position gives the
	// bound "no answer leaves with a dwell time above Deadline".
	PositionLast DeadlinePosition = "last"
	// PositionBeforeStall checks before the stall holds (after the model
	// call, and before a fallback or limiter answer waits out a stall).
	// It is deliberately misplaced, for demonstrations: an answer that
	// passed it can still be held back by a stall and leave late.
	PositionBeforeStall DeadlinePosition = "before-stall"
)

// DeadlinePositions lists the known positions.
var DeadlinePositions = []DeadlinePosition{PositionLast, PositionBeforeStall}

// DropReason says why the deadline gate dropped an answer, as sent in
// X-Stub-Drop.
type DropReason string

// The reasons an answer is dropped. Every one but DropLate is the fail-safe
// choice for a dwell time that cannot be trusted.
const (
	DropLate        DropReason = "late"         // dwell time > Deadline
	DropNoStamp     DropReason = "no-stamp"     // header source: the arrival header is absent or empty
	DropBadStamp    DropReason = "bad-stamp"    // header source: not one positive decimal Unix-nanosecond value
	DropFutureStamp DropReason = "future-stamp" // the dwell time is negative: the arrival is later than now
)

// ArrivalReceive is the default arrival source of the deadline gate: the
// stub's own (monotonic) clock when it receives the request. The other
// source is "header:NAME" (see Config.ArrivalStamp).
const ArrivalReceive = "receive"

const arrivalHeaderPrefix = "header:"

// parseArrivalStamp parses a Config.ArrivalStamp value: "receive" gives
// header "", "header:NAME" gives NAME in canonical form.
func parseArrivalStamp(v string) (header string, err error) {
	if v == ArrivalReceive {
		return "", nil
	}
	name, ok := strings.CutPrefix(v, arrivalHeaderPrefix)
	if !ok {
		return "", field.Errorf("ArrivalStamp", v, "{ArrivalStamp} %q is unknown (known: receive, header:NAME)", v)
	}
	if !httpguts.ValidHeaderFieldName(name) {
		return "", field.Errorf("ArrivalStamp", v, "{ArrivalStamp} %q: %q is not a valid header name", v, name)
	}
	return http.CanonicalHeaderKey(name), nil
}

// stamp is a request's arrival time as the deadline gate knows it: at, or
// the reason it is not known (invalid is DropNoStamp or DropBadStamp).
type stamp struct {
	at      time.Time
	invalid DropReason // "" when at is valid
}

// readStamp reads the arrival stamp an upstream put in header name: Unix
// time in nanoseconds (wall clock) as one positive decimal integer. An
// absent or empty header is no-stamp; several values, signs, spaces, other
// characters, zero or a value that overflows int64 are bad-stamp.
func readStamp(h http.Header, name string) stamp {
	vs := h.Values(name)
	switch {
	case len(vs) == 0 || len(vs) == 1 && vs[0] == "":
		return stamp{invalid: DropNoStamp}
	case len(vs) > 1:
		return stamp{invalid: DropBadStamp}
	}
	v := vs[0]
	for i := range len(v) {
		if v[i] < '0' || v[i] > '9' {
			return stamp{invalid: DropBadStamp}
		}
	}
	ns, err := strconv.ParseInt(v, 10, 64)
	if err != nil || ns <= 0 {
		return stamp{invalid: DropBadStamp}
	}
	return stamp{at: time.Unix(0, ns)}
}

// checkDwell is the deadline gate as a pure function:
//
//	dwell = now − arrival
//	dwell ≤ deadline      pass (exactly the deadline passes)
//	dwell > deadline      drop, late
//	dwell < 0             drop, future-stamp (never clamped to 0: under clock
//	                      skew that would pass stale requests)
//	arrival unknown       drop, arr.invalid (no-stamp or bad-stamp)
//
// dwell is returned whenever it can be computed, also for drops; it is 0
// when the arrival is unknown. time.Time.Sub saturates, so an absurdly old
// stamp is late and an absurdly new one is future-stamp.
func checkDwell(now time.Time, arr stamp, deadline time.Duration) (dwell time.Duration, pass bool, reason DropReason) {
	if arr.invalid != "" {
		return 0, false, arr.invalid
	}
	dwell = now.Sub(arr.at)
	switch {
	case dwell < 0:
		return dwell, false, DropFutureStamp
	case dwell > deadline:
		return dwell, false, DropLate
	}
	return dwell, true, ""
}

// deadlineGate is the server's deadline configuration, parsed once.
type deadlineGate struct {
	deadline time.Duration // 0 = off
	header   string        // canonical stamp header; "" = receive
	skew     time.Duration // header source only
	position DeadlinePosition
	status   int
}

func newDeadlineGate(cfg Config) deadlineGate {
	header, _ := parseArrivalStamp(cfg.ArrivalStamp) // validated
	return deadlineGate{
		deadline: cfg.Deadline,
		header:   header,
		skew:     cfg.ClockSkew,
		position: cfg.DeadlinePosition,
		status:   cfg.DeadlineStatus,
	}
}

func (g deadlineGate) on() bool { return g.deadline > 0 }

// arrival is the stamp of a request received at recv (a time.Now reading).
func (g deadlineGate) arrival(r *http.Request, recv time.Time) stamp {
	if g.header == "" {
		return stamp{at: recv}
	}
	return readStamp(r.Header, g.header)
}

// clock turns a time.Now reading into the gate's "now". With the receive
// source it is unchanged, so now − arrival uses the monotonic clock and skew
// does not apply (both readings come from the same clock). With a header
// source it is the stub's wall clock shifted by the skew, comparable with
// the upstream's wall-clock stamp.
func (g deadlineGate) clock(t time.Time) time.Time {
	if g.header == "" {
		return t
	}
	return t.Round(0).Add(g.skew) // Round(0) drops the monotonic reading
}
