package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openload/openload/internal/recorder"
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

// wantVerdict checks a run whose objective expr is on a time figure this
// machine's speed decides: whether it is met is not the test's to say,
// but the verdict must be the objective's own on the figure the result
// holds (measured, ms, against bound, ms), and the exit code the
// verdict of all the run's objectives (0 met, 4 breached). It returns
// whether expr was met, for what the caller expects printed.
func wantVerdict(t *testing.T, code int, res *result.Result, expr string, measured, bound float64) bool {
	t.Helper()
	var o *result.SLO
	met := true
	for i := range res.SLOs {
		met = met && res.SLOs[i].Pass
		if res.SLOs[i].Expr == expr {
			o = &res.SLOs[i]
		}
	}
	if o == nil || o.NoData {
		t.Fatalf("exit %d: objective %q not judged on data: %+v", code, expr, res.SLOs)
	}
	if o.Measured != measured || o.Pass != (measured <= bound) {
		t.Errorf("objective %+v: want %.3f ms judged against %.3f ms", *o, measured, bound)
	}
	if want := map[bool]int{true: exitOK, false: exitSLOBreached}[met]; code != want {
		t.Errorf("exit %d, want %d: objectives %+v", code, want, res.SLOs)
	}
	return o.Pass
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
