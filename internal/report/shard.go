package report

import (
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"github.com/openload/openload/result"
)

// ShardLines say which shards of a schedule a result holds (--shard) and,
// for a merge, each shard's own start and send delay, so that one slow or
// late generator stays visible in the whole.
func ShardLines(w io.Writer, res *result.Result) {
	sc := res.Config.Shard
	start := ""
	if res.Config.StartAt != "" {
		start = " · start-at " + res.Config.StartAt
	}
	if sc == nil {
		if res.Start != nil {
			fmt.Fprintf(w, "start    waited for %s; started %.3f ms after it\n", res.Config.StartAt, res.Start.LateMs)
		}
		return
	}
	if len(res.Shards) <= 1 {
		late := ""
		if res.Start != nil {
			late = fmt.Sprintf(", started %.3f ms after it", res.Start.LateMs)
		}
		fmt.Fprintf(w, "shard    %d/%d of %s (%s arrivals in all)%s%s\n", sc.Indexes[0], sc.Of, sc.Whole, wholeCount(sc), start, late)
		return
	}
	held := fmt.Sprintf("all %d", sc.Of)
	if !sc.Complete() {
		held = fmt.Sprintf("%d of %d (missing %s)", len(sc.Indexes), sc.Of, joinInts(sc.Missing()))
	}
	fmt.Fprintf(w, "shards   %s shards of %s (%s arrivals in all)%s; connections and max in flight are the shards' sums\n", held, sc.Whole, wholeCount(sc), start)
	width := len("source")
	for _, r := range res.Shards {
		width = max(width, len(r.Source))
	}
	fmt.Fprintf(w, "  %5s  %-*s  %9s  %8s  %7s  %28s  %s\n", "shard", width, "source", "offset ms", "late ms", "sent", "send delay p50 / p99 / max", "client")
	for _, r := range res.Shards {
		sd := r.SendDelay
		fmt.Fprintf(w, "  %5d  %-*s  %9.3f  %8.3f  %7d  %28s  %s\n", r.Index, width, r.Source, r.OffsetMs, r.LateMs, r.Sent,
			fmt.Sprintf("%s / %s / %s", ms(sd.P50), ms(sd.P99), ms(sd.Max)), r.Client)
	}
}

func wholeCount(sc *result.ShardConfig) string {
	if sc.WholeScheduled < 0 {
		return fmt.Sprintf("%s expected", count(sc.WholeExpected))
	}
	return fmt.Sprint(sc.WholeScheduled)
}

func joinInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, ", ")
}

// shardShare reports whether a result of shards sc sent only a share of
// its schedule: one shard, or a merge that lacks some.
func shardShare(sc *result.ShardConfig) bool {
	return sc != nil && !sc.Complete()
}

// shardRate is the scheduled rate a shard's rate line compares its send
// rate with: the share of the whole schedule's rate its shards hold, the
// expected count of those shards over the duration (for a constant
// schedule, the rate × len(Indexes) ÷ Of), next to the whole's.
func shardRate(res *result.Result) string {
	sc := res.Config.Shard
	whole := count(res.Config.Rate) + "/s"
	if res.Config.Stages != "" {
		whole = fmt.Sprintf("∫λ dt ÷ duration = %s/s, stages %s", count(wholeMeanRate(res)), res.Config.Stages)
	}
	who := "this shard's"
	if len(sc.Indexes) > 1 {
		who = fmt.Sprintf("these %d of %d shards'", len(sc.Indexes), sc.Of)
	}
	return fmt.Sprintf("%s share of %s: %s/s", who, whole, count(round1(meanRate(res))))
}

// wholeMeanRate is the whole schedule's mean rate, of which a shard sent
// a share: its expected count over the duration.
func wholeMeanRate(res *result.Result) float64 {
	d, err := time.ParseDuration(res.Config.Duration)
	if err != nil || d <= 0 {
		return 0
	}
	return res.Config.Shard.WholeExpected / d.Seconds()
}

// round1 is x to one decimal: a share such as 200 ÷ 3 prints as 66.7.
func round1(x float64) float64 { return math.Round(x*10) / 10 }
