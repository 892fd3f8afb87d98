package report

import (
	"fmt"

	"github.com/openload/openload/result"
)

// DwellLine renders the dwell-bound count [--dwell-bound] in one line:
//
//	dwell ≤ 150ms: 0 of 2301 answers over · answers' dwell p50 61.2 · p99 149.1 · max 149.9 ms · 790 other responses reported a dwell (not checked)
//
// The percentiles are those of the answers (2xx but 204) only; the
// "server dwell" row of the Server-Timing table holds every response that
// reported one, dropped answers included.
func DwellLine(d *result.DwellBound) string {
	s := fmt.Sprintf("dwell ≤ %s: %d of %d answers over", d.Bound, d.Over, d.Answers)
	if d.Answers > 0 {
		s += fmt.Sprintf(" · answers' dwell p50 %s · p99 %s · max %s ms", ms(d.Dwell.P50), ms(d.Dwell.P99), ms(d.Dwell.Max))
	}
	if d.Unreported > 0 {
		s += fmt.Sprintf(" · %d answers reported no dwell (not checked)", d.Unreported)
	}
	if d.Others > 0 {
		s += fmt.Sprintf(" · %d other responses reported a dwell (not checked)", d.Others)
	}
	return s
}
