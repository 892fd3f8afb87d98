package recorder

import (
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/openload/openload/result"
)

// TestStamps checks the order of every kind of record against a table:
// each record with the breaks the check must find, by pair.
func TestStamps(t *testing.T) {
	stream := func(fb, ft, lt, done float64) Record {
		return Record{Scheduled: ms(10), Sent: ms(11), WasSent: true, Outcome: Completed, Status: 200,
			Streamed: true, GotFirstByte: true, FirstByte: ms(fb), FirstToken: ms(ft), LastToken: ms(lt), Events: 3, Done: ms(done)}
	}
	for _, tc := range []struct {
		name   string
		rec    Record
		breaks map[string]int64
	}{
		{"plain", Record{Scheduled: ms(10), Sent: ms(10.1), WasSent: true, Done: ms(20), Outcome: Completed, Status: 200}, nil},
		{"never sent", Record{Scheduled: ms(10), Done: ms(10), Outcome: Unfinished}, nil},
		{"stream in order", stream(12, 13, 50, 50), nil},
		// The defect of issue 50: done at the head's stamp.
		{"done at the first byte", stream(12, 13, 50, 12), map[string]int64{"done<last_token": 1}},
		{"sent before scheduled", Record{Scheduled: ms(10), Sent: ms(9), WasSent: true, Done: ms(20), Outcome: Completed}, map[string]int64{"sent<scheduled": 1}},
		{"first token before the head", stream(14, 13, 50, 50), map[string]int64{"first_token<first_byte": 1}},
		// One early stamp is one break: the stamps after it are compared
		// with the latest before it.
		{"one early stamp", stream(12, 11.5, 50, 50), map[string]int64{"first_token<first_byte": 1}},
		{"within the slack", stream(12, 13, 50, 50-0.0009), nil},
		{"re-sent in order", Record{Scheduled: ms(10), Sent: ms(11), LastSent: ms(15), Resends: 1, WasSent: true, Done: ms(20), Outcome: Completed}, nil},
		{"re-sent, last sent after done", Record{Scheduled: ms(10), Sent: ms(11), LastSent: ms(25), Resends: 1, WasSent: true, Done: ms(20), Outcome: Completed}, map[string]int64{"done<last_sent": 1}},
		// Events == 0: the token stamps are not the record's.
		{"first answer in order", func() Record { r := stream(12, 13, 50, 50); r.FirstAnswer = ms(30); return r }(), nil},
		{"first answer after the last token", func() Record { r := stream(12, 13, 50, 60); r.FirstAnswer = ms(55); return r }(), map[string]int64{"last_token<first_answer": 1}},
		{"no tokens", Record{Scheduled: ms(10), Sent: ms(11), WasSent: true, Done: ms(20), Streamed: true, GotFirstByte: true, FirstByte: ms(12)}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := New(nil)
			if err := r.Add(&tc.rec); err != nil {
				t.Fatal(err)
			}
			got := r.stampsResult()
			want := &result.Stamps{Checked: 1}
			if tc.breaks != nil {
				want.Disordered, want.Breaks = 1, tc.breaks
			}
			got.WorstMs, got.WorstSeq = 0, 0
			if !reflect.DeepEqual(got, want) {
				t.Errorf("got %+v, want %+v", got, want)
			}
		})
	}
}

// TestStampsWorst keeps the largest break and its request, and counts
// warm-up records too.
func TestStampsWorst(t *testing.T) {
	r := New(nil)
	r.SetWarmup(ms(5))
	for i, done := range []float64{30, 12, 49, 40} {
		rec := Record{Seq: uint64(i), Scheduled: ms(10 + float64(i)), Sent: ms(11 + float64(i)), WasSent: true, Outcome: Completed, Status: 200,
			GotFirstByte: true, FirstByte: ms(12 + float64(i)), FirstToken: ms(13 + float64(i)), LastToken: ms(50), Events: 2, Done: ms(done)}
		if i == 0 {
			rec.Scheduled, rec.Sent, rec.FirstByte, rec.FirstToken = ms(1), ms(2), ms(3), ms(4) // in the warm-up
		}
		if err := r.Add(&rec); err != nil {
			t.Fatal(err)
		}
	}
	got := r.stampsResult()
	want := &result.Stamps{Checked: 4, Disordered: 4, Breaks: map[string]int64{"done<last_token": 4}, WorstMs: 38, WorstSeq: 1}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v, want %+v", got, want)
	}
}

// TestStampsAddAllocs: the check costs no allocation on Add.
func TestStampsAddAllocs(t *testing.T) {
	r := New(nil)
	rec := Record{Scheduled: ms(10), Sent: ms(11), WasSent: true, Outcome: Completed, Status: 200,
		Streamed: true, GotFirstByte: true, FirstByte: ms(12), FirstToken: ms(13), LastToken: ms(50), Events: 3, Done: ms(12)}
	r.Add(&rec)
	if n := testing.AllocsPerRun(100, func() { r.addStamps(&rec) }); n != 0 {
		t.Errorf("%v allocations per check", n)
	}
}

// BenchmarkStamps is the check alone on a streamed record, every stamp
// present: its share of BenchmarkAdd is what it costs a run.
func BenchmarkStamps(b *testing.B) {
	b.ReportAllocs()
	r := New(nil)
	rec := Record{Scheduled: ms(10), Sent: ms(11), WasSent: true, Outcome: Completed, Status: 200,
		Streamed: true, GotFirstByte: true, FirstByte: ms(12), FirstToken: ms(13), LastToken: ms(50), Events: 3, Done: ms(50)}
	for b.Loop() {
		r.addStamps(&rec)
	}
}

// TestStampsFastPath: the fast path says "in order" exactly when the
// full check finds no break, over random records near the slack.
func TestStampsFastPath(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	at := func() time.Duration { return time.Duration(rng.IntN(8)) * StampSlack / 2 }
	r := New(nil)
	for i := range 20000 {
		rec := Record{Scheduled: at(), Sent: at(), LastSent: at(), FirstByte: at(), FirstToken: at(), FirstAnswer: at(), LastToken: at(), Done: at(),
			WasSent: rng.IntN(4) > 0, GotFirstByte: rng.IntN(2) == 0, Events: rng.IntN(2)}
		if rng.IntN(3) == 0 {
			rec.Resends = 1
		}
		r.stamps = stampTally{checked: 1}
		fast := inOrder(&rec)
		r.addStampsSlow(&rec)
		if slow := r.stamps.disordered == 0; fast != slow {
			t.Fatalf("record %d %+v: fast path %v, full check %v", i, rec, fast, slow)
		}
	}
}
