package report

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/openload/openload/result"
)

// ScenarioTable writes a run of scenarios' table, one row a scenario:
// its counts, its latencies from its own result, and its own checks (✓
// all passed, else how many warned or failed; the scenarios check below
// names them). To fit 100 columns its schedule is the headline's (each
// scenario's is named there), under short headers the line above says
// in full.
func ScenarioTable(w io.Writer, res *result.Result) error {
	if len(res.Scenarios) == 0 {
		return nil
	}
	fmt.Fprintln(w, "\nby scenario · each its own schedule (in the headline), connections and checks")
	fmt.Fprintln(w, "ms · p50, p99 = response · serv = service · delay = send delay · sched/done = scheduled/completed")
	head := []string{"scenario", "sched", "sent", "done", "errors", "p50", "p99", "serv p99", "delay p99", "checks"}
	var rows [][]string
	for _, sc := range res.Scenarios {
		r := sc.Result
		c := r.Counts
		checks := "✓"
		n := map[string]int{}
		for _, ch := range r.Checks {
			n[ch.Severity]++
		}
		var bad []string
		for _, sev := range []string{"fail", "warn"} {
			if n[sev] > 0 {
				bad = append(bad, fmt.Sprintf("%d %s", n[sev], strings.ToUpper(sev)))
			}
		}
		if len(bad) > 0 {
			checks = strings.Join(bad, ", ")
		}
		row := []string{sc.Name, fmt.Sprint(c.Scheduled), fmt.Sprint(c.Sent), fmt.Sprint(c.Completed),
			fmt.Sprint(c.Errors + c.Timeouts + c.Unfinished), ms(r.Response.P50), ms(r.Response.P99), ms(r.Service.P99), ms(r.SendDelay.P99), checks}
		rows = append(rows, row)
	}
	// Long names or seconds-long latencies: the counts, then the rest.
	if err := fitTables(w, leftFirst(len(head)), head, rows, slices.Index(head, "p50")); err != nil {
		return err
	}
	// The gRPC scenarios' calls by grpc-status, each its own: the
	// headline's grpc line is their sum.
	for _, sc := range res.Scenarios {
		if len(sc.Result.GRPC) > 0 {
			fmt.Fprintf(w, "grpc     %s: %s\n", sc.Name, statusLine(sc.Result.GRPC))
		}
	}
	return nil
}

// ScenarioTargets writes, for each scenario of res with a request mix,
// its targets' table under its own heading ("scenario shop · by
// target"), as a run of one mix has "by target": a whole of scenarios
// keeps no targets of its own (result.Union), the JSON each scenario's.
// The legend is under the first table only.
func ScenarioTargets(w io.Writer, res *result.Result) error {
	said := legends{}
	for _, sc := range res.Scenarios {
		if sc.Result == nil || len(sc.Result.Targets) == 0 {
			continue
		}
		fmt.Fprintf(w, "\nscenario %s · by target\n", sc.Name)
		if err := PartTable(w, "target", sc.Result.Headline().Scheduled, sc.Result.Targets); err != nil { // part.go
			return err
		}
		said.say(w, partErrorsNote("target"))
	}
	return nil
}
