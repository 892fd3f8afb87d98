package result

import "net/http"

// DwellMetric is the Server-Timing metric the dwell bound reads [--dwell-bound]:
// the time an answer spent between its arrival and the moment it was
// written, as the server measured it (servers/stub reports it when its
// deadline gate is on). With an arrival stamped by openload
// (--stamp-header), the arrival is the request's scheduled time.
const DwellMetric = "dwell"

// IsAnswer reports whether a response of this status carries an answer:
// 2xx, except 204 No Content. A deadline gate that drops a late answer
// answers 503 or 204 without a payload (as ad bidders answer "no bid"), so
// the age of such a response harms no one; only answers are held to the
// bound.
func IsAnswer(status int) bool {
	return status >= 200 && status < 300 && status != http.StatusNoContent
}

// DwellBound is the dwell-bound count of a run [--dwell-bound D]: how many
// answers reported a Server-Timing dwell above D. It describes the server,
// not the measurement: a gate that promises "nothing leaves older than D"
// kept its promise when Over is 0.
//
//	Answers + Unreported = responses with IsAnswer(status)
//	Over ≤ Answers
type DwellBound struct {
	Bound   string  `json:"bound"`    // D as given, e.g. "150ms"
	BoundMs float64 `json:"bound_ms"` // D in ms
	// Answers counts the answers that reported a dwell; Over those of them
	// whose dwell was > D (exactly D is within the bound).
	Answers int64 `json:"answers"`
	Over    int64 `json:"over"`
	// Unreported counts answers without a dwell metric: they could not be
	// checked.
	Unreported int64 `json:"unreported"`
	// Others counts responses that are not answers (drops, errors, 204)
	// and reported a dwell; they are not checked.
	Others int64 `json:"others"`
	// Dwell summarises the dwell of the Answers, in ms: unlike the
	// server_timing entry of the same metric, it leaves out the responses
	// that are not answers (a dropped answer reports its dwell too). Its
	// Max is exact, not rounded to the histogram's resolution (at 150 ms a
	// bucket is 128 µs wide), so that it compares with the bound as the
	// count does.
	Dwell Percentiles `json:"dwell"`
	// Histogram is Dwell's histogram (EncodeHistogram), so that merged
	// shards' dwell stays exact; empty in results written before.
	Histogram string `json:"histogram,omitempty"`
}

// merge sums the dwell-bound counts and adds the answers' dwell
// histograms; the exact max is the largest (sameSettings checked the
// bound is one).
func (d *DwellBound) merge(o *DwellBound, m *merger) *DwellBound {
	if o == nil {
		return d
	}
	if o.Histogram == "" {
		m.fail("the dwell bound's histogram is missing (written by an older openload): its dwell cannot be merged")
		return d
	}
	sum := DwellBound{Bound: o.Bound, BoundMs: o.BoundMs}
	if d != nil {
		sum = *d
	}
	sum.Answers += o.Answers
	sum.Over += o.Over
	sum.Unreported += o.Unreported
	sum.Others += o.Others
	exactMax := max(sum.Dwell.Max, o.Dwell.Max)
	sum.Histogram, sum.Dwell = m.hist(sum.Histogram, o.Histogram, "dwell")
	if sum.Answers > 0 {
		sum.Dwell.Max = exactMax
	}
	return &sum
}
