// Command openload is an open-model HTTP load generator. It sends requests
// at a fixed arrival rate whether or not earlier ones have returned, and
// reports, for every request, response time (done − scheduled), service time
// (done − sent) and send delay (sent − scheduled) side by side.
//
// Usage:
//
//	openload [flags] [URL]      run a load test (no URL: against a built-in stub)
//	openload stub [flags]       run the stub model server
//	openload diff A.json [B.json]   service vs response time of a result, or two results side by side
//	openload report [flags] FILE   re-render a saved result or sweep (reportcmd.go)
//	openload merge SHARD.json... [-o ALL.json]   add the results of the shards of one schedule (--shard)
//	openload model poisson [flags]   predict a sharded rate limiter's 429s under Poisson arrivals
//	openload sweep [flags] [URL]   one run per offered rate, or a capacity search (sweep.go)
//	openload k8s run|manifest [flags] URL   the shards as a Kubernetes Indexed Job, merged (k8s.go)
//	openload --version          the version and commit; no arguments: the help
//
// Exit codes: 0 the run is valid (checks passed, maybe with warnings);
// 1 a check failed, the measurement is not valid; 2 bad input, nothing was
// started; 3 the run could not be started or its results not written;
// 4 the measurement is valid but an --slo objective was breached, or had
// no data; 5 the measurement is valid but the target failed: more than 1 %
// of the requests got no answer (the default objective errors<=1%, which
// the user's own --slo on errors replaces), or were refused with a client
// error (client_errors<=1%);
// 130 the run was interrupted (results are still written). Precedence:
// 3, 130, 1, 5, 4.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"syscall"

	"github.com/openload/openload/internal/engine"
)

// Exit codes, documented in the README.
const (
	exitOK          = 0
	exitCheckFailed = 1
	exitUsage       = 2
	exitRuntime     = 3
	exitSLOBreached = 4
	// exitTargetFailed: the target failed the default objective (too
	// many requests without an answer, verify.DefaultObjective).
	exitTargetFailed = 5
	exitInterrupted  = 130
)

// gcPercent is openload's GOGC unless the environment sets one. Each
// collection stops the world for a moment, and on a busy machine that
// moment stretches to a millisecond or more (the generator shares the
// cores with the server under test), which shows as send delay. Fewer
// collections, for some more memory, bring it down (see
// docs/MEASUREMENTS.md, “gcPercent”).
const gcPercent = 400

// main runs the CLI. The first SIGINT or SIGTERM cancels the run's
// context: scheduling stops, in-flight requests get a short drain, and the
// result and log are written marked interrupted (exit 130). A second signal
// exits at once: the per-request log then holds complete lines only (it is
// flushed at line boundaries) and a result file not written yet never is
// (it is written to a temporary file and renamed into place at the end, so
// no half-written result is left behind); the line it prints names the
// outputs written in full before it.
func main() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(gcPercent)
	}
	ctx, cancel := context.WithCancel(context.Background())
	sig := make(chan os.Signal, 2)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	go func() {
		s := <-sig
		if len(os.Args) > 1 && os.Args[1] == "k8s" { // k8s.go: no requests here, a Job there
			fmt.Fprintf(os.Stderr, "\nopenload: %v: stopping; the Job is deleted unless --keep (a second signal exits at once, leaving it)\n", s)
		} else {
			fmt.Fprintf(os.Stderr, "\nopenload: %v: stopping; in-flight requests get %v (a second signal exits at once)\n", s, engine.InterruptDrain)
		}
		cancel()
		<-sig
		fmt.Fprintln(os.Stderr, secondSignal()) // secondsignal.go: what was and was not written
		os.Exit(exitInterrupted)
	}()
	stopProfile := startProfile()
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stopProfile()
	signal.Stop(sig)
	cancel()
	os.Exit(code)
}

// run is the whole CLI as a function, for tests.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 { // a first try: what openload does, not "--rate is required"
		fmt.Fprint(stdout, usageText())
		return exitOK
	}
	switch args[0] {
	case "--version", "-version":
		bi, _ := debug.ReadBuildInfo()
		fmt.Fprintln(stdout, versionText(bi))
		return exitOK
	case "stub":
		return runStub(ctx, args[1:], stdout, stderr)
	case "diff":
		return runDiff(args[1:], stdout, stderr)
	case "report":
		return runReport(args[1:], stdout, stderr)
	case "merge":
		return runMerge(args[1:], stdout, stderr) // merge.go
	case "model":
		return runModel(args[1:], stdout, stderr)
	case "sweep":
		return runSweep(ctx, args[1:], stdout, stderr)
	case "k8s":
		return runK8s(ctx, args[1:], stdout, stderr) // k8s.go
	case "help":
		switch {
		case len(args) == 1 || args[1] == "help" || strings.HasPrefix(args[1], "-"):
			fmt.Fprint(stdout, usageText())
			return exitOK
		case !isCommand(args[1]):
			return usageError(stderr, "%v", helpTopicError(args[1]))
		}
		// openload help stub: openload stub --help
		return run(ctx, append(args[1:], "--help"), stdout, stderr)
	}
	// A first word that is no command nor a URL is a mistyped
	// command (suggest.go), not a URL without its scheme.
	if err, ok := unknownCommand(args[0]); ok {
		return usageError(stderr, "%v", err)
	}
	return runLoad(ctx, args, stdout, stderr)
}

// versionText is what --version prints: the module's version and the
// commit the binary was built from, as go build stamps them (vcs.* build
// settings; "modified" when the tree had uncommitted changes), and Go's.
func versionText(bi *debug.BuildInfo) string {
	if bi == nil {
		return "openload (version unknown: no build information)"
	}
	s := "openload " + bi.Main.Version
	set := map[string]string{}
	for _, kv := range bi.Settings {
		set[kv.Key] = kv.Value
	}
	if rev := set["vcs.revision"]; rev != "" {
		s += ", commit " + rev
		if t := set["vcs.time"]; t != "" {
			s += " (" + t + ")"
		}
		if set["vcs.modified"] == "true" {
			s += ", modified"
		}
	} else {
		s += ", commit unknown (built without VCS stamping, -buildvcs=false)"
	}
	return s + ", " + bi.GoVersion
}

// usageError prints a one-line error and the hint, and returns exitUsage.
func usageError(stderr io.Writer, format string, a ...any) int {
	return usageErrorIn(stderr, "", format, a...)
}

// usageErrorIn is usageError for the subcommand cmd ("stub", "model
// poisson"; "" is the load run): the error names it, and the hint points
// to its help.
func usageErrorIn(stderr io.Writer, cmd, format string, a ...any) int {
	prog := "openload"
	if cmd != "" {
		prog += " " + cmd
		format = cmd + ": " + format
	}
	fmt.Fprintf(stderr, "openload: "+format+"\n", a...)
	fmt.Fprintf(stderr, "run '%s --help' for usage\n", prog)
	return exitUsage
}
