//go:build unix

package main

import "syscall"

// openFileLimit is the process's limit on open files (Go raises the soft
// limit to the hard one as it starts); 0 when it cannot be read.
func openFileLimit() int {
	var l syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l); err != nil || l.Cur > 1<<30 {
		return 0
	}
	return int(l.Cur)
}
