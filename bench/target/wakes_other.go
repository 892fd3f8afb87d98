//go:build !linux

package main

import "errors"

// wakes is Linux's (wakes_linux.go): it sleeps on a timerfd.
func wakes([]string) error { return errors.New("wakes: Linux only") }
