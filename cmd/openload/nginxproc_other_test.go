//go:build !unix

package main

import "os/exec"

// ownGroup: no process groups here; TestNginx needs nginx, which it
// finds on Unix only.
func ownGroup(*exec.Cmd) {}

// killGroup kills cmd alone.
func killGroup(cmd *exec.Cmd) error { return cmd.Process.Kill() }
