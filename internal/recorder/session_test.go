package recorder

import (
	"bytes"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/openload/openload/result"
)

// shopSessions are five hand-made sessions of a three-step run and their
// steps' records: two completed, two ended early (at steps 0 and 1), one
// cut by the end of the run.
func shopSessions() ([]SessionRecord, []Record) {
	sess := []SessionRecord{
		{Seq: 0, Arrival: ms(200), End: ms(1500), Steps: 3, Outcome: SessionCompleted, EndedAt: -1},
		{Seq: 1, Arrival: ms(500), End: ms(900), Steps: 1, Outcome: SessionEndedEarly, EndedAt: 0},
		{Seq: 2, Arrival: ms(1100), End: ms(3200), Steps: 2, Outcome: SessionEndedEarly, EndedAt: 1},
		{Seq: 3, Arrival: ms(2700), End: ms(4000), Steps: 2, Outcome: SessionUnfinished, EndedAt: -1},
		{Seq: 4, Arrival: ms(2900), End: ms(3400), Steps: 3, Outcome: SessionCompleted, EndedAt: -1},
	}
	var recs []Record
	for _, s := range sess {
		// The steps share the session's time evenly; the step it ended
		// early at failed, the last step of an unfinished one is cut.
		step := (s.End - s.Arrival) / time.Duration(s.Steps)
		for k := range s.Steps {
			due := s.Arrival + time.Duration(k)*step
			r := Record{Seq: uint64(len(recs)), Scheduled: due, Sent: due + ms(0.1), WasSent: true, Done: due + step,
				Outcome: Completed, Status: 200, Target: uint32(k)}
			switch {
			case s.Outcome == SessionEndedEarly && k == s.EndedAt:
				r.Outcome, r.Status, r.Kind = Failed, 0, KindReset
			case s.Outcome == SessionUnfinished && k == s.Steps-1:
				r.Outcome, r.Status, r.Kind = Unfinished, 0, KindUnfinished
			}
			recs = append(recs, r)
		}
	}
	return sess, recs
}

// TestSessionsKnownAnswer: hand-made sessions give their counts, their
// ends by step, their time (of the completed and ended-early ones only)
// and their timeline second by second; Expected is the caller's, and the
// steps are parts that add up to the run.
func TestSessionsKnownAnswer(t *testing.T) {
	r := New(nil)
	steps := []string{"login", "browse", "checkout"}
	r.TrackSessions(steps)
	sess, recs := shopSessions()
	for i := range recs {
		if err := r.Add(&recs[i]); err != nil {
			t.Fatal(err)
		}
	}
	for i := range sess {
		r.AddSession(&sess[i])
	}
	res := &result.Result{Counts: result.Counts{Expected: 5}, Sessions: &result.Sessions{Expected: 6}}
	if err := r.Fill(res); err != nil {
		t.Fatal(err)
	}
	s := res.Sessions
	if s == nil {
		t.Fatal("no sessions")
	}
	if s.Expected != 6 || s.Started != 5 || s.Completed != 2 || s.EndedEarly != 2 || s.Unfinished != 1 || !s.Balanced() {
		t.Errorf("sessions %+v", *s)
	}
	if !slices.Equal(s.EndedAt, []int64{1, 1, 0}) || s.StepRecords != 11 || s.StepRecords != res.Counts.Scheduled {
		t.Errorf("ended at %v, %d step records, %d scheduled", s.EndedAt, s.StepRecords, res.Counts.Scheduled)
	}
	// Times 1.3 s, 0.4 s, 2.1 s and 0.5 s; the unfinished one's 1.3 s is
	// a lower bound, left out.
	if s.Time.Count != 4 || !near(s.Time.Max, 2100) || !near(s.Time.P50, 500) {
		t.Errorf("time %+v", s.Time)
	}
	h, err := result.DecodeHistogram(s.Histogram)
	if err != nil || h.TotalCount() != 4 || result.Summarize(h) != s.Time {
		t.Errorf("histogram %v: %v", err, h)
	}
	want := []result.SessionSecond{
		{Second: 0, Started: 2, Ended: 1, InProgress: 1}, // 0 and 1 arrive, 1 ends
		{Second: 1, Started: 1, Ended: 1, InProgress: 1}, // 2 arrives, 0 ends
		{Second: 2, Started: 2, Ended: 0, InProgress: 3}, // 3 and 4 arrive
		{Second: 3, Started: 0, Ended: 2, InProgress: 1}, // 2 and 4 end
		{Second: 4, Started: 0, Ended: 1, InProgress: 0}, // 3 is cut
	}
	if !reflect.DeepEqual(s.Timeline, want) {
		t.Errorf("timeline\n%+v\nwant\n%+v", s.Timeline, want)
	}
	// The steps: login 5 (1 failed), browse 4 (1 failed), checkout 2.
	if res.Targets != nil || len(res.Steps) != 3 {
		t.Fatalf("targets %v, %d steps", res.Targets, len(res.Steps))
	}
	wantCounts := []result.PartCounts{
		{Scheduled: 5, Sent: 5, Completed: 4, Errors: 1},
		{Scheduled: 4, Sent: 4, Completed: 2, Errors: 1, Unfinished: 1},
		{Scheduled: 2, Sent: 2, Completed: 2},
	}
	var sum int64
	for i, p := range res.Steps {
		if p.Name != steps[i] || p.Counts != wantCounts[i] || p.Response.Count != p.Counts.Scheduled || p.Stream != nil {
			t.Errorf("step %d: %q %+v (response %d values, stream %v), want %q %+v", i, p.Name, p.Counts, p.Response.Count, p.Stream, steps[i], wantCounts[i])
		}
		sum += p.Counts.Scheduled
	}
	if sum != res.Headline().Scheduled {
		t.Errorf("the steps hold %d of %d requests", sum, res.Headline().Scheduled)
	}
	for i := range r.steps.parts {
		if r.steps.parts[i].stream != nil {
			t.Errorf("step %d holds stream histograms, though nothing streamed", i)
		}
	}
}

// TestNoSessionsNoObject: a run that tracks no sessions has no Sessions
// and no Steps; one that tracks them and saw none has them, empty.
func TestNoSessionsNoObject(t *testing.T) {
	r := New(nil)
	rec := Record{Done: ms(1), Outcome: Completed, Status: 200}
	r.Add(&rec)
	var res result.Result
	if err := r.Fill(&res); err != nil {
		t.Fatal(err)
	}
	if res.Sessions != nil || res.Steps != nil {
		t.Errorf("sessions %+v, steps %+v", res.Sessions, res.Steps)
	}
	r = New(nil)
	r.TrackSessions([]string{"a", "b"})
	if err := r.Fill(&res); err != nil {
		t.Fatal(err)
	}
	if s := res.Sessions; s == nil || s.Started != 0 || len(s.EndedAt) != 2 || s.Timeline == nil || len(s.Timeline) != 0 || len(res.Steps) != 2 {
		t.Errorf("sessions %+v, %d steps", s, len(res.Steps))
	}
}

// TestPartStreamFigures: each part (here a turn of a conversation) keeps
// its stream figures as the run keeps its own: TTFT from the schedule and
// from the send, TPOT, output tokens, and the server's prompt and cached
// prompt tokens; a request cut before its first token counts in TTFT at
// its elapsed time. The parts add up to the run's figures.
func TestPartStreamFigures(t *testing.T) {
	r := New(nil)
	r.StreamRun()
	r.TrackSessions([]string{"turn1", "turn2", "turn3"})
	t1 := streamed(0, 0, ms(1), ms(101), 10, ms(10)) // TTFT 101 ms, 100 ms from the send; TPOT 10 ms
	t1.PromptTokens = 100
	t2 := streamed(1, ms(1000), ms(1002), ms(1022), 5, ms(20)) // TTFT 22 ms, 20 ms; TPOT 20 ms
	t2.PromptTokens, t2.CachedTokens, t2.Target = 300, 200, 1
	cut := Record{Seq: 2, Scheduled: ms(2000), Sent: ms(2001), WasSent: true, Done: ms(2500), Outcome: TimedOut, Kind: KindTimeout, Target: 1}
	for _, rec := range []*Record{&t1, &t2, &cut} {
		if err := r.Add(rec); err != nil {
			t.Fatal(err)
		}
	}
	var res result.Result
	if err := r.Fill(&res); err != nil {
		t.Fatal(err)
	}
	a, b := res.Steps[0].Stream, res.Steps[1].Stream
	if a == nil || b == nil || res.Steps[2].Stream != nil {
		t.Fatalf("streams %+v %+v %+v", a, b, res.Steps[2].Stream)
	}
	if a.Streamed != 1 || a.OutputTokens != 10 || a.TTFTResponse.Count != 1 || !near(a.TTFTResponse.Max, 101) || !near(a.TTFTService.Max, 100) || !near(a.TPOT.Max, 10) {
		t.Errorf("turn 1: %+v", *a)
	}
	if a.PromptTokens == nil || a.PromptTokens.Sum != 100 || a.CachedTokens != nil {
		t.Errorf("turn 1 tokens: prompt %+v, cached %+v", a.PromptTokens, a.CachedTokens)
	}
	// The cut request: TTFT at least 500 ms (499 from the send), no TPOT.
	if b.Streamed != 1 || b.OutputTokens != 5 || b.TTFTResponse.Count != 2 || !near(b.TTFTResponse.P50, 22) || !near(b.TTFTResponse.Max, 500) ||
		!near(b.TTFTService.Max, 499) || b.TPOT.Count != 1 || !near(b.TPOT.Max, 20) {
		t.Errorf("turn 2: %+v", *b)
	}
	if b.PromptTokens == nil || b.PromptTokens.Sum != 300 || b.CachedTokens == nil || b.CachedTokens.Sum != 200 || b.CachedTokens.Requests != 1 {
		t.Errorf("turn 2 tokens: prompt %+v, cached %+v", b.PromptTokens, b.CachedTokens)
	}
	for _, p := range res.Steps[:2] {
		for _, enc := range []string{p.Stream.Histograms.TTFTResponse, p.Stream.Histograms.TTFTService, p.Stream.Histograms.TPOT} {
			if _, err := result.DecodeHistogram(enc); err != nil {
				t.Errorf("%s: %v", p.Name, err)
			}
		}
	}
	st := res.Stream
	if st.CachedTokens == nil || *st.CachedTokens != *b.CachedTokens {
		t.Errorf("run's cached tokens %+v, turn 2's %+v", st.CachedTokens, b.CachedTokens)
	}
	if a.TTFTResponse.Count+b.TTFTResponse.Count != st.TTFTResponse.Count || a.TTFTService.Count+b.TTFTService.Count != st.TTFTService.Count ||
		a.TPOT.Count+b.TPOT.Count != st.TPOT.Count || a.OutputTokens+b.OutputTokens != st.OutputTokens ||
		a.PromptTokens.Sum+b.PromptTokens.Sum != st.PromptTokens.Sum {
		t.Errorf("the turns do not add up to the run: %+v %+v, run %+v", *a, *b, *st)
	}
}

// TestNoCachedTokensNoObject: the run's cached tokens are nil when no
// request had a count.
func TestNoCachedTokensNoObject(t *testing.T) {
	r := New(nil)
	rec := streamed(0, 0, 0, ms(10), 3, ms(1))
	rec.PromptTokens = 40
	r.Add(&rec)
	var res result.Result
	if err := r.Fill(&res); err != nil {
		t.Fatal(err)
	}
	if res.Stream == nil || res.Stream.PromptTokens == nil || res.Stream.CachedTokens != nil {
		t.Errorf("stream %+v", res.Stream)
	}
}

// TestAddWithStepsDoesNotAllocate: a step's record, streamed, costs no
// allocation once its part holds stream figures and the timeline covers
// it; nor does a session's account once its seconds are covered.
func TestAddWithStepsDoesNotAllocate(t *testing.T) {
	r := New(nil)
	r.TrackSessions([]string{"a", "b"})
	rec := streamed(0, ms(500), ms(501), ms(520), 4, ms(5))
	rec.Target, rec.PromptTokens, rec.CachedTokens = 1, 80, 40
	r.Add(&rec) // grow the timeline, make the part's stream figures
	if n := testing.AllocsPerRun(100, func() { r.Add(&rec) }); n != 0 {
		t.Errorf("Add allocates %v times per record", n)
	}
	s := SessionRecord{Arrival: ms(100), End: ms(900), Steps: 2, Outcome: SessionEndedEarly, EndedAt: 1}
	r.AddSession(&s)
	if n := testing.AllocsPerRun(100, func() { r.AddSession(&s) }); n != 0 {
		t.Errorf("AddSession allocates %v times per session", n)
	}
}

// TestLogStepColumn: a session run's log ends with the step index.
func TestLogStepColumn(t *testing.T) {
	var buf bytes.Buffer
	r := New(NewLogWriter(&buf))
	r.TrackSessions([]string{"login", "browse"})
	rec := Record{Scheduled: ms(1), Sent: ms(1), WasSent: true, Done: ms(3), Outcome: Completed, Status: 200, Attempts: 1, Target: 1}
	if err := r.Add(&rec); err != nil {
		t.Fatal(err)
	}
	if err := r.FlushLog(); err != nil {
		t.Fatal(err)
	}
	lr := NewLogReader(strings.NewReader(buf.String()), "run.csv")
	if !strings.HasPrefix(buf.String(), LogHeader+","+LogTargetColumn+"\n") || !lr.Scan() || lr.Entry().Target != 1 {
		t.Errorf("log:\n%s(%v)", buf.String(), lr.Err())
	}
}
