package main

import (
	"errors"
	"fmt"

	"github.com/spf13/pflag"
)

// faultOptions are the flags that say what to do with a misbehaving or
// untrusted server: TLS verification, redirects and response body size
// (internal/engine/faults.go documents the behaviour).
type faultOptions struct {
	insecure        bool
	followRedirects bool
	maxBody         int64
}

func (f *faultOptions) flags(fs *pflag.FlagSet) {
	fs.BoolVar(&f.insecure, "insecure", false,
		"do not verify the server's TLS certificate (by default it is verified and an untrusted one is a tls error)")
	fs.BoolVar(&f.followRedirects, "follow-redirects", false,
		"follow redirects, up to 10 per request, and count the final status (by default a 3xx is a completed response, counted under its status)")
	fs.Int64Var(&f.maxBody, "max-body", 0,
		"read at most this many bytes of a response body and discard the rest by closing the connection; such a response still counts as completed, and as over the cap (0: no cap; bodies are always discarded with bounded memory)")
}

// validate checks the flags; errors name the flag and the value.
func (f *faultOptions) validate(fs *pflag.FlagSet) error {
	switch {
	case f.maxBody < 0:
		return fmt.Errorf("--max-body must be ≥ 0 bytes (0: no cap), got %d", f.maxBody)
	case fs.Changed("max-body") && f.maxBody == 0:
		return errors.New("--max-body 0 means no cap: drop the flag, or give a cap in bytes > 0")
	}
	return nil
}
