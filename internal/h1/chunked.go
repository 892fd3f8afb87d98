package h1

import (
	"bufio"
	"bytes"
	"errors"
	"io"
)

// Dechunk undoes the chunked framing of a response body (RFC 9112 §7.1)
// fed to it in pieces as they arrive: a push parser, so that the event
// loop, which has bytes when epoll says they came, and a goroutine, which
// reads them from a connection (ChunkedReader), read chunked bodies with
// the same code. It takes what net/http's chunked reader takes, and
// fails where that fails (FuzzDechunk holds the two together): chunk-size
// lines end in CRLF, at most 16 hex digits, extensions dropped, trailing
// blanks trimmed, a CRLF after each chunk's data, and no more framing
// overhead than net/http allows. Trailer lines, up to the empty one, are
// skipped. The zero value is ready; it allocates only to hold a framing
// line split between two pieces.
type Dechunk struct {
	state  uint8
	left   uint64 // data bytes left in the chunk
	excess int64  // framing overhead beyond what the data pays for
	line   []byte // a framing line not yet whole
}

// The states of a Dechunk.
const (
	dcSize    = iota // reading a chunk-size line
	dcData           // reading a chunk's data
	dcCR             // the CR after a chunk's data
	dcLF             // the LF after it
	dcTrailer        // reading trailer lines, up to an empty one
	dcDone           // the body ended
)

// maxChunkLine bounds a chunk-size line, CRLF included, as the 4 KiB
// bufio.Reader of net/http's chunked reader does; a trailer line too.
const maxChunkLine = 4096

// ErrChunk is chunked framing that net/http would not read.
var ErrChunk = errors.New("malformed chunked encoding")

// Feed reads the framing at the start of p and returns the payload bytes
// that follow it in p, a slice of p (empty when p held framing only), and
// the rest of p after them, to be fed next. Call it until rest is empty
// or Done; after Done, rest holds the bytes that followed the body.
func (d *Dechunk) Feed(p []byte) (data, rest []byte, err error) {
	for len(p) > 0 {
		switch d.state {
		case dcSize, dcTrailer:
			line, more, whole := d.cutLine(p)
			p = more
			if !whole {
				if len(d.line) >= maxChunkLine {
					return nil, nil, ErrChunk
				}
				continue
			}
			if err := d.framingLine(line); err != nil {
				return nil, nil, err
			}
			d.line = d.line[:0]
		case dcData:
			k := uint64(len(p))
			if k > d.left {
				k = d.left
			}
			if d.left -= k; d.left == 0 {
				d.state = dcCR
			}
			return p[:k], p[k:], nil
		case dcCR:
			if p[0] != '\r' {
				return nil, nil, ErrChunk
			}
			p, d.state = p[1:], dcLF
		case dcLF:
			if p[0] != '\n' {
				return nil, nil, ErrChunk
			}
			p, d.state = p[1:], dcSize
		case dcDone:
			return nil, p, nil
		}
	}
	return nil, nil, nil
}

// Done reports whether the body ended: its last chunk and trailer came.
func (d *Dechunk) Done() bool { return d.state == dcDone }

// Reset readies d for another body, keeping its line buffer.
func (d *Dechunk) Reset() { *d = Dechunk{line: d.line[:0]} }

// cutLine returns the framing line that ends in p, its LF removed, and
// the rest of p; whole is false when p ended first (then the line so far
// is kept in d.line).
func (d *Dechunk) cutLine(p []byte) (line, rest []byte, whole bool) {
	i := bytes.IndexByte(p, '\n')
	if i < 0 {
		d.line = append(d.line, p...)
		return nil, nil, false
	}
	if len(d.line) == 0 {
		return p[:i], p[i+1:], true
	}
	d.line = append(d.line, p[:i]...)
	return d.line, p[i+1:], true
}

// framingLine reads one chunk-size or trailer line, its LF removed, as
// net/http's chunked reader reads it (readChunkLine, beginChunk).
func (d *Dechunk) framingLine(line []byte) error {
	if len(line)+1 > maxChunkLine {
		return ErrChunk
	}
	if d.state == dcTrailer {
		// Trailers are header lines; a CR may end them (net/http's
		// textproto does more, but what they say is not read here).
		if len(bytes.TrimSuffix(line, []byte{'\r'})) == 0 {
			d.state = dcDone
		}
		return nil
	}
	if i := bytes.IndexByte(line, '\r'); len(line) == 0 || i != len(line)-1 {
		return ErrChunk // a bare LF, or a CR inside the line
	}
	line = line[:len(line)-1]
	d.excess += int64(len(line)) + 2
	line = bytes.TrimRight(line, " \t")
	line, _, _ = bytes.Cut(line, []byte{';'}) // chunk extensions
	if len(line) == 0 || len(line) > 16 {
		return ErrChunk
	}
	var n uint64
	for _, b := range line {
		switch {
		case '0' <= b && b <= '9':
			b -= '0'
		case 'a' <= b && b <= 'f':
			b -= 'a' - 10
		case 'A' <= b && b <= 'F':
			b -= 'A' - 10
		default:
			return ErrChunk
		}
		n = n<<4 | uint64(b)
	}
	// Overhead beyond 16 bytes a chunk plus twice its data, past 16 KiB
	// in all, is a sender wasting the reader's time (net/http's rule).
	d.excess = max(d.excess-16-2*int64(n), 0)
	if n == 0 {
		d.state = dcTrailer
		return nil
	}
	if d.excess > 16<<10 {
		return ErrChunk
	}
	d.state, d.left = dcData, n
	return nil
}

// ChunkedReader reads the payload of a chunked body from R with a
// Dechunk, feeding it the bytes R has buffered: the goroutine side of the
// parser the event loop feeds from its reads. It returns io.EOF once the
// body's trailer was read, leaving R at the byte after the body, and
// io.ErrUnexpectedEOF when R ends before.
type ChunkedReader struct {
	R *bufio.Reader
	D Dechunk
}

func (c *ChunkedReader) Read(p []byte) (int, error) {
	for len(p) > 0 && !c.D.Done() {
		buf, err := c.R.Peek(max(c.R.Buffered(), 1))
		if len(buf) == 0 {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return 0, err
		}
		// At most len(p) bytes fed: the data Feed returns, a part of
		// them, fits in p.
		in := buf[:min(len(buf), len(p))]
		data, rest, err := c.D.Feed(in)
		n := copy(p, data)
		c.R.Discard(len(in) - len(rest)) // buffered: cannot fail
		if err != nil {
			return n, err
		}
		if n > 0 {
			return n, nil
		}
	}
	if c.D.Done() {
		return 0, io.EOF
	}
	return 0, nil
}
