package recorder

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/openload/openload/result"
)

// TestCorrectedHistogram: HdrHistogram's correction with a 10 ms interval
// adds ⌊v/I⌋ − 1 values for a response v ≥ 2I: 24 for 250 ms (240 … 10 ms),
// none for 5 ms or 15 ms.
func TestCorrectedHistogram(t *testing.T) {
	r := New(nil)
	r.Correct(10 * time.Millisecond)
	for _, d := range []time.Duration{ms(5), ms(15), ms(250)} {
		rec := Record{Scheduled: 0, Sent: 0, Done: d, WasSent: true, Outcome: Completed, Status: 200}
		r.Add(&rec)
	}
	if got := r.Corrected.TotalCount(); got != 3+24 {
		t.Errorf("corrected count %d, want 27", got)
	}
	if r.Response.TotalCount() != 3 {
		t.Errorf("response count %d: the correction must not touch it", r.Response.TotalCount())
	}
	if got := r.Corrected.Min(); !r.Corrected.ValuesAreEquivalent(got, 5_000) {
		t.Errorf("corrected min %d µs", got)
	}
	if r.CorrectionInterval() != 10*time.Millisecond {
		t.Errorf("interval %v", r.CorrectionInterval())
	}
}

func TestSkippedAndRoundTrip(t *testing.T) {
	r := New(nil)
	r.Correct(10 * time.Millisecond)
	rec := Record{Scheduled: ms(100), Sent: ms(100.2), Done: ms(350), WasSent: true, Outcome: Completed, Status: 200}
	r.Add(&rec)
	r.AddSkipped(ms(500), 24)
	r.AddSkipped(ms(1500), 3)
	r.AddSkipped(ms(1500), 0)
	c := r.Counts()
	if c.Skipped != 27 || c.Scheduled != 1 || !c.Balanced() {
		t.Errorf("counts %+v", c)
	}
	tl := r.Timeline()
	if len(tl) != 2 || tl[0].Skipped != 24 || tl[0].Due() != 25 || tl[1].Skipped != 3 || tl[1].Due() != 3 {
		t.Errorf("timeline %+v", tl)
	}

	// Merging carries the skipped slots and the corrected histogram.
	if m := mergedShards(t, r); m.Counts.Skipped != 27 || m.Corrected == nil || m.Corrected.Count != r.Corrected.TotalCount() || m.Timeline[1].Skipped != 3 {
		t.Errorf("merged: counts %+v corrected %v timeline %+v", m.Counts, m.Corrected, m.Timeline)
	}

	res := &result.Result{Config: result.Config{Mode: result.ModeClosed, Users: 1, Rate: 100}}
	if err := r.Fill(res); err != nil {
		t.Fatal(err)
	}
	if res.Corrected == nil || res.Corrected.Interval != "10ms" || res.Corrected.Count != r.Corrected.TotalCount() {
		t.Fatalf("corrected %+v", res.Corrected)
	}
	var buf bytes.Buffer
	if err := result.Write(&buf, res); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{`"skipped": 27`, `"corrected": {`, `"interval": "10ms"`, `"mode": "closed"`} {
		if !strings.Contains(buf.String(), key) {
			t.Errorf("result JSON lacks %s", key)
		}
	}
	back, err := result.Read(&buf, "closed.json")
	if err != nil {
		t.Fatal(err)
	}
	if !back.Closed() || !back.ExpectedKnown() || back.Counts.Skipped != 27 || back.Timeline[0].Skipped != 24 {
		t.Errorf("read back: closed %v counts %+v", back.Closed(), back.Counts)
	}
	h, err := back.Histogram("corrected")
	if err != nil {
		t.Fatal(err)
	}
	if !h.Equals(r.Corrected) {
		t.Error("decoded corrected histogram differs from the recorded one")
	}
}

// TestOpenResultShape: an open run's result has no corrected histogram and
// none of the closed-mode fields, so its JSON is what it was.
func TestOpenResultShape(t *testing.T) {
	r := New(nil)
	for _, rec := range sampleRecords() {
		r.Add(&rec)
	}
	res := &result.Result{}
	if err := r.Fill(res); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	result.Write(&buf, res)
	for _, key := range []string{`"skipped"`, `"corrected"`, `"mode"`, `"users"`, `"think"`} {
		if strings.Contains(buf.String(), key) {
			t.Errorf("open result JSON holds %s", key)
		}
	}
	if res.Closed() || !res.ExpectedKnown() {
		t.Error("an open result reads as closed")
	}
	if _, err := res.Histogram("corrected"); err == nil || !strings.Contains(err.Error(), "only closed runs paced at a rate") {
		t.Errorf("corrected of an open result: %v", err)
	}
	unpaced := &result.Result{Config: result.Config{Mode: result.ModeClosed}}
	if unpaced.ExpectedKnown() {
		t.Error("a closed run without a rate has a known expected count")
	}
}

func TestReadResultNotAResult(t *testing.T) {
	_, err := result.Read(strings.NewReader(`{"hello": "world"}`), "x.json")
	if err == nil || err.Error() != "x.json: not an openload result (no version)" {
		t.Errorf("error %v", err)
	}
}
