package report

import (
	"strings"
	"testing"

	"github.com/openload/openload/result"
	"github.com/openload/openload/verify"
)

// A streamed run whose connection limit bound says so on a line of its
// own, with the limit the offered load takes.
func TestVerdictStreamLimit(t *testing.T) {
	res := &result.Result{
		Config:  result.Config{Arrival: "constant", Rate: 20, Duration: "2s", Connections: 4},
		Counts:  result.Counts{Expected: 40, Scheduled: 40, Sent: 40, Completed: 40},
		Limit:   result.Limit{Connections: 4, MaxInFlight: 4, Waited: 36},
		Service: result.Percentiles{Count: 40, P90: 1010, Mean: 1000},
		Stream:  &result.StreamResult{TTFTResponse: result.Percentiles{P90: 8300}, TTFTService: result.Percentiles{P90: 105}},
	}
	for _, f := range verify.Run(res, verify.Options{}) {
		res.Checks = append(res.Checks, result.Check{Name: f.Check, Severity: string(f.Severity), Message: f.Message})
	}
	lines := VerdictLines(res, 0)
	var got []string
	for _, l := range lines {
		got = append(got, l.String())
	}
	want := "hint:   the limit of 4 connections bound: 36 of 40 requests waited; TTFT from the schedule p90 8300 ms against 105 ms from the send: the wait is openload's. At 20/s × 1.0 s answers (service p90) it takes 21 connections: raise the connection limit to that"
	if len(lines) != 2 || got[1] != want || !strings.Contains(got[0], "connection limit") {
		t.Errorf("got\n%s\nwant a result line naming the check, then\n%s", strings.Join(got, "\n"), want)
	}
	res.Stream = nil
	if n := len(VerdictLines(res, 0)); n != 1 {
		t.Errorf("a run that did not stream: %d lines, want the result line alone", n)
	}
}

// TestVerdictNamesBreached: the objectives' line names the user's
// objectives breached (at most three, then how many more) and those
// without data, never openload's defaults, so that -q's one line says
// which.
func TestVerdictNamesBreached(t *testing.T) {
	res := &result.Result{
		Counts: result.Counts{Expected: 10, Scheduled: 10, Sent: 10, Completed: 10},
		Checks: []result.Check{{Name: "accounting", Severity: "pass"}},
		SLOs: []result.SLO{
			{Expr: "response.p99<=1ms"}, {Expr: "status.5xx<=1%", Share: true}, {Expr: "errors<=0", Pass: true},
			{Expr: "ttft.p99<=1s", NoData: true}, {Expr: "client_errors<=1%", Default: true},
		},
	}
	lines := VerdictLines(res, 0)
	if got, want := lines[len(lines)-1].String(), "objectives: BREACHED: response.p99<=1ms, status.5xx<=1% (no data for ttft.p99<=1s)"; got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	for _, e := range []string{"a<=1ms", "b<=1ms", "c<=1ms"} {
		res.SLOs = append(res.SLOs, result.SLO{Expr: e})
	}
	if got, want := VerdictLines(res, 0)[1].Text, "BREACHED: response.p99<=1ms, status.5xx<=1%, a<=1ms, and 2 more (no data for ttft.p99<=1s)"; got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}
