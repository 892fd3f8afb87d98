package report_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/openload/openload/internal/golden"
	"github.com/openload/openload/result"
)

// readSweep reads the sweep file testdata/name.
func readSweep(t *testing.T, name string) *result.File {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	f, ok, err := result.ReadFile(bytes.NewReader(b), name)
	if !ok || err != nil {
		t.Fatalf("%s: sweep file %v, %v", name, ok, err)
	}
	return f
}

// widest is the width in runes of the widest line of s.
func widest(s string) int {
	w := 0
	for _, l := range strings.Split(s, "\n") {
		w = max(w, utf8.RuneCountInString(l))
	}
	return w
}

// TestSweepTableGolden: a typical sweep (the built-in stub, 40 to 160/s,
// one class header with two values, the default objectives) fits 100
// columns (186, then 126 before): its latencies in a table of their own,
// then its outcomes, each with the rate; its latencies' unit and the
// class header said once above the tables, the objectives in one column. The file is such a
// sweep's, its histograms and timelines left out (the table reads none of
// them).
func TestSweepTableGolden(t *testing.T) {
	out := render(t, readSweep(t, "sweep.json"))
	golden.Check(t, "sweep.golden", out)
	if w := widest(out); w > 100 {
		t.Errorf("sweep table %d columns wide, want ≤ 100:\n%s", w, out)
	}
	for _, want := range []string{"latencies in ms · p50, p90, p99 = response time", "│ model │ fallback │",
		"model, fallback: % of each point's requests by X-Stub-Source\n",
		"objectives, in this order: errors<=1% · client_errors<=1%", "│ ✓ 0 %  ✓ 0 % │ ← knee │",
		"│       120 │       112.2 │ 122.4 │ 143.1 │ 150.7 │    150.4 │       0.5 │\n",
		"│       120 │      0 │  68.8 │     31.2 │ ✓ 0 %  ✓ 0 % │ ← knee │"} {
		if !strings.Contains(out, want) {
			t.Errorf("sweep lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "X-Stub-Source=") {
		t.Errorf("a class column names its header:\n%s", out)
	}
}

// TestSearchTableGolden: a search whose probes stopped early prints each
// why in full under the table, wrapped to 120 columns, never cut; a figure
// past any bound is "past", said once under the table. The file is a
// search of response.p99<=200ms over 40–320/s, 2 runs a probe, against a
// stub with 4 workers of 50 ms and no gate (capacity 80/s).
func TestSearchTableGolden(t *testing.T) {
	f := readSweep(t, "search.json")
	out := render(t, f)
	golden.Check(t, "search.golden", out)
	if w := widest(out); w > 100 { // 132 before
		t.Errorf("search %d columns wide:\n%s", w, out)
	}
	if strings.Contains(out, "…") {
		t.Errorf("a why is cut:\n%s", out)
	}
	// Every why, its lines joined, is there in full.
	var joined strings.Builder
	for _, l := range strings.Split(out, "\n") {
		joined.WriteString(strings.TrimSpace(l) + " ")
	}
	for _, p := range f.Search.Probes {
		if p.Why != "" && !strings.Contains(joined.String(), p.Why) {
			t.Errorf("why %q is not in full in:\n%s", p.Why, out)
		}
	}
	if !strings.Contains(out, "│       past │                 past │") {
		t.Errorf("stopped probes' figures:\n%s", out)
	}
}

// TestSweepInterruptedPoint: the point a user's stop cut short is marked
// so in its row, with how much of its schedule ran; a stop of the sweep's
// own stays "stopped early".
func TestSweepInterruptedPoint(t *testing.T) {
	f := readSweep(t, "sweep.json")
	last := f.Points[len(f.Points)-1]
	r := *last.Result
	r.Interrupted = true
	r.Counts.Scheduled = r.Counts.Scheduled / 2
	f.Points[len(f.Points)-1].Result = &r
	out := render(t, f)
	want := fmt.Sprintf("INTERRUPTED (%d/%.0f scheduled) │", r.Counts.Scheduled, r.Counts.Expected)
	rows := 0
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, "INTERRUPTED") {
			rows++
			if !strings.HasSuffix(l, want) {
				t.Errorf("interrupted row %q, want it to end %q", l, want)
			}
		}
	}
	if rows != 1 {
		t.Errorf("%d rows marked interrupted, want the last alone:\n%s", rows, out)
	}
}
