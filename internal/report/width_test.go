package report_test

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/openload/openload/internal/report"
	"github.com/openload/openload/result"
)

// TestChecksWrapped: a check's or an objective's long reason is wrapped
// (for a terminal) to report.LineWidth columns at spaces, each further
// line indented under the first's text, and nothing of it is lost.
func TestChecksWrapped(t *testing.T) {
	res := readResult(t, "stream.json")
	long := strings.Repeat("a reason that goes on ", 30) + "to its end"
	res.Checks = append(res.Checks, result.Check{Name: "outcomes", Severity: "warn", Message: long})
	res.SLOs = append(res.SLOs, result.SLO{Expr: "x", Message: long})
	var b bytes.Buffer
	if err := report.TextWrapped(&b, res, report.LineWidth); err != nil {
		t.Fatal(err)
	}
	section := ""
	var got []string
	for _, l := range strings.Split(b.String(), "\n") {
		switch l {
		case "checks", "objectives":
			section = l
			continue
		}
		if section == "" || l == "" || strings.HasPrefix(l, "result:") {
			continue
		}
		if n := utf8.RuneCountInString(l); n > report.LineWidth {
			t.Errorf("%s line of %d columns: %q", section, n, l)
		}
		if strings.Contains(l, "a reason") || strings.HasPrefix(strings.TrimSpace(l), "to its end") {
			got = append(got, strings.TrimSpace(l))
		}
	}
	for _, l := range strings.Split(b.String(), "\n") {
		if strings.HasPrefix(l, "  WARN  outcomes") {
			indent := strings.Index(l, "a reason")
			if !strings.Contains(b.String(), "\n"+strings.Repeat(" ", indent)+"a reason") {
				t.Errorf("continuation not indented by %d under %q", indent, l)
			}
		}
	}
	joined := strings.Join(got, " ")
	for _, want := range []string{"WARN  outcomes", "FAIL  "} {
		joined = strings.ReplaceAll(joined, want, "")
	}
	if n := strings.Count(joined, "to its end"); n != 2 {
		t.Errorf("the reason's end appears %d times, want 2 (a check's, an objective's):\n%s", n, b.String())
	}
}

// TestScenarioTableFits: the by-scenario table of scenarios with names
// of 8 letters and latencies of seconds fits 100 columns (178 before:
// each scenario's schedule, which the headline names, and each check).
func TestScenarioTableFits(t *testing.T) {
	res := readResult(t, "stream.json")
	sc := *res
	res.Scenarios = []result.Scenario{{Name: "checkout", Result: &sc}, {Name: "browse", Result: &sc}}
	var b bytes.Buffer
	if err := report.ScenarioTable(&b, res); err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(b.String(), "\n") {
		if n := utf8.RuneCountInString(l); n > 100 {
			t.Errorf("by-scenario line of %d columns: %q", n, l)
		}
	}
}
