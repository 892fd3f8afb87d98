package engine

import (
	"net"
	"sync"
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
//
// A TLS dial still under way when the last request ended is waited for
// before (settle, within the drain), and one asked for after is refused:
// net/http's transport dials on a goroutine of its own, and the dial of a
// request that took a connection that came free meanwhile goes on
// without it. Its handshake is openload's, though no request used the
// connection, and is counted whole. Taken without the wait, the figures
// missed the ChangeCipherSpec and Finished (64 bytes) it wrote after
// them, or, the dial cancelled by the transport's closing, the server's
// flight (2,472 bytes here) was written and never read.
type wireBytes struct {
	written atomic.Int64
	_       [56]byte // read on its own cache line: readers and writers are often different goroutines
	read    atomic.Int64
	// endW and endR are the counts at the run's end, set by the
	// recorder's goroutine before it ends.
	endW, endR int64

	// The TLS dials under way (dialer.handshake), which settle waits for.
	dialMu  sync.Mutex
	dialing int
	settled bool          // the figures are about to be taken: no more dials
	dialed  chan struct{} // closed when the last dial under way ends after settle
}

// end takes the run's figures.
func (b *wireBytes) end() { b.endW, b.endR = b.written.Load(), b.read.Load() }

// settle waits for the TLS dials under way to end and refuses new ones;
// windDown calls it once every request has ended, before end.
func (b *wireBytes) settle() {
	b.dialMu.Lock()
	b.settled = true
	if b.dialing == 0 {
		b.dialMu.Unlock()
		return
	}
	done := make(chan struct{})
	b.dialed = done
	b.dialMu.Unlock()
	<-done
}

// dialStart counts a TLS dial under way, or says there must be none (the
// run is settled); dialEnd says it ended. b may be nil.
func (b *wireBytes) dialStart() bool {
	if b == nil {
		return true
	}
	b.dialMu.Lock()
	defer b.dialMu.Unlock()
	if b.settled {
		return false
	}
	b.dialing++
	return true
}

func (b *wireBytes) dialEnd() {
	if b == nil {
		return
	}
	b.dialMu.Lock()
	defer b.dialMu.Unlock()
	if b.dialing--; b.dialing == 0 && b.dialed != nil {
		close(b.dialed)
		b.dialed = nil
	}
}

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
