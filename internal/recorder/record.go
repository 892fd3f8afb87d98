// Package recorder keeps what happened to every request of a run, on the
// hot path: the per-request record with its three timestamps (and a
// stream's first byte, first token and last token: stream.go) and the
// check that they are in order (stamps.go), the live HdrHistograms of
// response time, service time and send delay, the outcome counts and
// tallies (statuses, error kinds, retries, the attempts written to the
// wire, the parts of a request mix), the per-second timeline, and the
// sinks written as the run goes: the per-request CSV log (LogWriter, read
// back by LogReader) and HdrHistogram's interval log.
//
// At the end, Fill writes what it kept into a result.Result. The result
// itself (its JSON schema, reading, writing, merging shards, the encoded
// histograms) is package result's: the recorder is one run's live state,
// the result what outlives the run, and a merge of shards or a saved file
// never needs a recorder.
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
// # Retries
//
// A retried request keeps its schedule: scheduled is its arrival, sent is
// its first attempt's sent and done its final attempt's done, so response
// time is still done − scheduled, what the user waited for the final
// answer, and send delay still measures only the generator. Service time is
// the final attempt's: done − the final attempt's sent. What lies between,
// the earlier attempts and the backoff waits, is the retry delay:
//
//	retry delay = final attempt's sent − first attempt's sent
//	response    = send delay + retry delay + service
//
// (retry delay is 0 for a request tried once). The per-attempt figures are
// in Record.Earlier; see retry.go for what the recorder counts.
//
// # Accounting
//
// Every scheduled request ends in exactly one outcome: completed (a response
// was read, whatever its status, and a streamed one carried no error
// event), error, timeout, or unfinished (still waiting or in flight when
// the drain expired). So
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
// A Recorder is owned by one goroutine; it has no locks. An engine that
// records from several goroutines funnels their records to the one that
// owns it (the engine's shards, collected every 20 ms); shards of a
// schedule run on several generators are added as results (result.Merge).
package recorder

import (
	"time"
)

// Outcome is how a request ended. Every request has exactly one.
type Outcome uint8

// Outcomes.
const (
	Completed  Outcome = iota // a response was read (any status), a stream without an error event
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
	KindStream               // the server's error event inside a streamed answer (stream.go)
	KindProtocol             // the server did not speak the protocol asked for: HTTP/1.1 to HTTP/2's preface
	KindSave                 // a session step's answer lacked what the session saves from it (engine.Session.Take)
	KindGRPCStatus           // a gRPC answer ended without a grpc-status
	KindGRPCSize             // a gRPC message longer than the run's limit (engine.Config.GRPCMaxMessage)
	numKinds
)

// Results and logs hold kinds by name (String, ParseKind), never by
// number: a kind added here reads in old files as a count of 0.
var kindNames = [...]string{"", "refused", "reset", "timeout", "tls", "other", "unfinished", "stream", "protocol", "save", "grpc_no_status", "grpc_too_large"}

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
	// GRPC: the answer was a gRPC call's and carried a grpc-status
	// (in its trailers, or in its head for a trailers-only answer),
	// GRPCStatus its value (result.GRPCCodeName; −1 when it was not a
	// number).
	GRPC       bool
	GRPCStatus int
	// Class holds the values of the class headers (see
	// Recorder.TrackClasses), in their order; "" when absent.
	Class [MaxClassHeaders]string
	// Timings holds the first NTimings Server-Timing metrics with a
	// duration.
	Timings  [MaxTimings]Timing
	NTimings int

	// Attempts is the number of times the request was written to a
	// connection (at least one byte of it): its first attempt, the
	// client's own re-sends (Resends) and the retries of a retry policy
	// that got that far. It is what a server's log can count. 0 when no
	// attempt was written: no connection could be had (refused, DNS, a
	// failed TLS handshake), or the request never left the generator.
	Attempts int
	// Resends counts the attempts the client re-sent on its own, without
	// a retry policy: a kept-alive connection that failed before any byte
	// of the response came back, when the request is safe to send again
	// (see wire.go). They are in Attempts; Sent stays the first written
	// attempt's, LastSent is the last one's.
	Resends int
	// Unanswered counts the written attempts that got no byte of an
	// answer, and the client's re-sends by cause (wire.go).
	Unanswered Unanswered

	// Retries (see retry.go). Sent is the first attempt's sent time and
	// Done the final attempt's done; the other fields above describe the
	// final attempt.
	//
	// Retries is the number of retries the retry policy made (written or
	// not): 0 for a request tried once.
	Retries int
	// Earlier holds the attempts before the final one, oldest first: each
	// was answered with a status, or failed with an error, that the run
	// retries on. Nil when the request was tried once.
	Earlier []Attempt
	// LastSent is the sent time of the last attempt made; valid when
	// Earlier is not empty or Resends > 0.
	LastSent time.Duration
	// RetryRefused: a retry was due and the retry budget refused it; the
	// request ended with the answer of its last attempt.
	RetryRefused bool
	// RetryExhausted: the last attempt was still one to retry, but every
	// retry allowed per request had been sent.
	RetryExhausted bool

	// Redirects is the number of redirects followed to get the final
	// response (engine FollowRedirects); 0 when redirects are not followed.
	Redirects int
	// BodyOverCap: the response body was longer than the run's body cap
	// (--max-body); it was read up to the cap and the rest discarded. The
	// response still completed.
	BodyOverCap bool
	// TLSCause says why a request of kind KindTLS failed (tlscause.go);
	// TLSNone for every other record.
	TLSCause TLSCause

	// A streamed answer (stream.go): Streamed when the body was read as
	// server-sent events; FirstByte when its response head was in hand
	// (GotFirstByte), FirstToken and LastToken its first and last token
	// events of any kind, thinking included (valid when Events > 0),
	// FirstAnswer its first answer event (0 when none came), Tokens its
	// output tokens (the server's usage count when sent, else Events).
	Streamed     bool
	GotFirstByte bool
	FirstByte    time.Duration
	FirstToken   time.Duration
	FirstAnswer  time.Duration
	LastToken    time.Duration
	Events       int
	Tokens       int
	// PromptTokens is the request's prompt tokens: the server's usage
	// count when the stream sent one (prompt_tokens, Ollama's
	// prompt_eval_count), else the count openload made of the prompt it
	// generated (engine.Config.BodyTokens); 0 when neither is known.
	// AskedTokens is the output tokens its body asked for (max_tokens or
	// the server's name for it), 0 when it did not say.
	PromptTokens int
	AskedTokens  int
	// CachedTokens is the prompt tokens the server said it read from its
	// prefix cache (usage.prompt_tokens_details.cached_tokens, as vLLM
	// writes it); 0 when it did not say.
	CachedTokens int

	// Target is the index of the request's target in the run's mix
	// (engine.Config.Targets; Recorder.TrackTargets names them), or of
	// its step in a session run (Recorder.TrackSessions); 0 in a run of
	// one URL.
	Target uint32
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

// Service is done − sent; zero for a request that was never sent. For a
// retried or re-sent request (Earlier not empty, or Resends > 0) it is
// done − LastSent: what the server took on the final attempt.
func (r *Record) Service() time.Duration {
	if !r.WasSent {
		return 0
	}
	if r.sentAgain() {
		return r.Done - r.LastSent
	}
	return r.Done - r.Sent
}

// sentAgain reports whether the request was sent more than once, so that
// LastSent holds the final attempt's sent.
func (r *Record) sentAgain() bool { return len(r.Earlier) > 0 || r.Resends > 0 }

// SendDelay is sent − scheduled; zero for a request that was never sent.
func (r *Record) SendDelay() time.Duration {
	if !r.WasSent {
		return 0
	}
	return r.Sent - r.Scheduled
}
