//go:build !unix

package main

import "syscall"

// childProcAttr: without process groups a Ctrl-C would stop the stub
// before openload's drain; the stub runs in openload's process instead.
func childProcAttr() (*syscall.SysProcAttr, error) {
	return nil, errNoChild
}
