package verify

import (
	"fmt"
	"strings"

	"github.com/openload/openload/recorder"
	"github.com/openload/openload/schedule"
)

// shardCount is the schedule check of a shard's result, or of a merge of
// shards (Config.Shard): the run must hold exactly its shards' share of
// the whole schedule,
//
//	scheduled == Σ over its shards i of ⌈(C − i) / N⌉
//
// where C is the whole schedule's count (exact for a constant schedule or
// a replay; for a Poisson schedule the count every shard drew, each
// drawing the whole sequence). A merge of all N shards must hold C. When
// C is unknown (a shard stopped early), ok is false and the check falls
// back to the schedule's own.
func shardCount(res *recorder.Result) (Finding, bool) {
	sc := res.Config.Shard
	if sc == nil || sc.WholeScheduled < 0 || res.Interrupted {
		return Finding{}, false
	}
	var want int64
	for _, i := range sc.Indexes {
		want += schedule.Shard{Index: i, Of: sc.Of}.ShareCount(sc.WholeScheduled)
	}
	who := fmt.Sprintf("shard %d/%d's share", sc.Indexes[0], sc.Of)
	switch {
	case sc.Complete():
		who = fmt.Sprintf("all %d shards: the whole schedule's count", sc.Of)
	case len(sc.Indexes) > 1:
		who = fmt.Sprintf("shards %s of %d: their share", joinInts(sc.Indexes), sc.Of)
	}
	c := res.Counts.Scheduled
	if c != want {
		return Finding{Check: "schedule", Severity: Fail,
			Message: fmt.Sprintf("scheduled %d ≠ %d, %s of the %d arrivals of %s", c, want, who, sc.WholeScheduled, sc.Whole)}, true
	}
	return Finding{Check: "schedule", Severity: Pass,
		Message: fmt.Sprintf("scheduled %d = %s of the %d arrivals of %s", c, who, sc.WholeScheduled, sc.Whole)}, true
}

func joinInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, ",")
}
