package main

import (
	"strings"

	"github.com/spf13/pflag"

	"github.com/openload/openload/internal/loadtest"
)

// autoOptions say which response headers a load run reads without being
// asked (loadtest.DefaultAutoHeaders): Server-Timing, whose metrics the
// report then shows next to service time, and the stub's X-Stub-Source,
// which it groups answers by. Each table appears only when responses
// carried its header, so a server that sends neither sees no change.
type autoOptions struct {
	off bool // --no-auto-headers
}

func (a *autoOptions) flags(fs *pflag.FlagSet) {
	fs.BoolVar(&a.off, "no-auto-headers", false, "read only the response headers --class-header and --server-timing name (by default "+
		strings.Join(loadtest.DefaultAutoHeaders(), " and ")+" are read too, and shown when responses carry them)")
}

// headers are the run's automatic headers: none with --no-auto-headers;
// Server-Timing only when --server-timing was not given (either way);
// the class headers beside those --class-header names.
func (a *autoOptions) headers(fs *pflag.FlagSet) []string {
	if a.off {
		return nil
	}
	var out []string
	for _, h := range loadtest.DefaultAutoHeaders() {
		if h != "Server-Timing" || !fs.Changed("server-timing") {
			out = append(out, h)
		}
	}
	return out
}

// autoClassHeaders are the class headers among the automatic ones, for
// the help.
func autoClassHeaders() string {
	var out []string
	for _, h := range loadtest.DefaultAutoHeaders() {
		if h != "Server-Timing" {
			out = append(out, h)
		}
	}
	return strings.Join(out, ", ")
}
