package report

import (
	"encoding/csv"
	"io"
	"slices"
	"strconv"

	"github.com/openload/openload/result"
)

// TimelineCSV writes a run's per-second timeline as CSV.
func TimelineCSV(w io.Writer, res *result.Result) error {
	rows := [][]string{{"second", "scheduled", "skipped", "sent", "completed", "errors", "response_p99_ms"}}
	for i, s := range res.Timeline {
		rows = append(rows, []string{strconv.Itoa(i), i64(s.Scheduled), i64(s.Skipped), i64(s.Sent), i64(s.Completed), i64(s.Errors), f3(s.ResponseP99)})
	}
	return writeCSV(w, rows)
}

// SweepCSV writes one row per point of a sweep, a search or repeats: its
// probe (in a search), offered rate, throughput, latency figures, counts,
// whether it passed and why it stopped early; a profile sweep's rows also
// say which kind of point each is (point_kind: synchronous, throughput, or
// empty for an open point; their offered_per_s is 0).
func SweepCSV(w io.Writer, f *result.File) error {
	kinds := slices.ContainsFunc(f.Points, func(p result.FilePoint) bool { return !p.Open() })
	head := []string{"point", "probe", "offered_per_s", "completed_per_s", "response_p50_ms", "response_p90_ms", "response_p99_ms",
		"service_p99_ms", "send_delay_p99_ms", "scheduled", "completed", "errors", "timeouts", "unfinished", "pass", "stopped_early"}
	if kinds {
		head = append(head, "point_kind")
	}
	rows := [][]string{head}
	for i, p := range f.Points {
		r, c := p.Result, p.Result.Counts
		row := []string{strconv.Itoa(i + 1), strconv.Itoa(p.Probe), strconv.FormatFloat(p.Rate, 'g', -1, 64), f3(p.Completed()),
			f3(r.Response.P50), f3(r.Response.P90), f3(r.Response.P99), f3(r.Service.P99), f3(r.SendDelay.P99),
			i64(c.Scheduled), i64(c.Completed), i64(c.Errors), i64(c.Timeouts), i64(c.Unfinished), strconv.FormatBool(p.Pass), p.Stopped}
		if kinds {
			row = append(row, p.Kind)
		}
		rows = append(rows, row)
	}
	return writeCSV(w, rows)
}

func writeCSV(w io.Writer, rows [][]string) error {
	cw := csv.NewWriter(w)
	if err := cw.WriteAll(rows); err != nil {
		return err
	}
	return cw.Error()
}

func i64(v int64) string { return strconv.FormatInt(v, 10) }

func f3(v float64) string { return strconv.FormatFloat(v, 'f', 3, 64) }
