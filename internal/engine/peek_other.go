//go:build !unix

package engine

// closedWhileIdle reports whether the kept-alive connection c can no longer
// serve a request. Without a non-blocking peek, only bytes already buffered
// tell.
func (c *leanConn) closedWhileIdle() bool { return c.br.Buffered() > 0 }
