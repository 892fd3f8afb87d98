package recorder

import (
	"bytes"
	"testing"
	"time"

	"github.com/openload/openload/result"
)

// withTimings returns a completed record of the given status carrying the
// Server-Timing metrics name=dur pairs.
func withTimings(status int, kv ...any) Record {
	r := Record{Outcome: Completed, Status: status, WasSent: true, Done: ms(10)}
	for i := 0; i+1 < len(kv); i += 2 {
		r.Timings[r.NTimings] = Timing{Name: kv[i].(string), Dur: kv[i+1].(time.Duration)}
		r.NTimings++
	}
	return r
}

// TestDwellBoundCounts counts fixed records against a 150 ms bound: only
// answers (2xx but 204) count; exactly the bound is within it; a dropped
// answer (503 or 204) that reports its dwell is counted apart, not checked.
func TestDwellBoundCounts(t *testing.T) {
	recs := []Record{
		withTimings(200, "total", ms(20), "dwell", ms(20)),            // answer, within
		withTimings(200, "dwell", ms(150)),                            // answer, exactly the bound: within
		withTimings(200, "queue", ms(1), "dwell", ms(150.001)),        // answer, over by 1 µs
		withTimings(206, "dwell", ms(400)),                            // answer (2xx), over
		withTimings(200, "total", ms(300)),                            // answer without dwell
		withTimings(503, "dwell", ms(900)),                            // dropped late: not an answer
		withTimings(204, "dwell", ms(900)),                            // dropped as 204 no-bid
		withTimings(429, "total", ms(1)),                              // neither
		{Outcome: Failed, Kind: KindRefused, Done: ms(1)},             // no response
		withTimings(200, "Dwell", ms(999)),                            // another metric (names are exact)
		{Outcome: Completed, Status: 200, Done: ms(5), WasSent: true}, // answer, no timings at all
		withTimings(200, "dwell", -ms(5)),                             // a negative dwell is not > bound
		withTimings(200, "dwell", ms(10), "dwell", ms(500)),           // the first dwell counts
	}
	r := New(nil)
	r.BoundDwell(150 * time.Millisecond)
	for i := range recs {
		if err := r.Add(&recs[i]); err != nil {
			t.Fatal(err)
		}
	}
	var res result.Result
	if err := r.Fill(&res); err != nil {
		t.Fatal(err)
	}
	d := res.DwellBound
	if d == nil {
		t.Fatal("no dwell_bound in the result")
	}
	want := result.DwellBound{Bound: "150ms", BoundMs: 150, Answers: 6, Over: 2, Unreported: 3, Others: 2}
	got := *d
	got.Dwell, got.Histogram = result.Percentiles{}, "" // the histogram: below
	if got != want {
		t.Errorf("dwell bound %+v, want %+v", got, want)
	}
	if d.Dwell.Count != 6 || d.Dwell.Max != 400 {
		t.Errorf("dwell of answers %+v: want 6 values, max exactly 400 ms", d.Dwell)
	}
	if h, err := result.DecodeHistogram(d.Histogram); err != nil || h.TotalCount() != 6 {
		t.Errorf("dwell histogram: %v, %v; want the 6 answers' dwell", h, err)
	}

	// It survives the JSON round trip, and a merge adds two shards' counts.
	var b bytes.Buffer
	if err := result.Write(&b, &res); err != nil {
		t.Fatal(err)
	}
	back, err := result.Read(&b, "r.json")
	if err != nil {
		t.Fatal(err)
	}
	if back.DwellBound == nil || back.DwellBound.Over != 2 || back.DwellBound.Answers != 6 {
		t.Errorf("round trip: %+v", back.DwellBound)
	}
	mres := mergedShards(t, r, r)
	if md := mres.DwellBound; md == nil || md.Answers != 12 || md.Over != 4 || md.Unreported != 6 || md.Others != 4 || md.Dwell.Count != 12 || md.Dwell.Max != 400 {
		t.Errorf("merged: %+v", mres.DwellBound)
	}

	// Without BoundDwell there is no count.
	var plain result.Result
	if err := New(nil).Fill(&plain); err != nil || plain.DwellBound != nil {
		t.Errorf("no bound: %+v, %v", plain.DwellBound, err)
	}
}

func TestIsAnswer(t *testing.T) {
	for status, want := range map[int]bool{0: false, 199: false, 200: true, 201: true, 204: false, 206: true, 299: true, 300: false, 429: false, 503: false} {
		if result.IsAnswer(status) != want {
			t.Errorf("IsAnswer(%d) = %v, want %v", status, !want, want)
		}
	}
}

// The max of the answers' dwell is exact: a dwell just under the bound is
// not rounded up past it by the histogram's resolution.
func TestDwellMaxIsExact(t *testing.T) {
	r := New(nil)
	r.BoundDwell(150 * time.Millisecond)
	for _, d := range []time.Duration{ms(149.999), ms(3), -ms(1)} {
		rec := withTimings(200, "dwell", d)
		if err := r.Add(&rec); err != nil {
			t.Fatal(err)
		}
	}
	var res result.Result
	if err := r.Fill(&res); err != nil {
		t.Fatal(err)
	}
	if got := res.DwellBound.Dwell.Max; got != 149.999 || res.DwellBound.Over != 0 {
		t.Errorf("max %v ms, over %d; want 149.999 and 0", got, res.DwellBound.Over)
	}
}
