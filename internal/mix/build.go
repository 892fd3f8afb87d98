package mix

import (
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/openload/openload/internal/engine"
	"github.com/openload/openload/internal/splitmix"
	"golang.org/x/net/http/httpguts"
)

// tooManyTargets is the error for the n > engine.MaxTargets targets of
// file.
func tooManyTargets(file string, n int) error {
	return &Error{File: file, Msg: fmt.Sprintf("%d targets, over the %d a run holds (each is kept parsed in memory for the whole run)", n, engine.MaxTargets)}
}

// Build makes the engine's targets (Config.Targets) from ts, in order,
// and their weights (Config.TargetWeights): nil when no target has one,
// in which case the engine takes them in turn as vegeta does; else a
// target without a weight weighs 1.
//
// Every target must have the origin (scheme, host and port) of the
// first, as the engine's clients hold connections to one origin. The
// URL's path and query, the header values and the body may hold
// placeholders (Template); a part that varies gets a Template
// (engine.Target's Path, Headers, BodyT) and leaves its static
// counterpart empty (the header is absent from Header, Body is nil; URL
// keeps the URL as written, for its origin), and a part that does not is
// written out once, into URL, Header and Body. vals may be nil when no
// {{csv.…}} is used. seed keys every {{rand}}: the draw of placeholder k
// of part p of target i for request seq is a pure function of (seed, i,
// p, k, seq), where p is the URL, the body, or a header (by canonical
// name, in sorted order).
//
// Values that go in the URL are sent as written, so they must be
// escaped already (no space, control byte, '#' or byte over 0x7f); a
// header value may not hold a control byte.
func Build(ts []Target, vals *Values, seed uint64) ([]engine.Target, []float64, error) {
	return BuildIn(ts, vals, seed, Scope{})
}

// BuildIn is Build for schedule scope.Index of scope.Of in one run: its
// {{uid}} differ from the other schedules' (Scope).
func BuildIn(ts []Target, vals *Values, seed uint64, scope Scope) ([]engine.Target, []float64, error) {
	if len(ts) == 0 {
		return nil, nil, errors.New("mix: no targets")
	}
	if len(ts) > engine.MaxTargets {
		return nil, nil, tooManyTargets(ts[0].File, len(ts))
	}
	out := make([]engine.Target, len(ts))
	weighted := false
	names := make(map[string]int, len(ts))
	var first string // the first target's origin
	for i := range ts {
		t := &ts[i]
		// A bad name is buildAt's error, said before its being taken.
		if j, ok := names[t.Name]; ok && checkName(t.Name) == nil {
			return nil, nil, t.fail("name taken by target %d (%s:%d)", j+1, ts[j].File, ts[j].Line)
		}
		names[t.Name] = i
		weighted = weighted || t.Weight != 0
		e, err := buildAt(t, i, vals, seed, scope, &first)
		if err != nil {
			return nil, nil, err
		}
		out[i] = e
	}
	var weights []float64
	if weighted {
		weights = make([]float64, len(ts))
		for i := range ts {
			if weights[i] = ts[i].Weight; weights[i] == 0 {
				weights[i] = 1
			}
		}
	}
	return out, weights, nil
}

// fail is an error about t: "FILE:LINE: NAME: …".
func (t *Target) fail(format string, a ...any) error {
	return fmt.Errorf("%s: %s", t.where(), fmt.Sprintf(format, a...))
}

// buildAt builds t, target i of its run (Build's, or a Stream's), after
// checking its name, method and weight; *first is the run's origin, ""
// until the first target set it, which every target must share.
func buildAt(t *Target, i int, vals *Values, seed uint64, scope Scope, first *string) (engine.Target, error) {
	if err := checkName(t.Name); err != nil {
		return engine.Target{}, t.fail("%v", err)
	}
	if !validMethod(t.Method) {
		return engine.Target{}, t.fail("bad method %q", t.Method)
	}
	if t.Weight != 0 && (!(t.Weight > 0) || math.IsInf(t.Weight, 0)) {
		return engine.Target{}, t.fail("bad weight %v: want a finite number > 0", t.Weight)
	}
	e, o, err := buildOne(t, i, vals, seed, scope)
	if err != nil {
		return engine.Target{}, t.fail("%v", err)
	}
	if *first == "" {
		*first = o
	} else if o != *first {
		return engine.Target{}, t.fail("origin %s is not the first target's, %s: a run sends to one origin", o, *first)
	}
	return e, nil
}

// Parts of a target, for its templates' seeds.
const (
	partURL = iota
	partBody
	partHeader // + the header's index by sorted canonical name
)

func partSeed(seed uint64, target, part int) uint64 {
	return splitmix.Mix(seed ^ splitmix.Mix(uint64(target)<<32|uint64(part)))
}

// buildOne builds target i and returns its origin.
func buildOne(t *Target, i int, vals *Values, seed uint64, scope Scope) (engine.Target, string, error) {
	e := engine.Target{Name: t.Name, Method: t.Method, Header: http.Header{}}
	if err := checkURL(t.URL); err != nil {
		return e, "", fmt.Errorf("bad URL %q: %v", t.URL, err)
	}
	orig := origin(t.URL)
	target, fragment, _ := strings.Cut(t.URL[len(orig):], "#")
	if strings.Contains(fragment, "{{") {
		return e, "", errors.New("a template in the URL's fragment, which is never sent")
	}
	tp, err := ParseTemplate(target, vals, partSeed(seed, i, partURL))
	tp = tp.In(scope)
	if err != nil {
		return e, "", inPart("the URL", len(orig), t.URL, err)
	}
	raw := t.URL
	if tp.Static() {
		raw = orig + string(tp.Append(nil, 0))
		if fragment != "" {
			raw += "#" + fragment
		}
	} else {
		if err := checkTarget(tp, vals, len(orig), t.URL); err != nil {
			return e, "", err
		}
		if !strings.HasPrefix(target, "/") { // "?q=…": the request line's target starts at "/"
			tp.segs = slices.Insert(tp.segs, 0, segment{kind: segLit, lit: []byte("/")})
		}
		e.Path = tp
	}
	// url.Parse, as vegeta's http.NewRequest: ParseRequestURI, its
	// check, would keep a fragment in the path or query.
	if e.URL, err = url.Parse(raw); err != nil {
		return e, "", fmt.Errorf("bad URL %q: %v", raw, urlErr(err))
	}
	if err := CheckPort(e.URL); err != nil {
		return e, "", fmt.Errorf("bad URL %q: %v", raw, err)
	}
	// Credentials in the URL are sent as net/http sends them, whose
	// requests vegeta makes (Request.SetBasicAuth from URL.User in
	// net/http's send): an Authorization: Basic header, unless the
	// target sets its own. They are no part of the origin, so targets
	// with and without them share the run's connections, as the
	// examples of vegeta's README mix them.
	if u := e.URL.User; u != nil {
		if !hasAuthorization(t.Header) {
			pass, _ := u.Password()
			req := http.Request{Header: http.Header{}}
			req.SetBasicAuth(u.Username(), pass)
			e.Header["Authorization"] = req.Header["Authorization"]
		}
		e.URL.User = nil
	}

	// Headers by canonical name, sorted, so that each one's seed does not
	// depend on map order.
	canon := map[string][]string{}
	for k := range t.Header {
		c := http.CanonicalHeaderKey(k)
		canon[c] = append(canon[c], k)
	}
	keys := make([]string, 0, len(canon))
	for c := range canon {
		keys = append(keys, c)
	}
	slices.Sort(keys)
	for h, c := range keys {
		written := canon[c]
		slices.Sort(written)
		for _, k := range written {
			if !httpguts.ValidHeaderFieldName(k) {
				return e, "", fmt.Errorf("bad header name %q", k)
			}
			vs := t.Header[k]
			out := make([]string, 0, len(vs))
			for _, v := range vs {
				tv, err := ParseTemplate(v, vals, partSeed(seed, i, partHeader+h))
				tv = tv.In(scope)
				if err != nil {
					return e, "", inPart("header "+k, 0, v, err)
				}
				if tv.Static() {
					v = string(tv.Append(nil, 0))
					if !httpguts.ValidHeaderFieldValue(v) {
						return e, "", fmt.Errorf("header %s: control character in the value", k)
					}
					out = append(out, v)
					continue
				}
				switch {
				case c == "Host":
					return e, "", errors.New("a template in the Host header (the host is literal: one origin per run)")
				case len(vs) > 1 || len(written) > 1:
					return e, "", fmt.Errorf("header %s: a header with a template has one value", k)
				}
				if err := checkHeader(tv, vals, k); err != nil {
					return e, "", err
				}
				if e.Headers == nil {
					e.Headers = map[string]engine.Template{}
				}
				e.Headers[k] = tv // as written, as a static header is
			}
			if len(out) > 0 {
				e.Header[k] = out // as written, as vegeta sends it
			}
		}
	}

	where := "the body"
	if t.BodyFile != "" {
		where = "body file " + t.BodyFile
	}
	tb, err := ParseTemplate(string(t.Body), vals, partSeed(seed, i, partBody))
	tb = tb.In(scope)
	if err != nil {
		return e, "", inPart(where, 0, string(t.Body), err)
	}
	if tb.Static() {
		if len(t.Body) > 0 {
			e.Body = tb.Append(nil, 0)
		}
	} else {
		e.BodyT = tb
	}
	return e, engine.Origin(e.URL), nil
}

// inPart places a TemplateError: by line and column in a body, by
// byte in a URL (off: where the template starts in src) or header.
func inPart(part string, off int, src string, err error) error {
	var te *TemplateError
	if !errors.As(err, &te) {
		return fmt.Errorf("in %s: %v", part, err)
	}
	at := off + te.Offset
	if strings.HasPrefix(part, "the body") || strings.HasPrefix(part, "body file") {
		line := 1 + strings.Count(src[:at], "\n")
		col := at - strings.LastIndexByte(src[:at], '\n')
		return fmt.Errorf("in %s, line %d column %d: %s", part, line, col, te.Msg)
	}
	return fmt.Errorf("in %s, at byte %d: %s", part, at, te.Msg)
}

// validTargetByte: what may go on a request line as it is: printable
// ASCII but for '#', which would start a fragment.
func validTargetByte(c byte) bool { return c > 0x20 && c < 0x7f && c != '#' }

// checkTarget checks that a templated request target's literal text and
// CSV values can be sent as they are: Go's client escapes a static
// URL's path, but a template's output is sent verbatim.
func checkTarget(tp *Template, vals *Values, off int, src string) error {
	for _, s := range tp.segs {
		switch s.kind {
		case segLit:
			for _, c := range s.lit {
				if !validTargetByte(c) {
					return fmt.Errorf("in the URL: byte %q must be percent-encoded in a URL with a template", c)
				}
			}
		case segCSV:
			for r, v := range s.col {
				for _, c := range v {
					if !validTargetByte(c) {
						return fmt.Errorf("in the URL, at byte %d: %s:%d: column %q's value %q must be percent-encoded to go in a URL", off+s.start, vals.file, vals.lines[r], vals.cols[s.colIdx], v)
					}
				}
			}
		}
	}
	return nil
}

// checkHeader checks a templated header's literal text (a quoted
// {{"…"}} can hold any byte) and CSV values.
func checkHeader(tv *Template, vals *Values, name string) error {
	for _, s := range tv.segs {
		if s.kind == segLit && !httpguts.ValidHeaderFieldValue(string(s.lit)) {
			return fmt.Errorf("header %s: control character in the value", name)
		}
		if s.kind != segCSV {
			continue
		}
		for r, v := range s.col {
			if !httpguts.ValidHeaderFieldValue(string(v)) {
				return fmt.Errorf("in header %s: %s:%d: column %q's value %q has a control character", name, vals.file, vals.lines[r], vals.cols[s.colIdx], v)
			}
		}
	}
	return nil
}

// hasAuthorization reports whether h sets Authorization, in any case.
func hasAuthorization(h http.Header) bool {
	for k := range h {
		if strings.EqualFold(k, "Authorization") {
			return true
		}
	}
	return false
}
