package recorder

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"sort"
	"strings"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// Version is the version of the JSON result format written by this package.
// Readers refuse other versions.
const Version = 1

// Counts are the run's accounting. Expected is rate × duration for the
// schedule (a real number for Poisson arrivals).
//
// In a closed run paced to a rate, Expected is what the pacing schedule
// would have sent, Scheduled the requests the users actually issued (each
// with its slot as scheduled time) and Skipped the slots no user took
// because each was still waiting for an earlier response, so that
// Scheduled + Skipped = ⌊rate × duration⌋. A closed run without a rate has
// no schedule: Expected is 0 and means unknown (Result.ExpectedKnown). The
// identity completed + errors + timeouts + unfinished == scheduled holds in
// every mode: skipped slots are not requests and have no outcome.
type Counts struct {
	Expected   float64 `json:"expected"`
	Scheduled  int64   `json:"scheduled"`
	Sent       int64   `json:"sent"`
	Completed  int64   `json:"completed"`
	Errors     int64   `json:"errors"`
	Timeouts   int64   `json:"timeouts"`
	Unfinished int64   `json:"unfinished"`
	Skipped    int64   `json:"skipped,omitempty"` // closed mode: never sent
}

// Balanced reports whether completed + errors + timeouts + unfinished ==
// scheduled.
func (c Counts) Balanced() bool {
	return c.Completed+c.Errors+c.Timeouts+c.Unfinished == c.Scheduled
}

// Percentiles summarise one histogram, in milliseconds.
type Percentiles struct {
	Count int64   `json:"count"`
	P50   float64 `json:"p50"`
	P90   float64 `json:"p90"`
	P95   float64 `json:"p95"`
	P99   float64 `json:"p99"`
	P999  float64 `json:"p999"`
	P9999 float64 `json:"p9999"`
	Max   float64 `json:"max"`
	Mean  float64 `json:"mean"`
}

func usToMs(v float64) float64 { return math.Round(v) / 1000 }

// Summarize reads the percentiles of h (µs values) in milliseconds.
func Summarize(h *hdrhistogram.Histogram) Percentiles {
	if h.TotalCount() == 0 {
		return Percentiles{}
	}
	q := h.ValueAtPercentiles([]float64{50, 90, 95, 99, 99.9, 99.99})
	return Percentiles{
		Count: h.TotalCount(),
		P50:   usToMs(float64(q[50])),
		P90:   usToMs(float64(q[90])),
		P95:   usToMs(float64(q[95])),
		P99:   usToMs(float64(q[99])),
		P999:  usToMs(float64(q[99.9])),
		P9999: usToMs(float64(q[99.99])),
		Max:   usToMs(float64(h.Max())),
		Mean:  usToMs(h.Mean()),
	}
}

// Get returns the named percentile: p50, p90, p95, p99, p999, p9999, max or
// mean.
func (p Percentiles) Get(name string) (float64, bool) {
	switch name {
	case "p50":
		return p.P50, true
	case "p90":
		return p.P90, true
	case "p95":
		return p.P95, true
	case "p99":
		return p.P99, true
	case "p999":
		return p.P999, true
	case "p9999":
		return p.P9999, true
	case "max":
		return p.Max, true
	case "mean":
		return p.Mean, true
	}
	return 0, false
}

// Config is the run's configuration as stored in the result. Header values
// that look like secrets are redacted by RedactHeaders before they get here.
type Config struct {
	Target       string              `json:"target"`
	BuiltinStub  string              `json:"builtin_stub,omitempty"`
	Method       string              `json:"method"`
	Headers      map[string][]string `json:"headers,omitempty"`
	BodyBytes    int                 `json:"body_bytes"`
	Arrival      string              `json:"arrival"`
	Rate         float64             `json:"rate"`
	Duration     string              `json:"duration"`
	Seed         uint64              `json:"seed"`
	Connections  int                 `json:"connections"`
	Timeout      string              `json:"timeout"`
	Drain        string              `json:"drain"`
	Schedule     string              `json:"schedule"`
	ClassHeaders []string            `json:"class_headers,omitempty"`
	ServerTiming bool                `json:"server_timing,omitempty"`
	AutoHeaders  []string            `json:"auto_headers,omitempty"` // response headers read unasked: tables only when responses carried them
	StampHeader  string              `json:"stamp_header,omitempty"` // request header holding the scheduled time, Unix ns
	Retry        string              `json:"retry,omitempty"`        // the retry policy, empty without retries
	Protocol     string              `json:"protocol,omitempty"`     // http/1.1, h2 (TLS, ALPN) or h2c (prior knowledge)
	MaxStreams   int                 `json:"max_streams,omitempty"`  // HTTP/2: streams in flight per connection, 0 = the server's limit
	DialTimeout  string              `json:"dial_timeout,omitempty"` // --dial-timeout, when set
	// Client is what sent the requests: "epoll" (openload's HTTP/1.1
	// client on one event loop), "lean" (the same client, a goroutine per
	// connection) or "net/http"; empty in results written before it was
	// recorded.
	Client string `json:"client,omitempty"`
	// Insecure: TLS certificates were not verified (--insecure).
	Insecure bool `json:"insecure,omitempty"`
	// FollowRedirects: redirects were followed, up to 10 per request.
	FollowRedirects bool `json:"follow_redirects,omitempty"`
	// MaxBody caps the response body bytes read (--max-body), 0 = no cap.
	MaxBody int64 `json:"max_body,omitempty"`
	// Mode is ModeClosed for a closed-loop run, empty for an open one.
	// Users is then the number of users (Connections is the same number)
	// and Think their pause after each response; Rate is 0 when the users
	// were not paced.
	Mode  string `json:"mode,omitempty"`
	Users int    `json:"users,omitempty"`
	Think string `json:"think,omitempty"`
	// StubChild: the built-in stub (BuiltinStub) ran in a child process,
	// so Generator is openload's own use; false with BuiltinStub set, it
	// ran in openload's process and Generator includes its work.
	// StubCPUSeconds is the CPU time the child used in its life.
	StubChild      bool    `json:"builtin_stub_child,omitempty"`
	StubCPUSeconds float64 `json:"builtin_stub_cpu_seconds,omitempty"`
	// Shard: the run sent shards of one schedule (--shard; shard.go);
	// StartAt is the shared start asked for (--start-at), RFC 3339.
	Shard   *ShardConfig `json:"shard,omitempty"`
	StartAt string       `json:"start_at,omitempty"`

	// Stages is the ramp of a --stages run ("30s:100,1m0s:100,30s:0",
	// from Rate); Burstiness the gamma gaps' shape k of Arrival "gamma".
	Stages     string  `json:"stages,omitempty"`
	Burstiness float64 `json:"burstiness,omitempty"`
	Warmup     string  `json:"warmup,omitempty"` // --warmup: Result.Warmup
}

// ModeClosed marks a closed-loop run in Config.Mode.
const ModeClosed = "closed"

// Limit says whether the connection / in-flight limit bound.
type Limit struct {
	Connections int   `json:"connections"`
	MaxInFlight int   `json:"max_in_flight"`
	Waited      int64 `json:"waited"` // requests that found every connection busy
	// Predial is what was opened before the schedule started; nil when
	// nothing was tried (net/http, HTTP/2, or results written before).
	Predial *Predial `json:"predial,omitempty"`
}

// Predial says how many connections the generator opened before the
// schedule's clock started, so that its first requests did not each wait
// for a dial (counted as send delay): Wanted = min(connections, requests),
// Opened of them in Ms milliseconds, and the first dial error, if any.
type Predial struct {
	Wanted int     `json:"wanted"`
	Opened int     `json:"opened"`
	Ms     float64 `json:"ms"`
	Error  string  `json:"error,omitempty"`
}

// Check is one verification finding as stored in the result.
type Check struct {
	Name     string `json:"name"`
	Severity string `json:"severity"` // pass, warn or fail
	Message  string `json:"message"`
}

// SLO is a user objective evaluated at the end of the run.
type SLO struct {
	Expr     string  `json:"expr"`
	Measured float64 `json:"measured"` // ms, or a share when Share
	Share    bool    `json:"share,omitempty"`
	Pass     bool    `json:"pass"`
	// NoData: the result held no sample of the figure, so the objective
	// was not met (Pass is false) and Measured means nothing.
	NoData  bool   `json:"no_data,omitempty"`
	Message string `json:"message"`
	// Default marks the objective openload sets itself when the user set
	// none on errors (verify.DefaultObjective); its breach means the
	// target failed. Absent in results written before it existed.
	Default bool `json:"default,omitempty"`
}

// Histograms holds the encoded histograms (EncodeHistogram), values in
// microseconds.
type Histograms struct {
	Unit      string `json:"unit"`
	Response  string `json:"response"`
	Service   string `json:"service"`
	SendDelay string `json:"send_delay"`
	Corrected string `json:"corrected,omitempty"`
	// Answered and Unanswered split Response when some requests got no
	// answer (see Result.Answered); empty otherwise.
	Answered   string `json:"answered,omitempty"`
	Unanswered string `json:"unanswered,omitempty"`
	// The stream figures' histograms (stream.go), when the run streamed.
	TTFTResponse string `json:"ttft_response,omitempty"`
	TTFTService  string `json:"ttft_service,omitempty"`
	ITL          string `json:"itl,omitempty"`
	TPOT         string `json:"tpot,omitempty"`
}

// Corrected summarises the response times of a closed run paced to a rate
// with HdrHistogram's correction for coordinated omission (see
// Recorder.Correct), and names the expected interval the correction
// assumed: one request every Interval per user.
type Corrected struct {
	Interval string `json:"interval"`
	Percentiles
}

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
}

// ClassTable is the breakdown of requests by one response header's value.
type ClassTable struct {
	Header string       `json:"header"`
	Values []ClassValue `json:"values"` // by count, largest first
	// Auto: the header was looked for without being asked
	// (Recorder.TrackClassesSeen), and responses carried it.
	Auto bool `json:"auto,omitempty"`
}

// Counts is the table as value → count.
func (t ClassTable) Counts() map[string]int64 {
	m := make(map[string]int64, len(t.Values))
	for _, v := range t.Values {
		m[v.Value] = v.Count
	}
	return m
}

// ClassValue is one value of a class header: how many requests carried it,
// their share of all scheduled requests, and their response times.
type ClassValue struct {
	Value    string      `json:"value"`
	Count    int64       `json:"count"`
	Share    float64     `json:"share"`
	Response Percentiles `json:"response"`
	// Histogram is Response's histogram (EncodeHistogram), so that merged
	// shards' classes stay exact; empty in results written before.
	Histogram string `json:"histogram,omitempty"`
	// Per100Rest is, in a table that holds the value NoEvent ("none")
	// besides others, this value's count per 100 requests whose answer
	// carried the header with a value other than NoEvent: e.g. shed
	// decisions per 100 shadow intents. 0 for NoEvent and NoClass.
	Per100Rest float64 `json:"per_100_rest,omitempty"`
}

// ServerMetric summarises one Server-Timing metric over the run, in ms.
type ServerMetric struct {
	Name        string      `json:"name"`
	Percentiles Percentiles `json:"percentiles"`
	Histogram   string      `json:"histogram"`
}

// EncodeHistogram returns h as HdrHistogram's standard text form: the V2
// compressed encoding in base64 ("HISTFAAAA…"), which HdrHistogram's
// libraries decode as is (Java's and JavaScript's
// decodeFromCompressedBase64, Go's Decode).
func EncodeHistogram(h *hdrhistogram.Histogram) (string, error) {
	b, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if err != nil {
		return "", err
	}
	return string(b), nil
}

// oldPrefix starts every histogram written before the standard form: that
// form base64-encoded once more ("HIST" → "SElTV"). A standard string
// always starts "HIST", from the V2 compressed cookie 0x1c849314.
const oldPrefix = "SElTV"

// DecodeHistogram is the inverse of EncodeHistogram. It also reads the
// form results were written in before (see oldPrefix).
func DecodeHistogram(s string) (*hdrhistogram.Histogram, error) {
	if strings.HasPrefix(s, oldPrefix) {
		b, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			return nil, err
		}
		s = string(b)
	}
	return hdrhistogram.Decode([]byte(s))
}

// standardForm returns an old-form histogram string (see oldPrefix) in the
// standard form; any other string, or one that does not unwrap to base64
// text, is returned as it is, for DecodeHistogram to judge when it is used.
// Unwrapping is a base64 decode, not a histogram decode: the histogram's
// bytes are kept exactly.
func standardForm(s string) string {
	if !strings.HasPrefix(s, oldPrefix) {
		return s
	}
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return s
	}
	if _, err := base64.StdEncoding.DecodeString(string(b)); err != nil {
		return s
	}
	return string(b)
}

// Metrics are the names of a result's histograms, as Histogram takes them.
var Metrics = []string{"response", "service", "send_delay", "corrected"}

// StreamMetrics are the names of a stream run's histograms (stream.go),
// which Histogram takes too.
var StreamMetrics = []string{"ttft_response", "ttft_service", "itl", "tpot"}

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

// Histogram decodes one of the result's histograms by metric name:
// response, service, send_delay or corrected.
func (r *Result) Histogram(metric string) (*hdrhistogram.Histogram, error) {
	var s string
	switch metric {
	case "response":
		s = r.Histograms.Response
	case "service":
		s = r.Histograms.Service
	case "send_delay":
		s = r.Histograms.SendDelay
	case "corrected":
		s = r.Histograms.Corrected
		if s == "" {
			return nil, errors.New("result has no corrected histogram (only closed runs paced at a rate have one)")
		}
	case "ttft_response":
		s = r.Histograms.TTFTResponse
	case "ttft_service":
		s = r.Histograms.TTFTService
	case "itl":
		s = r.Histograms.ITL
	case "tpot":
		s = r.Histograms.TPOT
	default:
		return nil, fmt.Errorf("unknown metric %q (known: %s)", metric, strings.Join(append(Metrics[:len(Metrics):len(Metrics)], StreamMetrics...), ", "))
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

// Fill sets the measured parts of res from the recorder: counts (Expected is
// left as set), percentiles, statuses, error kinds, timeline and encoded
// histograms.
func (r *Recorder) Fill(res *Result) error {
	r.flushIntervals()
	expected := res.Counts.Expected
	res.Version = Version
	res.Counts = r.Counts()
	res.Counts.Expected = expected
	res.Censored = r.censored
	res.Clamped = r.clamped
	res.Dropped = r.dropped + r.faults.dropped
	res.Response = Summarize(r.Response)
	res.Service = Summarize(r.Service)
	res.SendDelay = Summarize(r.SendDelay)
	res.Status = map[string]int64{}
	r.status.addTo(res.Status)
	res.ErrorKinds = r.ErrorKinds()
	res.TLSCauses = r.TLSCauses()
	res.Timeline = r.fillClassSeconds(append([]Second(nil), r.timeline...))
	res.Classes = nil
	for _, t := range r.classes {
		if t.auto && !t.seen() {
			continue
		}
		ct := ClassTable{Header: t.header, Auto: t.auto}
		for _, v := range t.order {
			st := t.values[v]
			cv := ClassValue{Value: v, Count: st.count, Response: Summarize(st.response)}
			var err error
			if cv.Histogram, err = EncodeHistogram(st.response); err != nil {
				return err
			}
			if n := res.Counts.Scheduled - r.warm.outcomesSum(); n > 0 {
				cv.Share = float64(st.count) / float64(n)
			}
			ct.Values = append(ct.Values, cv)
		}
		sort.SliceStable(ct.Values, func(i, j int) bool { return ct.Values[i].Count > ct.Values[j].Count })
		ct.setPer100Rest() // classsec.go
		res.Classes = append(res.Classes, ct)
	}
	res.DwellBound = r.dwellResult()
	if res.DwellBound != nil {
		var err error
		if res.DwellBound.Histogram, err = EncodeHistogram(r.dwell.hist); err != nil {
			return err
		}
	}
	warm, err := r.warmupResult()
	if err != nil {
		return err
	}
	res.Warmup = warm
	res.Redirects, res.BodyOverCap = r.faults.redirects, r.faults.overCap
	wire := r.Wire()
	res.Wire = &wire
	res.FailedStatus = r.FailedStatus()
	if len(res.FailedStatus) == 0 {
		res.FailedStatus = nil
	}
	res.ServerTiming = nil
	for _, name := range r.timingOrder {
		enc, err := EncodeHistogram(r.timings[name])
		if err != nil {
			return err
		}
		res.ServerTiming = append(res.ServerTiming, ServerMetric{Name: name, Percentiles: Summarize(r.timings[name]), Histogram: enc})
	}
	res.Histograms.Unit = "us"
	if res.Histograms.Response, err = EncodeHistogram(r.Response); err != nil {
		return err
	}
	if res.Histograms.Service, err = EncodeHistogram(r.Service); err != nil {
		return err
	}
	if res.Histograms.SendDelay, err = EncodeHistogram(r.SendDelay); err != nil {
		return err
	}
	if err := r.fillAnswered(res); err != nil { // answered.go
		return err
	}
	if err := r.fillStream(res); err != nil { // stream.go
		return err
	}
	res.Corrected, res.Histograms.Corrected = nil, ""
	if r.Corrected != nil {
		res.Corrected = &Corrected{Interval: r.interval.String(), Percentiles: Summarize(r.Corrected)}
		if res.Histograms.Corrected, err = EncodeHistogram(r.Corrected); err != nil {
			return err
		}
	}
	return nil
}

// WriteResult writes res as indented JSON.
func WriteResult(w io.Writer, res *Result) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(res)
}

// ReadResult reads a JSON result; name is used in error messages. It refuses
// results of another version and results that do not parse. Histograms
// written in the old double-base64 form come back in the standard form.
func ReadResult(r io.Reader, name string) (*Result, error) {
	dec := json.NewDecoder(r)
	var res Result
	if err := dec.Decode(&res); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, fmt.Errorf("%s: truncated result: %v", name, err)
		}
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return nil, fmt.Errorf("%s: corrupt result at byte %d: %v", name, se.Offset, err)
		}
		return nil, fmt.Errorf("%s: %v", name, err)
	}
	if res.Version == 0 {
		return nil, fmt.Errorf("%s: not an openload result (no version)", name)
	}
	if res.Version != Version {
		return nil, fmt.Errorf("%s: result version %d, this openload reads version %d", name, res.Version, Version)
	}
	// Results written before the standard form are read in it, so that
	// re-encoding one (openload report --format json) upgrades it.
	hs := &res.Histograms
	for _, p := range []*string{&hs.Response, &hs.Service, &hs.SendDelay, &hs.Corrected, &hs.TTFTResponse, &hs.TTFTService, &hs.ITL, &hs.TPOT} {
		*p = standardForm(*p)
	}
	for i := range res.ServerTiming {
		res.ServerTiming[i].Histogram = standardForm(res.ServerTiming[i].Histogram)
	}
	return &res, nil
}

// secretHeaders are always redacted.
var secretHeaders = []string{"Authorization", "Cookie", "Proxy-Authorization"}

// Redacted is what replaces a secret header value.
const Redacted = "REDACTED"

// RedactHeaders copies h with the values of Authorization, Cookie,
// Proxy-Authorization and any header named in extra replaced by Redacted.
func RedactHeaders(h http.Header, extra ...string) map[string][]string {
	if len(h) == 0 {
		return nil
	}
	secret := map[string]bool{}
	for _, name := range append(append([]string(nil), secretHeaders...), extra...) {
		secret[http.CanonicalHeaderKey(name)] = true
	}
	out := make(map[string][]string, len(h))
	keys := make([]string, 0, len(h))
	for k := range h {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		vs := append([]string(nil), h[k]...)
		if secret[http.CanonicalHeaderKey(k)] {
			for i := range vs {
				vs[i] = Redacted
			}
		}
		out[k] = vs
	}
	return out
}

// StatusLine renders status counts as "200 ×1590 · 503 ×10", codes in order.
func StatusLine(status map[string]int64) string {
	keys := make([]string, 0, len(status))
	for k := range status {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s ×%d", k, status[k]))
	}
	return strings.Join(parts, " · ")
}
