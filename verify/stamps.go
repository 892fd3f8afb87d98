package verify

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/openload/openload/result"
)

// stamps reports whether every record's stamps were in order
// (result.Stamps; recorder/stamps.go):
//
//	scheduled ≤ sent ≤ last sent ≤ first byte ≤ first token ≤ last token ≤ done
//
// A record out of order was timed wrongly by the client that made it, so
// every figure built on its stamps (response and service time, TTFT,
// tokens per second, the objectives) may be wrong while its counts are
// exact: the run fails, as a run with requests unaccounted for does, and
// the finding names the client.
//
//	disordered > 0          fail: "N of M records out of order (done<last_token N; …) on client C"
//	no record               warn: nothing was checked
//	fewer than the requests warn: a merged part was written before the check
//	otherwise               pass: "M of M records in order"
//
// A result written before the check (or a merge with one) has no Stamps,
// and no finding: its records are gone and cannot be checked again.
func stamps(res *result.Result) (Finding, bool) {
	f := Finding{Check: "stamps", Severity: Pass}
	s := res.Stamps
	switch {
	case s == nil:
		return f, false
	case s.Checked == 0:
		f.Severity = Warn
		f.Message = "no record to check"
	case s.Disordered == 0 && s.Checked < res.Counts.Scheduled:
		f.Severity = Warn
		f.Message = fmt.Sprintf("%d of %d records checked, all in order; the others are in a part written before openload checked every record's stamps", s.Checked, res.Counts.Scheduled)
	case s.Disordered > 0:
		f.Severity = Fail
		var breaks []string
		for _, k := range slices.Sorted(maps.Keys(s.Breaks)) {
			breaks = append(breaks, fmt.Sprintf("%s %d", k, s.Breaks[k]))
		}
		f.Message = fmt.Sprintf("%d of %d records out of order (%s; worst by %.3f ms, request %d) on client %s: the client timed them wrongly, and the figures built on their stamps cannot be trusted",
			s.Disordered, s.Checked, strings.Join(breaks, ", "), s.WorstMs, s.WorstSeq, client(res))
	default:
		f.Message = fmt.Sprintf("%d of %d records in order: scheduled ≤ sent ≤ first byte ≤ first token ≤ last token ≤ done", s.Checked, s.Checked)
	}
	return f, true
}

// client names what sent a run's requests: "epoll, h2c".
func client(res *result.Result) string {
	c := res.Config.Client
	if c == "" {
		c = "unknown"
	}
	if p := res.Config.Protocol; p != "" {
		c += ", " + p
	}
	return c
}

// Recheck runs the stamps check again on a saved result, whose Stamps
// section holds all it needs, and puts the finding in place of the saved
// one (after the others when none was saved): `openload report` shows
// today's verdict on the stamps of a result, whichever openload wrote it.
func Recheck(res *result.Result) {
	f, ok := stamps(res)
	if !ok {
		return
	}
	c := ToChecks([]Finding{f})[0]
	for i := range res.Checks {
		if res.Checks[i].Name == c.Name {
			res.Checks[i] = c
			return
		}
	}
	res.Checks = append(res.Checks, c)
}
