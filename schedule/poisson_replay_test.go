package schedule_test

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/openload/openload/internal/recorder"
	"github.com/openload/openload/schedule"
)

// poissonOffsets drains a seeded Poisson schedule.
func poissonOffsets(rate float64, d time.Duration, seed uint64) []time.Duration {
	s := schedule.NewPoisson(rate, d, seed)
	var out []time.Duration
	for off, ok := s.Next(); ok; off, ok = s.Next() {
		out = append(out, off)
	}
	return out
}

// A seeded Poisson run can be replayed: the per-request log of a run
// (written here by the recorder, in completion order, as a run writes it)
// read back as an arrivals file gives the schedule's offsets to the
// microsecond of the log, and the same seed gives the same schedule again.
func TestPoissonScheduleReplaysFromItsLog(t *testing.T) {
	want := poissonOffsets(135, 20*time.Second, 42)
	if again := poissonOffsets(135, 20*time.Second, 42); !slices.Equal(again, want) {
		t.Fatal("the same seed gave another schedule")
	}
	var buf bytes.Buffer
	lw := recorder.NewLogWriter(&buf)
	rec := recorder.New(lw)
	// Complete the requests out of order, as a run does.
	order := rand.New(rand.NewPCG(1, 1)).Perm(len(want))
	for _, i := range order {
		r := recorder.Record{Seq: uint64(i), Scheduled: want[i], Sent: want[i], Done: want[i] + time.Millisecond,
			WasSent: true, Outcome: recorder.Completed, Status: 200}
		if err := rec.Add(&r); err != nil {
			t.Fatal(err)
		}
	}
	if err := lw.Flush(); err != nil {
		t.Fatal(err)
	}
	s, err := schedule.LoadReplay(&buf, "run.csv", speed1)
	if err != nil {
		t.Fatal(err)
	}
	got := offsets(t, s)
	if len(got) != len(want) {
		t.Fatalf("replayed %d arrivals of %d", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i].Truncate(us) {
			t.Fatalf("arrival %d: replayed %v, scheduled %v", i, got[i], want[i])
		}
	}
}
