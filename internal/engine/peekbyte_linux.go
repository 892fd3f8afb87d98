package engine

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// peekByte is recv(2) of one byte with MSG_PEEK|MSG_DONTWAIT, made as
// recvfrom without an address: unix.Recvfrom's address buffer would be
// allocated on every call.
func peekByte(fd uintptr) (int, error) {
	var b [1]byte
	n, _, e := unix.Syscall6(unix.SYS_RECVFROM, fd, uintptr(unsafe.Pointer(&b[0])), 1, unix.MSG_PEEK|unix.MSG_DONTWAIT, 0, 0)
	if e != 0 {
		return 0, e
	}
	return int(n), nil
}
