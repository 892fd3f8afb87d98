package result

import (
	"fmt"
	"maps"
	"net/http"
	"slices"
	"sort"
	"strings"
)

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

	// Request is what openload made of the request bodies beyond what
	// was typed; nil when it made nothing.
	Request *Request `json:"request,omitempty"`
}

// Request says what openload did to the request bodies, so that a
// result shows what a server was sent.
type Request struct {
	// ContentType is the Content-Type openload added because the body
	// is JSON (as curl --json does); empty when -H set one.
	ContentType string `json:"content_type_added,omitempty"`
	// Model is the "model" member openload set in every JSON body;
	// ModelFrom is the URL it was read from (--model auto), empty when
	// it was given.
	Model     string `json:"model,omitempty"`
	ModelFrom string `json:"model_from,omitempty"`
	// Prompts describes bodies openload made: generated prompts or a
	// dataset read, and the tokenizer that counted them.
	Prompts string `json:"prompts,omitempty"`
	// Targets describes a request mix: how many targets, from where,
	// taken how (in turn, or drawn by weight and seed), and the values
	// file of its {{csv.…}} placeholders.
	Targets string `json:"targets,omitempty"`
	// TargetMethods counts a request mix's targets by method, so that
	// its headline says what it sends ("3 targets (GET 2, POST 1)")
	// rather than its first target's.
	TargetMethods map[string]int `json:"target_methods,omitempty"`
	// Connections says why openload chose the connection limit
	// (Config.Connections) when none was given: a model server's
	// answers, sized from the schedule and the timeout.
	Connections string `json:"connections,omitempty"`
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
	Count    bool    `json:"count,omitempty"` // Measured is a number of requests (status.503<=0)
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

// secretHeaders are always redacted.
var secretHeaders = []string{"Authorization", "Cookie", "Proxy-Authorization"}

// SecretHeaders are the request headers whose values are credentials:
// Authorization, Cookie, Proxy-Authorization, and those named in extra.
func SecretHeaders(extra ...string) []string {
	return append(append([]string(nil), secretHeaders...), extra...)
}

// Redacted is what replaces a secret header value.
const Redacted = "REDACTED"

// RedactHeaders copies h with the values of Authorization, Cookie,
// Proxy-Authorization and any header named in extra replaced by Redacted.
func RedactHeaders(h http.Header, extra ...string) map[string][]string {
	if len(h) == 0 {
		return nil
	}
	secret := map[string]bool{}
	for _, name := range SecretHeaders(extra...) {
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

// merge adds o's shards to c's: the configuration of the sum is the
// first input's (sameRun checked the others agree) with every input's
// shard indexes, and the built-in stub ran in a child only if it did
// for every shard.
func (c Config) merge(o Config) Config {
	c.StubChild = c.StubChild && o.StubChild
	if c.Shard == nil || o.Shard == nil { // a union of scenarios (union.go)
		return c
	}
	s := *c.Shard
	s.Indexes = append(slices.Clone(s.Indexes), o.Shard.Indexes...)
	slices.Sort(s.Indexes)
	if s.WholeScheduled < 0 {
		s.WholeScheduled = o.Shard.WholeScheduled
	}
	c.Shard = &s
	return c
}

// derive sets what the configuration of a merge says of the whole: its
// schedule, and the generators' clients and connections summed from
// their own runs.
func (c *Config) derive(runs []ShardRun) {
	switch sc := c.Shard; {
	case sc == nil: // a union of scenarios says its own (union.go)
	case sc.Complete():
		c.Schedule = sc.Whole
	default:
		c.Schedule = fmt.Sprintf("shards %s of %d of %s", joinIndexes(sc.Indexes), sc.Of, sc.Whole)
	}
	clients := map[string]bool{}
	c.Connections, c.StubCPUSeconds = 0, 0
	for _, r := range runs {
		c.Connections += r.Connections
		if r.Client != "" {
			clients[r.Client] = true
		}
	}
	c.Client = strings.Join(slices.Sorted(maps.Keys(clients)), "+")
}

// merge sums the connection limits, the requests that waited for one
// and the connections opened before the start. MaxInFlight is the sum of
// the shards' own peaks: an upper bound of the whole's, which the shards
// reached at instants no result records.
func (l Limit) merge(o Limit) Limit {
	l.Connections += o.Connections
	l.MaxInFlight += o.MaxInFlight
	l.Waited += o.Waited
	if p := o.Predial; p != nil {
		sum := Predial{}
		if l.Predial != nil {
			sum = *l.Predial
		}
		sum.Wanted += p.Wanted
		sum.Opened += p.Opened
		sum.Ms = max(sum.Ms, p.Ms)
		if sum.Error == "" {
			sum.Error = p.Error
		}
		l.Predial = &sum
	}
	return l
}
