package engine

import (
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"unsafe"

	"golang.org/x/net/http2/hpack"
)

// HTTP/2 requests on the event loop (h2loop_linux.go), made once per run
// and encoded per request with the connection's hpack.Encoder.
//
// A request's header list is what x/net/http2's Transport sends for the
// same request: the four pseudo-headers, the target's headers with their
// names in lower case (without Host, which is :authority, and the
// connection-specific ones RFC 9113 §8.2.2 forbids), user-agent
// Go-http-client/2.0 unless the target has one, content-length when there
// is a body, and the stamp header. Fields that are the same in every
// request are indexed by the encoder after the first request on a
// connection, so that a request's header block is a few bytes. Fields
// written anew per request (a templated path, header value or body's
// length, the stamp) go as never-indexed literals (hpack.HeaderField's
// Sensitive): they would only churn the dynamic table, and the encoder
// then keeps no reference to them, so their value can be a string over a
// reused buffer (volatile) and cost no allocation.

// h2Req is one of the requests a run sends over HTTP/2 (its variants, as
// the lean client's: one, one per body of Config.Bodies, or one per
// target of Config.Targets).
type h2Req struct {
	method, scheme, authority, path string
	pathT                           Template
	fields                          []hpack.HeaderField // constant, in order
	tmpl                            []h2TmplField       // written per request, after fields
	body                            []byte
	bodyT                           Template
	clen                            string // content-length of body, when there is one and no bodyT
}

type h2TmplField struct {
	name string
	t    Template
}

// h2Forbidden reports whether a request header (lower case) may not be
// sent over HTTP/2 (RFC 9113 §8.2.2), or is the transport's to write.
func h2Forbidden(k string) bool {
	switch k {
	case "host", "connection", "proxy-connection", "keep-alive", "transfer-encoding", "upgrade", "te", "content-length":
		return true
	}
	return false
}

// newH2Req prepares t for HTTP/2.
func newH2Req(t Target) h2Req {
	r := h2Req{method: t.Method, scheme: t.URL.Scheme, authority: t.URL.Host, path: t.URL.RequestURI(), pathT: t.Path, body: t.Body, bodyT: t.BodyT}
	if r.method == "" {
		r.method = http.MethodGet
	}
	// As net/http: a URL's default port is left out of :authority.
	if h, p, err := net.SplitHostPort(r.authority); err == nil && ((r.scheme == "http" && p == "80") || (r.scheme == "https" && p == "443")) {
		r.authority = h
		if strings.Contains(h, ":") {
			r.authority = "[" + h + "]"
		}
	}
	hasUA := false
	for _, k := range slices.Sorted(func(yield func(string) bool) {
		for k := range t.Header {
			if !yield(k) {
				return
			}
		}
	}) {
		vs := t.Header[k]
		lk := strings.ToLower(k)
		if lk == "host" && len(vs) > 0 {
			r.authority = vs[0]
			continue
		}
		if lk == "te" {
			for _, v := range vs {
				if strings.EqualFold(strings.TrimSpace(v), "trailers") {
					r.fields = append(r.fields, hpack.HeaderField{Name: "te", Value: "trailers"})
				}
			}
			continue
		}
		if h2Forbidden(lk) || hasTemplate(t.Headers, k) {
			continue
		}
		hasUA = hasUA || lk == "user-agent"
		for _, v := range vs {
			r.fields = append(r.fields, hpack.HeaderField{Name: lk, Value: v})
		}
	}
	for _, k := range slices.Sorted(func(yield func(string) bool) {
		for k := range t.Headers {
			if !yield(k) {
				return
			}
		}
	}) {
		lk := strings.ToLower(k)
		if h2Forbidden(lk) || t.Headers[k] == nil {
			continue
		}
		hasUA = hasUA || lk == "user-agent"
		r.tmpl = append(r.tmpl, h2TmplField{name: lk, t: t.Headers[k]})
	}
	if !hasUA {
		r.fields = append(r.fields, hpack.HeaderField{Name: "user-agent", Value: "Go-http-client/2.0"})
	}
	if r.bodyT == nil && (len(r.body) > 0 || bodyMethod(r.method)) {
		r.clen = strconv.Itoa(len(r.body))
	}
	return r
}

// bodyMethod reports whether net/http sends Content-Length: 0 for an
// empty body of method.
func bodyMethod(m string) bool {
	return m == http.MethodPost || m == http.MethodPut || m == http.MethodPatch
}

// newH2Reqs makes the run's HTTP/2 requests, as newLeanTransport makes its
// variants.
func newH2Reqs(cfg *Config) []h2Req {
	switch {
	case len(cfg.Targets) > 0:
		rs := make([]h2Req, len(cfg.Targets))
		for i, t := range cfg.Targets {
			rs[i] = newH2Req(t)
		}
		return rs
	case len(cfg.Bodies) > 0:
		rs := make([]h2Req, len(cfg.Bodies))
		for i, b := range cfg.Bodies {
			t := cfg.target(0)
			t.Body = b
			rs[i] = newH2Req(t)
		}
		return rs
	}
	return []h2Req{newH2Req(cfg.target(0))}
}

// h2Scratch holds the bytes a request's varying fields are written in.
type h2Scratch struct {
	path, val, clen []byte
}

// volatile is b as a string without a copy, for a field the encoder does
// not keep (Sensitive): valid while b is not written again.
func volatile(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// encode writes request seq's header block with enc: body is what the
// request sends (its length is content-length when it varies), stamp the
// stamp header's value (name stampName), or nil.
func (r *h2Req) encode(enc *hpack.Encoder, sc *h2Scratch, seq uint64, body []byte, stampName string, stamp []byte) {
	enc.WriteField(hpack.HeaderField{Name: ":method", Value: r.method})
	enc.WriteField(hpack.HeaderField{Name: ":scheme", Value: r.scheme})
	enc.WriteField(hpack.HeaderField{Name: ":authority", Value: r.authority})
	if r.pathT != nil {
		sc.path = r.pathT.Append(sc.path[:0], seq)
		enc.WriteField(hpack.HeaderField{Name: ":path", Value: volatile(sc.path), Sensitive: true})
	} else {
		enc.WriteField(hpack.HeaderField{Name: ":path", Value: r.path})
	}
	for _, f := range r.fields {
		enc.WriteField(f)
	}
	for _, f := range r.tmpl {
		sc.val = f.t.Append(sc.val[:0], seq)
		enc.WriteField(hpack.HeaderField{Name: f.name, Value: volatile(sc.val), Sensitive: true})
	}
	switch {
	case r.bodyT != nil && (len(body) > 0 || bodyMethod(r.method)):
		sc.clen = strconv.AppendInt(sc.clen[:0], int64(len(body)), 10)
		enc.WriteField(hpack.HeaderField{Name: "content-length", Value: volatile(sc.clen), Sensitive: true})
	case r.clen != "":
		enc.WriteField(hpack.HeaderField{Name: "content-length", Value: r.clen})
	}
	if stamp != nil {
		enc.WriteField(hpack.HeaderField{Name: stampName, Value: volatile(stamp), Sensitive: true})
	}
}

// requestBody is request seq's body, written into buf when it is
// templated.
func (r *h2Req) requestBody(buf *[]byte, seq uint64) []byte {
	if r.bodyT != nil {
		*buf = r.bodyT.Append((*buf)[:0], seq)
		return *buf
	}
	return r.body
}
