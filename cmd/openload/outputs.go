package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/openload/openload/internal/outfile"
)

// Every file openload writes goes through internal/outfile: checked
// before anything is sent (checkOutputs, a usage error: exit 2), written
// whole or not at all, and kept under a temporary name, which the error
// says, when writing still fails after the data was measured.

// output is one output file of a command: the flag that names it and its
// path ("" none, "-" stdout).
func output(flag, path string) outfile.Output { return outfile.Output{Name: flag, Path: path} }

// checkOutputs checks every output before a run: the first that cannot be
// written is the error, naming its flag and path.
func checkOutputs(outs ...outfile.Output) error { return outfile.CheckAll(outs...) }

// oneOnStdout refuses two of a run's outputs on stdout ("-"): the result
// and a log streamed as the run goes would interleave there.
func oneOnStdout(outs ...outfile.Output) error {
	var first string
	for _, o := range outs {
		switch {
		case o.Path != "-":
		case first == "":
			first = o.Name
		default:
			return fmt.Errorf("%s - and %s -: one output at most goes to stdout", first, o.Name)
		}
	}
	return nil
}

// writeOutput writes what fn renders to path ("" nothing, "-" stdout).
// Once a file is written, notice gets one line saying where ("openload:
// wrote run.json"): stderr, or io.Discard under -q (quietNotice); stdout
// is never told, so that what a pipe or a golden file reads stays the
// report. The error names the flag and the path and, when the data could
// be kept, where it is.
func writeOutput(flag, path string, stdout, notice io.Writer, fn func(io.Writer) error) error {
	kept, err := outfile.Write(path, stdout, fn)
	if err == nil {
		noteWritten(flag, path) // secondsignal.go
		if path != "" && path != "-" {
			fmt.Fprintf(notice, "openload: wrote %s\n", path)
		}
		return nil
	}
	msg := fmt.Sprintf("%s %q: %v", flag, path, err)
	if kept != "" {
		msg += "; what was to be written is kept at " + kept
	}
	return errors.New(msg)
}

// quietNotice is where writeOutput says what it wrote: stderr, but nowhere
// under -q.
func quietNotice(stderr io.Writer, quiet bool) io.Writer {
	if quiet {
		return io.Discard
	}
	return stderr
}
