package report

import (
	"github.com/openload/openload/result"

	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
)

// maxClassSeconds is the longest run whose per-second class counts the
// text report prints as a table (one column per second); a longer run's
// are in the JSON timeline and the HTML report's chart.
const maxClassSeconds = 20

// per100 is a class value's count per 100 of the rest, blank for the
// values that have none ("none" itself, and answers without the header).
func per100(v result.ClassValue) string {
	if v.Per100Rest == 0 {
		return ""
	}
	return fmt.Sprintf("%.1f", v.Per100Rest)
}

// ClassSeconds writes how many requests ended in each second with each
// value of ct's header (recorder.Second.Classes; warm-up included): a
// table with a row per value and a column per second when the run is at
// most maxClassSeconds long, else a line saying where they are. Nothing
// for a table shown unasked (ct.Auto: the HTML report has its chart), nor
// when the timeline holds none (results written before they were kept).
func ClassSeconds(w io.Writer, res *result.Result, ct result.ClassTable) error {
	if ct.Auto {
		return nil
	}
	seen := map[string]bool{}
	for _, s := range res.Timeline {
		for v := range s.Classes[ct.Header] {
			seen[v] = true
		}
	}
	if len(seen) == 0 {
		return nil
	}
	if len(res.Timeline) > maxClassSeconds {
		fmt.Fprintf(w, "%s per second: in the JSON timeline (classes) and the HTML report's chart\n", ct.Header)
		return nil
	}
	// The table's order (by count), then values only warm-up requests had.
	var values []string
	for _, v := range ct.Values {
		if seen[v.Value] {
			values = append(values, v.Value)
			delete(seen, v.Value)
		}
	}
	values = append(values, slices.Sorted(maps.Keys(seen))...)
	head := []string{"ended in second"}
	for i := range res.Timeline {
		head = append(head, strconv.Itoa(i))
	}
	var rows [][]string
	for _, v := range values {
		row := []string{v}
		for _, s := range res.Timeline {
			row = append(row, strconv.FormatInt(s.Classes[ct.Header][v], 10))
		}
		rows = append(rows, row)
	}
	// Too wide, the seconds go in tables stacked, as many as a terminal
	// takes each.
	return fitTables(w, leftFirst(len(head)), head, rows, 0)
}
