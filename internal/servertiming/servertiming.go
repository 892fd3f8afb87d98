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
	"strings"
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
func Parse(values []string, fn func(Metric)) {
	for _, v := range values {
		parseValue(v, fn)
	}
}

// ParseAll is Parse collecting into a slice.
func ParseAll(values ...string) []Metric {
	var out []Metric
	Parse(values, func(m Metric) { out = append(out, m) })
	return out
}

func isTokenChar(c byte) bool {
	switch {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		return true
	}
	return strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
}

type scanner struct {
	s string
	i int
}

func (p *scanner) ows() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t') {
		p.i++
	}
}

func (p *scanner) token() string {
	start := p.i
	for p.i < len(p.s) && isTokenChar(p.s[p.i]) {
		p.i++
	}
	return p.s[start:p.i]
}

// quoted reads a quoted-string and reports whether it was well formed. The
// value is not unescaped (it is only needed for dur, which is a number).
func (p *scanner) quoted() (string, bool) {
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
	return "", false
}

// skip moves past the rest of a malformed metric, up to the next comma not
// inside a quoted string.
func (p *scanner) skip() {
	for p.i < len(p.s) && p.s[p.i] != ',' {
		if p.s[p.i] == '"' {
			p.quoted()
			continue
		}
		p.i++
	}
}

func parseValue(s string, fn func(Metric)) {
	p := &scanner{s: s}
	for p.i < len(p.s) {
		p.ows()
		if p.i < len(p.s) && p.s[p.i] == ',' {
			p.i++
			continue
		}
		m := Metric{Name: p.token()}
		ok := m.Name != ""
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
			name := p.token()
			if name == "" {
				ok = false
				break
			}
			p.ows()
			var val string
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
			if ok && !m.HasDur && strings.EqualFold(name, "dur") {
				if d, err := strconv.ParseFloat(val, 64); err == nil && d == d && d-d == 0 {
					m.Dur, m.HasDur = d, true
				}
			}
		}
		if ok {
			fn(m)
		} else {
			p.skip()
		}
	}
}
