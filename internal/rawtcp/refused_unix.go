//go:build unix

package rawtcp

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// RefusedAddr returns a loopback address ("127.0.0.1:port") that refuses
// every connection until release is called: a socket bound to an
// ephemeral port that never listens. Holding the port matters: a closed
// listener's port goes back to the pool, and a test running in parallel
// can be given it for a server of its own, whose answers (a reset, say)
// are not the refusal the test expects.
func RefusedAddr() (addr string, release func(), err error) {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM, 0)
	if err != nil {
		return "", nil, fmt.Errorf("socket: %w", err)
	}
	unix.CloseOnExec(fd)
	if err := unix.Bind(fd, &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		unix.Close(fd)
		return "", nil, fmt.Errorf("bind: %w", err)
	}
	sa, err := unix.Getsockname(fd)
	in4, ok := sa.(*unix.SockaddrInet4)
	if err != nil || !ok {
		unix.Close(fd)
		return "", nil, fmt.Errorf("getsockname: %v (%T)", err, sa)
	}
	return fmt.Sprintf("127.0.0.1:%d", in4.Port), func() { unix.Close(fd) }, nil
}
