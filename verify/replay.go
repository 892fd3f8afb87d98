package verify

import (
	"fmt"
	"math"

	"github.com/openload/openload/result"
)

// replayCount is the schedule check of a replay (Config.Arrival "replay"):
// a replay's count is the file's, so it is exact, like a constant schedule's:
//
//	scheduled == the arrivals in the file (Counts.Expected)
func replayCount(res *result.Result) Finding {
	c := res.Counts
	want := int64(math.Floor(c.Expected + 1e-9))
	if c.Scheduled != want {
		return Finding{Check: "schedule", Severity: Fail,
			Message: fmt.Sprintf("scheduled %d ≠ the %d arrivals of the replayed file", c.Scheduled, want)}
	}
	return Finding{Check: "schedule", Severity: Pass,
		Message: fmt.Sprintf("scheduled %d = the arrivals of the replayed file", c.Scheduled)}
}
