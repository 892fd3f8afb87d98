// Package servertiming parses the W3C Server-Timing response header:
//
//	Server-Timing = #server-timing-metric
//	server-timing-metric = metric-name *( OWS ";" OWS server-timing-param )
//	server-timing-param  = param-name OWS "=" OWS param-value
//	param-value          = token / quoted-string
//
// for example `queue;dur=12.3, model;dur=50;desc="resnet, v2", miss`. Only
// the dur parameter (milliseconds) is kept; metrics without one are
// reported with HasDur false. Quoted strings may hold commas and
// semicolons; malformed metrics are skipped, never fatal, as the
// specification asks of user agents.
package servertiming

import (
	"strconv"
)

// Metric is one parsed metric.
type Metric struct {
	Name   string
	Dur    float64 // milliseconds
	HasDur bool
}

// Parse parses every value of the header (a response may carry several
// Server-Timing lines) and calls fn for each well-formed metric, in order.
// It does not allocate: names are slices of the input.
//
//go:noinline (see ParseBytes)
func Parse(values []string, fn func(Metric)) {
	for _, v := range values {
		parse(v, func(name string, dur float64, hasDur bool) {
			fn(Metric{Name: name, Dur: dur, HasDur: hasDur})
		})
	}
}

// ParseBytes is Parse of one value held in bytes, for a caller that reads
// response heads itself: fn gets each well-formed metric's name as a
// slice of v, and its duration. It reads exactly what Parse reads from
// string(v), and allocates nothing.
//
// Not inlined: a caller in another package would then call the generic
// parser itself, whose escape analysis it cannot see, and its fn would
// be moved to the heap on every call; ParseBytes's own summary says fn
// does not escape.
//
//go:noinline
func ParseBytes(v []byte, fn func(name []byte, dur float64, hasDur bool)) {
	parse(v, fn)
}

// ParseAll is Parse collecting into a slice.
func ParseAll(values ...string) []Metric {
	var out []Metric
	Parse(values, func(m Metric) { out = append(out, m) })
	return out
}

// text is what the parser reads: a header value as a string (from
// net/http's Header) or as the bytes of a response head.
type text interface{ ~string | ~[]byte }

func isTokenChar(c byte) bool { return tchar[c] }

// tchar marks the bytes of a token (RFC 9110 tchar): a table, because
// the scanner asks for every byte of every name.
var tchar = func() (t [256]bool) {
	for c := range 256 {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
			t[c] = true
		}
	}
	for _, c := range []byte("!#$%&'*+-.^_`|~") {
		t[c] = true
	}
	return t
}()

type scanner[S text] struct {
	s S
	i int
}

func (p *scanner[S]) ows() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t') {
		p.i++
	}
}

func (p *scanner[S]) token() S {
	start := p.i
	for p.i < len(p.s) && isTokenChar(p.s[p.i]) {
		p.i++
	}
	return p.s[start:p.i]
}

// quoted reads a quoted-string and reports whether it was well formed. The
// value is not unescaped (it is only needed for dur, which is a number).
func (p *scanner[S]) quoted() (S, bool) {
	p.i++ // opening quote
	start := p.i
	for p.i < len(p.s) {
		switch p.s[p.i] {
		case '\\':
			p.i += 2
			continue
		case '"':
			v := p.s[start:p.i]
			p.i++
			return v, true
		}
		p.i++
	}
	p.i = len(p.s)
	return p.s[:0], false
}

// skip moves past the rest of a malformed metric, up to the next comma not
// inside a quoted string.
func (p *scanner[S]) skip() {
	for p.i < len(p.s) && p.s[p.i] != ',' {
		if p.s[p.i] == '"' {
			p.quoted()
			continue
		}
		p.i++
	}
}

// isDur reports whether name is "dur", ignoring ASCII case (a parameter
// name is a token: ASCII).
func isDur[S text](name S) bool {
	return len(name) == 3 && name[0]|0x20 == 'd' && name[1]|0x20 == 'u' && name[2]|0x20 == 'r'
}

func parse[S text](s S, fn func(name S, dur float64, hasDur bool)) {
	p := &scanner[S]{s: s}
	for p.i < len(p.s) {
		p.ows()
		if p.i < len(p.s) && p.s[p.i] == ',' {
			p.i++
			continue
		}
		name := p.token()
		var dur float64
		hasDur := false
		ok := len(name) > 0
		for ok {
			p.ows()
			if p.i >= len(p.s) || p.s[p.i] == ',' {
				break
			}
			if p.s[p.i] != ';' {
				ok = false
				break
			}
			p.i++
			p.ows()
			param := p.token()
			if len(param) == 0 {
				ok = false
				break
			}
			p.ows()
			val := p.s[:0]
			if p.i < len(p.s) && p.s[p.i] == '=' {
				p.i++
				p.ows()
				if p.i < len(p.s) && p.s[p.i] == '"' {
					val, ok = p.quoted()
				} else {
					val = p.token()
				}
			}
			// The first dur wins; a dur that is not a finite number is
			// ignored (the metric is kept without a duration).
			if ok && !hasDur && isDur(param) {
				if d, err := strconv.ParseFloat(string(val), 64); err == nil && d == d && d-d == 0 {
					dur, hasDur = d, true
				}
			}
		}
		if ok {
			fn(name, dur, hasDur)
		} else {
			p.skip()
		}
	}
}
