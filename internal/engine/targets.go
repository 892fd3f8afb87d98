package engine

import (
	"context"
	"fmt"
	"math"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"golang.org/x/net/http/httpguts"

	"github.com/openload/openload/field"
	"github.com/openload/openload/internal/splitmix"
)

// A request mix (Config.Targets): several targets in one run, as
// vegeta's targets file holds them. Request seq's target is a pure
// function of seq (TargetIndex), so every shard of a split run sends the
// same target for the same request.

// MaxTargets bounds a run's mix. A record names its target in 32 bits
// (Record.Target); the bound is the table's memory, every target being
// held parsed for the whole run: a run of 70,000 vegeta GET lines peaked
// at 240 MB, one of one line at 30 MB (about 3 KB a target), so about
// 3 GB at the bound. vegeta, which can read its targets as it sends
// (-lazy), has no bound; openload's table lets every shard pick request
// seq's target from seq alone.
const MaxTargets = 1 << 20

// Target is one request of a mix. URL, Header and Body are the request's
// when they hold no template; Path, Headers and BodyT, when set, make
// the request target (path and query), those header values and the body
// anew for each request from its number.
type Target struct {
	Name   string // as the report names it: the file's name, else "METHOD URL"
	Method string
	URL    *url.URL
	Header http.Header
	Body   []byte

	Path    Template            // replaces URL's path and query (the request line's target)
	Headers map[string]Template // replaces the values of these headers (names as sent, one case each)
	BodyT   Template            // replaces Body
}

// Template writes a part of a request anew for each request: Append
// appends request seq's bytes to dst. It must be a pure function of seq
// (shards agree), safe for concurrent use, and not allocate once dst has
// room (it runs on the hot path). internal/mix's templates are one.
type Template interface {
	Append(dst []byte, seq uint64) []byte
}

// TargetIndex returns the index into cfg.Targets of request seq's
// target: seq mod n in turn without TargetWeights (vegeta's default),
// else a draw that depends only on TargetSeed and seq: u uniform in
// [0, W) from SplitMix64 (as BodyIndex draws), W the weights' sum, and
// the first target whose cumulative weight exceeds u, so target i is
// drawn with probability wᵢ/W and a target of weight 0 never. 0 without
// Targets. The clients use a picker, the same function with the
// cumulative weights summed once.
func (cfg *Config) TargetIndex(seq uint64) int {
	n := len(cfg.Targets)
	if n == 0 {
		return 0
	}
	if len(cfg.TargetWeights) == 0 {
		return int(seq % uint64(n))
	}
	var total float64
	for _, w := range cfg.TargetWeights {
		total += w
	}
	u, acc, last := splitmix.Unit(splitmix.At(cfg.TargetSeed, seq))*total, 0.0, 0
	for i, w := range cfg.TargetWeights {
		acc += w
		if u < acc {
			return i
		}
		if w > 0 {
			last = i
		}
	}
	return last // u rounded up to W
}

// picker is which of a run's requests request seq sends, on every
// client: its target (TargetIndex) in a mix, its body (BodyIndex) with
// Bodies, else the one request. Made once per run, so that a weighted
// draw is a binary search, not a sum over every weight.
type picker struct {
	n      uint64
	bodies bool      // the variants are Bodies
	sample bool      // Bodies drawn (BodySample)
	seed   uint64    // BodySeed or TargetSeed
	off    uint64    // BodyOffset, added to seq (0 for targets)
	cum    []float64 // the targets' cumulative weights, when drawn
	last   int       // the last target of weight > 0
}

func newPicker(cfg *Config) picker {
	if len(cfg.Targets) == 0 {
		return picker{n: uint64(len(cfg.Bodies)), bodies: true, sample: cfg.BodySample, seed: cfg.BodySeed, off: cfg.BodyOffset}
	}
	p := picker{n: uint64(len(cfg.Targets)), seed: cfg.TargetSeed}
	if len(cfg.TargetWeights) > 0 {
		p.cum = make([]float64, len(cfg.TargetWeights))
		acc := 0.0
		for i, w := range cfg.TargetWeights {
			acc += w // in TargetIndex's order: the same sums, bit for bit
			p.cum[i] = acc
			if w > 0 {
				p.last = i
			}
		}
	}
	return p
}

// index is the variant of request seq: TargetIndex or BodyIndex.
func (p *picker) index(seq uint64) int {
	seq += p.off
	switch {
	case p.n <= 1:
		return 0
	case p.bodies && p.sample:
		return int(splitmix.At(p.seed, seq) % p.n)
	case p.cum == nil:
		return int(seq % p.n)
	}
	u := splitmix.Unit(splitmix.At(p.seed, seq)) * p.cum[len(p.cum)-1]
	lo, hi := 0, len(p.cum) // the first i with u < cum[i]
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if u < p.cum[m] {
			hi = m
		} else {
			lo = m + 1
		}
	}
	if lo == len(p.cum) {
		return p.last
	}
	return lo
}

// target is the i-th request a run sends: Targets[i] in a mix, else the
// run's one URL, method, header and body.
func (cfg *Config) target(i int) Target {
	if len(cfg.Targets) > 0 {
		return cfg.Targets[i]
	}
	return Target{Method: cfg.Method, URL: cfg.URL, Header: cfg.Header, Body: cfg.Body}
}

// mixed returns cfg with URL, Method, Header and Body the first target's
// when it has Targets, for the code that reads them (the client's choice,
// the protocol's checks, the report), and every target's empty method
// GET, as net/http takes it.
func (cfg Config) mixed() Config {
	if cfg.GRPC {
		cfg = cfg.grpcCall() // grpc.go
	}
	if len(cfg.Targets) == 0 {
		return cfg
	}
	ts := slices.Clone(cfg.Targets)
	for i := range ts {
		if ts[i].Method == "" {
			ts[i].Method = http.MethodGet
		}
	}
	cfg.Targets = ts
	cfg.URL, cfg.Method, cfg.Header, cfg.Body = ts[0].URL, ts[0].Method, ts[0].Header, ts[0].Body
	return cfg
}

// TargetStream is a lazy mix (Config.TargetStream), as vegeta's -lazy
// reads its targets: request seq goes to the seq-th target the stream
// gives, each target sent once. The open run's dispatcher takes the next
// target when an arrival comes due, so a target that has not come yet
// holds its arrival and every one after it: they leave late, and the
// wait is their send delay (Stats.TargetsWaited counts the arrivals that
// waited); their scheduled times stay the schedule's. When the stream
// ends before the schedule does, scheduling stops there
// (Stats.TargetsEnded), as vegeta stops its attack at the end of its
// targets: every arrival taken has its target and its record, and the
// arrivals after it never were.
type TargetStream interface {
	// Targets gives the stream's targets in order; it is closed when
	// the stream ends. Only the dispatcher receives from it.
	Targets() <-chan Target
	// Err is why the stream ended, read once Targets is closed: nil at
	// its end, else its error (a target that could not be read or
	// built).
	Err() error
}

// nextTarget is the stream's target for the arrival due at off, nil
// when the stream ended or ctx is done (stats says which): an arrival
// whose target has not come waits for it. TargetsWaited counts, once
// they have their targets (an arrival left without one is never
// scheduled), the arrivals that waited here and those due before the
// last wait ended: the stream gives its targets in order, so theirs
// were read after that wait, after they were due. A target
// the run cannot send (checkTarget) ends the stream with its error, as
// it would have refused a run that read it whole.
func (g *generator) nextTarget(ctx context.Context, stats *Stats, off time.Duration) *Target {
	ls := &g.lazy
	var t Target
	ok, waited := true, off < ls.waitEnd
	select {
	case t, ok = <-ls.ch:
	default:
		waited = true
		select {
		case t, ok = <-ls.ch:
		case <-ctx.Done():
			stats.Interrupted = true
			return nil
		}
		ls.waitEnd = g.since()
	}
	if !ok {
		stats.TargetsEnded, stats.TargetsErr = true, g.cfg.TargetStream.Err()
		return nil
	}
	if waited {
		g.targetsWaited.Add(1) // an arrival that got its target, and is scheduled
	}
	if t.Method == "" {
		t.Method = http.MethodGet
	}
	name := fmt.Sprintf("target %d (%s)", ls.n, t.Name)
	if err := checkTarget(&t, g.cfg.URL, name, "the first target"); err != nil {
		stats.TargetsEnded, stats.TargetsErr = true, err
		return nil
	}
	ls.n++
	return &t
}

// lazyTargets is the dispatcher's side of Config.TargetStream: its
// channel, and the targets taken.
type lazyTargets struct {
	ch      <-chan Target
	n       int64
	waitEnd time.Duration // when the last wait for a target ended, from the start
}

// tooManyTargets is the error for a mix of n > MaxTargets targets.
func tooManyTargets(n int) error {
	return field.Errorf("Targets", n, "{Targets} holds %d targets, at most %d", n, MaxTargets)
}

// validateTargets checks the mix: at most MaxTargets, not with Bodies,
// weights that can be drawn from, and targets that one connection pool
// can send (one scheme://host:port, as a pool's connections go to one
// address), each with a valid method and headers, and templates whose
// first request makes a valid request target and header values.
func (cfg Config) validateTargets() error {
	if cfg.TargetStream != nil {
		switch {
		case len(cfg.Targets) > 0:
			return field.Errorf("TargetStream", len(cfg.Targets), "{TargetStream} cannot go with {Targets}: the stream gives every target")
		case len(cfg.Bodies) > 0:
			return field.Errorf("TargetStream", len(cfg.Bodies), "{TargetStream} cannot go with {Bodies}: each target has its body")
		case cfg.GRPC:
			return field.Errorf("TargetStream", cfg.GRPC, "{TargetStream} cannot go with {GRPC}: a gRPC run's calls are made before the start")
		}
	}
	if len(cfg.Targets) == 0 {
		if len(cfg.TargetWeights) > 0 {
			return field.Errorf("TargetWeights", cfg.TargetWeights, "{TargetWeights} given without {Targets}")
		}
		return nil
	}
	switch n := len(cfg.Targets); {
	case n > MaxTargets:
		return tooManyTargets(n)
	case len(cfg.Bodies) > 0:
		return field.Errorf("Bodies", len(cfg.Bodies), "{Bodies} cannot go with {Targets}: each target has its body")
	case len(cfg.TargetWeights) > 0 && len(cfg.TargetWeights) != n:
		return field.Errorf("TargetWeights", cfg.TargetWeights, "{TargetWeights} holds %d weights for %d targets: one each", len(cfg.TargetWeights), n)
	}
	total := 0.0
	for i, w := range cfg.TargetWeights {
		if math.IsNaN(w) || math.IsInf(w, 0) || w < 0 {
			return field.Errorf("TargetWeights", w, "{TargetWeights}: the weight of %s must be a finite number ≥ 0, got %v", cfg.targetName(i), w)
		}
		total += w
	}
	if len(cfg.TargetWeights) > 0 && (total <= 0 || math.IsInf(total, 0)) {
		return field.Errorf("TargetWeights", total, "{TargetWeights} must sum to a finite number > 0, got %v", total)
	}
	for i := range cfg.Targets {
		if err := checkTarget(&cfg.Targets[i], cfg.Targets[0].URL, cfg.targetName(i), cfg.targetName(0)); err != nil {
			return err
		}
	}
	return nil
}

// checkTarget checks one target, called name in errors: an http or https
// URL of the origin and credentials of first's URL (the run's, that of
// the target called firstName), a valid method and valid headers and
// templates. Validate checks a mix's targets by it, and the dispatcher
// each target of a TargetStream as it comes.
func checkTarget(t *Target, first *url.URL, name, firstName string) error {
	if t.URL == nil || t.URL.Host == "" || (t.URL.Scheme != "http" && t.URL.Scheme != "https") {
		return field.Errorf("Targets", name, "{Targets}: %s needs an http or https URL with a host, got %v", name, t.URL)
	}
	if o := Origin(t.URL); o != Origin(first) {
		return field.Errorf("Targets", name, "{Targets}: %s goes to %s, and the run's targets share one scheme://host:port, %s's: one pool of connections sends them", name, o, firstName)
	}
	if t.URL.User.String() != first.User.String() {
		return field.Errorf("Targets", name, "{Targets}: %s has other credentials in its URL than %s: the run's targets share them", name, firstName)
	}
	if t.Method != "" && !httpguts.ValidHeaderFieldName(t.Method) {
		return field.Errorf("Targets", name, "{Targets}: %s's method %q is not a valid HTTP method", name, t.Method)
	}
	return t.validateHeaders(name)
}

// validateHeaders checks t's header names and templates.
func (t Target) validateHeaders(name string) error {
	for k := range t.Header {
		if !httpguts.ValidHeaderFieldName(k) {
			return field.Errorf("Targets", name, "{Targets}: %s's header %q is not a valid header name", name, k)
		}
	}
	if t.Path != nil {
		// The request target must be origin-form: a path and a query,
		// as the request line and HTTP/2's :path carry them.
		if p := string(t.Path.Append(nil, 0)); !strings.HasPrefix(p, "/") || strings.HasPrefix(p, "//") || strings.ContainsFunc(p, notTargetByte) {
			return field.Errorf("Targets", name, "{Targets}: %s's path template writes %q for request 0, not a path (and query) starting with one /", name, p)
		}
	}
	for k, tm := range t.Headers {
		switch {
		case !httpguts.ValidHeaderFieldName(k):
			return field.Errorf("Targets", name, "{Targets}: %s's templated header %q is not a valid header name", name, k)
		case twiceInCase(t.Headers, k):
			return field.Errorf("Targets", name, "{Targets}: %s's templated header %q is given twice, in two cases", name, k)
		case tm == nil:
			return field.Errorf("Targets", name, "{Targets}: %s's templated header %s has no template", name, k)
		case slices.Contains([]string{"Host", "Content-Length", "Transfer-Encoding", "Connection"}, http.CanonicalHeaderKey(k)):
			// The connection's and the framing's: one host per run, the
			// body's length written by the engine.
			return field.Errorf("Targets", name, "{Targets}: %s's header %s cannot be templated: the engine writes it", name, k)
		}
		if v := tm.Append(nil, 0); !httpguts.ValidHeaderFieldValue(string(v)) {
			return field.Errorf("Targets", name, "{Targets}: %s's template of %s writes %q for request 0, not a valid header value", name, k, v)
		}
	}
	return nil
}

// twiceInCase reports whether ts has another name that is k in another
// case: the clients write each name as given, and one header twice
// would be sent twice.
func twiceInCase(ts map[string]Template, k string) bool {
	for n := range ts {
		if n != k && strings.EqualFold(n, k) {
			return true
		}
	}
	return false
}

// notTargetByte reports whether r may not be in a request target.
func notTargetByte(r rune) bool { return r <= ' ' || r == 0x7f }

// targetName names target i in an error: its Name, else its place.
func (cfg Config) targetName(i int) string {
	if n := cfg.Targets[i].Name; n != "" {
		return fmt.Sprintf("target %d (%s)", i, n)
	}
	return fmt.Sprintf("target %d", i)
}

// Origin is u's "scheme://host:port", the port made explicit and the host
// in lower case: what one connection pool serves.
func Origin(u *url.URL) string {
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	return u.Scheme + "://" + net.JoinHostPort(strings.ToLower(u.Hostname()), port)
}
