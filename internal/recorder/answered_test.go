package recorder

import (
	"bytes"
	"testing"
	"time"

	"github.com/openload/openload/result"
)

// TestAnsweredSplit: the requests without an answer (error, timeout,
// unfinished) are set apart from the answered ones (any status, 503
// included); the response histogram still holds both, and the split
// survives Merge and the JSON round trip.
func TestAnsweredSplit(t *testing.T) {
	r := New(nil)
	for _, rec := range sampleRecords() {
		rec := rec
		r.Add(&rec)
	}
	a, u := r.Answered()
	if a == nil || u == nil {
		t.Fatal("no split with 3 of 5 requests unanswered")
	}
	if a.TotalCount() != 2 || u.TotalCount() != 3 || r.Response.TotalCount() != 5 {
		t.Errorf("answered %d, unanswered %d, response %d; want 2, 3, 5", a.TotalCount(), u.TotalCount(), r.Response.TotalCount())
	}
	// Answered: 50.4 ms (200) and 1.19375 s (503); unanswered: 1.5 ms
	// (refused), 30 s (timeout), 1 s (unfinished).
	if !a.ValuesAreEquivalent(a.Max(), 1_193_750) || !a.ValuesAreEquivalent(a.Min(), 50_400) {
		t.Errorf("answered spans %d–%d µs, want 50,400–1,193,750", a.Min(), a.Max())
	}
	if !u.ValuesAreEquivalent(u.Max(), 30_000_000) || !u.ValuesAreEquivalent(u.Min(), 1_500) {
		t.Errorf("unanswered spans %d–%d µs, want 1,500–30,000,000", u.Min(), u.Max())
	}

	m := New(nil)
	ok := Record{Done: ms(3), WasSent: true, Outcome: Completed, Status: 200}
	m.Add(&ok)
	if a, u := m.Answered(); a != nil || u != nil {
		t.Error("a split although every request got an answer")
	}
	res := mergedShards(t, m, r)
	if res.Answered == nil || res.Answered.Count != 3 || res.Unanswered.Count != 3 {
		t.Fatalf("merged: answered %v, unanswered %v; want 3 and 3", res.Answered, res.Unanswered)
	}
	var buf bytes.Buffer
	if err := result.Write(&buf, res); err != nil {
		t.Fatal(err)
	}
	back, err := result.Read(&buf, "r.json")
	if err != nil {
		t.Fatal(err)
	}
	if back.Answered == nil || back.Unanswered == nil || back.Answered.Count != 3 || back.Unanswered.Count != 3 || back.Response.Count != 6 {
		t.Errorf("round trip: answered %+v, unanswered %+v, response %+v", back.Answered, back.Unanswered, back.Response)
	}
	for name, enc := range map[string]string{"answered": back.Histograms.Answered, "unanswered": back.Histograms.Unanswered} {
		h, err := result.DecodeHistogram(enc)
		if err != nil || h.TotalCount() != 3 {
			t.Errorf("%s histogram: %v, err %v", name, h, err)
		}
	}
}

// TestTLSCausesCounted: TLS causes are counted for tls errors only, by
// name, and merged.
func TestTLSCausesCounted(t *testing.T) {
	r := New(nil)
	recs := []Record{
		{Done: time.Millisecond, Outcome: Failed, Kind: KindTLS, TLSCause: TLSSelfSigned},
		{Done: time.Millisecond, Outcome: Failed, Kind: KindTLS, TLSCause: TLSSelfSigned},
		{Done: time.Millisecond, Outcome: Failed, Kind: KindTLS, TLSCause: TLSExpired},
		{Done: time.Millisecond, Outcome: Failed, Kind: KindRefused},
		{Done: time.Millisecond, Outcome: Completed, Status: 200},
	}
	for i := range recs {
		r.Add(&recs[i])
	}
	got := mergedShards(t, r, r).TLSCauses
	if len(got) != 2 || got["self_signed"] != 4 || got["expired"] != 2 {
		t.Errorf("tls causes %v, want self_signed 4, expired 2", got)
	}
	if New(nil).TLSCauses() != nil {
		t.Error("causes without a record")
	}
	for c := TLSNone + 1; c < numTLSCauses; c++ {
		if c.String() == "" || c.String() == "unknown" {
			t.Errorf("cause %d has no name", c)
		}
	}
}

// TestOldResultReads: a result written before the answered split and the
// TLS causes existed still reads, with neither.
func TestOldResultReads(t *testing.T) {
	old := `{"version": 1, "counts": {"scheduled": 2, "completed": 1, "errors": 1}, "response": {"count": 2}, "error_kinds": {"tls": 1}}`
	res, err := result.Read(bytes.NewBufferString(old), "old.json")
	if err != nil {
		t.Fatal(err)
	}
	if res.Answered != nil || res.Unanswered != nil || res.TLSCauses != nil || res.ErrorKinds["tls"] != 1 {
		t.Errorf("old result read as answered %v, unanswered %v, causes %v, kinds %v", res.Answered, res.Unanswered, res.TLSCauses, res.ErrorKinds)
	}
}

// TestAnsweredClamped: a response time above the histogram's range is
// clamped alike in the response and the unanswered histogram, so the
// answered one, their difference, keeps every bucket at or above zero.
func TestAnsweredClamped(t *testing.T) {
	testAnsweredClamped(t, New(nil))
	// A part's histograms record what the run's counted already: a run
	// of targets or steps clamps no more.
	r := New(nil)
	r.TrackTargets([]string{"a"})
	testAnsweredClamped(t, r)
}

func testAnsweredClamped(t *testing.T, r *Recorder) {
	long := 2 * time.Hour
	for _, rec := range []Record{
		{Done: long, Outcome: TimedOut, Kind: KindTimeout},
		{Done: long, Outcome: Completed, Status: 200},
		{Done: ms(5), Outcome: Completed, Status: 200},
	} {
		r.Add(&rec)
	}
	a, u := r.Answered()
	if a == nil || a.TotalCount() != 2 || u.TotalCount() != 1 || r.Clamped() != 2 {
		t.Fatalf("answered %v, unanswered %v, clamped %d; want 2, 1, 2", a, u, r.Clamped())
	}
	for _, b := range a.Distribution() {
		if b.Count < 0 {
			t.Errorf("answered bucket %d–%d holds %d", b.From, b.To, b.Count)
		}
	}
	if !a.ValuesAreEquivalent(a.Max(), result.HistHighest) || !u.ValuesAreEquivalent(u.Max(), result.HistHighest) {
		t.Errorf("maxima %d and %d µs, want both at the top, %d", a.Max(), u.Max(), result.HistHighest)
	}
}
