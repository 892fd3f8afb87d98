package schedule_test

import (
	"strings"
	"testing"
	"time"

	"github.com/openload/openload/schedule"
)

func drain(s schedule.Schedule) []time.Duration {
	var out []time.Duration
	for {
		off, ok := s.Next()
		if !ok {
			return out
		}
		out = append(out, off)
	}
}

// TestShardUnion: for every kind of schedule, the shards' arrivals taken
// together are the whole schedule's, arrival j on shard j mod N, and each
// exact shard holds ShareCount of the whole.
func TestShardUnion(t *testing.T) {
	replay := func() schedule.Schedule {
		r, err := schedule.LoadReplay(strings.NewReader("0\n0.001\n0.001\n0.5\n0.7\n1.25\n2\n"), "inline", schedule.ReplayOptions{Speed: 1})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	cases := []struct {
		name string
		mk   func() schedule.Schedule
	}{
		{"constant", func() schedule.Schedule { return schedule.NewConstant(333, 3*time.Second) }},
		{"constant-fractional", func() schedule.Schedule { return schedule.NewConstant(3, 1500*time.Millisecond) }},
		{"poisson", func() schedule.Schedule { return schedule.NewPoisson(500, 2*time.Second, 42) }},
		{"replay", replay},
	}
	for _, c := range cases {
		whole := drain(c.mk())
		for _, n := range []int{1, 2, 3, 4, 7, 16} {
			got := make([]time.Duration, len(whole))
			seen := make([]bool, len(whole))
			for i := range n {
				sh := schedule.NewShard(c.mk(), schedule.Shard{Index: i, Of: n})
				offs := drain(sh)
				for k, off := range offs {
					j := k*n + i // arrival k of shard i is arrival j of the whole
					if j >= len(whole) || seen[j] {
						t.Fatalf("%s n=%d shard %d: arrival %d maps to %d of %d", c.name, n, i, k, j, len(whole))
					}
					seen[j], got[j] = true, off
				}
				if sh.Exact() && int64(len(offs)) != sh.Count() {
					t.Errorf("%s n=%d shard %d: %d arrivals, Count %d", c.name, n, i, len(offs), sh.Count())
				}
				if sh.Exact() && float64(len(offs)) != sh.Expected() {
					t.Errorf("%s n=%d shard %d: %d arrivals, Expected %v", c.name, n, i, len(offs), sh.Expected())
				}
				if seenAll, done := sh.WholeSeen(); !done || seenAll != int64(len(whole)) {
					t.Errorf("%s n=%d shard %d: WholeSeen %d %v, whole has %d", c.name, n, i, seenAll, done, len(whole))
				}
			}
			for j := range whole {
				if !seen[j] || got[j] != whole[j] {
					t.Fatalf("%s n=%d: arrival %d: got %v (sent %v), whole %v", c.name, n, j, got[j], seen[j], whole[j])
				}
			}
		}
	}
}

func TestShareCountSums(t *testing.T) {
	for _, whole := range []int64{0, 1, 2, 5, 999, 1000, 1001} {
		for _, n := range []int{1, 2, 3, 4, 10, 2000} {
			var sum int64
			for i := range n {
				sum += schedule.Shard{Index: i, Of: n}.ShareCount(whole)
			}
			if sum != whole {
				t.Errorf("whole %d over %d shards: shares sum to %d", whole, n, sum)
			}
		}
	}
}

func TestParseShard(t *testing.T) {
	for _, c := range []struct {
		in   string
		want schedule.Shard
		err  string
	}{
		{"0/4", schedule.Shard{Index: 0, Of: 4}, ""},
		{" 3 / 4 ", schedule.Shard{Index: 3, Of: 4}, ""},
		{"4/4", schedule.Shard{}, "i must be in [0, 4)"},
		{"-1/4", schedule.Shard{}, "i must be in [0, 4)"},
		{"0/0", schedule.Shard{}, "N must be between 1"},
		{"1", schedule.Shard{}, "want i/N"},
		{"a/b", schedule.Shard{}, "whole numbers"},
	} {
		got, err := schedule.ParseShard(c.in)
		if c.err == "" && (err != nil || got != c.want) {
			t.Errorf("ParseShard(%q) = %v, %v; want %v", c.in, got, err, c.want)
		}
		if c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)) {
			t.Errorf("ParseShard(%q) error %v, want one containing %q", c.in, err, c.err)
		}
	}
	env := map[string]string{"JOB_COMPLETION_INDEX": "2"}
	got, err := schedule.ShardFromEnv("JOB_COMPLETION_INDEX/4", func(k string) string { return env[k] })
	if err != nil || got != (schedule.Shard{Index: 2, Of: 4}) {
		t.Errorf("ShardFromEnv = %v, %v", got, err)
	}
	if _, err := schedule.ShardFromEnv("MISSING/4", func(k string) string { return env[k] }); err == nil || !strings.Contains(err.Error(), "MISSING is not set") {
		t.Errorf("ShardFromEnv of an unset variable: %v", err)
	}
	if _, err := schedule.ShardFromEnv("JOB_COMPLETION_INDEX/2", func(k string) string { return env[k] }); err == nil {
		t.Error("ShardFromEnv accepted index 2 of 2")
	}
}
