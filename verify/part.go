package verify

import (
	"fmt"

	"github.com/openload/openload/result"
)

// partAccounting is the accounting check of a request mix's targets
// (result.Part): each target's completed + errors + timeouts +
// unfinished = its scheduled, and the targets hold every request of the
// headline (a warm-up's are in none). A record whose target the recorder
// had no name for is in no target, and fails the second.
func partAccounting(res *result.Result) (Finding, bool) {
	if len(res.Targets) == 0 {
		return Finding{}, false
	}
	f := Finding{Check: "target accounting", Severity: Fail}
	var sum int64
	for _, p := range res.Targets {
		c := p.Counts
		n := c.Completed + c.Errors + c.Timeouts + c.Unfinished
		switch {
		case n != c.Scheduled:
			f.Message = fmt.Sprintf("target %q: completed %d + errors %d + timeouts %d + unfinished %d = %d ≠ scheduled %d: %d requests unaccounted for",
				p.Name, c.Completed, c.Errors, c.Timeouts, c.Unfinished, n, c.Scheduled, c.Scheduled-n)
			return f, true
		case c.Sent > c.Scheduled:
			f.Message = fmt.Sprintf("target %q: sent %d > scheduled %d", p.Name, c.Sent, c.Scheduled)
			return f, true
		}
		sum += c.Scheduled
	}
	if h := res.Headline().Scheduled; sum != h {
		f.Message = fmt.Sprintf("the %d targets hold %d of the %d requests scheduled: %d in no target", len(res.Targets), sum, h, h-sum)
		return f, true
	}
	f.Severity = Pass
	f.Message = fmt.Sprintf("each of %d targets: completed + errors + timeouts + unfinished = its scheduled; together %d, every request", len(res.Targets), sum)
	return f, true
}
