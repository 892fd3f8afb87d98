// Package h1 is HTTP/1.1 framing for the engine's lean clients (the
// goroutine-per-connection lean client and the epoll event loop):
// serialising a run's one request once (Request), reading plain response
// heads without allocating (QuickHead), dropping bodies (Discard), and
// http.ReadResponse for every other response (ReadResponse), with a head
// cut short by the connection's end told apart from a malformed one
// (Truncated). It knows nothing of connections, deadlines or records: the
// engine owns those. Each part is held to net/http by a fuzz test:
// FuzzQuickHead and FuzzDiscard against http.ReadResponse, FuzzRequest
// against http.ReadRequest.
package h1

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// Request is a request serialised once, as net/http's transport would
// write it, to be written for every request of a run: the request line and
// headers, then, per request, an optional stamp header, and the body.
type Request struct {
	prefix []byte // request line and headers, without the final CRLF
	body   []byte
	stamp  string // canonical stamp header name, or ""
	close  bool
}

// NewRequest serialises a request of method to u (its RequestURI, and its
// Host unless header has one) with header and body. stamp, if not "",
// names a header whose value Append writes per request. As net/http does,
// it writes User-Agent Go-http-client/1.1 unless header has one, writes
// Content-Length itself (also 0 for an empty POST, PUT or PATCH) and drops
// header's Content-Length and Transfer-Encoding, keeps Connection only as
// "close" and drops its other values.
func NewRequest(method string, u *url.URL, header http.Header, body []byte, stamp string) Request {
	host := u.Host
	var b strings.Builder
	b.WriteString(method)
	b.WriteByte(' ')
	b.WriteString(u.RequestURI())
	b.WriteString(" HTTP/1.1\r\n")
	hasUA, once := false, false
	for k, vs := range header {
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
		hasUA = hasUA || strings.EqualFold(k, "User-Agent")
		for _, v := range vs {
			b.WriteString(k)
			b.WriteString(": ")
			b.WriteString(v)
			b.WriteString("\r\n")
		}
	}
	prefix := "Host: " + host + "\r\n"
	if !hasUA {
		prefix += "User-Agent: Go-http-client/1.1\r\n"
	}
	if len(body) > 0 || methodWantsLength(method) {
		prefix += "Content-Length: " + strconv.Itoa(len(body)) + "\r\n"
	}
	if once {
		prefix += "Connection: close\r\n"
	}
	line, rest, _ := strings.Cut(b.String(), "\r\n")
	r := Request{prefix: []byte(line + "\r\n" + prefix + rest), body: body, close: once}
	if stamp != "" {
		r.stamp = http.CanonicalHeaderKey(stamp)
	}
	return r
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
