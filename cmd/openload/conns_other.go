//go:build !unix

package main

// openFileLimit is 0, none known: Windows bounds sockets by memory, not
// by a per-process count.
func openFileLimit() int { return 0 }
