package report

import (
	"io"

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
