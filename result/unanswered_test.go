package result_test

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/openload/openload/internal/recorder"
	"github.com/openload/openload/result"
)

// unansweredRecords are a run's records whose attempts went unanswered
// in every way the engine counts (wire.go): dropped and re-sent, dropped
// and reset, silent until the timeout, re-sent before anything was
// written, and answered.
func unansweredRecords() []recorder.Record {
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	var recs []recorder.Record
	for i := range 40 {
		r := recorder.Record{Seq: uint64(i), Scheduled: ms(10 * i), Sent: ms(10*i + 1), Done: ms(10*i + 3), WasSent: true,
			Outcome: recorder.Completed, Status: 200, Attempts: 1}
		switch i % 5 {
		case 0: // read, dropped, re-sent and answered
			r.Attempts, r.Resends, r.LastSent = 2, 1, ms(10*i+2)
			r.Unanswered = recorder.Unanswered{Closed: 1, ResentWritten: 1}
		case 1: // dropped, not re-sent: a reset
			r.Outcome, r.Kind, r.Status = recorder.Failed, recorder.KindReset, 0
			r.Unanswered = recorder.Unanswered{Closed: 1}
		case 2: // nothing before the timeout
			r.Outcome, r.Kind, r.Status = recorder.TimedOut, recorder.KindTimeout, 0
			r.Unanswered = recorder.Unanswered{Silent: 1}
		case 3: // the kept-alive connection failed before a byte was written
			r.Unanswered = recorder.Unanswered{ResentUnwritten: 1}
		}
		recs = append(recs, r)
	}
	return recs
}

// TestUnansweredCounted: the result sums what became of the unanswered
// attempts; a merge of shards adds them up to what one generator that
// recorded every request holds; and a result written before they were
// counted reads, and merges, as not counted.
func TestUnansweredCounted(t *testing.T) {
	recs := unansweredRecords()
	whole := shardResult(t, recs, 0, 0)
	want := result.Wire{Attempts: 48, Resends: 8, Resent: 8, Closed: 16, Silent: 8, ResendsWritten: 8, ResendsUnwritten: 8, Counted: true}
	if w := whole.Wire; w == nil || *w != want {
		t.Fatalf("wire %+v, want %+v", whole.Wire, want)
	}
	if u := whole.Wire.Unread(); u != 24 {
		t.Errorf("unread %d, want 24 (closed + silent)", u)
	}
	shards := []*result.Result{shardResult(t, recs, 0, 3), shardResult(t, recs, 1, 3), shardResult(t, recs, 2, 3)}
	if m := merge(t, shards...); *m.Wire != want {
		t.Errorf("merged wire %+v, want %+v", m.Wire, want)
	}

	// A shard written before the counts: its JSON lacks them.
	var doc map[string]any
	if err := json.Unmarshal([]byte(jsonOf(t, shards[0])), &doc); err != nil {
		t.Fatal(err)
	}
	wire := doc["wire"].(map[string]any)
	for _, k := range []string{"unanswered_closed", "unanswered_silent", "resends_written", "resends_unwritten", "unanswered_counted"} {
		if _, ok := wire[k]; !ok {
			t.Errorf("the result's wire lacks %q: %v", k, wire)
		}
		delete(wire, k)
	}
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	old, err := result.Read(bytes.NewReader(b), "old.json")
	if err != nil {
		t.Fatal(err)
	}
	if w := old.Wire; w.Counted || w.Closed != 0 || w.Attempts != shards[0].Wire.Attempts {
		t.Errorf("old wire %+v: want its attempts, and nothing counted of the rest", w)
	}
	if m := merge(t, old, shards[1], shards[2]); m.Wire.Counted || m.Wire.Attempts != want.Attempts {
		t.Errorf("merged with an old shard: wire %+v, want %d attempts, not counted", m.Wire, want.Attempts)
	}
}
