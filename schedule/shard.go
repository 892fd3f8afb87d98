package schedule

import (
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/openload/openload/field"
)

// # Sharding
//
// One schedule can be sent by N generators (shards) as if by one: shard i
// of N sends the arrivals of the whole schedule whose index j (0-based, in
// the whole schedule's order) satisfies
//
//	j ≡ i (mod N)
//
// so the shards' union is exactly the whole schedule, each arrival at its
// own offset. Every shard draws the whole sequence and skips the arrivals
// of the others: a seeded Poisson schedule is the same list of offsets on
// every shard, and any Schedule (constant, Poisson, replay, stages …)
// splits the same way. For a schedule of exactly C arrivals, shard i holds
//
//	C_i = ⌈(C − i) / N⌉ = ⌊(C − i + N − 1) / N⌋   (0 when i ≥ C)
//
// arrivals, and Σ C_i = C.

// Shard names one shard of a schedule split N ways: Index in [0, Of).
// The zero value (Of 0) means no sharding.
type Shard struct {
	Index int
	Of    int
}

// MaxShards bounds the number of shards, against a slipped finger.
const MaxShards = 1 << 16

// Enabled reports whether s splits the schedule.
func (s Shard) Enabled() bool { return s.Of > 0 }

// String is "i/N".
func (s Shard) String() string { return fmt.Sprintf("%d/%d", s.Index, s.Of) }

// Validate checks s; the zero value is valid (no sharding). Its errors are
// *field.Error naming Index or Of.
func (s Shard) Validate() error {
	switch {
	case s.Of == 0 && s.Index == 0:
		return nil
	case s.Of < 1 || s.Of > MaxShards:
		return field.Errorf("Of", s.Of, "{Of} must be between 1 and %d, got %d", MaxShards, s.Of)
	case s.Index < 0 || s.Index >= s.Of:
		return field.Errorf("Index", s.Index, "{Index} must be in [0, %d), got %d", s.Of, s.Index)
	}
	return nil
}

// ParseShard reads "i/N" (0 ≤ i < N).
func ParseShard(text string) (Shard, error) {
	is, ns, ok := strings.Cut(strings.TrimSpace(text), "/")
	if !ok {
		return Shard{}, fmt.Errorf("%q: want i/N, e.g. 0/4", text)
	}
	i, err1 := strconv.Atoi(strings.TrimSpace(is))
	n, err2 := strconv.Atoi(strings.TrimSpace(ns))
	if err1 != nil || err2 != nil {
		return Shard{}, fmt.Errorf("%q: want i/N with whole numbers, e.g. 0/4", text)
	}
	s := Shard{Index: i, Of: n}
	if n < 1 || n > MaxShards {
		return Shard{}, fmt.Errorf("%q: N must be between 1 and %d", text, MaxShards)
	}
	if i < 0 || i >= n {
		return Shard{}, fmt.Errorf("%q: i must be in [0, %d)", text, n)
	}
	return s, nil
}

// ShardFromEnv reads "VAR/N": the index from the environment variable VAR
// (as a Kubernetes Indexed Job sets JOB_COMPLETION_INDEX, or a Slurm array
// SLURM_ARRAY_TASK_ID), N as written. getenv is os.Getenv when nil.
func ShardFromEnv(text string, getenv func(string) string) (Shard, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	name, ns, ok := strings.Cut(strings.TrimSpace(text), "/")
	if !ok || name == "" {
		return Shard{}, fmt.Errorf("%q: want VAR/N, e.g. JOB_COMPLETION_INDEX/4", text)
	}
	v := getenv(name)
	if v == "" {
		return Shard{}, fmt.Errorf("%q: the environment variable %s is not set", text, name)
	}
	s, err := ParseShard(v + "/" + ns)
	if err != nil {
		return Shard{}, fmt.Errorf("%q (%s=%s): %v", text, name, v, err)
	}
	return s, nil
}

// ShareCount is the number of arrivals shard s holds of a schedule of
// exactly whole arrivals: ⌈(whole − i) / N⌉, 0 when i ≥ whole.
func (s Shard) ShareCount(whole int64) int64 {
	if !s.Enabled() {
		return whole
	}
	if int64(s.Index) >= whole {
		return 0
	}
	return (whole - int64(s.Index) + int64(s.Of) - 1) / int64(s.Of)
}

// Counter is implemented by schedules whose count is known in advance.
type Counter interface {
	Count() int64
}

// CountOf is the exact count of an exact schedule: Count() when it has one,
// else Expected rounded down (within 1e-9, as the count check reads it);
// false for a schedule whose count is random.
func CountOf(s Schedule) (int64, bool) {
	if !s.Exact() {
		return 0, false
	}
	if c, ok := s.(Counter); ok {
		return c.Count(), true
	}
	return int64(math.Floor(s.Expected() + 1e-9)), true
}

// ShardSchedule is one shard of a whole schedule; see Shard.
type ShardSchedule struct {
	whole Schedule
	shard Shard
	seen  int64 // arrivals of the whole schedule drawn so far
	done  bool
}

// NewShard returns shard s of whole; s must be valid and enabled.
func NewShard(whole Schedule, s Shard) *ShardSchedule {
	return &ShardSchedule{whole: whole, shard: s}
}

// Next implements Schedule: the next arrival of the whole schedule whose
// index is ≡ Index (mod Of).
func (s *ShardSchedule) Next() (time.Duration, bool) {
	for !s.done {
		off, ok := s.whole.Next()
		if !ok {
			s.done = true
			break
		}
		j := s.seen
		s.seen++
		if j%int64(s.shard.Of) == int64(s.shard.Index) {
			return off, true
		}
	}
	return 0, false
}

// Expected implements Schedule: the exact share of an exact schedule
// (ShareCount), else the whole's expected count ÷ N.
func (s *ShardSchedule) Expected() float64 {
	if c, ok := CountOf(s.whole); ok {
		return float64(s.shard.ShareCount(c))
	}
	return s.whole.Expected() / float64(s.shard.Of)
}

// Exact implements Schedule: a share of an exact schedule is exact.
func (s *ShardSchedule) Exact() bool { return s.whole.Exact() }

// Count is the shard's count, for an exact whole schedule (0 otherwise).
func (s *ShardSchedule) Count() int64 {
	c, _ := CountOf(s.whole)
	return s.shard.ShareCount(c)
}

// Name implements Schedule: "shard 1/4 of constant 400/s for 10s".
func (s *ShardSchedule) Name() string {
	return fmt.Sprintf("shard %s of %s", s.shard, s.whole.Name())
}

// Index implements Indexed: the index in the whole schedule of the
// arrival Next returned last, so that a shard numbers its requests as
// the whole run would (and sends request j the body the whole run would).
func (s *ShardSchedule) Index() uint64 { return uint64(max(s.seen-1, 0)) }

// Indexed is a Schedule whose arrivals are numbered otherwise than 0, 1,
// 2 … in the order Next returns them: Index is the number of the arrival
// Next returned last (a shard's: its index in the whole schedule).
type Indexed interface {
	Schedule
	Index() uint64
}

// Whole is the schedule being split.
func (s *ShardSchedule) Whole() Schedule { return s.whole }

// Shard is the shard this schedule sends.
func (s *ShardSchedule) Shard() Shard { return s.shard }

// WholeSeen is the number of arrivals of the whole schedule drawn so far;
// once Next has returned false, the whole schedule's count (the same on
// every shard of a seeded schedule).
func (s *ShardSchedule) WholeSeen() (n int64, complete bool) { return s.seen, s.done }
