package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openload/openload/recorder"
	"github.com/openload/openload/result"
)

// The helpers the CLI's tests share: runCLI (main_test.go) runs the CLI
// in the test's process; these check what a run printed and read what it
// wrote.

// runOK runs the CLI with args and stops the test unless it exits 0; it
// returns what the run printed.
func runOK(t *testing.T, args ...string) (stdout, stderr string) {
	t.Helper()
	code, stdout, stderr := runCLI(args...)
	if code != exitOK {
		t.Fatalf("openload %s: exit %d, want 0\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), code, stdout, stderr)
	}
	return stdout, stderr
}

// wantLines fails t for each of wants that out lacks.
func wantLines(t *testing.T, out string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(out, w) {
			t.Errorf("output lacks %q:\n%s", w, out)
		}
	}
}

// readResult reads a result file written by -o, as `openload report`
// does.
func readResult(t *testing.T, path string) *result.Result {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	res, err := result.Read(f, path)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// readLog reads a --log file to its end: the entries it holds up to the
// first error, and that error.
func readLog(t *testing.T, path string) ([]recorder.LogEntry, error) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	lr := recorder.NewLogReader(f, path)
	var es []recorder.LogEntry
	for lr.Scan() {
		es = append(es, lr.Entry())
	}
	return es, lr.Err()
}

// writeFile writes text to dir/name and returns its path.
func writeFile(t *testing.T, dir, name, text string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}
