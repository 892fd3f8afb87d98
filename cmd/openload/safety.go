package main

import (
	"errors"

	"github.com/spf13/pflag"

	"github.com/openload/openload/internal/engine"
)

// faultFlags registers the flags that say what to do with a misbehaving or
// untrusted server: TLS verification, redirects and response body size
// (internal/engine/faults.go documents the behaviour), bound to c.
func faultFlags(fs *pflag.FlagSet, b fieldBinding, c *engine.Config) {
	fs.BoolVar(&c.Insecure, b.bind("insecure", "Insecure"), false,
		"do not verify the server's TLS certificate (by default it is verified and an untrusted one is a tls error)")
	fs.BoolVar(&c.FollowRedirects, b.bind("follow-redirects", "FollowRedirects"), false,
		"follow redirects, up to 10 per request, and count the final status (by default a 3xx is a completed response, counted under its status)")
	fs.Int64Var(&c.MaxBody, b.bind("max-body", "MaxBody"), 0,
		"read at most this many bytes of a response body and discard the rest by closing the connection; such a response still counts as completed, and as over the cap (0: no cap; bodies are always discarded with bounded memory)")
}

// checkFaultFlags checks what is about the command line: --max-body given
// as 0, which would mean no cap. The value's range is
// engine.Config.Validate's.
func checkFaultFlags(fs *pflag.FlagSet, c *engine.Config) error {
	if fs.Changed("max-body") && c.MaxBody == 0 {
		return errors.New("--max-body 0 means no cap: drop the flag, or give a cap in bytes > 0")
	}
	return nil
}
