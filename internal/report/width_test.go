package report_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/olekukonko/tablewriter/pkg/twwidth"

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

// TestTextWidth: every section the text report has (a plain run, shards,
// a closed loop corrected, a stream run, sessions and a conversation,
// a mix, scenarios with mixes, a run none of whose requests got an
// answer after 30 s, a class by second over 20 s, a warm-up, HTTP/2, a
// stop, a refusal, long checks, a sweep and a search) fits a terminal of
// report.LineWidth columns: its display width, each wide rune two
// columns. On a terminal its prose is wrapped, and nothing of it lost
// (the same words as in a file); a file or pipe gets each line whole,
// and the tables fit there too.
func TestTextWidth(t *testing.T) {
	for _, c := range widthCases(t) {
		var wrappedOut, whole bytes.Buffer
		if err := report.TextWrapped(&wrappedOut, c.res, report.LineWidth); err != nil {
			t.Fatal(err)
		}
		if err := report.Text(&whole, c.res); err != nil {
			t.Fatal(err)
		}
		for _, l := range strings.Split(wrappedOut.String(), "\n") {
			if n := displayWidth(l); n > report.LineWidth {
				t.Errorf("%s: line of %d columns on a terminal: %q", c.name, n, l)
			}
		}
		for _, l := range strings.Split(whole.String(), "\n") {
			if n := displayWidth(l); n > report.LineWidth && strings.ContainsAny(l, "┌│├└") {
				t.Errorf("%s: table line of %d columns in a file: %q", c.name, n, l)
			}
		}
		if a, b := strings.Fields(wrappedOut.String()), strings.Fields(whole.String()); !slices.Equal(a, b) {
			t.Errorf("%s: wrapped, the report's words differ:\n%s\nwhole:\n%s", c.name, wrappedOut.String(), whole.String())
		}
	}
	for _, name := range []string{"sweep.json", "search.json"} {
		for _, l := range strings.Split(render(t, readSweep(t, name)), "\n") {
			if n := displayWidth(l); n > report.LineWidth {
				t.Errorf("%s: line of %d columns: %q", name, n, l)
			}
		}
	}
	// cmd's other reports on a terminal, through the same wrapper: a
	// diff of one result and of two, and the verdict.
	cases := widthCases(t)
	var b bytes.Buffer
	lw := report.NewLineWrapper(&b, report.LineWidth)
	for _, c := range cases {
		if err := report.ServiceVsResponse(lw, c.name, c.res, c.res.Service, c.res.Response); err != nil {
			t.Fatal(err)
		}
		for _, l := range report.VerdictLines(c.res, 5) {
			fmt.Fprintln(lw, l)
		}
	}
	a, long := mixResult(t, 2*time.Millisecond), longNames(mixResult(t, 3*time.Millisecond))
	if err := report.Compare(lw, "response", "a.json", longNames(a), a.Response, "b.json", long, long.Response); err != nil {
		t.Fatal(err)
	}
	if err := lw.Flush(); err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(b.String(), "\n") {
		if n := displayWidth(l); n > report.LineWidth {
			t.Errorf("diff or verdict: line of %d columns: %q", n, l)
		}
	}
}

// longNames gives res's targets names of 60 characters, a mix's METHOD
// URL names.
func longNames(res *result.Result) *result.Result {
	for i := range res.Targets {
		res.Targets[i].Name = fmt.Sprintf("POST https://api.example.com/v1/chat/completions?user=%06d", i)
	}
	return res
}

// displayWidth is l's width on a terminal: a rune a column, East Asian
// wide ones two (tablewriter's measure, without the East Asian width of
// ambiguous runes such as · and ×).
func displayWidth(l string) int { return twwidth.WidthWithOptions(l, twwidth.Options{}) }

type widthCase struct {
	name string
	res  *result.Result
}

// widthCases are results with every section of the text report, from
// the golden files' results where they have it.
func widthCases(t *testing.T) []widthCase {
	t.Helper()
	closed, err := os.Open(filepath.Join("..", "..", "cmd", "openload", "testdata", "diff-closed.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer closed.Close()
	corrected, err := result.Read(closed, "diff-closed.json")
	if err != nil {
		t.Fatal(err)
	}
	cases := []widthCase{{"closed loop, corrected", corrected}}
	for _, name := range []string{"stream.json", "shard.json", "shard-poisson.json", "shards-partial.json"} {
		cases = append(cases, widthCase{name, readResult(t, name)})
	}
	cases = append(cases, widthCase{"session run", shopRun(t)}, widthCase{"conversation, a scenario", chatRun(t)},
		widthCase{"mix", mixResult(t, 2*time.Millisecond)}, widthCase{"mix of URLs", longNames(mixResult(t, 2*time.Millisecond))},
		widthCase{"scenarios of mixes", scenariosOfMixes(t)},
		widthCase{"no answer in 30 s", noAnswer(t)}, widthCase{"class by second, 20 s", classSeconds(t)})

	long := readResult(t, "stream.json")
	reason := strings.Repeat("a reason that goes on ", 30) + "to its end"
	long.Checks = append(long.Checks, result.Check{Name: "outcomes", Severity: "warn", Message: reason})
	long.SLOs = append(long.SLOs, result.SLO{Expr: "x", Message: reason})
	long.Warmup = &result.Warmup{Until: "5s", Scheduled: 25, Completed: 25, Response: long.Response, Service: long.Service}
	long.Config.Protocol, long.Config.MaxStreams, long.Interrupted = "h2", 100, true
	long.Status["503"] = 3
	long.Refusal = &result.Refusal{Status: 503, Body: strings.Repeat("the server is over its capacity, ", 8)}
	return append(cases, widthCase{"long checks, warm-up, HTTP/2, a stop, a refusal", long})
}

// scenariosOfMixes is a run of two scenarios, each a mix of three
// targets (part_test.go's), the whole stream.json's.
func scenariosOfMixes(t *testing.T) *result.Result {
	whole := readResult(t, "stream.json")
	whole.Scenarios = []result.Scenario{{Name: "checkout", Result: mixResult(t, 2*time.Millisecond)}, {Name: "browse", Result: mixResult(t, 3*time.Millisecond)}}
	return whole
}

// noAnswer is stream.json as if none of its requests got an answer, each
// timing out after 30 s: latencies of five digits before the point.
func noAnswer(t *testing.T) *result.Result {
	res := readResult(t, "stream.json")
	for _, p := range []*result.Percentiles{&res.Response, &res.Service, &res.Stream.TTFTResponse, &res.Stream.TTFTService} {
		p.P50, p.P90, p.P95, p.P99, p.P999, p.Max, p.Mean = 30000.125, 30001.125, 30002.125, 30003.125, 30004.125, 30004.125, 30000.5
	}
	c := &res.Counts
	c.Timeouts, c.Completed = c.Completed, 0
	res.Status, res.ErrorKinds = nil, map[string]int64{"timeout": c.Timeouts}
	return res
}

// classSeconds is stream.json with a class header of three values asked
// for, over 20 s (the longest the report prints a table of), hundreds of
// requests in each second.
func classSeconds(t *testing.T) *result.Result {
	res := readResult(t, "stream.json")
	h := "X-Cache"
	res.Classes = []result.ClassTable{{Header: h, Values: []result.ClassValue{
		{Value: "hit", Count: 6000, Share: 0.6, Response: res.Response}, {Value: "miss", Count: 3000, Share: 0.3, Response: res.Response},
		{Value: "stale-while-revalidate", Count: 1000, Share: 0.1, Response: res.Response}}}}
	res.Timeline = make([]result.Second, 20)
	for i := range res.Timeline {
		res.Timeline[i].Classes = map[string]map[string]int64{h: {"hit": 300, "miss": 150, "stale-while-revalidate": 50}}
	}
	return res
}

// TestMixLegendOnce: a run of scenarios that are mixes says the by-target
// legend once, under the first scenario's table (twice before, issue 55).
func TestMixLegendOnce(t *testing.T) {
	var b bytes.Buffer
	if err := report.Text(&b, scenariosOfMixes(t)); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	legend := "errors = errors + timeouts + unfinished, as the errors objective counts them; a warm-up's requests are in no target"
	if n := strings.Count(out, legend); n != 1 {
		t.Errorf("the by-target legend %d times, want 1:\n%s", n, out)
	}
	first, second := strings.Index(out, "scenario checkout · by target"), strings.Index(out, "scenario browse · by target")
	if at := strings.Index(out, legend); first < 0 || second < 0 || at < first || at > second {
		t.Errorf("the legend is not under the first scenario's table:\n%s", out)
	}
}
