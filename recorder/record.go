// Package recorder keeps what happened to every request of a run: the
// per-request record with its three timestamps, the HdrHistograms of
// response time, service time and send delay, the outcome counts, the
// per-second timeline, the streamed per-request CSV log and the versioned
// JSON result file.
//
// # Three timestamps, three figures
//
// Every request has a scheduled time (when the arrival process said it should
// leave), a sent time (when it started going onto an acquired connection) and
// a done time (when its response was fully read, or it failed, timed out or
// was abandoned at the end of the drain). From them:
//
//	response time = done − scheduled   what a user waited (the headline)
//	service time  = done − sent        what the server took
//	send delay    = sent − scheduled   how late the generator was
//
// All three are offsets on the monotonic clock from the run's start.
//
// # Accounting
//
// Every scheduled request ends in exactly one outcome: completed (a response
// was read, whatever its status), error, timeout, or unfinished (still
// waiting or in flight when the drain expired). So
//
//	completed + errors + timeouts + unfinished == scheduled
//
// holds by construction: Add counts each record once, under its outcome.
// Timed-out and unfinished requests are recorded in the response histogram
// at their elapsed time, a lower bound of what the user would have waited,
// and counted as censored; they are never dropped. Requests that failed
// with an error are recorded too: the user waited that long to see the error.
//
// # Histograms
//
// Values are recorded in microseconds, from 1 µs to 1 hour with 3
// significant digits. A value above the range is clamped to the top and
// counted in Clamped, never silently lost.
//
// A Recorder is owned by one goroutine; it has no locks. Engines that record
// from several goroutines either funnel records to one Recorder or give each
// goroutine its own and Merge them at the end.
package recorder

import (
	"time"
)

// Outcome is how a request ended. Every request has exactly one.
type Outcome uint8

// Outcomes.
const (
	Completed  Outcome = iota // a response was read (any status)
	Failed                    // an error: refused, reset, TLS, malformed …
	TimedOut                  // the per-request timeout expired
	Unfinished                // still waiting or in flight when the drain expired
	numOutcomes
)

var outcomeNames = [...]string{"completed", "error", "timeout", "unfinished"}

func (o Outcome) String() string {
	if int(o) < len(outcomeNames) {
		return outcomeNames[o]
	}
	return "unknown"
}

// ErrorKind classifies why a request failed.
type ErrorKind uint8

// Error kinds. KindNone is the kind of a completed request.
const (
	KindNone       ErrorKind = iota
	KindRefused              // connection refused
	KindReset                // connection reset or closed mid-exchange
	KindTimeout              // per-request timeout
	KindTLS                  // TLS handshake or certificate failure
	KindOther                // anything else (malformed response, DNS, …)
	KindUnfinished           // abandoned when the drain expired
	numKinds
)

var kindNames = [...]string{"", "refused", "reset", "timeout", "tls", "other", "unfinished"}

func (k ErrorKind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "unknown"
}

// Record is the fate of one request. Times are offsets from the run's start.
type Record struct {
	Seq       uint64
	Scheduled time.Duration
	Sent      time.Duration // valid only when WasSent
	Done      time.Duration
	WasSent   bool // false when the request never left the generator
	Outcome   Outcome
	Status    int // HTTP status code, 0 when no response was read
	Kind      ErrorKind
	// Class holds the values of the class headers (see
	// Recorder.TrackClasses), in their order; "" when absent.
	Class [MaxClassHeaders]string
	// Timings holds the first NTimings Server-Timing metrics with a
	// duration.
	Timings  [MaxTimings]Timing
	NTimings int
}

// Limits of what one record carries.
const (
	MaxClassHeaders = 4
	MaxTimings      = 8
)

// Timing is one server-reported metric (Server-Timing dur).
type Timing struct {
	Name string
	Dur  time.Duration
}

// Response is done − scheduled.
func (r *Record) Response() time.Duration { return r.Done - r.Scheduled }

// Service is done − sent; zero for a request that was never sent.
func (r *Record) Service() time.Duration {
	if !r.WasSent {
		return 0
	}
	return r.Done - r.Sent
}

// SendDelay is sent − scheduled; zero for a request that was never sent.
func (r *Record) SendDelay() time.Duration {
	if !r.WasSent {
		return 0
	}
	return r.Sent - r.Scheduled
}
