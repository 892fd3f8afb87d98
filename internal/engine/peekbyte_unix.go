//go:build unix && !linux

package engine

import "golang.org/x/sys/unix"

// peekByte is recv(2) of one byte with MSG_PEEK|MSG_DONTWAIT.
func peekByte(fd uintptr) (int, error) {
	var b [1]byte
	n, _, err := unix.Recvfrom(int(fd), b[:], unix.MSG_PEEK|unix.MSG_DONTWAIT)
	return n, err
}
