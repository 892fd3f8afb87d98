package scripted

import (
	"math"
	"strconv"
	"strings"
)

// The Python (json.dumps, pydantic-core), Rust (serde_json) and C++
// (nlohmann::json dump with ensure_ascii=false) servers write JSON the same
// way for the values used here: compact, keys in the order the source
// lists them, non-ASCII text raw, and only '"', '\\' and control characters
// escaped (\b \f \n \r \t by name, the rest as \u00xx in lower-case hex).
// Go's encoding/json differs (it escapes <, >, & and U+2028/9), so it is
// used only for Ollama, which is itself Go.

// q quotes s as those servers do.
func q(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			if c < 0x20 {
				const hex = "0123456789abcdef"
				b.WriteString(`\u00`)
				b.WriteByte(hex[c>>4])
				b.WriteByte(hex[c&0xf])
			} else {
				b.WriteByte(c)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}

// object renders key/value pairs, values already rendered, in order.
func object(kv ...string) string {
	var b strings.Builder
	b.WriteByte('{')
	for i := 0; i+1 < len(kv); i += 2 {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(q(kv[i]))
		b.WriteByte(':')
		b.WriteString(kv[i+1])
	}
	b.WriteByte('}')
	return b.String()
}

// array renders already-rendered items.
func array(items ...string) string { return "[" + strings.Join(items, ",") + "]" }

func itoa(n int) string { return strconv.Itoa(n) }

func boolean(v bool) string { return strconv.FormatBool(v) }

const null = "null"

// nlohmannDouble renders a double as nlohmann::json does: the shortest
// representation that round-trips, in fixed notation with ".0" added to
// integral values while the decimal exponent is within [-4, 15), else in
// exponent form; NaN and ±Inf become null.
func nlohmannDouble(f float64) string {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return null
	}
	if f == 0 {
		if math.Signbit(f) {
			return "-0.0"
		}
		return "0.0"
	}
	e := strconv.FormatFloat(f, 'e', -1, 64)
	exp, _ := strconv.Atoi(e[strings.IndexByte(e, 'e')+1:])
	if exp < -4 || exp >= 15 {
		// Exponent form, as nlohmann writes it: at least two exponent
		// digits with a sign, no ".0".
		return e
	}
	s := strconv.FormatFloat(f, 'f', -1, 64)
	if !strings.ContainsAny(s, ".e") {
		s += ".0"
	}
	return s
}
