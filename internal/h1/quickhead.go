package h1

import (
	"bytes"
	"strings"
)

// QuickHead parses the response head at the start of buf. ok is false
// unless buf holds a whole head that is simple: "HTTP/1.1 " and a status
// of 200–599 other than 204 and 304, well-formed header lines (no
// continuation lines, token names, values without control characters),
// exactly one Content-Length and no Transfer-Encoding. Then status and
// length are the response's, keep is false when it says Connection:
// close, and n is the head's length, final CRLF included.
//
// It is the lean client's answer to http.ReadResponse's cost: ReadResponse
// allocates a Response, a Header map and a string per header for every
// response, which at tens of thousands of responses a second is most of
// the lean client's remaining user CPU and nearly all of its garbage. Most
// responses a load test sees are plain, and QuickHead reads those from
// the bytes already buffered, consuming and allocating nothing. Every
// other response (chunked or close-delimited bodies, 1xx, 204, 304,
// HTTP/1.0, a head not yet whole, anything unusual or malformed) goes to
// http.ReadResponse (ReadResponse), which stays the reference for what a
// response means: FuzzQuickHead holds the two to agreeing.
func QuickHead(buf []byte) (status int, length int64, keep bool, n int, ok bool) {
	return QuickHeadWatch(buf, nil)
}

// Bounds of a Watch.
const (
	MaxWatched     = 4 // header names whose first value a Watch keeps
	MaxTimingLines = 8 // Server-Timing lines a Watch keeps
)

// Watch names the response headers whose values QuickHeadWatch hands
// back, and receives them: slices of the buffer QuickHeadWatch read,
// valid while that buffer is. A Watch is reused from head to head; it
// allocates nothing.
type Watch struct {
	// Names are header names in lower case, at most MaxWatched: the first
	// value of each is kept, as http.Header.Get gives it.
	Names []string
	// ServerTiming asks for every Server-Timing value, in order, as
	// http.Header.Values gives them.
	ServerTiming bool

	// Values[i] is the first value of Names[i]; empty when the head has
	// no such header, or an empty one.
	Values [MaxWatched][]byte
	// Timing holds the NTiming Server-Timing values.
	Timing  [MaxTimingLines][]byte
	NTiming int

	found uint8 // bit i: Values[i] is the first value of Names[i]
}

// QuickHeadWatch is QuickHead, and when w is not nil it also fills w with
// the values of the headers w names, compared ignoring case, trimmed of
// spaces and tabs as net/http trims them. A head with more than
// MaxTimingLines Server-Timing lines is not simple (ok false): the caller
// reads it with ReadResponse. w's values are meaningful only when ok.
func QuickHeadWatch(buf []byte, w *Watch) (status int, length int64, keep bool, n int, ok bool) {
	if w != nil {
		w.Values = [MaxWatched][]byte{}
		w.NTiming, w.found = 0, 0
	}
	end := bytes.Index(buf, crlf2)
	if end < 0 {
		return 0, 0, false, 0, false
	}
	head := buf[:end+2] // every line with its CRLF
	n = end + 4
	// Status line: HTTP/1.1 SP 3DIGIT [SP reason] CRLF.
	line, rest, _ := bytes.Cut(head, crlf)
	if len(line) < 12 || !bytes.HasPrefix(line, http11) || (len(line) > 12 && line[12] != ' ') {
		return 0, 0, false, 0, false
	}
	for _, d := range line[9:12] {
		if d < '0' || d > '9' {
			return 0, 0, false, 0, false
		}
		status = status*10 + int(d-'0')
	}
	for _, b := range line[12:] {
		if b < ' ' && b != '\t' || b == 0x7f {
			return 0, 0, false, 0, false
		}
	}
	if status < 200 || status > 599 || status == 204 || status == 304 {
		return 0, 0, false, 0, false
	}
	keep, length = true, -1
	for len(rest) > 0 {
		line, rest, _ = bytes.Cut(rest, crlf)
		colon := bytes.IndexByte(line, ':')
		if colon <= 0 {
			return 0, 0, false, 0, false
		}
		name, value := line[:colon], bytes.Trim(line[colon+1:], " \t")
		for _, b := range name {
			if !tokenByte(b) {
				return 0, 0, false, 0, false
			}
		}
		for _, b := range value {
			if b < ' ' && b != '\t' || b == 0x7f {
				return 0, 0, false, 0, false
			}
		}
		switch {
		case asciiEqualFold(name, "content-length"):
			if length >= 0 || len(value) == 0 || len(value) > 18 {
				return 0, 0, false, 0, false
			}
			length = 0
			for _, d := range value {
				if d < '0' || d > '9' {
					return 0, 0, false, 0, false
				}
				length = length*10 + int64(d-'0')
			}
		case asciiEqualFold(name, "transfer-encoding"):
			return 0, 0, false, 0, false
		case asciiEqualFold(name, "connection"):
			if hasToken(value, "close") {
				keep = false
			}
		}
		if w != nil && !w.see(name, value) {
			return 0, 0, false, 0, false
		}
	}
	if length < 0 {
		return 0, 0, false, 0, false
	}
	return status, length, keep, n, true
}

// see keeps value when name is one w watches. It reports false when the
// head has more Server-Timing lines than w can keep.
func (w *Watch) see(name, value []byte) bool {
	if w.ServerTiming && asciiEqualFold(name, "server-timing") {
		if w.NTiming == MaxTimingLines {
			return false
		}
		w.Timing[w.NTiming] = value
		w.NTiming++
	}
	for i, want := range w.Names[:min(len(w.Names), MaxWatched)] {
		if w.found&(1<<i) == 0 && asciiEqualFold(name, want) {
			w.Values[i] = value
			w.found |= 1 << i
		}
	}
	return true
}

var (
	crlf   = []byte("\r\n")
	crlf2  = []byte("\r\n\r\n")
	http11 = []byte("HTTP/1.1 ")
)

// tokenByte reports whether b may appear in a header name (RFC 9110 tchar).
func tokenByte(b byte) bool {
	switch {
	case 'a' <= b && b <= 'z', 'A' <= b && b <= 'Z', '0' <= b && b <= '9':
		return true
	}
	return strings.IndexByte("!#$%&'*+-.^_`|~", b) >= 0
}

// asciiEqualFold reports whether b equals the lower-case ASCII s, ignoring
// case.
func asciiEqualFold(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := range b {
		c := b[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != s[i] {
			return false
		}
	}
	return true
}

// hasToken reports whether the comma-separated list v holds token tok
// (lower-case), ignoring case and surrounding whitespace.
func hasToken(v []byte, tok string) bool {
	for len(v) > 0 {
		item := v
		if i := bytes.IndexByte(v, ','); i >= 0 {
			item, v = v[:i], v[i+1:]
		} else {
			v = nil
		}
		if asciiEqualFold(bytes.Trim(item, " \t"), tok) {
			return true
		}
	}
	return false
}
