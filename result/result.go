package result

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// Version is the version of the JSON result format written by this package.
// Readers refuse other versions.
const Version = 1

// Result is the versioned JSON result of one run.
type Result struct {
	Version      int              `json:"version"`
	Tool         string           `json:"tool"`
	Started      time.Time        `json:"started"`
	Elapsed      float64          `json:"elapsed_s"` // from start to the last record's done
	Config       Config           `json:"config"`
	Counts       Counts           `json:"counts"`
	SendRate     float64          `json:"send_rate"` // sent ÷ the span of the schedule
	Censored     int64            `json:"censored"`  // timeouts + unfinished: response time is a lower bound
	Clamped      int64            `json:"clamped,omitempty"`
	Dropped      int64            `json:"dropped,omitempty"`
	Response     Percentiles      `json:"response"`
	Service      Percentiles      `json:"service"`
	SendDelay    Percentiles      `json:"send_delay"`
	Corrected    *Corrected       `json:"corrected,omitempty"`
	Status       map[string]int64 `json:"status"`
	ErrorKinds   map[string]int64 `json:"error_kinds"`
	Limit        Limit            `json:"limit"`
	Histograms   Histograms       `json:"histograms"`
	Timeline     []Second         `json:"timeline"`
	Classes      []ClassTable     `json:"classes,omitempty"`
	ServerTiming []ServerMetric   `json:"server_timing,omitempty"`
	DwellBound   *DwellBound      `json:"dwell_bound,omitempty"` // --dwell-bound
	Retries      *RetryCounts     `json:"retries,omitempty"`     // --retries (retry.go)
	// Redirects is the number of redirects followed (--follow-redirects),
	// over all requests; BodyOverCap the completed responses whose body
	// was longer than --max-body (faults.go).
	Redirects int64 `json:"redirects_followed,omitempty"`
	// Wire counts the attempts written to connections, re-sends included
	// (wire.go); nil in results written before it was counted.
	Wire *Wire `json:"wire,omitempty"`
	// Stamps is the check that every record's stamps are in order
	// (stamps.go); nil in results written before it was made.
	Stamps *Stamps `json:"stamps,omitempty"`
	// Refusal is the first refused answer, its body's beginning
	// included (refusal.go); nil when no answer was a client error, and
	// in results written before it was kept.
	Refusal *Refusal `json:"refusal,omitempty"`
	// FailedStatus counts the responses whose head came but that failed or
	// timed out before their end, by the head's status; Status counts
	// completed responses only.
	FailedStatus map[string]int64 `json:"failed_status,omitempty"`
	BodyOverCap  int64            `json:"body_over_cap,omitempty"`
	Generator    *Generator       `json:"generator,omitempty"` // openload's own CPU and GC (generator.go)
	Checks       []Check          `json:"checks"`
	SLOs         []SLO            `json:"slos,omitempty"`
	Interrupted  bool             `json:"interrupted,omitempty"`
	// Answered and Unanswered are set when some requests got no answer
	// (errors, timeouts, unfinished; answered.go): Answered is the
	// response time of the requests that completed, with any status
	// (Count 0 when none did), Unanswered the time the others took to
	// fail. Response holds both, as it always did. Nil when every
	// request completed, and in results written before they existed.
	Answered   *Percentiles `json:"answered,omitempty"`
	Unanswered *Percentiles `json:"unanswered,omitempty"`
	// TLSCauses splits ErrorKinds["tls"] by cause (TLSCause names:
	// self_signed, unknown_authority, expired, hostname, certificate,
	// handshake, not_tls; tlscause.go).
	TLSCauses map[string]int64 `json:"tls_causes,omitempty"`
	// Start is the run's start given --start-at, Shards each shard's own
	// figures (a shard's result holds its own; a merge, all it added;
	// shard.go).
	Start  *StartRecord `json:"start,omitempty"`
	Shards []ShardRun   `json:"shards,omitempty"`
	// Stream holds the figures of streamed answers (stream.go); nil when
	// no request streamed.
	Stream *StreamResult `json:"stream,omitempty"`

	// Warmup holds the requests of --warmup, kept out of the headline
	// figures (warmup.go); nil without one.
	Warmup *Warmup `json:"warmup,omitempty"`

	// Targets holds the figures of each target of a request mix, in the
	// mix's order (part.go); nil in a run of one URL.
	Targets []Part `json:"targets,omitempty"`

	// Lazy is what reading the targets as the run sent them (as
	// vegeta's -lazy reads a targets file or a pipe) did to the run; nil
	// when they were read before it.
	Lazy *Lazy `json:"lazy,omitempty"`

	// Steps holds the figures of each step of a session run, in the
	// scenario's order, and Sessions its users' account (session.go);
	// nil in a run of single requests.
	Steps    []Part    `json:"steps,omitempty"`
	Sessions *Sessions `json:"sessions,omitempty"`

	// Scenarios holds each scenario's own result when the run was
	// several (union.go); the fields above are then their whole.
	Scenarios []Scenario `json:"scenarios,omitempty"`

	// GRPC counts a gRPC run's completed calls by the grpc-status they
	// ended with, by GRPCKey (ok, unavailable …); nil in a run of HTTP
	// requests. Status holds their HTTP status as for any answer.
	GRPC map[string]int64 `json:"grpc,omitempty"`
}

// Closed reports whether the result is of a closed-loop run.
func (r *Result) Closed() bool { return r.Config.Mode == ModeClosed }

// Check returns the check named name, and whether the result has one.
func (r *Result) Check(name string) (Check, bool) {
	for _, c := range r.Checks {
		if c.Name == name {
			return c, true
		}
	}
	return Check{}, false
}

// ExpectedKnown reports whether Counts.Expected means something: false for
// a closed run without a rate, which has no schedule.
func (r *Result) ExpectedKnown() bool { return !r.Closed() || r.Config.Rate > 0 }

// Histogram decodes one of the result's histograms by metric name, one of
// HistogramNames: response, service, send_delay, corrected, or a stream
// figure.
func (r *Result) Histogram(metric string) (*hdrhistogram.Histogram, error) {
	if m, ok := LookupMetric(metric); !ok || !m.Histogram {
		return nil, fmt.Errorf("unknown metric %q (known: %s)", metric, strings.Join(HistogramNames(), ", "))
	}
	var s string
	for _, p := range r.Histograms.named() {
		if p.name == metric {
			s = *p.s
		}
	}
	if s == "" && metric == "corrected" {
		return nil, errors.New("result has no corrected histogram (only closed runs paced at a rate have one)")
	}
	if s == "" {
		return nil, fmt.Errorf("result has no %s histogram", metric)
	}
	h, err := DecodeHistogram(s)
	if err != nil {
		return nil, fmt.Errorf("%s histogram: %v", metric, err)
	}
	return h, nil
}

// AttemptStatus is the number of attempts answered with code: every
// attempt of a run with retries (Retries), the final ones otherwise, which
// are then all the attempts.
func (r *Result) AttemptStatus(code int) int64 {
	if r.Retries != nil {
		return r.Retries.AttemptStatus[strconv.Itoa(code)]
	}
	return r.Status[strconv.Itoa(code)]
}

// Headline are the counts the headline figures hold: Counts less the
// warm-up's.
func (r *Result) Headline() Counts {
	c := r.Counts
	if w := r.Warmup; w != nil {
		c.Scheduled -= w.Scheduled
		c.Completed -= w.Completed
		c.Errors -= w.Errors
		c.Timeouts -= w.Timeouts
		c.Unfinished -= w.Unfinished
	}
	return c
}
