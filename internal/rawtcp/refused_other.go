//go:build !unix

package rawtcp

import "net"

// RefusedAddr returns a loopback address that refuses connections: here
// the address of a listener closed at once. Unlike the Unix version it
// does not hold the port, which a test running in parallel may be given.
func RefusedAddr() (addr string, release func(), err error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	addr = ln.Addr().String()
	ln.Close()
	return addr, func() {}, nil
}
