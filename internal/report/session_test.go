package report_test

import (
	"strings"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/openload/openload/internal/golden"
	"github.com/openload/openload/internal/recorder"
	"github.com/openload/openload/internal/report"
	"github.com/openload/openload/result"
	"github.com/openload/openload/verify"
)

// sessionRun builds a session run's result as a run would, through a
// Recorder: n sessions arriving every `every`, each walking steps (names)
// in order, step k+1 due at step k's done plus think. do fills step k of
// session i from its due time (rec.Scheduled): its stamps and outcome,
// and whether the session goes on. The steps' figures are the
// recorder's parts; the sessions' account and each step's stream
// figures are made here from the same records.
func sessionRun(t *testing.T, names []string, n int, every, think time.Duration, do func(i, k int, rec *recorder.Record) bool) *result.Result {
	t.Helper()
	r := recorder.New(nil)
	r.TrackTargets(names) // a step's index is its part's, as a target's
	sess := &result.Sessions{Expected: int64(n), EndedAt: make([]int64, len(names))}
	times := result.NewHistogram()
	streams := make([]*stepStream, len(names))
	type span struct {
		start, end time.Duration
		ended      bool
	}
	var spans []span
	var last time.Duration
	seq := uint64(0)
	for i := range n {
		arrival := time.Duration(i) * every
		due := arrival
		sess.Started++
		sp := span{start: arrival}
		for k := range names {
			rec := recorder.Record{Seq: seq, Scheduled: due, Target: uint32(k)}
			seq++
			goOn := do(i, k, &rec)
			if err := r.Add(&rec); err != nil {
				t.Fatal(err)
			}
			r.AddTokens(tokenEvents(&rec))
			sess.StepRecords++
			streams[k] = streams[k].add(&rec)
			last = max(last, rec.Done)
			sp.end = rec.Done
			switch {
			case rec.Outcome == recorder.Unfinished:
				sess.Unfinished++
			case !goOn:
				sess.EndedEarly++
				sess.EndedAt[k]++
				sp.ended = true
			case k == len(names)-1:
				sess.Completed++
				sp.ended = true
			}
			if !goOn || rec.Outcome == recorder.Unfinished {
				break
			}
			due = rec.Done + think
		}
		if sp.ended {
			if err := times.RecordValue((sp.end - sp.start).Microseconds()); err != nil {
				t.Fatal(err)
			}
		} else {
			sp.end = -1
		}
		spans = append(spans, sp)
	}
	sess.Time = result.Summarize(times)
	for s := 0; time.Duration(s)*time.Second <= last; s++ {
		sec := result.SessionSecond{Second: s}
		for _, sp := range spans {
			in := func(d time.Duration) bool { return d >= 0 && int(d/time.Second) == s }
			if in(sp.start) {
				sec.Started++
			}
			if in(sp.end) {
				sec.Ended++
			}
			if sp.start < time.Duration(s+1)*time.Second && (sp.end < 0 || sp.end >= time.Duration(s+1)*time.Second) {
				sec.InProgress++
			}
		}
		sess.Timeline = append(sess.Timeline, sec)
	}
	res := &result.Result{Tool: "openload", Started: time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC), Counts: result.Counts{Expected: float64(sess.StepRecords)},
		Config:  result.Config{Method: "GET", Arrival: "constant", Rate: float64(time.Second / every), Connections: 64, Timeout: "30s", Drain: "5s"},
		Elapsed: last.Seconds(), Limit: result.Limit{Connections: 64, MaxInFlight: 4}}
	if err := r.Fill(res); err != nil {
		t.Fatal(err)
	}
	res.Steps, res.Targets = res.Targets, nil
	for k := range res.Steps {
		res.Steps[k].Stream = streams[k].part()
	}
	res.Sessions = sess
	res.SendRate = float64(res.Counts.Sent) / res.Elapsed
	return res
}

// tokenEvents are a streamed record's token events, evenly spaced from
// its first token to its last, as the engine would report them.
func tokenEvents(rec *recorder.Record) []recorder.TokenEvent {
	if !rec.Streamed || rec.Events == 0 {
		return nil
	}
	evs := []recorder.TokenEvent{{At: rec.FirstToken, Gap: -1}}
	if rec.Events > 1 {
		gap := (rec.LastToken - rec.FirstToken) / time.Duration(rec.Events-1)
		for j := 1; j < rec.Events; j++ {
			evs = append(evs, recorder.TokenEvent{At: rec.FirstToken + time.Duration(j)*gap, Gap: gap})
		}
	}
	return evs
}

// stepStream gathers a step's streamed records into its PartStream.
type stepStream struct {
	n, out                 int64
	ttftResp, ttftSvc, tpt *hdrhistogram.Histogram
	prompt, cached         result.Tokens
}

func (s *stepStream) add(rec *recorder.Record) *stepStream {
	if !rec.Streamed {
		return s
	}
	if s == nil {
		s = &stepStream{ttftResp: result.NewHistogram(), ttftSvc: result.NewHistogram(), tpt: result.NewHistogram()}
	}
	s.n++
	s.out += int64(rec.Tokens)
	if rec.Events > 0 && rec.Outcome == recorder.Completed {
		s.ttftResp.RecordValue((rec.FirstToken - rec.Scheduled).Microseconds())
		s.ttftSvc.RecordValue((rec.FirstToken - rec.Sent).Microseconds())
		if rec.Tokens > 1 {
			s.tpt.RecordValue((rec.LastToken - rec.FirstToken).Microseconds() / int64(rec.Tokens-1))
		}
	}
	for _, c := range []struct {
		t *result.Tokens
		v int
	}{{&s.prompt, rec.PromptTokens}, {&s.cached, rec.CachedTokens}} {
		if c.v > 0 {
			c.t.Requests++
			c.t.Sum += int64(c.v)
			c.t.Mean = float64(c.t.Sum) / float64(c.t.Requests)
		}
	}
	return s
}

func (s *stepStream) part() *result.PartStream {
	if s == nil {
		return nil
	}
	p := &result.PartStream{Streamed: s.n, OutputTokens: s.out, TTFTResponse: result.Summarize(s.ttftResp),
		TTFTService: result.Summarize(s.ttftSvc), TPOT: result.Summarize(s.tpt)}
	if s.prompt.Requests > 0 {
		p.PromptTokens = &s.prompt
	}
	if s.cached.Requests > 0 {
		p.CachedTokens = &s.cached
	}
	return p
}

// judgeSession evaluates objectives on res, with openload's defaults. The
// checks are left out: the session checks are verify's to add, and a
// golden of the report should not move with them.
func judgeSession(t *testing.T, res *result.Result, exprs ...string) {
	t.Helper()
	var objs []verify.Objective
	for _, e := range exprs {
		o, err := verify.ParseObjective(e)
		if err != nil {
			t.Fatal(err)
		}
		objs = append(objs, o)
	}
	verify.Judge(res, objs)
}

// shopRun is 20 shoppers, one every 50 ms, each login → browse →
// checkout with 100 ms of thought between: one refused at login, one
// timed out at browse, one reset at checkout, the last still at checkout
// when the run ended.
func shopRun(t *testing.T) *result.Result {
	ms := func(f float64) time.Duration { return time.Duration(f * float64(time.Millisecond)) }
	service := []time.Duration{ms(2), ms(3), ms(5)}
	res := sessionRun(t, []string{"login", "browse", "checkout"}, 20, 50*time.Millisecond, 100*time.Millisecond, func(i, k int, rec *recorder.Record) bool {
		rec.WasSent, rec.Sent = true, rec.Scheduled+ms(0.1)
		rec.Done = rec.Sent + service[k] + time.Duration(i%4)*ms(0.5)
		rec.Outcome, rec.Status = recorder.Completed, 200
		switch {
		case i == 7 && k == 0:
			rec.WasSent, rec.Sent, rec.Done = false, 0, rec.Scheduled+ms(1)
			rec.Outcome, rec.Status, rec.Kind = recorder.Failed, 0, recorder.KindRefused
			return false
		case i == 12 && k == 1:
			rec.Done = rec.Sent + ms(250)
			rec.Outcome, rec.Status, rec.Kind = recorder.TimedOut, 0, recorder.KindTimeout
			return false
		case i == 17 && k == 2:
			rec.Outcome, rec.Status, rec.Kind = recorder.Failed, 0, recorder.KindReset
			return false
		case i == 19 && k == 2:
			rec.Done = rec.Sent + ms(400)
			rec.Outcome, rec.Status, rec.Kind = recorder.Unfinished, 0, recorder.KindUnfinished
			return false
		}
		return true
	})
	res.Config.Target, res.Config.Schedule, res.Config.Duration = "http://shop.test", "constant 20/s for 1s", "1s"
	judgeSession(t, res, "checkout:response.p99<=300ms", "login:response.p99<=10ms", "session.p99<=500ms", "sessions_ended_early<=1%")
	return res
}

// chatRun is a run of one scenario, chat: 6 conversations of three
// turns, one every 500 ms, 1 s of reading between turns, each answer 150
// tokens 10 ms apart; each turn's prompt is the conversation so far, the
// part of it the server had seen read from its prefix cache (none on
// the first turn, so the server reports none), prefill 0.5 ms a token
// not cached. The last conversation's second answer ends in an error
// event.
func chatRun(t *testing.T) *result.Result {
	ms := func(f float64) time.Duration { return time.Duration(f * float64(time.Millisecond)) }
	const out, user = 150, 100
	chat := sessionRun(t, []string{"turn1", "turn2", "turn3"}, 6, 500*time.Millisecond, time.Second, func(i, k int, rec *recorder.Record) bool {
		prompt := 20 + (k+1)*user + k*out // system prompt, every user message, every answer
		cached := 0
		if k > 0 {
			cached = prompt - user // all but the new message
		}
		rec.WasSent, rec.Sent = true, rec.Scheduled+ms(0.2)
		rec.Streamed, rec.GotFirstByte, rec.FirstByte = true, true, rec.Sent+ms(1)
		rec.FirstToken = rec.Sent + ms(5+0.5*float64(prompt-cached)+float64(i))
		rec.FirstAnswer = rec.FirstToken
		rec.LastToken = rec.FirstToken + ms(10*(out-1))
		rec.Events, rec.Tokens, rec.PromptTokens, rec.CachedTokens = out, out, prompt, cached
		rec.Done = rec.LastToken + ms(1)
		rec.Outcome, rec.Status = recorder.Completed, 200
		if i == 5 && k == 1 {
			rec.Events, rec.Tokens = 40, 40
			rec.LastToken = rec.FirstToken + ms(390)
			rec.Done = rec.LastToken + ms(1)
			rec.Outcome, rec.Kind = recorder.Failed, recorder.KindStream
			return false
		}
		return true
	})
	chat.Config.Target, chat.Config.Method, chat.Config.Schedule = "http://llm.test/v1/chat/completions", "POST", "constant 2/s for 3s"
	chat.Config.Duration = "3s"
	judgeSession(t, chat, "turn2:ttft.p99<=100ms", "turn3:tpot.p50<=20ms")
	// The whole of a run of one scenario is its result; the steps and
	// sessions are the scenario's own (result.Union keeps them there).
	whole := *chat
	whole.Steps, whole.Sessions, whole.SLOs = nil, nil, nil
	whole.Config.Schedule, whole.Config.Arrival = "1 scenarios: chat: constant 2/s for 3s", "scenarios"
	whole.Scenarios = []result.Scenario{{Name: "chat", Result: chat}}
	judgeSession(t, &whole, "chat:turn2:ttft.p99<=100ms", "chat:turn1:ttft_service.p50<=200ms", "chat:session.p99<=10s",
		"chat:sessions_ended_early<=1%")
	return &whole
}

// TestSessionGolden: a session run's report (its steps in the targets'
// table, its sessions' account) and a conversation's, a scenario of a
// run of several (its turns' stream figures).
func TestSessionGolden(t *testing.T) {
	var out strings.Builder
	for _, c := range []struct {
		name string
		res  *result.Result
	}{{"session run", shopRun(t)}, {"conversation, a scenario", chatRun(t)}} {
		out.WriteString("== " + c.name + "\n")
		if err := report.Text(&out, c.res); err != nil {
			t.Fatal(err)
		}
		out.WriteString("\n")
	}
	golden.Check(t, "sessions.golden", out.String())
	for _, want := range []string{
		"by step\n",
		"ended early 3 (login ×1 · browse ×1 · checkout ×1) · unfinished 1   ✓ every session accounted for",
		"a warm-up's requests are in no step",
		"scenario chat · by step · streamed answers",
		"│ turn1 │",
		"FAIL  checkout:response.p99 <= 300.000 ms: measured 400.127 ms (breached)",
		"PASS  login:response.p99 <= 10.000 ms",
		"rate     sent 35.9/s, the sessions' steps (sessions scheduled 20/s)",
		"FAIL  sessions_ended_early.rate <= 1 %: measured 15.8 % (breached)",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("lacks %q", want)
		}
	}
	if !strings.Contains(out.String(), "streamed answers (server-sent events or NDJSON)\n┌") {
		t.Error("the conversation's run-wide stream figures are missing")
	}
}

// TestStepStreamNoData: a step without samples reads no data, never 0;
// cached tokens the server never reported read —.
func TestStepStreamNoData(t *testing.T) {
	steps := []result.Part{
		{Name: "turn1", Stream: &result.PartStream{Streamed: 2, TTFTResponse: result.Percentiles{Count: 2, P50: 100, P99: 120},
			TTFTService: result.Percentiles{Count: 2, P50: 90, P99: 110}, TPOT: result.Percentiles{Count: 2, P50: 10}, OutputTokens: 30,
			PromptTokens: &result.Tokens{Requests: 2, Mean: 120}}},
		{Name: "turn2"}, // nothing streamed: every figure no data, cached —
		{Name: "turn3", Stream: &result.PartStream{Streamed: 1, OutputTokens: 3, CachedTokens: &result.Tokens{}}}, // a failed stream
	}
	var b strings.Builder
	if err := report.StepStreamTable(&b, "", steps); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(b.String(), "\n")
	// A step's rows, one in each of the tables the figures take.
	row := func(name string) string {
		var rows []string
		for _, l := range lines {
			if strings.HasPrefix(l, "│ "+name+" ") {
				rows = append(rows, l)
			}
		}
		if len(rows) == 0 {
			t.Fatalf("no row %s in\n%s", name, b.String())
		}
		return strings.Join(rows, "\n")
	}
	if r := row("turn1"); !strings.Contains(r, "120.0 │          — │       15.0 │\n") || !strings.Contains(r, "│  100.000 │") {
		t.Errorf("turn1: %s", r)
	}
	if r := row("turn2"); strings.Count(r, "no data") != 7 || !strings.Contains(r, "—") || strings.Contains(r, "0.000") {
		t.Errorf("turn2, nothing streamed: %s", r)
	}
	if r := row("turn3"); strings.Count(r, "no data") != 6 || !strings.Contains(r, "—") || !strings.Contains(r, "3.0 │") {
		t.Errorf("turn3, a stream that failed: %s", r)
	}
	b.Reset()
	if err := report.StepStreamTable(&b, "", steps[1:2]); err != nil || b.Len() != 0 {
		t.Errorf("no step streamed: %q, %v", b.String(), err)
	}
}

// TestSessionLinesNoData: sessions none of which ended have no session
// time, and no timeline no peak; a session unaccounted for is marked.
func TestSessionLinesNoData(t *testing.T) {
	res := &result.Result{Steps: []result.Part{{Name: "login"}}, Sessions: &result.Sessions{Expected: 5, Started: 5, Unfinished: 4, EndedAt: []int64{0}}}
	var b strings.Builder
	if err := report.SessionRuns(&b, res); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"sessions expected 5 · started 5 · completed 0 · ended early 0 · unfinished 4   ✗ 1 sessions unaccounted for",
		"session  time no data: no session ended",
		"         peak in progress no data",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("lacks %q:\n%s", want, b.String())
		}
	}
	b.Reset()
	if err := report.SessionRuns(&b, &result.Result{}); err != nil || b.Len() != 0 {
		t.Errorf("a run without sessions: %q, %v", b.String(), err)
	}
}
