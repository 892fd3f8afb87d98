// Package h1 is HTTP/1.1 framing for the engine's lean clients (the
// goroutine-per-connection lean client and the epoll event loop):
// serialising a run's requests once (Request), with holes that templates
// fill per request (NewTemplated, AppendSeq), reading plain response
// heads without allocating (QuickHead), dropping bodies (Discard), and
// http.ReadResponse for every other response (ReadResponse), with a head
// cut short by the connection's end told apart from a malformed one
// (Truncated). It knows nothing of connections, deadlines or records: the
// engine owns those. Each part is held to net/http by a fuzz test:
// FuzzQuickHead and FuzzDiscard against http.ReadResponse, FuzzRequest
// against http.ReadRequest.
//
// It also de-chunks a chunked body as it arrives (Dechunk, chunked.go),
// for every client that reads one as a stream; cutting the stream into
// events is package framing's, HTTP/2's streams included.
package h1

import (
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// Request is a request serialised once, as net/http's transport would
// write it, to be written for every request of a run: the request line and
// headers, then, per request, an optional stamp header, and the body.
// A request made by NewTemplated also has holes that templates fill for
// each request (AppendSeq).
type Request struct {
	prefix []byte // request line and headers, without the final CRLF
	body   []byte
	stamp  string // canonical stamp header name, or ""
	close  bool

	// NewTemplated's: the head as literal parts and holes (nil: prefix
	// is the whole head), and the body's template (nil: body).
	parts []part
	bodyT Template
}

// part is a piece of a templated head: lit, then fill's bytes for the
// request when fill is not nil; length marks where the body's
// Content-Length value goes, once the body is written and its length
// known.
type part struct {
	lit    []byte
	fill   Template
	length bool
}

// Template writes a part of a request anew for each request: Append
// appends request seq's bytes to dst (engine.Template is one). It must
// not allocate once dst has room: it runs for every request.
type Template interface {
	Append(dst []byte, seq uint64) []byte
}

// Templates are the parts of a request NewTemplated writes anew for each
// request; a nil one is taken from the request as NewRequest writes it.
type Templates struct {
	Target  Template            // the request target (path and query): u's RequestURI
	Headers map[string]Template // header values, by name: they replace header's values of that name
	Body    Template            // the body
}

// NewRequest serialises a request of method to u (its RequestURI, and its
// Host unless header has one) with header and body. stamp, if not "",
// names a header whose value Append writes per request. As net/http does,
// it writes User-Agent Go-http-client/1.1 unless header has one, writes
// Content-Length itself (also 0 for an empty POST, PUT or PATCH) and drops
// header's Content-Length and Transfer-Encoding, keeps Connection only as
// "close" and drops its other values.
func NewRequest(method string, u *url.URL, header http.Header, body []byte, stamp string) Request {
	return NewTemplated(method, u, header, body, stamp, Templates{})
}

// NewTemplated is NewRequest with the parts ts names written anew for
// each request by AppendSeq: the request target, header values (after
// the other headers, by name; Host, Connection, Content-Length and
// Transfer-Encoding are the transport's and are not templated) and the
// body, whose Content-Length is then that of the body written (also 0,
// whatever the method). Without templates it is NewRequest's request.
func NewTemplated(method string, u *url.URL, header http.Header, body []byte, stamp string, ts Templates) Request {
	host := u.Host
	var h head
	h.str(method)
	h.str(" ")
	if ts.Target != nil {
		h.hole(ts.Target, false)
	} else {
		h.str(u.RequestURI())
	}
	h.str(" HTTP/1.1\r\n")
	// The headers after Host, User-Agent, Content-Length and Connection,
	// which come first, as net/http writes them.
	var rest head
	hasUA, once := false, false
	// By name, as net/http's Header.Write and the HTTP/2 client write
	// them: the same order in every run, whatever the map's.
	for _, k := range slices.Sorted(maps.Keys(header)) {
		vs := header[k]
		if strings.EqualFold(k, "Host") {
			if len(vs) > 0 {
				host = vs[0]
			}
			continue
		}
		if strings.EqualFold(k, "Connection") {
			// As net/http: "close" is kept and ends the connection after
			// the response; other values are the transport's business.
			for _, v := range vs {
				once = once || strings.EqualFold(strings.TrimSpace(v), "close")
			}
			continue
		}
		if strings.EqualFold(k, "Content-Length") || strings.EqualFold(k, "Transfer-Encoding") {
			continue // the transport's business, as with net/http
		}
		if templated(ts.Headers, k) {
			continue // written from its template below
		}
		hasUA = hasUA || strings.EqualFold(k, "User-Agent")
		for _, v := range vs {
			rest.str(k)
			rest.str(": ")
			rest.str(v)
			rest.str("\r\n")
		}
	}
	for _, k := range slices.Sorted(maps.Keys(ts.Headers)) {
		if special(k) || ts.Headers[k] == nil {
			continue
		}
		hasUA = hasUA || strings.EqualFold(k, "User-Agent")
		rest.str(k)
		rest.str(": ")
		rest.hole(ts.Headers[k], false)
		rest.str("\r\n")
	}
	h.str("Host: " + host + "\r\n")
	if !hasUA {
		h.str("User-Agent: Go-http-client/1.1\r\n")
	}
	switch {
	case ts.Body != nil:
		h.str("Content-Length: ")
		h.hole(nil, true)
		h.str("\r\n")
	case len(body) > 0 || methodWantsLength(method):
		h.str("Content-Length: " + strconv.Itoa(len(body)) + "\r\n")
	}
	if once {
		h.str("Connection: close\r\n")
	}
	h.add(&rest)
	r := Request{body: body, close: once, bodyT: ts.Body}
	if len(h.parts) == 0 {
		r.prefix = h.lit // no hole: the head is written whole
	} else {
		r.parts = append(h.parts, part{lit: h.lit})
	}
	if stamp != "" {
		r.stamp = http.CanonicalHeaderKey(stamp)
	}
	return r
}

// head builds a templated head: literal bytes, cut by holes.
type head struct {
	parts []part
	lit   []byte
}

func (h *head) str(s string) { h.lit = append(h.lit, s...) }

func (h *head) hole(fill Template, length bool) {
	h.parts = append(h.parts, part{lit: h.lit, fill: fill, length: length})
	h.lit = nil
}

// add appends o's parts and literal to h's.
func (h *head) add(o *head) {
	for _, p := range o.parts {
		h.str(string(p.lit))
		h.hole(p.fill, p.length)
	}
	h.str(string(o.lit))
}

// templated reports whether ts has a template for header name k.
func templated(ts map[string]Template, k string) bool {
	for n, t := range ts {
		if t != nil && strings.EqualFold(n, k) && !special(n) {
			return true
		}
	}
	return false
}

// special reports whether header k is the transport's, never templated.
func special(k string) bool {
	for _, s := range [...]string{"Host", "Connection", "Content-Length", "Transfer-Encoding"} {
		if strings.EqualFold(k, s) {
			return true
		}
	}
	return false
}

// methodWantsLength reports whether net/http would send Content-Length: 0
// for an empty body of this method.
func methodWantsLength(m string) bool {
	return m == http.MethodPost || m == http.MethodPut || m == http.MethodPatch
}

// Close reports whether the request says Connection: close: its
// connection serves one exchange.
func (r *Request) Close() bool { return r.close }

// Append appends the request to wb, with stamp (digits, or nil) as the
// stamp header's value, and returns the extended buffer.
func (r *Request) Append(wb, stamp []byte) []byte {
	wb = append(wb, r.prefix...)
	if stamp != nil {
		wb = append(wb, r.stamp...)
		wb = append(wb, ": "...)
		wb = append(wb, stamp...)
		wb = append(wb, "\r\n"...)
	}
	wb = append(wb, "\r\n"...)
	return append(wb, r.body...)
}

// AppendSeq appends request seq to wb, its holes filled by their
// templates (NewTemplated), with stamp as Append takes it, and returns
// the extended buffer. A request without holes is Append's.
func (r *Request) AppendSeq(wb []byte, seq uint64, stamp []byte) []byte {
	if r.parts == nil {
		return r.Append(wb, stamp)
	}
	hole := -1
	for i := range r.parts {
		p := &r.parts[i]
		wb = append(wb, p.lit...)
		if p.fill != nil {
			wb = p.fill.Append(wb, seq)
		}
		if p.length {
			hole = len(wb)
		}
	}
	if stamp != nil {
		wb = append(wb, r.stamp...)
		wb = append(wb, ": "...)
		wb = append(wb, stamp...)
		wb = append(wb, "\r\n"...)
	}
	wb = append(wb, "\r\n"...)
	if r.bodyT == nil {
		return append(wb, r.body...)
	}
	// The body's length is known once it is written: its digits go into
	// the hole, and what follows the hole moves up by as many bytes. The
	// move is as long as the rest of the head and the body, which costs
	// less than writing the body to a buffer of its own first and copying
	// it after the head.
	body := len(wb)
	wb = r.bodyT.Append(wb, seq)
	var d [20]byte
	digits := strconv.AppendInt(d[:0], int64(len(wb)-body), 10)
	end := len(wb)
	wb = append(wb, digits...)
	copy(wb[hole+len(digits):], wb[hole:end])
	copy(wb[hole:], digits)
	return wb
}
