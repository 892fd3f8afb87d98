package engine

import (
	"net/http"
	"net/url"
)

// A request mix (Config.Targets): several targets in one run, as
// vegeta's targets file holds them. Request seq's target is a pure
// function of seq (TargetIndex), so every shard of a split run sends the
// same target for the same request.

// MaxTargets bounds a run's mix: a record names its target in 16 bits.
const MaxTargets = 1 << 16

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
	Headers map[string]Template // replaces the values of these headers (canonical names)
	BodyT   Template            // replaces Body
}

// Template writes a part of a request anew for each request: Append
// appends request seq's bytes to dst. It must be a pure function of seq
// (shards agree), safe for concurrent use, and not allocate once dst has
// room (it runs on the hot path). internal/mix's templates are one.
type Template interface {
	Append(dst []byte, seq uint64) []byte
}
