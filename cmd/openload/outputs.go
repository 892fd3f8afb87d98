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

// writeOutput writes what fn renders to path ("" nothing, "-" stdout). The
// error names the flag and the path and, when the data could be kept,
// where it is.
func writeOutput(flag, path string, stdout io.Writer, fn func(io.Writer) error) error {
	kept, err := outfile.Write(path, stdout, fn)
	if err == nil {
		return nil
	}
	msg := fmt.Sprintf("%s %q: %v", flag, path, err)
	if kept != "" {
		msg += "; what was to be written is kept at " + kept
	}
	return errors.New(msg)
}
