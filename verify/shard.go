package verify

import (
	"fmt"
	"strings"
	"time"

	"github.com/openload/openload/result"
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
func shardCount(res *result.Result) (Finding, bool) {
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
		who = fmt.Sprintf("all %d shards: the whole", sc.Of)
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

// shards reports which shards a result holds and whether any started
// late: a shard whose wait for --start-at ended past the send-delay budget
// sent its first arrivals late (its send delay shows it), and the union
// was then not as one generator would have sent it. A merge that lacks
// shards is partial (warn).
func shards(res *result.Result, opt Options) (Finding, bool) {
	sc := res.Config.Shard
	if sc == nil {
		return Finding{}, false
	}
	f := Finding{Check: "shards", Severity: Pass}
	switch {
	case sc.Complete():
		f.Message = fmt.Sprintf("all %d shards of %s", sc.Of, sc.Whole)
	case len(sc.Indexes) == 1:
		f.Message = fmt.Sprintf("shard %d/%d of %s", sc.Indexes[0], sc.Of, sc.Whole)
	default:
		f.Severity = Warn
		f.Message = fmt.Sprintf("shards %s of %d of %s: missing %s", joinInts(sc.Indexes), sc.Of, sc.Whole, joinInts(sc.Missing()))
	}
	budget := float64(opt.SendDelayP99) / float64(time.Millisecond)
	var late []string
	worst, worstMs := -1, 0.0
	for _, r := range res.Shards {
		if r.LateMs > worstMs || worst < 0 {
			worst, worstMs = r.Index, r.LateMs
		}
		if r.LateMs > budget {
			late = append(late, fmt.Sprintf("%d by %s (send delay max %s)", r.Index, fmtMs(r.LateMs), fmtMs(r.SendDelay.Max)))
		}
	}
	switch {
	case res.Config.StartAt == "" || worst < 0:
	case worstMs == 0:
		f.Message += fmt.Sprintf("; start %s: every shard's wait for it ended in time", res.Config.StartAt)
	default:
		f.Message += fmt.Sprintf("; start %s, latest shard's wait ended %s after it (shard %d)", res.Config.StartAt, fmtMs(worstMs), worst)
	}
	if res.Config.StartAt == "" && len(res.Shards) > 1 {
		spread := 0.0
		for _, r := range res.Shards {
			spread = max(spread, r.OffsetMs)
		}
		f.Severity = Warn
		f.Message += fmt.Sprintf("; no shared start time: the shards started up to %s apart, so their arrivals did not interleave as one generator's", fmtMs(spread))
	}
	if len(late) > 0 {
		f.Severity = Warn
		who, whose := "shard", "its"
		if len(late) > 1 {
			who, whose = "shards", "their"
		}
		f.Message += fmt.Sprintf("; started late, past the %s send-delay budget: %s %s, so %s first arrivals left late", fmtMs(budget), who, strings.Join(late, ", "), whose)
	}
	return f, true
}
