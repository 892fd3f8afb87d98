package verify

import (
	"fmt"

	"github.com/openload/openload/result"
)

// dwellBound reports the dwell-bound count of a run [--dwell-bound D], when
// it has one: how many answers (2xx but 204, recorder.IsAnswer) reported a
// Server-Timing dwell above D. It says something about the server, not
// about the measurement, so it never fails the run:
//
//	over > 0                 warn: "N of M answers reported dwell > D"
//	no answer had a dwell    warn: the bound could not be checked
//	answers without a dwell  warn: those could not be checked
//	otherwise                pass: "0 of M answers reported dwell > D"
func dwellBound(res *result.Result) (Finding, bool) {
	d := res.DwellBound
	if d == nil {
		return Finding{}, false
	}
	f := Finding{Check: "dwell bound", Severity: Pass}
	f.Message = fmt.Sprintf("%d of %d answers reported dwell > %s", d.Over, d.Answers, d.Bound)
	switch {
	case d.Answers == 0 && d.Unreported == 0:
		f.Severity = Warn
		f.Message = fmt.Sprintf("no answer (2xx but 204) to check against %s", d.Bound)
	case d.Answers == 0:
		f.Severity = Warn
		f.Message = fmt.Sprintf("none of %d answers reported a Server-Timing %s metric: the bound %s could not be checked",
			d.Unreported, result.DwellMetric, d.Bound)
	case d.Over > 0:
		f.Severity = Warn
		f.Message += fmt.Sprintf(" (max %.3f ms): the server let answers out older than the bound", d.Dwell.Max)
	default:
		f.Message += fmt.Sprintf(" (max %.3f ms)", d.Dwell.Max)
	}
	if d.Answers > 0 && d.Unreported > 0 {
		f.Severity = Warn
		f.Message += fmt.Sprintf("; %d more answers reported no %s and could not be checked", d.Unreported, result.DwellMetric)
	}
	if d.Others > 0 {
		f.Message += fmt.Sprintf("; %d responses that are not answers (drops, errors, 204) reported a dwell too and are not checked", d.Others)
	}
	return f, true
}
