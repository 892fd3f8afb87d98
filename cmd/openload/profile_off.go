//go:build !openload_profile

package main

// startProfile profiles nothing; see profile.go.
func startProfile() func() { return func() {} }
