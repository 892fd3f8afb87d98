package result

import (
	"cmp"
	"slices"
	"time"
)

// ShardConfig says which shards of one schedule a result holds (see
// package schedule: shard i of N sends the whole schedule's arrivals of
// index ≡ i mod N). A shard's own result holds one index; a merge
// (Merge) holds the indexes of the results it added.
type ShardConfig struct {
	Of      int   `json:"of"`
	Indexes []int `json:"indexes"` // ascending
	// Whole is the name of the schedule being split, WholeExpected its
	// expected count (λ·D), and WholeScheduled its count: known up front
	// for an exact schedule, counted by each shard otherwise (every shard
	// draws the whole sequence); -1 when the shard stopped before the
	// whole schedule was drawn.
	Whole          string  `json:"whole"`
	WholeExpected  float64 `json:"whole_expected"`
	WholeScheduled int64   `json:"whole_scheduled"`
}

// Complete reports whether the result holds every shard: 0 … Of−1.
func (s *ShardConfig) Complete() bool {
	if s == nil || len(s.Indexes) != s.Of {
		return false
	}
	for i, x := range s.Indexes {
		if x != i {
			return false
		}
	}
	return true
}

// StartRecord is the start of a run given a start instant (--start-at):
// the instant asked for (the schedule's offset 0, Result.Started), the
// moment the wait for it ended (normally a little before At: the
// dispatcher's own precise sleep reaches offset 0), and how far past At
// that was (0 when before). A late start is not shifted: its first
// arrivals left late and their send delay shows it.
type StartRecord struct {
	At     time.Time `json:"at"`
	Actual time.Time `json:"actual"`
	LateMs float64   `json:"late_ms"`
}

// ShardRun is one shard's own figures, kept in a merge so that a slow or
// late generator stays visible: its start offset from the merge's start
// (Result.Started), its lateness, its counts and its send delay.
type ShardRun struct {
	Index     int         `json:"index"`
	Source    string      `json:"source,omitempty"` // the file it was read from, as merge was given it
	Started   time.Time   `json:"started"`
	OffsetMs  float64     `json:"start_offset_ms"` // Started − the merge's Started
	LateMs    float64     `json:"late_ms"`         // StartRecord.LateMs; 0 without --start-at
	Expected  float64     `json:"expected"`
	Scheduled int64       `json:"scheduled"`
	Sent      int64       `json:"sent"`
	Elapsed   float64     `json:"elapsed_s"`
	SendDelay Percentiles `json:"send_delay"`
	Client    string      `json:"client,omitempty"`
	Generator *Generator  `json:"generator,omitempty"`
	// Connections is the shard's limit, MaxInFlight its own peak.
	Connections int `json:"connections"`
	MaxInFlight int `json:"max_in_flight"`
}

// mergeShardRuns returns a's and b's own runs, by shard index.
func mergeShardRuns(a, b []ShardRun) []ShardRun {
	out := slices.Concat(a, b)
	slices.SortStableFunc(out, func(p, q ShardRun) int { return cmp.Compare(p.Index, q.Index) })
	return out
}
