//go:build unix

package engine

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// closedWhileIdle reports whether the kept-alive connection c can no longer
// serve a request: the server closed or reset it while it was idle, or sent
// bytes nobody asked for. It looks without blocking (recv with MSG_PEEK and
// MSG_DONTWAIT), so that a request is not written onto a connection the
// server has already given up, where it would never be read (wire.go).
func (c *leanConn) closedWhileIdle() bool {
	if c.br.Buffered() > 0 {
		return true
	}
	if c.raw == nil {
		sc, ok := c.Conn.(syscall.Conn)
		if !ok {
			return false
		}
		raw, err := sc.SyscallConn()
		if err != nil {
			return false
		}
		c.raw = raw
		c.peekFn = func(fd uintptr) bool {
			n, err := peekByte(fd)
			// Data, an end (n == 0) or an error other than "nothing yet".
			c.peeked = n > 0 || (err == nil && n == 0) || (err != nil && err != unix.EAGAIN && err != unix.EINTR)
			return true
		}
	}
	c.peeked = false
	if err := c.raw.Read(c.peekFn); err != nil {
		return true
	}
	return c.peeked
}
