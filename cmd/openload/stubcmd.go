package main

import (
	"context"
	"fmt"
	"io"
	"os"

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
	// The built-in stub of a load run is this command in a child process
	// (stubchild.go): it stops when its parent closes its standard input.
	child := fs.Bool("until-stdin-closes", false, "stop when standard input closes")
	fs.MarkHidden("until-stdin-closes")
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
		return usageError(stderr, "stub: %v", flagError(stubFields, err))
	}
	s, err := stub.NewServer(cfg)
	if err != nil {
		fmt.Fprintf(stderr, "openload: stub: %v\n", err)
		return exitRuntime
	}
	fmt.Fprintf(stdout, "%s%s (%s); stats at %s/stats; Ctrl-C stops\n", listeningPrefix, s.URL, describeStub(s.Config), s.URL)
	var parentGone chan struct{}
	if *child {
		parentGone = make(chan struct{})
		go func() {
			io.Copy(io.Discard, os.Stdin)
			close(parentGone)
		}()
	}
	select {
	case <-ctx.Done():
	case <-parentGone:
	}
	s.Close()
	fmt.Fprintln(stdout, "openload stub: stopped")
	return exitOK
}
