package engine

import (
	"bytes"
	"context"
	"io"
	"maps"
	"net/http"
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

// newTemplate returns the request every request of w is a copy of, or the
// error http.NewRequest gives for the configuration.
func (w *worker) newTemplate() (*http.Request, error) {
	g := w.g
	req, err := http.NewRequest(g.cfg.Method, g.cfg.URL.String(), nil)
	if err != nil {
		return nil, err
	}
	for k, vs := range g.cfg.Header {
		if strings.EqualFold(k, "Host") && len(vs) > 0 {
			req.Host = vs[0]
			continue
		}
		req.Header[k] = vs
	}
	if body := g.cfg.Body; len(body) > 0 {
		req.ContentLength = int64(len(body))
		req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	}
	return req, nil
}

// request returns the request for it, with ctx.
func (w *worker) request(ctx context.Context, it item) (*http.Request, error) {
	if w.tmpl == nil && w.tmplErr == nil {
		w.tmpl, w.tmplErr = w.newTemplate()
	}
	if w.tmplErr != nil {
		return nil, w.tmplErr
	}
	req := w.tmpl.WithContext(ctx)
	if bodies := w.g.cfg.Bodies; len(bodies) > 0 {
		body := bodies[w.g.cfg.BodyIndex(it.seq)]
		req.ContentLength = int64(len(body))
		req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	}
	if req.GetBody != nil {
		req.Body, _ = req.GetBody()
	}
	if w.g.cfg.StampHeader != "" {
		h := make(http.Header, len(req.Header)+1)
		maps.Copy(h, req.Header)
		h[http.CanonicalHeaderKey(w.g.cfg.StampHeader)] = w.stamp(it.off)
		req.Header = h
	}
	return req, nil
}
