package engine

import (
	"net"
	"sync/atomic"
)

// wireBytes counts the bytes openload itself wrote to its connections and
// read from them during a run, on every client: the event loops at their
// read(2)/recvmsg(2) and write(2) calls (stamper.recv, stamper.writeFD), the
// lean client at its connection's Write and reader (lean.go), net/http's
// transports and the HTTP/2 loop's TLS handshakes on a byteConn under
// them (dialer.DialContext, h2Dial). Over TLS they are the TCP
// connection's bytes, what crossed the wire: handshakes, records' framing
// and re-sends included. One atomic add per system call or Write/Read,
// never per byte; Live reads them.
//
// The run's figures (Stats, the final Live) are taken when the last
// record is in (end): what the closing of the connections after it
// writes (over TLS a close_notify alert, 24 bytes with TLS 1.3) belongs
// to no request and is left out. A transport of the caller's
// (Config.Transport) is not counted.
type wireBytes struct {
	written atomic.Int64
	_       [56]byte // read on its own cache line: readers and writers are often different goroutines
	read    atomic.Int64
	// endW and endR are the counts at the run's end, set by the
	// recorder's goroutine before it ends.
	endW, endR int64
}

// end takes the run's figures.
func (b *wireBytes) end() { b.endW, b.endR = b.written.Load(), b.read.Load() }

// wrote and got add n bytes written or read; b may be nil (a generator a
// test built by hand).
func (b *wireBytes) wrote(n int) {
	if b != nil && n > 0 {
		b.written.Add(int64(n))
	}
}

func (b *wireBytes) got(n int) {
	if b != nil && n > 0 {
		b.read.Add(int64(n))
	}
}

// byteConn is a connection whose bytes b counts.
type byteConn struct {
	net.Conn
	b *wireBytes
}

func (c *byteConn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	c.b.wrote(n)
	return n, err
}

func (c *byteConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.b.got(n)
	return n, err
}

// countBytes returns nc counted by b, or nc itself when b is nil.
func countBytes(nc net.Conn, b *wireBytes) net.Conn {
	if b == nil {
		return nc
	}
	return &byteConn{Conn: nc, b: b}
}

// byteReader is a reader whose bytes b counts (the lean client's).
type byteReader struct {
	r interface{ Read([]byte) (int, error) }
	b *wireBytes
}

func (r byteReader) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	r.b.got(n)
	return n, err
}
