package main

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/openload/openload/internal/report"
	"github.com/openload/openload/result"
	"github.com/openload/openload/verify"
)

// parseObjectives parses every --slo expression; the error names the first
// bad one.
func parseObjectives(exprs []string) ([]verify.Objective, error) {
	objs := make([]verify.Objective, 0, len(exprs))
	for _, e := range exprs {
		o, err := verify.ParseObjective(e)
		if err != nil {
			return nil, fmt.Errorf("--slo: %v", err)
		}
		objs = append(objs, o)
	}
	return objs, nil
}

// exitCodes map each class of outcome (verify.Judge) to its exit code
// (main.go). A result or log that could not be written (3) is the
// caller's, and comes before all of them.
var exitCodes = map[verify.Class]int{
	verify.ClassValid:        exitOK,
	verify.ClassBreached:     exitSLOBreached,
	verify.ClassTargetFailed: exitTargetFailed,
	verify.ClassInvalid:      exitCheckFailed,
	verify.ClassInterrupted:  exitInterrupted,
}

// exitOf is the exit code of class c.
func exitOf(c verify.Class) int { return exitCodes[c] }

// writeVerdict prints the verdict of res (report.VerdictLines, its hints
// in the command line's words: the flags that would help) to out; with
// quiet, only when the outcome is not valid, to stderr, after "openload: "
// and cmd's name ("merge: "), with the checks that failed.
func writeVerdict(out, stderr io.Writer, res *result.Result, exit int, quiet bool, cmd string) {
	lines := report.VerdictLines(res, exit)
	for i, l := range lines {
		if l.Label == "hint" {
			lines[i].Text = hintFlags.Replace(l.Text)
		}
	}
	if verify.TargetFailed(res) && res.Status["415"] > 0 && len(res.Config.Headers["Content-Type"]) == 0 {
		// After the result line and its hints, before the objectives'.
		at := 1
		for at < len(lines) && lines[at].Label == "hint" {
			at++
		}
		lines = slices.Insert(lines, at, report.Line{Label: "hint", Text: "add -H 'Content-Type: application/json' to name a JSON body's type"})
	}
	if !quiet {
		wrapped := report.NewLineWrapper(out, wrapWidth(out)) // on a terminal, as the report's lines
		fmt.Fprintln(wrapped)
		for _, l := range lines {
			fmt.Fprintln(wrapped, l)
		}
		wrapped.Flush()
		return
	}
	class := verify.ClassOf(res)
	if class == verify.ClassValid {
		return
	}
	for _, c := range res.Checks {
		if c.Severity == string(verify.Fail) {
			fmt.Fprintf(stderr, "openload: %scheck %s failed: %s\n", cmd, c.Name, c.Message)
		}
	}
	for _, l := range lines {
		switch {
		case l.Label == "result" && (class == verify.ClassInvalid || class == verify.ClassBreached):
			// The failed checks said it, or the objectives' line will.
		case l.Label == "result":
			fmt.Fprintf(stderr, "openload: %s%s\n", cmd, l.Text)
		default:
			fmt.Fprintf(stderr, "openload: %s%s: %s\n", cmd, l.Label, l.Text)
		}
	}
}

// hintFlags names, in the library's hints, the flag that does what the
// hint says in words (the libraries name no flag).
var hintFlags = strings.NewReplacer(
	"skip certificate verification", "add --insecure to skip certificate verification",
	"(without h2c)", "(without --h2c)",
	"with its h2c switch", "with --h2c",
	"raise the connection limit", "raise -c", // verify.StreamLimit
)
