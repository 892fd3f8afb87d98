package main

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/openload/openload/internal/golden"
)

// The fixed results in testdata come from one run of
// `go run ./examples/coordinated-omission -short -o DIR`: 200/s for 3 s
// against the stub with a 1 s stall, closed (diff-closed.json) and open
// (diff-open.json).

// goldenRuns runs each command line and renders "$ openload …", its output
// and, when it is not 0, its exit code, for a golden file.
func goldenRuns(t *testing.T, cmds [][]string) string {
	t.Helper()
	var b strings.Builder
	for _, args := range cmds {
		code, stdout, stderr := runCLI(args...)
		fmt.Fprintf(&b, "$ openload %s\n%s", strings.Join(args, " "), stdout)
		if code != exitOK {
			fmt.Fprintf(&b, "exit %d\n%s", code, stderr)
		} else if stderr != "" {
			t.Errorf("%q: exit 0 but stderr %q", args, stderr)
		}
		b.WriteString("\n")
	}
	return b.String()
}

func TestDiffGolden(t *testing.T) {
	got := goldenRuns(t, [][]string{
		{"diff", "testdata/diff-open.json"},
		{"diff", "testdata/diff-closed.json"},
		{"diff", "testdata/diff-closed.json", "testdata/diff-open.json"},
		{"diff", "--metric", "service", "testdata/diff-closed.json", "testdata/diff-open.json"},
		{"diff", "-metric", "corrected", "testdata/diff-closed.json", "testdata/diff-closed.json"},
	})
	golden.Check(t, "diff.golden", got)
}

func TestReportGolden(t *testing.T) {
	got := goldenRuns(t, [][]string{
		{"report", "testdata/diff-closed.json"},
		{"report", "--format", "hgrm", "--metric", "response", "testdata/diff-open.json"},
		{"report", "-format", "hgrm", "-metric", "corrected", "testdata/diff-closed.json"},
	})
	golden.Check(t, "report.golden", got)
}

// TestReportJSONRoundTrip: --format json re-encodes a result exactly as the
// run wrote it.
func TestReportJSONRoundTrip(t *testing.T) {
	code, stdout, stderr := runCLI("report", "--format", "json", "testdata/diff-open.json")
	want, _ := os.ReadFile("testdata/diff-open.json")
	if code != exitOK || stdout != string(want) {
		t.Errorf("exit %d, stderr %q; output equals the file: %v", code, stderr, stdout == string(want))
	}
}

// TestReportJSONUpgrades: --format json re-encodes a result written with
// the old double-base64 histograms (diff-closed.json, kept so on purpose:
// the goldens above read it) with the standard strings, each the old one
// unwrapped; nothing else changes.
func TestReportJSONUpgrades(t *testing.T) {
	old, err := os.ReadFile("testdata/diff-closed.json")
	if err != nil {
		t.Fatal(err)
	}
	stdout, _ := runOK(t, "report", "--format", "json", "testdata/diff-closed.json")
	oldForm := regexp.MustCompile(`"SElTV[A-Za-z0-9+/=]*"`)
	if n := len(oldForm.FindAll(old, -1)); n != 4 {
		t.Fatalf("diff-closed.json holds %d old-form histograms, want its 4", n)
	}
	want := oldForm.ReplaceAllFunc(old, func(q []byte) []byte {
		b, err := base64.StdEncoding.DecodeString(string(q[1 : len(q)-1]))
		if err != nil {
			t.Fatal(err)
		}
		return []byte(`"` + string(b) + `"`)
	})
	if stdout != string(want) || !strings.Contains(stdout, `"response": "HISTFAAAA`) {
		t.Errorf("re-encoded:\n%s\nwant:\n%s", stdout, want)
	}
}

// TestInputErrorsGolden: a file that cannot be read, is corrupt or
// truncated, is of another version or lacks the metric is bad input: a
// one-line error naming the file, exit 2, nothing on stdout.
func TestInputErrorsGolden(t *testing.T) {
	cases := [][]string{
		{"diff", "testdata/missing.json"},
		{"diff", "testdata"},
		{"diff", "testdata/empty.json"},
		{"diff", "testdata/truncated.json"},
		{"diff", "testdata/corrupt.json"},
		{"diff", "testdata/not-a-result.json"},
		{"diff", "testdata/diff-open.json", "testdata/version2.json"},
		{"diff", "testdata/version2.json", "testdata/diff-open.json"},
		{"diff", "testdata/no-service.json"},
		{"diff", "--metric", "service", "testdata/diff-open.json", "testdata/no-service.json"},
		{"diff", "testdata/bad-histogram.json", "testdata/diff-open.json"},
		{"diff", "--metric", "corrected", "testdata/diff-closed.json", "testdata/diff-open.json"},
		{"report", "testdata/truncated.json"},
		{"report", "--format", "hgrm", "--metric", "corrected", "testdata/diff-open.json"},
		{"report", "--format", "hgrm", "--metric", "service", "testdata/no-service.json"},
		// Files openload writes that are not results say what they are
		// and what reads them (sniff.go); JSON of another shape says it
		// is not a result, in words.
		{"diff", "testdata/interval.hlog"},
		{"diff", "testdata/diff-open.json", "testdata/interval.hlog"},
		{"report", "testdata/requests.csv"},
		{"diff", "testdata/requests.csv"},
		{"merge", "testdata/requests.csv"},
		{"report", "testdata/timeline.csv"},
		{"diff", "testdata/percentiles.hgrm"},
		{"diff", "testdata/array.json"},
		{"report", "testdata/wrong-field.json"},
		// FILE#N of a file that is no sweep.
		{"report", "testdata/diff-open.json#3"},
		{"diff", "testdata/diff-open.json#3"},
		{"report", "testdata/interval.hlog#2"},
		{"report", "testdata/missing.json#3"},
	}
	var b strings.Builder
	for _, args := range cases {
		code, stdout, stderr := runCLI(args...)
		if code != exitUsage {
			t.Errorf("%q: exit %d, want %d", args, code, exitUsage)
		}
		if stdout != "" {
			t.Errorf("%q: printed to stdout: %q", args, stdout)
		}
		if n := strings.Count(stderr, "\n"); n != 1 {
			t.Errorf("%q: want a one-line error, got %q", args, stderr)
		}
		fmt.Fprintf(&b, "$ openload %s\n%s", strings.Join(args, " "), stderr)
	}
	golden.Check(t, "input-errors.golden", b.String())
}

// TestRunClosedMode runs --closed against a loopback server that holds its
// 11th request for 300 ms: one user paced to 100/s misses the ≥ 29 slots
// due meanwhile, and the report, the result and diff say so.
func TestRunClosedMode(t *testing.T) {
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) == 11 {
			time.Sleep(300 * time.Millisecond)
		}
	}))
	defer srv.Close()
	out := filepath.Join(t.TempDir(), "closed.json")
	stdout, _ := runOK(t, "--closed", "-c", "1", "-rate", "100", "-d", "1s", "-o", out, srv.URL)
	wantLines(t, stdout, "closed loop: 1 user paced to 100/s for 1s", "corrected (10ms)", "expected 100 · scheduled", "never sent",
		"WARN  schedule", "coordinated omission", "WARN  send dips", "result: valid, with")
	res := readResult(t, out)
	c := res.Counts
	// 300 ms at 10 ms per slot: at least 29 slots fall inside the held
	// request; a busy machine may skip a few more, never lose one.
	if !res.Closed() || res.Config.Users != 1 || c.Scheduled+c.Skipped != 100 || c.Skipped < 29 || !c.Balanced() {
		t.Errorf("closed result: mode %q users %d counts %+v", res.Config.Mode, res.Config.Users, c)
	}
	if res.Corrected == nil || res.Corrected.Interval != "10ms" || res.Histograms.Corrected == "" {
		t.Errorf("corrected %+v", res.Corrected)
	}
	code, stdout, _ := runCLI("diff", out)
	if code != exitOK || !strings.Contains(stdout, "closed loop: its scheduled times are its users' own slots") {
		t.Errorf("diff of a closed result: exit %d\n%s", code, stdout)
	}
}

// TestRunClosedUnpaced: --closed without --rate runs for --duration as
// fast as the users go; the expected count is unknown and no check fails.
func TestRunClosedUnpaced(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	out := filepath.Join(t.TempDir(), "r.json")
	stdout, _ := runOK(t, "--closed", "-c", "2", "-d", "300ms", "--think", "5ms", "-o", out, srv.URL)
	wantLines(t, stdout, "closed loop: 2 users, think 5ms, unpaced, for 300ms", "expected unknown (closed loop without a rate)",
		"closed loop, unpaced", "PASS  schedule          closed loop without a rate", "result: valid")
	if strings.Contains(stdout, "corrected") {
		t.Errorf("an unpaced run has a corrected row:\n%s", stdout)
	}
	res := readResult(t, out)
	if res.Config.Rate != 0 || res.Config.Think != "5ms" || res.Counts.Scheduled == 0 || res.Corrected != nil {
		t.Errorf("config %+v counts %+v", res.Config, res.Counts)
	}
}
