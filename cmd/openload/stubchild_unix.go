//go:build unix

package main

import "syscall"

// childProcAttr puts the child in a process group of its own: a Ctrl-C at
// the terminal goes to the foreground group, openload's, and not to the
// stub, which must keep serving while openload drains.
func childProcAttr() (*syscall.SysProcAttr, error) {
	return &syscall.SysProcAttr{Setpgid: true}, nil
}
