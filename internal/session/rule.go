package session

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
)

// Rule says where a step's answer holds a value to save:
//
//	json:PATH     a member of the JSON body, PATH its keys and array
//	              indexes joined by dots (token, data.items.0.id); a
//	              string is saved as it is, anything else as its JSON
//	header:NAME   the header's first value
//	regex:RE      RE's first submatch in the body, or its match when it
//	              has no group (Go's regexp syntax, RE2)
//
// Gatling's check(jsonPath(…).saveAs), k6's res.json() and JMeter's
// extractors do the same three things.
type Rule struct {
	kind string // json, header, regex
	path []string
	name string
	re   *regexp.Regexp
}

// ParseRule parses a save rule.
func ParseRule(s string) (Rule, error) {
	kind, arg, ok := strings.Cut(s, ":")
	kind = strings.TrimSpace(kind)
	if !ok || arg == "" {
		return Rule{}, fmt.Errorf("rule %q: want json:PATH, header:NAME or regex:RE", s)
	}
	r := Rule{kind: kind}
	switch kind {
	case "json":
		r.path = strings.Split(strings.TrimSpace(arg), ".")
		for _, k := range r.path {
			if k == "" {
				return Rule{}, fmt.Errorf("rule %q: an empty key in the path", s)
			}
		}
	case "header":
		r.name = http.CanonicalHeaderKey(strings.TrimSpace(arg))
	case "regex":
		re, err := regexp.Compile(arg)
		if err != nil {
			return Rule{}, fmt.Errorf("rule %q: %v", s, err)
		}
		r.re = re
	default:
		return Rule{}, fmt.Errorf("rule %q: unknown source %q: want json:PATH, header:NAME or regex:RE", s, kind)
	}
	return r, nil
}

// body reports whether the rule reads the answer's body.
func (r Rule) body() bool { return r.kind != "header" }

// Take returns the value the rule finds in an answer's header and body;
// an error says why there is none.
func (r Rule) Take(h http.Header, body []byte) ([]byte, error) {
	switch r.kind {
	case "header":
		v, ok := h[r.name]
		if !ok || len(v) == 0 {
			return nil, fmt.Errorf("no %s header in the answer", r.name)
		}
		return []byte(v[0]), nil
	case "regex":
		m := r.re.FindSubmatch(body)
		switch {
		case m == nil:
			return nil, fmt.Errorf("regex %q matches nothing in the answer", r.re)
		case len(m) > 1:
			return m[1], nil
		}
		return m[0], nil
	}
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		return nil, errors.New("the answer is not JSON")
	}
	for i, k := range r.path {
		switch x := v.(type) {
		case map[string]any:
			var ok bool
			if v, ok = x[k]; !ok {
				return nil, fmt.Errorf("no %s in the answer's JSON", strings.Join(r.path[:i+1], "."))
			}
		case []any:
			n, err := strconv.Atoi(k)
			if err != nil || n < 0 || n >= len(x) {
				return nil, fmt.Errorf("no %s in the answer's JSON (a list of %d)", strings.Join(r.path[:i+1], "."), len(x))
			}
			v = x[n]
		default:
			return nil, fmt.Errorf("no %s in the answer's JSON", strings.Join(r.path[:i+1], "."))
		}
	}
	switch x := v.(type) {
	case string:
		return []byte(x), nil
	case nil:
		return nil, fmt.Errorf("%s is null in the answer's JSON", strings.Join(r.path, "."))
	}
	return json.Marshal(v)
}
