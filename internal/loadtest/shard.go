package loadtest

import (
	"math"
	"time"

	"github.com/openload/openload/result"
	"github.com/openload/openload/schedule"
)

// shardSchedule returns the shard of sched that o.Shard names, or sched
// itself without sharding.
func (o *Options) shardSchedule(sched schedule.Schedule) schedule.Schedule {
	if !o.Shard.Enabled() {
		return sched
	}
	return schedule.NewShard(sched, o.Shard)
}

// fillShard records in res the shard the run sent, the whole schedule it
// is a share of, and the start it waited for (engine.Config.StartAt).
func (o *Options) fillShard(res *result.Result, sched schedule.Schedule, start time.Time, late time.Duration) {
	if !o.StartAt.IsZero() {
		res.Config.StartAt = o.StartAt.UTC().Format(time.RFC3339Nano)
		res.Start = &result.StartRecord{At: start, Actual: start.Add(late), LateMs: math.Round(float64(max(late, 0))/1e3) / 1e3}
	}
	sh, ok := sched.(*schedule.ShardSchedule)
	if !ok {
		return
	}
	whole := sh.Whole()
	cfg := &result.ShardConfig{Of: sh.Shard().Of, Indexes: []int{sh.Shard().Index},
		Whole: whole.Name(), WholeExpected: whole.Expected(), WholeScheduled: -1}
	if n, exact := schedule.CountOf(whole); exact {
		cfg.WholeScheduled = n
	} else if n, complete := sh.WholeSeen(); complete {
		cfg.WholeScheduled = n
	}
	res.Config.Shard = cfg
	res.Shards = []result.ShardRun{result.OwnShardRun(res)}
}
