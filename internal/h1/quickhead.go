package h1

import (
	"bytes"
	"strings"

	"github.com/openload/openload/internal/ascii"
)

// Head is what a response head says that a client needs to read its
// body, as ParseHead reads it.
type Head struct {
	Status int
	// Length is the Content-Length, or -1 when the body is Chunked.
	Length  int64
	Chunked bool
	// Keep is false when the head says Connection: close.
	Keep bool
	// ContentType is the first Content-Type value (as http.Header.Get
	// gives it), a slice of the buffer read; FormatOf reads it.
	ContentType []byte
	// N is the head's length, final CRLF included: the body starts there.
	N int
}

// HeadState is what ParseHead made of the bytes so far.
type HeadState uint8

const (
	// HeadPartial: the head is not whole yet; parse again when more
	// bytes came.
	HeadPartial HeadState = iota
	// HeadSimple: a simple head, read (see ParseHead).
	HeadSimple
	// HeadOther: a whole head that is not simple; http.ReadResponse
	// (ReadResponse) reads it.
	HeadOther
)

// ParseHead parses the response head at the start of buf, the bytes of
// the connection so far: a push parser, called again on the whole buffer
// each time bytes arrive until it says HeadSimple or HeadOther. A head is
// simple when it is whole and has "HTTP/1.1 " and a status of 200–599
// other than 204 and 304, well-formed header lines (no continuation
// lines, token names, values without control characters) and either
// exactly one Content-Length or exactly one Transfer-Encoding, chunked,
// and no Content-Length. When w is not nil it is also filled with the
// values of the headers it names (see Watch); a head with more than
// MaxTimingLines Server-Timing lines is then not simple.
//
// It is the lean client's and the event loop's answer to
// http.ReadResponse's cost: ReadResponse allocates a Response, a Header
// map and a string per header for every response, which at tens of
// thousands of responses a second is most of the lean client's remaining
// user CPU and nearly all of its garbage. Most responses a load test sees
// are plain or chunked streams, and ParseHead reads those from the bytes
// already buffered, consuming and allocating nothing. Every other
// response (close-delimited bodies, 1xx, 204, 304, HTTP/1.0, anything
// unusual or malformed) goes to http.ReadResponse, which stays the
// reference for what a response means: FuzzQuickHead holds the two to
// agreeing, and HeadPartial to a head ReadResponse cannot read yet.
func ParseHead(buf []byte, w *Watch) (h Head, st HeadState) {
	if w != nil {
		w.Values = [MaxWatched][]byte{}
		w.NTiming, w.found = 0, 0
	}
	end := bytes.Index(buf, crlf2)
	if end < 0 {
		if HeadComplete(buf) {
			return Head{}, HeadOther // bare LF line ends
		}
		return Head{}, HeadPartial
	}
	if !parseHead(buf[:end+2], w, &h) {
		return Head{}, HeadOther
	}
	h.N = end + 4
	return h, HeadSimple
}

// parseHead reads head, every line of a whole head with its CRLF, into h;
// it reports whether the head is simple.
func parseHead(head []byte, w *Watch, h *Head) bool {
	// Status line: HTTP/1.1 SP 3DIGIT [SP reason] CRLF.
	line, rest, _ := bytes.Cut(head, crlf)
	if len(line) < 12 || !bytes.HasPrefix(line, http11) || (len(line) > 12 && line[12] != ' ') {
		return false
	}
	for _, d := range line[9:12] {
		if d < '0' || d > '9' {
			return false
		}
		h.Status = h.Status*10 + int(d-'0')
	}
	if !plainValue(line[12:]) || h.Status < 200 || h.Status > 599 || h.Status == 204 || h.Status == 304 {
		return false
	}
	h.Keep, h.Length = true, -1
	typed := false
	for len(rest) > 0 {
		line, rest, _ = bytes.Cut(rest, crlf)
		colon := bytes.IndexByte(line, ':')
		if colon <= 0 {
			return false
		}
		name, value := line[:colon], bytes.Trim(line[colon+1:], " \t")
		for _, b := range name {
			if !tokenByte(b) {
				return false
			}
		}
		if !plainValue(value) {
			return false
		}
		switch {
		case ascii.EqualFold(name, "content-length"):
			if h.Length >= 0 || h.Chunked || len(value) == 0 || len(value) > 18 {
				return false
			}
			h.Length = 0
			for _, d := range value {
				if d < '0' || d > '9' {
					return false
				}
				h.Length = h.Length*10 + int64(d-'0')
			}
		case ascii.EqualFold(name, "transfer-encoding"):
			// One coding, chunked, on one line: net/http refuses any
			// other, and a Content-Length beside it is for
			// ReadResponse to judge.
			if h.Chunked || h.Length >= 0 || !ascii.EqualFold(value, "chunked") {
				return false
			}
			h.Chunked = true
		case ascii.EqualFold(name, "connection"):
			if hasToken(value, "close") {
				h.Keep = false
			}
		case ascii.EqualFold(name, "content-type"):
			if !typed {
				h.ContentType, typed = value, true
			}
		}
		if w != nil && !w.see(name, value) {
			return false
		}
	}
	return h.Length >= 0 || h.Chunked
}

// plainValue reports whether v has no control characters but tabs.
func plainValue(v []byte) bool {
	for _, b := range v {
		if b < ' ' && b != '\t' || b == 0x7f {
			return false
		}
	}
	return true
}

// QuickHead is ParseHead of a head with a Content-Length body: ok is
// false for any other (a chunked one among them). Then status and
// length are the response's, keep is false when it says Connection:
// close, and n is the head's length, final CRLF included.
func QuickHead(buf []byte) (status int, length int64, keep bool, n int, ok bool) {
	return QuickHeadWatch(buf, nil)
}

// QuickHeadWatch is QuickHead, filling w as ParseHead does. w's values
// are meaningful only when ok.
func QuickHeadWatch(buf []byte, w *Watch) (status int, length int64, keep bool, n int, ok bool) {
	h, st := ParseHead(buf, w)
	if st != HeadSimple || h.Chunked {
		return 0, 0, false, 0, false
	}
	return h.Status, h.Length, h.Keep, h.N, true
}

// Bounds of a Watch.
const (
	MaxWatched     = 4 // header names whose first value a Watch keeps
	MaxTimingLines = 8 // Server-Timing lines a Watch keeps
)

// Watch names the response headers whose values ParseHead hands back,
// and receives them: slices of the buffer ParseHead read, valid while
// that buffer is. A Watch is reused from head to head; it allocates
// nothing.
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

// see keeps value when name is one w watches. It reports false when the
// head has more Server-Timing lines than w can keep.
func (w *Watch) see(name, value []byte) bool {
	if w.ServerTiming && ascii.EqualFold(name, "server-timing") {
		if w.NTiming == MaxTimingLines {
			return false
		}
		w.Timing[w.NTiming] = value
		w.NTiming++
	}
	for i, want := range w.Names[:min(len(w.Names), MaxWatched)] {
		if w.found&(1<<i) == 0 && ascii.EqualFold(name, want) {
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
		if ascii.EqualFold(bytes.Trim(item, " \t"), tok) {
			return true
		}
	}
	return false
}
