package verify

import (
	"strings"
	"testing"
	"time"

	"github.com/openload/openload/result"
)

// shardResult is a result holding shards idx of of, of a whole schedule of
// 10 arrivals, scheduling n.
func shardResult(n int64, of int, idx ...int) *result.Result {
	res := &result.Result{Config: result.Config{Arrival: "constant", StartAt: "2026-12-01T15:00:00Z",
		Shard: &result.ShardConfig{Of: of, Indexes: idx, Whole: "constant 10/s for 1s", WholeExpected: 10, WholeScheduled: 10}}}
	res.Counts.Scheduled = n
	for _, i := range idx {
		res.Shards = append(res.Shards, result.ShardRun{Index: i})
	}
	return res
}

func TestShardChecks(t *testing.T) {
	opt := Options{SendDelayP99: time.Millisecond}
	for _, c := range []struct {
		name            string
		res             *result.Result
		count, shards   Severity
		countMsg, shMsg string
	}{
		// 10 arrivals over 3 shards: 4, 3, 3.
		{"shard 0/3", shardResult(4, 3, 0), Pass, Pass, "scheduled 4 = shard 0/3's share of the 10", "shard 0/3 of"},
		{"shard 2/3 short", shardResult(2, 3, 2), Fail, Pass, "scheduled 2 ≠ 3, shard 2/3's share", ""},
		{"all 3", shardResult(10, 3, 0, 1, 2), Pass, Pass, "scheduled 10 = all 3 shards: the whole", "every shard's wait for it ended in time"},
		{"all 3, one lost", shardResult(9, 3, 0, 1, 2), Fail, Pass, "scheduled 9 ≠ 10", ""},
		{"partial", shardResult(7, 3, 0, 2), Pass, Warn, "scheduled 7 = shards 0,2 of 3: their share", "missing 1"},
	} {
		fs := Run(c.res, opt)
		var count, shards Finding
		for _, f := range fs {
			switch f.Check {
			case "schedule":
				count = f
			case "shards":
				shards = f
			}
		}
		if count.Severity != c.count || !strings.Contains(count.Message, c.countMsg) {
			t.Errorf("%s: schedule %s %q, want %s containing %q", c.name, count.Severity, count.Message, c.count, c.countMsg)
		}
		if shards.Severity != c.shards || !strings.Contains(shards.Message, c.shMsg) {
			t.Errorf("%s: shards %s %q, want %s containing %q", c.name, shards.Severity, shards.Message, c.shards, c.shMsg)
		}
	}

	late := shardResult(10, 2, 0, 1)
	late.Shards[1].LateMs = 5
	if f, _ := shards(late, opt); f.Severity != Warn || !strings.Contains(f.Message, "shard 1 by 5.000 ms") {
		t.Errorf("a late shard: %s %q", f.Severity, f.Message)
	}
	apart := shardResult(10, 2, 0, 1)
	apart.Config.StartAt = ""
	apart.Shards[1].OffsetMs = 700
	if f, _ := shards(apart, opt); f.Severity != Warn || !strings.Contains(f.Message, "no shared start time: the shards started up to 700.000 ms apart") {
		t.Errorf("shards without a shared start: %s %q", f.Severity, f.Message)
	}
	if _, ok := shards(&result.Result{}, opt); ok {
		t.Error("a whole run has a shards check")
	}
}
