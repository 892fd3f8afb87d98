package engine

import (
	"bytes"
	"context"
	"io"
	"maps"
	"net/http"
	"net/url"
	"strings"
)

// A worker builds every request from a template made once, instead of
// parsing the URL and copying the headers for each request with
// http.NewRequestWithContext: per request it allocates only the shallow copy
// WithContext makes (and, with a body, its reader; with StampHeader, the
// header map and value). The template's URL and header map are shared by
// every request of the worker and never written after they are built,
// which is what lets the transport keep reading a request's headers after
// Do returned (a timeout, or an early response) without a race.
//
// Each request's context carries its own trace hooks (wire.go) and its
// timeout.

// In a mix (Config.Targets) a worker keeps a template per target, made
// when it first sends to it. A target with templates (Path, Headers,
// BodyT) gets, per request, its own URL, header map and body, written
// from them: the transport may still read a request after Do returned,
// so none of them is reused.

// netTemplate is a worker's template of one of the run's requests.
type netTemplate struct {
	req *http.Request
	err error
}

// newTemplate returns the request every request to t is a copy of, or
// the error http.NewRequest gives for it.
func newTemplate(t Target) (*http.Request, error) {
	req, err := http.NewRequest(t.Method, t.URL.String(), nil)
	if err != nil {
		return nil, err
	}
	for k, vs := range t.Header {
		if strings.EqualFold(k, "Host") && len(vs) > 0 {
			req.Host = vs[0]
			continue
		}
		if hasTemplate(t.Headers, k) {
			continue // written per request, as the lean clients write it
		}
		req.Header[k] = vs
	}
	if body := t.Body; len(body) > 0 {
		withBody(req, body)
	}
	return req, nil
}

// withBody makes body req's, to be read anew for each attempt.
func withBody(req *http.Request, body []byte) {
	req.ContentLength = int64(len(body))
	req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
}

// request returns the request for it, with ctx.
func (w *worker) request(ctx context.Context, it item) (*http.Request, error) {
	cfg := &w.g.cfg
	if it.tgt != nil {
		// Read lazily (Config.TargetStream), sent once: its template
		// is made here and kept by no one.
		base, err := newTemplate(*it.tgt)
		if err != nil {
			return nil, err
		}
		return w.fill(base.WithContext(ctx), it, it.tgt), nil
	}
	k := 0
	if len(cfg.Targets) > 0 {
		k = w.g.pick.index(it.seq) // targets.go
	}
	if w.tmpls == nil {
		w.tmpls = make([]netTemplate, max(1, len(cfg.Targets)))
	}
	nt := &w.tmpls[k]
	if nt.req == nil && nt.err == nil {
		nt.req, nt.err = newTemplate(cfg.target(k))
	}
	if nt.err != nil {
		return nil, nt.err
	}
	req := nt.req.WithContext(ctx)
	var t *Target
	if len(cfg.Targets) > 0 {
		t = &cfg.Targets[k]
	}
	return w.fill(req, it, t), nil
}

// fill writes into req, a copy of a template, what request it sends of
// its own: its body (of Bodies, or its target t's template), its path
// and its templated and stamp headers.
func (w *worker) fill(req *http.Request, it item, t *Target) *http.Request {
	cfg := &w.g.cfg
	switch {
	case len(cfg.Bodies) > 0:
		withBody(req, cfg.Bodies[w.g.pick.index(it.seq)])
	case t != nil && t.BodyT != nil:
		withBody(req, t.BodyT.Append(nil, it.seq))
	}
	if t != nil && t.Path != nil {
		req.URL = withPath(req.URL, t.Path.Append(nil, it.seq))
	}
	if req.GetBody != nil {
		req.Body, _ = req.GetBody()
	}
	var templated map[string]Template
	if t != nil {
		templated = t.Headers
	}
	if len(templated) > 0 || cfg.StampHeader != "" {
		h := make(http.Header, len(req.Header)+len(templated)+1)
		maps.Copy(h, req.Header)
		for name, tm := range templated {
			h[name] = []string{string(tm.Append(nil, it.seq))}
		}
		if cfg.StampHeader != "" {
			h[http.CanonicalHeaderKey(cfg.StampHeader)] = w.stamp(it.off)
		}
		req.Header = h
	}
	return req
}

// withPath returns a copy of u whose request target is path (a path and
// query, as the target's template writes it). The path goes as it is
// written (Opaque), as the lean clients write it, not unescaped and
// escaped again; Validate refused a path starting with //, which Opaque
// would take for an authority.
func withPath(u *url.URL, path []byte) *url.URL {
	c := *u
	p, q, hasQ := strings.Cut(string(path), "?")
	c.Opaque, c.RawPath, c.Path, c.RawQuery, c.ForceQuery = p, "", "", q, hasQ && q == ""
	return &c
}

// hasTemplate reports whether ts templates header k, in any case.
func hasTemplate(ts map[string]Template, k string) bool {
	for n := range ts {
		if strings.EqualFold(n, k) {
			return true
		}
	}
	return false
}
