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
	msg, ok := partsAddUp(res.Targets, "target", res.Headline().Scheduled)
	if ok {
		f.Severity = Pass
	}
	f.Message = msg
	return f, true
}

// partsAddUp holds parts of one kind (targets, a session run's steps)
// to the accounting: each part balanced, none sending more than it
// scheduled, together the headline's scheduled requests. It says so, or
// which relation broke and by how much.
func partsAddUp(parts []result.Part, kind string, headline int64) (string, bool) {
	var sum int64
	for _, p := range parts {
		c := p.Counts
		n := c.Completed + c.Errors + c.Timeouts + c.Unfinished
		switch {
		case n != c.Scheduled:
			return fmt.Sprintf("%s %q: completed %d + errors %d + timeouts %d + unfinished %d = %d ≠ scheduled %d: %d requests unaccounted for",
				kind, p.Name, c.Completed, c.Errors, c.Timeouts, c.Unfinished, n, c.Scheduled, c.Scheduled-n), false
		case c.Sent > c.Scheduled:
			return fmt.Sprintf("%s %q: sent %d > scheduled %d", kind, p.Name, c.Sent, c.Scheduled), false
		}
		sum += c.Scheduled
	}
	if sum != headline {
		return fmt.Sprintf("the %d %ss hold %d of the %d requests scheduled: %d in no %s", len(parts), kind, sum, headline, headline-sum, kind), false
	}
	return fmt.Sprintf("each of %d %ss: completed + errors + timeouts + unfinished = its scheduled; together %d, every request", len(parts), kind, sum), true
}
