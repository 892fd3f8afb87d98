package main

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/pflag"

	"github.com/openload/openload/targets/stub"
)

// runStub runs the stub model server until ctx is cancelled (SIGINT or
// SIGTERM).
func runStub(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	cfg := stub.DefaultConfig()
	fs := pflag.NewFlagSet("openload stub", pflag.ContinueOnError)
	fs.SortFlags = false
	fs.SetOutput(io.Discard)
	cfg.AddFlags(fs)
	help := fs.BoolP("help", "h", false, "show this help")
	if err := fs.Parse(longForm(fs, args)); err != nil {
		return usageError(stderr, "stub: %v", err)
	}
	if *help {
		fmt.Fprintf(stdout, "openload stub — a model server behind overload gates, for rehearsing overload\n\nUsage:\n  openload stub [flags]\n\nFlags:\n%s", fs.FlagUsages())
		return exitOK
	}
	if fs.NArg() > 0 {
		return usageError(stderr, "stub: unexpected argument %q", fs.Arg(0))
	}
	if err := cfg.Validate(); err != nil {
		return usageError(stderr, "stub: %v", err)
	}
	s, err := stub.NewServer(cfg)
	if err != nil {
		fmt.Fprintf(stderr, "openload: stub: %v\n", err)
		return exitRuntime
	}
	fmt.Fprintf(stdout, "openload stub: listening on %s (%s); stats at %s/stats; Ctrl-C stops\n", s.URL, describeStub(s.Config), s.URL)
	<-ctx.Done()
	s.Close()
	fmt.Fprintln(stdout, "openload stub: stopped")
	return exitOK
}
