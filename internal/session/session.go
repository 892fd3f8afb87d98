// Package session makes the sessions of a session run (engine.RunSessions)
// from a scenario's steps: each step a request made from templates
// (internal/mix's, with the values earlier steps saved), a think time
// before it, the values it saves from its answer, and a cookie jar per
// session; or, for a model server, a conversation whose every turn sends
// the conversation so far, the model's own answers included
// (conversation.go). It prints nothing and exits nothing: every problem
// is an error of one line naming the step.
package session

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"slices"
	"strings"

	"github.com/openload/openload/internal/engine"
	"github.com/openload/openload/internal/mix"
	"github.com/openload/openload/internal/splitmix"
)

// StepSpec is one step as a scenario file writes it.
type StepSpec struct {
	Name   string            `yaml:"name"`
	Method string            `yaml:"method"` // GET, or POST when there is a body
	URL    string            `yaml:"url"`    // absolute, or relative to the scenario's URL
	Header []string          `yaml:"header"` // "Name: value", after the scenario's own
	Body   string            `yaml:"body"`
	Think  string            `yaml:"think"` // before the step (not the first): Think's grammar
	Save   map[string]string `yaml:"save"`  // value name → rule (ParseRule)
}

// Spec is a scenario's sessions.
type Spec struct {
	Steps []StepSpec
	// OnFailure is what a failed step does to its session: "stop" (the
	// default: the session ends early there) or "continue".
	OnFailure string
	Base      *url.URL    // the scenario's URL: relative step URLs are resolved against it
	Header    http.Header // the scenario's headers, sent with every step
	Seed      uint64      // think times and {{rand}} are pure functions of it and the session
	Scope     mix.Scope   // the scenario's place in the run, for {{uid}} (mix.Scope)
}

// OnFailure values.
const (
	Stop     = "stop"
	Continue = "continue"
)

// Plan is a compiled Spec; it is the run's engine.SessionSource.
type Plan struct {
	steps  []step
	names  []string
	vars   []string // every value saved, by index
	cont   bool     // OnFailure is continue
	seed   uint64
	base   *url.URL
	header http.Header
}

type step struct {
	name   string
	method string
	url    *mix.Template
	header []headerT
	body   *mix.Template
	think  Think
	saves  []save
	keep   bool // a save reads the body
}

type headerT struct {
	name  string // canonical
	value *mix.Template
}

type save struct {
	name string
	idx  int // into the session's values
	rule Rule
}

// reserved are placeholder words a saved value may not take.
var reserved = []string{"seq", "uid"}

// Compile checks spec and makes its plan. Errors name the step: "step 2
// (browse): …".
func Compile(spec Spec) (*Plan, error) {
	if len(spec.Steps) == 0 {
		return nil, errors.New("no steps")
	}
	if len(spec.Steps) > engine.MaxSteps {
		return nil, fmt.Errorf("%d steps: at most %d", len(spec.Steps), engine.MaxSteps)
	}
	p := &Plan{seed: spec.Seed, base: spec.Base, header: spec.Header}
	switch spec.OnFailure {
	case "", Stop:
	case Continue:
		p.cont = true
	default:
		return nil, fmt.Errorf("on-failure %q: want %s or %s", spec.OnFailure, Stop, Continue)
	}
	for i, ss := range spec.Steps {
		st, err := p.compileStep(i, ss, spec)
		if err != nil {
			name := ss.Name
			if name == "" {
				name = "unnamed"
			}
			return nil, fmt.Errorf("step %d (%s): %w", i+1, name, err)
		}
		st.url.In(spec.Scope) // {{uid}} unique across the run's scenarios
		st.body.In(spec.Scope)
		for _, h := range st.header {
			h.value.In(spec.Scope)
		}
		p.steps = append(p.steps, st)
		p.names = append(p.names, st.name)
	}
	return p, nil
}

func (p *Plan) compileStep(i int, ss StepSpec, spec Spec) (step, error) {
	st := step{name: strings.TrimSpace(ss.Name), method: strings.ToUpper(strings.TrimSpace(ss.Method))}
	switch {
	case st.name == "":
		return st, errors.New("no name: give each step one (reports and objectives name it)")
	case strings.ContainsAny(st.name, ":, "):
		return st, fmt.Errorf("name %q: no colon, comma or space (objectives name it as SCENARIO:STEP:…)", st.name)
	case slices.Contains(p.names, st.name):
		return st, fmt.Errorf("name %q given twice", st.name)
	}
	if st.method == "" {
		st.method = http.MethodGet
		if ss.Body != "" {
			st.method = http.MethodPost
		}
	}
	seed := splitmix.Mix(spec.Seed ^ splitmix.Mix(uint64(i)+1))
	// The values saved before this step are what its templates may use.
	vars := slices.Clone(p.vars)
	if vars == nil {
		vars = []string{}
	}
	var err error
	raw := ss.URL
	if raw == "" && spec.Base == nil {
		return st, errors.New("no url, and the scenario has none to start from")
	}
	if st.url, err = mix.ParseTemplateVars(raw, nil, seed^1, vars); err != nil {
		return st, fmt.Errorf("url %q: %w", raw, err)
	}
	if st.url.Static() {
		if _, err := resolve(spec.Base, raw); err != nil {
			return st, err
		}
	}
	if err := compileHeaders(&st, ss.Header, seed, vars); err != nil {
		return st, err
	}
	if ss.Body != "" {
		if st.body, err = mix.ParseTemplateVars(ss.Body, nil, seed^3, vars); err != nil {
			return st, fmt.Errorf("body: %w", err)
		}
	}
	if ss.Think != "" {
		if i == 0 {
			return st, errors.New("think on the first step: it is due at the session's arrival (the schedule says when users arrive)")
		}
		if st.think, err = ParseThink(ss.Think); err != nil {
			return st, err
		}
	}
	return st, p.compileSaves(&st, ss.Save)
}

// compileHeaders parses a step's "Name: value" headers, each value a
// template of the values saved before it (vars).
func compileHeaders(st *step, headers []string, seed uint64, vars []string) error {
	for _, h := range headers {
		name, value, ok := strings.Cut(h, ":")
		name = strings.TrimSpace(name)
		if !ok || name == "" {
			return fmt.Errorf("header %q: want \"Name: value\"", h)
		}
		t, err := mix.ParseTemplateVars(strings.TrimSpace(value), nil, seed^splitmix.Mix(uint64(len(st.header))+2), vars)
		if err != nil {
			return fmt.Errorf("header %q: %w", h, err)
		}
		st.header = append(st.header, headerT{http.CanonicalHeaderKey(name), t})
	}
	return nil
}

// compileSaves parses a step's save rules, each value given its index
// among the plan's values (a name saved again by a later step keeps it).
func (p *Plan) compileSaves(st *step, saves map[string]string) error {
	for _, name := range slices.Sorted(maps.Keys(saves)) {
		switch {
		case !validVar(name):
			return fmt.Errorf("save %q: a name is letters, digits, _ and -", name)
		case slices.Contains(reserved, name):
			return fmt.Errorf("save %q: %s is a placeholder of its own", name, name)
		}
		r, err := ParseRule(saves[name])
		if err != nil {
			return fmt.Errorf("save %s: %w", name, err)
		}
		idx := slices.Index(p.vars, name)
		if idx < 0 {
			idx = len(p.vars)
			p.vars = append(p.vars, name)
		}
		st.saves = append(st.saves, save{name, idx, r})
		st.keep = st.keep || r.body()
	}
	return nil
}

func validVar(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if !(c == '_' || c == '-' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return true
}

// resolve is raw as an absolute http(s) URL, relative to base.
func resolve(base *url.URL, raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("url %q: %v", raw, err)
	}
	if base != nil {
		u = base.ResolveReference(u)
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return nil, fmt.Errorf("url %q: want an http:// or https:// URL, or a path under the scenario's URL", raw)
	}
	return u, nil
}

// SameOrigin reports whether every step goes to u's scheme and host
// (engine.SameOrigin): then the lean client, which dials u's, sends them.
// A placeholder in a URL's scheme or host says no.
func (p *Plan) SameOrigin(u *url.URL) bool {
	for _, st := range p.steps {
		raw := st.url.String()
		if i := strings.Index(raw, "{{"); i >= 0 {
			raw = raw[:i] // what precedes the first placeholder decides
			if !strings.Contains(raw, "/") {
				return false // the scheme or host is templated
			}
			if strings.Contains(raw, "://") && strings.Count(raw, "/") < 3 {
				return false // http://{{host}}/…
			}
		}
		v, err := resolve(p.base, raw)
		if err != nil || v.Scheme != u.Scheme || v.Host != u.Host {
			return false
		}
	}
	return true
}

// StepNames are the steps' names, by index (Record.Target).
func (p *Plan) StepNames() []string { return slices.Clone(p.names) }

// Session is session seq's walk (engine.SessionSource).
func (p *Plan) Session(seq uint64) engine.Session {
	return &walk{p: p, seq: seq, next: 0, values: make([][]byte, len(p.vars))}
}

// walk is one session of a Plan.
type walk struct {
	p      *Plan
	seq    uint64
	next   int      // the step Next sends
	values [][]byte // saved, by index
	jar    *cookiejar.Jar
	last   *url.URL // the URL of the step sent last, for its cookies
	buf    []byte
}

func (w *walk) Next(prev *engine.Answer) (engine.Step, engine.Verdict) {
	if prev != nil && prev.Failed() && !w.p.cont {
		return engine.Step{}, engine.Stop
	}
	if w.next == len(w.p.steps) {
		return engine.Step{}, engine.Done
	}
	k := w.next
	w.next++
	st := &w.p.steps[k]
	// A URL made from a saved value that is no URL makes no request: the
	// engine counts the step failed, unsent (engine.Step.Request).
	req, _ := w.request(st)
	think := st.think.Draw(w.p.seed, w.seq, k)
	return engine.Step{Index: k, Think: think, Request: req, Keep: st.keep}, engine.Go
}

func (w *walk) request(st *step) (*http.Request, error) {
	w.buf = st.url.AppendVars(w.buf[:0], w.seq, w.values)
	u, err := resolve(w.p.base, string(w.buf))
	if err != nil {
		return nil, err
	}
	var body []byte
	if st.body != nil {
		body = st.body.AppendVars(nil, w.seq, w.values)
	}
	req, err := http.NewRequest(st.method, u.String(), bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	if body == nil {
		req.Body, req.GetBody, req.ContentLength = nil, nil, 0
	}
	for name, vs := range w.p.header {
		req.Header[name] = vs
	}
	for _, h := range st.header {
		req.Header[h.name] = []string{string(h.value.AppendVars(nil, w.seq, w.values))}
	}
	if w.jar != nil {
		for _, c := range w.jar.Cookies(u) {
			req.AddCookie(c)
		}
	}
	w.last = u
	return req, nil
}

func (w *walk) Take(a *engine.Answer) error {
	if cs := (&http.Response{Header: a.Header}).Cookies(); len(cs) > 0 {
		if w.jar == nil {
			w.jar, _ = cookiejar.New(nil) // never fails without options
		}
		w.jar.SetCookies(w.last, cs)
	}
	st := &w.p.steps[a.Step]
	for _, sv := range st.saves {
		v, err := sv.rule.Take(a.Header, a.Body)
		if err != nil {
			if a.Cut && sv.rule.body() {
				return fmt.Errorf("step %s: save %s: the answer is over %d bytes, past what is kept", st.name, sv.name, engine.MaxKeep)
			}
			return fmt.Errorf("step %s: save %s: %w", st.name, sv.name, err)
		}
		w.values[sv.idx] = v
	}
	return nil
}
