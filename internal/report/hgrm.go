package report

import (
	"github.com/openload/openload/result"

	"fmt"
	"io"
	"strings"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// HGRMTicks is the number of reporting points per half distance to 100 %
// in a percentile distribution, the value HdrHistogram's own tools use.
const HGRMTicks = 5

// HGRM writes h (values in µs, as openload records them) as HdrHistogram's
// percentile distribution text (the .hgrm format PercentilesPrint writes),
// with values in milliseconds, ready for HdrHistogram's plotter.
func HGRM(w io.Writer, h *hdrhistogram.Histogram) error {
	_, err := h.PercentilesPrint(w, HGRMTicks, 1000)
	return err
}

// IntervalLog writes an interval log read back (recorder.ReadIntervalLog):
// a line naming it (name) and its intervals, then each tag's merged
// histogram as a row of the latency table.
func IntervalLog(w io.Writer, il *result.IntervalLog, name string) error {
	var rows []Row
	for _, tag := range result.IntervalTags {
		if h := il.Total[tag]; h != nil {
			rows = append(rows, Row{Name: tag, P: result.Summarize(h)})
		}
	}
	if _, err := fmt.Fprintf(w, "openload report · %s · %d intervals of %s\n\n", name, len(il.Intervals[result.IntervalTags[0]]), strings.Join(result.IntervalTags, ", ")); err != nil {
		return err
	}
	return LatencyTable(w, rows)
}
