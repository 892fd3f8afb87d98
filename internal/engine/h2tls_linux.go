//go:build linux

package engine

import (
	"io"
	"net"
)

// TLS under the HTTP/2 loop: crypto/tls over buffers the loop fills and
// drains, so that no read or write blocks the loop.

// loopTLS is the connection under a loop's crypto/tls client: during the
// handshake (in the dial's goroutine) the socket itself; after, buffers
// the loop fills with what it read from the socket (in) and drains to it
// (out). A read that finds in empty fails with errWouldBlock, a
// temporary net.Error, which crypto/tls passes on without failing the
// connection, keeping a partial record for the next read.
type loopTLS struct {
	net.Conn
	direct bool
	in     []byte
	ioff   int
	eof    bool
	out    *[]byte
}

func (t *loopTLS) Read(p []byte) (int, error) {
	if t.direct {
		return t.Conn.Read(p)
	}
	if t.ioff == len(t.in) {
		if t.eof {
			return 0, io.EOF
		}
		return 0, errWouldBlock
	}
	n := copy(p, t.in[t.ioff:])
	t.ioff += n
	return n, nil
}

// room makes room in in for a read.
func (t *loopTLS) room() {
	if t.ioff == len(t.in) {
		t.in, t.ioff = t.in[:0], 0
	}
	if cap(t.in)-len(t.in) >= 16<<10 {
		return
	}
	if t.ioff > 0 {
		t.in = t.in[:copy(t.in, t.in[t.ioff:])]
		t.ioff = 0
	}
	if cap(t.in)-len(t.in) < 16<<10 {
		b := make([]byte, len(t.in), 2*cap(t.in)+64<<10)
		copy(b, t.in)
		t.in = b
	}
}

func (t *loopTLS) Write(p []byte) (int, error) {
	if t.direct {
		return t.Conn.Write(p)
	}
	*t.out = append(*t.out, p...)
	return len(p), nil
}
