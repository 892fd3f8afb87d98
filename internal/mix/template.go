package mix

import (
	"fmt"
	"math/bits"
	"slices"
	"strconv"
	"strings"

	"github.com/openload/openload/internal/splitmix"
)

// A Template is a request part with placeholders, parsed once into
// segments so that a request costs copies and one number's formatting,
// never a parse. Placeholders (spaces inside the braces are allowed):
//
//	{{seq}}          the request's number (its seq, from 0)
//	{{uid}}          a number no other request of the run has: seq in a
//	                 run of one schedule; seq·n + i for the i-th of n
//	                 schedules of a run, as scenarios are (Scope), whose
//	                 seqs each count from 0
//	{{rand A B}}     an integer uniform in [A, B] (int64), a pure function
//	                 of the seed, seq and which placeholder it is
//	{{csv.COLUMN}}   COLUMN's value in row seq mod rows of the values file
//	{{"TEXT"}}       TEXT, a Go quoted string: {{"{{"}} writes a literal
//	                 "{{", the one thing that needs it (a lone "}}" or "{"
//	                 is literal as it is)
//	{{NAME}}         in a session's step (ParseTemplateVars), the value
//	                 NAME an earlier step saved from its answer
//
// Anything else between "{{" and "}}" is an error, so that a typo is not
// sent as text.
type Template struct {
	src   string
	segs  []segment
	scope Scope
}

// Scope is where a template's requests are numbered for {{uid}}: schedule
// Index of Of in one run (the scenarios of a run, in order). A split
// schedule's shards need no scope: their seqs are the whole schedule's.
// The zero Scope is a run of one schedule.
type Scope struct{ Of, Index uint64 }

// uid is request seq's {{uid}}: seq·Of + Index, distinct for distinct
// (seq, Index) with Index < Of.
func (s Scope) uid(seq uint64) uint64 {
	if s.Of == 0 {
		return seq
	}
	return seq*s.Of + s.Index
}

// In sets the scope of t's {{uid}} and returns t (nil for nil, as a
// failed parse leaves it).
func (t *Template) In(s Scope) *Template {
	if t != nil {
		t.scope = s
	}
	return t
}

type segKind uint8

const (
	segLit segKind = iota
	segSeq
	segUID
	segRand
	segCSV
	segVar
)

type segment struct {
	kind segKind
	lit  []byte
	// rand: lo + a draw in [0, n) (n == 0: all of uint64's range), keyed
	// by key, this placeholder's own stream.
	lo  int64
	n   uint64
	key uint64
	// csv: the column's values, and which column (for Build's checks).
	col    [][]byte
	colIdx int
	varIdx int // var: which of the session's values
	start  int // offset of the placeholder in src, for Build's errors
}

// TemplateError is a template's error at a byte offset of its source.
type TemplateError struct {
	Offset int
	Msg    string
}

func (e *TemplateError) Error() string {
	return fmt.Sprintf("at byte %d: %s", e.Offset, e.Msg)
}

// ParseTemplate parses src. vals may be nil when src uses no
// {{csv.…}}; seed keys the {{rand}} draws: the k-th {{rand}} of src
// draws from mix(seed, k), so two templates want two seeds (Build gives
// each part of each target its own).
func ParseTemplate(src string, vals *Values, seed uint64) (*Template, error) {
	return ParseTemplateVars(src, vals, seed, nil)
}

// ParseTemplateVars parses src as ParseTemplate does, {{NAME}} being
// vars[i] when NAME is vars[i]: a value a session saved (AppendVars).
func ParseTemplateVars(src string, vals *Values, seed uint64, vars []string) (*Template, error) {
	t := &Template{src: src}
	lit := func(s string) {
		if s == "" {
			return
		}
		if n := len(t.segs); n > 0 && t.segs[n-1].kind == segLit {
			t.segs[n-1].lit = append(t.segs[n-1].lit, s...)
			return
		}
		t.segs = append(t.segs, segment{kind: segLit, lit: []byte(s)})
	}
	rands := uint64(0)
	for i := 0; i < len(src); {
		j := strings.Index(src[i:], "{{")
		if j < 0 {
			lit(src[i:])
			break
		}
		lit(src[i : i+j])
		start := i + j
		body := src[start+2:]
		inner := strings.TrimLeft(body, " \t")
		var end int // offset of the closing "}}" in src
		if strings.HasPrefix(inner, `"`) {
			q, err := strconv.QuotedPrefix(inner)
			if err != nil {
				return nil, &TemplateError{start, `bad quoted text in {{"…"}}`}
			}
			s, _ := strconv.Unquote(q)
			after := start + 2 + (len(body) - len(inner)) + len(q)
			rest := strings.TrimLeft(src[after:], " \t")
			if !strings.HasPrefix(rest, "}}") {
				return nil, &TemplateError{start, `{{"…"}} without "}}" after the quoted text`}
			}
			lit(s)
			i = len(src) - len(rest) + 2
			continue
		}
		k := strings.Index(body, "}}")
		if k < 0 {
			return nil, &TemplateError{start, `"{{" without "}}" (write a literal "{{" as {{"{{"}})`}
		}
		end = start + 2 + k
		word := strings.TrimSpace(body[:k])
		shown := src[start : end+2]
		seg := segment{start: start}
		switch f := strings.Fields(word); {
		case word == "seq":
			seg.kind = segSeq
		case word == "uid":
			seg.kind = segUID
		case len(f) > 0 && f[0] == "rand":
			if len(f) != 3 {
				return nil, &TemplateError{start, fmt.Sprintf("%s: want {{rand A B}}", shown)}
			}
			a, errA := strconv.ParseInt(f[1], 10, 64)
			b, errB := strconv.ParseInt(f[2], 10, 64)
			if errA != nil || errB != nil {
				return nil, &TemplateError{start, fmt.Sprintf("%s: A and B must be integers", shown)}
			}
			if a > b {
				return nil, &TemplateError{start, fmt.Sprintf("%s: A > B", shown)}
			}
			seg.kind = segRand
			seg.lo = a
			seg.n = uint64(b) - uint64(a) + 1 // 0 when [A, B] is all of int64
			seg.key = splitmix.Mix(seed ^ splitmix.Mix(rands+1))
			rands++
		case strings.HasPrefix(word, "csv."):
			name := word[len("csv."):]
			if vals == nil {
				return nil, &TemplateError{start, fmt.Sprintf("%s needs a values file", shown)}
			}
			c, ok := vals.index[name]
			if !ok {
				return nil, &TemplateError{start, fmt.Sprintf("%s: %s has no column %q (it has %s)", shown, vals.file, name, strings.Join(vals.cols, ", "))}
			}
			seg.kind = segCSV
			seg.col = vals.cells[c]
			seg.colIdx = c
		case slices.Contains(vars, word):
			seg.kind = segVar
			seg.varIdx = slices.Index(vars, word)
		case vars != nil:
			saved := "none is saved before it"
			if len(vars) > 0 {
				saved = "saved before it: " + strings.Join(vars, ", ")
			}
			return nil, &TemplateError{start, fmt.Sprintf("unknown placeholder %s: no earlier step saves %q (%s; or seq, uid, rand A B, csv.COLUMN)", shown, word, saved)}
		default:
			return nil, &TemplateError{start, fmt.Sprintf("unknown placeholder %s (want seq, uid, rand A B, csv.COLUMN; a literal \"{{\" is {{\"{{\"}})", shown)}
		}
		t.segs = append(t.segs, seg)
		i = end + 2
	}
	return t, nil
}

// Static reports that t holds no placeholder that varies (quoted text
// is literal): it writes the same bytes for every seq.
func (t *Template) Static() bool {
	for _, s := range t.segs {
		if s.kind != segLit {
			return false
		}
	}
	return true
}

// String is the source t was parsed from.
func (t *Template) String() string { return t.src }

// Append appends request seq's bytes to dst. It is a pure function of
// seq, safe for concurrent use (t is read only), and allocates only when
// dst lacks room (it satisfies engine.Template).
func (t *Template) Append(dst []byte, seq uint64) []byte {
	return t.AppendVars(dst, seq, nil)
}

// AppendVars is Append with a session's values, vars[i] for {{NAME}} of
// index i in ParseTemplateVars' vars (nothing when vars is shorter).
func (t *Template) AppendVars(dst []byte, seq uint64, vars [][]byte) []byte {
	for i := range t.segs {
		s := &t.segs[i]
		switch s.kind {
		case segLit:
			dst = append(dst, s.lit...)
		case segSeq:
			dst = strconv.AppendUint(dst, seq, 10)
		case segUID:
			dst = strconv.AppendUint(dst, t.scope.uid(seq), 10)
		case segRand:
			dst = strconv.AppendInt(dst, s.lo+int64(draw(s.key, seq, s.n)), 10)
		case segCSV:
			dst = append(dst, s.col[seq%uint64(len(s.col))]...)
		case segVar:
			if s.varIdx < len(vars) {
				dst = append(dst, vars[s.varIdx]...)
			}
		}
	}
	return dst
}

// draw is uniform in [0, n) (all of uint64 when n == 0) for (key, seq):
// Lemire's multiply-shift with rejection ("Fast random integer
// generation in an interval", 2019), where a rejected draw rehashes, so
// the result stays a pure function of its arguments and unbiased.
func draw(key, seq, n uint64) uint64 {
	h := splitmix.Mix(key ^ splitmix.Mix(seq))
	if n == 0 {
		return h
	}
	hi, lo := bits.Mul64(h, n)
	if lo < n {
		threshold := -n % n // 2^64 mod n
		for lo < threshold {
			h = splitmix.Mix(h + splitmix.Gamma)
			hi, lo = bits.Mul64(h, n)
		}
	}
	return hi
}
