package engine

import (
	"encoding/binary"

	"golang.org/x/net/http2"
)

// The bytes of HTTP/2 frames openload reads itself (RFC 9113 §4.1, §6):
// where x/net's Framer would allocate (the loop's HEADERS, CONTINUATION
// and WINDOW_UPDATE, h2read_linux.go) and where it cannot look (the bytes
// x/net's transport reads and writes, h2Conn in h2.go). Every other frame
// is x/net's Framer's to parse.

// frameLen is the payload length in a frame header h (9 bytes).
func frameLen(h []byte) int { return int(h[0])<<16 | int(h[1])<<8 | int(h[2]) }

// streamID is the stream identifier in b's first four bytes, its reserved
// bit cleared.
func streamID(b []byte) uint32 { return binary.BigEndian.Uint32(b) & (1<<31 - 1) }

// headerFragment is the header block fragment of a HEADERS frame's
// payload p with flags: p without its padding and priority fields
// (§6.2). ok false: the frame is malformed, and code is the connection
// error it is.
func headerFragment(flags http2.Flags, p []byte) (frag []byte, code http2.ErrCode, ok bool) {
	if flags.Has(http2.FlagHeadersPadded) {
		if len(p) < 1 || int(p[0]) > len(p)-1 {
			return nil, http2.ErrCodeProtocol, false
		}
		p = p[1 : len(p)-int(p[0])]
	}
	if flags.Has(http2.FlagHeadersPriority) {
		if len(p) < 5 {
			return nil, http2.ErrCodeFrameSize, false
		}
		p = p[5:]
	}
	return p, 0, true
}

// windowIncrement is a WINDOW_UPDATE's increment (§6.9); ok false when
// the payload is not four bytes (FRAME_SIZE_ERROR).
func windowIncrement(p []byte) (inc uint32, ok bool) {
	if len(p) != 4 {
		return 0, false
	}
	return streamID(p), true
}

// rstCode is a RST_STREAM's error code (§6.4), from the first bytes of its
// payload.
func rstCode(p []byte) (http2.ErrCode, bool) {
	if len(p) < 4 {
		return 0, false
	}
	return http2.ErrCode(binary.BigEndian.Uint32(p)), true
}

// goAwayLast is a GOAWAY's last stream identifier (§6.8), from the first
// bytes of its payload.
func goAwayLast(p []byte) (uint32, bool) {
	if len(p) < 8 {
		return 0, false
	}
	return streamID(p), true
}

// frameScan follows the frames of one direction of an HTTP/2 connection
// (RFC 9113 §4.1: a 9-byte header, length, type, flags and stream, then
// the payload), fed the bytes as they pass in pieces of any size. It
// keeps the current frame's header and the first bytes of its payload,
// enough for RST_STREAM's error code and GOAWAY's last stream and error
// code, and skips the rest.
type frameScan struct {
	preface int     // bytes of the client connection preface still to pass
	head    [9]byte // the current frame's header, nhead bytes of it so far
	nhead   int
	left    int     // bytes of its payload still to pass
	keep    [8]byte // its payload's first bytes, nkeep of them
	nkeep   int
}

// feed takes bytes of p up to the end of the current frame and returns
// how many it took and whether the frame ended there; its typ, flags,
// stream and payload stay readable until the next feed.
func (s *frameScan) feed(p []byte) (int, bool) {
	n := 0
	if s.preface > 0 {
		n = min(s.preface, len(p))
		s.preface -= n
		p = p[n:]
	}
	if s.nhead < len(s.head) {
		k := copy(s.head[s.nhead:], p)
		s.nhead += k
		n += k
		p = p[k:]
		if s.nhead < len(s.head) {
			return n, false
		}
		s.left = frameLen(s.head[:])
		s.nkeep = 0
	}
	k := min(s.left, len(p))
	if s.nkeep < len(s.keep) {
		s.nkeep += copy(s.keep[s.nkeep:], p[:k])
	}
	s.left -= k
	n += k
	if s.left > 0 {
		return n, false
	}
	s.nhead = 0
	return n, true
}

func (s *frameScan) typ() http2.FrameType { return http2.FrameType(s.head[3]) }
func (s *frameScan) stream() uint32       { return streamID(s.head[5:]) }
func (s *frameScan) payload() []byte      { return s.keep[:s.nkeep] }

// endsHeaderBlock reports whether the frame ends a header block: a
// HEADERS frame or its last CONTINUATION, with END_HEADERS (RFC 9113
// §4.3).
func (s *frameScan) endsHeaderBlock() bool {
	t := s.typ()
	return (t == http2.FrameHeaders || t == http2.FrameContinuation) && http2.Flags(s.head[4]).Has(http2.FlagHeadersEndHeaders)
}
