package recorder

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/openload/openload/result"
)

// streamed returns a completed streamed record: scheduled at sched, sent
// at sent, first token at first (an answer token: no thinking), tokens
// tokens tpot apart.
func streamed(seq uint64, sched, sent, first time.Duration, tokens int, tpot time.Duration) Record {
	last := first + time.Duration(tokens-1)*tpot
	return Record{Seq: seq, Scheduled: sched, Sent: sent, WasSent: true, Done: last + msec, Outcome: Completed, Status: 200,
		Streamed: true, GotFirstByte: true, FirstByte: first - msec, FirstToken: first, FirstAnswer: first, LastToken: last, Events: tokens, Tokens: tokens}
}

func TestStreamFigures(t *testing.T) {
	rec := New(nil)
	objs, err := ParseRequestObjectives("ttft<=500ms, tpot<=50ms")
	if err != nil {
		t.Fatal(err)
	}
	rec.SetRequestObjectives(objs)
	recs := []Record{
		streamed(0, 0, 0, 100*time.Millisecond, 11, 10*time.Millisecond),                    // meets both
		streamed(1, 0, 400*time.Millisecond, 600*time.Millisecond, 11, 10*time.Millisecond), // TTFT 600 msec from the schedule, 200 from the send: misses
		streamed(2, 0, 0, 100*time.Millisecond, 3, 60*time.Millisecond),                     // TPOT 60 msec: misses
		{Seq: 3, Scheduled: 0, Done: 2 * time.Second, Outcome: TimedOut, Kind: KindTimeout}, // no token before the timeout
	}
	for i := range recs {
		if err := rec.Add(&recs[i]); err != nil {
			t.Fatal(err)
		}
	}
	rec.AddTokens([]TokenEvent{{At: 100 * msec, Gap: -1}, {At: 110 * msec, Gap: 10 * msec}, {At: 1100 * msec, Gap: 20 * msec}})
	res := result.Result{Elapsed: 2}
	if err := rec.Fill(&res); err != nil {
		t.Fatal(err)
	}
	st := res.Stream
	if st == nil {
		t.Fatal("no stream object")
	}
	if st.OutputTokens != 25 || st.TokensPerS != 12.5 {
		t.Errorf("output tokens %d at %v/s, want 25 at 12.5/s", st.OutputTokens, st.TokensPerS)
	}
	// The timed-out request counts in TTFT at its elapsed time, a lower
	// bound; TPOT has the three completed streams.
	if st.TTFTResponse.Count != 4 || st.TTFTService.Count != 3 || st.TPOT.Count != 3 {
		t.Errorf("counts: TTFT %d/%d, TPOT %d; want 4/3, 3", st.TTFTResponse.Count, st.TTFTService.Count, st.TPOT.Count)
	}
	if !near(st.TTFTResponse.Max, 2000) || !near(st.TTFTService.Max, 200) {
		t.Errorf("TTFT max %v from the schedule, %v from the send; want 2000 and 200", st.TTFTResponse.Max, st.TTFTService.Max)
	}
	if st.ITL.Count != 2 || !near(st.ITL.Max, 20) {
		t.Errorf("ITL %+v: want the 2 gaps, max 20 msec", st.ITL)
	}
	g := st.Goodput
	if g == nil || g.Met != 1 || g.PerS != 0.5 || g.Throughput != 1.5 || g.Objectives != "ttft<=500ms,tpot<=50ms" {
		t.Errorf("goodput %+v: want 1 met (0.5/s) of 3 completed (1.5/s)", g)
	}
	if res.Timeline[0].Tokens != 2 || res.Timeline[1].Tokens != 1 {
		t.Errorf("timeline tokens %d, %d; want 2, 1", res.Timeline[0].Tokens, res.Timeline[1].Tokens)
	}
	// The JSON object has exactly the keys, and its histograms
	// come back.
	var buf bytes.Buffer
	if err := result.Write(&buf, &result.Result{Version: result.Version, Stream: st, Histograms: res.Histograms}); err != nil {
		t.Fatal(err)
	}
	var raw struct{ Stream map[string]json.RawMessage }
	if err := json.Unmarshal(buf.Bytes(), &raw); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for k := range raw.Stream {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if want := []string{"goodput", "itl", "output_tokens", "tokens_per_s", "tpot", "ttfa_response", "ttfa_service", "ttft_response", "ttft_service"}; !slices.Equal(keys, want) {
		t.Errorf("stream keys %v, want %v", keys, want)
	}
	back, err := result.Read(&buf, "r.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range result.MetricNames(func(m result.Metric) bool { return m.Histogram && m.Samples == result.OfStreams }) {
		if h, err := back.Histogram(m); err != nil || h.TotalCount() == 0 {
			t.Errorf("%s: %v", m, err)
		}
	}
}

// A reasoning model's record: TTFT to its first token (thinking), TTFA to
// its first answer token, TPOT over every token; a request that timed out
// while thinking counts in TTFA (a lower bound) but not in TTFT, and one
// that completed without an answer token adds no TTFA.
func TestStreamFirstAnswer(t *testing.T) {
	rec := New(nil)
	think := streamed(0, 0, 10*msec, 200*msec, 40, 20*msec)
	think.FirstAnswer = 600 * msec
	noAnswer := streamed(1, 0, 10*msec, 200*msec, 5, 20*msec)
	noAnswer.FirstAnswer = 0
	timedOut := Record{Seq: 2, Scheduled: 0, Sent: 10 * msec, WasSent: true, Done: time.Second, Outcome: TimedOut, Kind: KindTimeout,
		Streamed: true, FirstToken: 200 * msec, LastToken: 300 * msec, Events: 6, Tokens: 6}
	for _, r := range []*Record{&think, &noAnswer, &timedOut} {
		if err := rec.Add(r); err != nil {
			t.Fatal(err)
		}
	}
	var res result.Result
	if err := rec.Fill(&res); err != nil {
		t.Fatal(err)
	}
	st := res.Stream
	if st.TTFTResponse.Count != 2 || !near(st.TTFTResponse.Max, 200) || !near(st.TTFTService.Max, 190) {
		t.Errorf("TTFT %+v / %+v: want the 2 completed at 200 (190 from the send)", st.TTFTResponse, st.TTFTService)
	}
	if st.TTFAResponse.Count != 2 || !near(st.TTFAResponse.P50, 600) || !near(st.TTFAResponse.Max, 1000) || !near(st.TTFAService.P50, 590) {
		t.Errorf("TTFA %+v / %+v: want 600 (590 from the send) and the timed-out 1000", st.TTFAResponse, st.TTFAService)
	}
	if st.TPOT.Count != 2 || !near(st.TPOT.Max, 20) {
		t.Errorf("TPOT %+v: want 20 ms over every token", st.TPOT)
	}
	if h, err := res.Histogram("ttfa_service"); err != nil || h.TotalCount() != 2 {
		t.Errorf("ttfa_service histogram: %v", err)
	}
}

func TestStreamMerge(t *testing.T) {
	a, b := New(nil), New(nil)
	r1, r2 := streamed(0, 0, 0, 50*time.Millisecond, 5, 5*time.Millisecond), streamed(1, 0, 0, 70*time.Millisecond, 7, 5*time.Millisecond)
	a.Add(&r1)
	b.Add(&r2)
	b.AddTokens([]TokenEvent{{At: msec, Gap: msec}})
	m := mergedShards(t, a, b)
	st := m.Stream
	if st == nil || st.OutputTokens != 12 || st.TTFTResponse.Count != 2 || st.TTFAService.Count != 2 || st.ITL.Count != 1 || m.Timeline[0].Tokens != 1 {
		t.Errorf("merged %+v", st)
	}
}

func TestNoStreamNoObject(t *testing.T) {
	rec := New(nil)
	r := Record{Outcome: Completed, Status: 200, Done: msec}
	rec.Add(&r)
	var res result.Result
	if err := rec.Fill(&res); err != nil {
		t.Fatal(err)
	}
	if res.Stream != nil || res.Histograms.ITL != "" {
		t.Errorf("a run without streams has stream figures: %+v", res.Stream)
	}
}

func TestParseRequestObjectives(t *testing.T) {
	for _, bad := range []string{"", "ttft", "ttft<500msec", "foo<=1s", "ttft<=-1s", "ttft<=fast", "ttft<=1s,"} {
		if _, err := ParseRequestObjectives(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
	objs, err := ParseRequestObjectives("ttft_service<=1s,response<=2s")
	if err != nil || len(objs) != 2 || objs[1].Max != 2*time.Second {
		t.Errorf("%+v %v", objs, err)
	}
}

func TestStreamLogRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	lw := NewStreamLogWriter(&buf)
	r := streamed(7, 0, msec, 100*time.Millisecond, 4, 10*time.Millisecond)
	plain := Record{Seq: 8, Done: msec, Outcome: Failed, Kind: KindRefused}
	lw.Write(&r)
	lw.Write(&plain)
	lw.Flush()
	if !strings.HasPrefix(buf.String(), LogHeader+","+StreamLogColumns+"\n") {
		t.Fatalf("header: %q", buf.String())
	}
	lr := NewLogReader(&buf, "s.csv")
	var got []LogEntry
	for lr.Scan() {
		got = append(got, lr.Entry())
	}
	if lr.Err() != nil || len(got) != 2 {
		t.Fatalf("%v %d entries", lr.Err(), len(got))
	}
	e := got[0]
	if !e.Streamed || e.FirstByte != 99*time.Millisecond || e.FirstToken != 100*time.Millisecond || e.LastToken != 130*time.Millisecond || e.Tokens != 4 {
		t.Errorf("entry %+v", e)
	}
	if e := got[1]; !e.Streamed || e.FirstToken != -1 || e.Tokens != 0 {
		t.Errorf("entry without stream %+v", e)
	}
}

// near: v is x within the histograms' 3 significant digits.
func near(v, x float64) bool { return v >= x && v <= x*1.001 }

// A result's stream figures add up: two copies of one result merged
// hold twice its counts at the same percentiles.
func TestStreamMergeTwice(t *testing.T) {
	rec := New(nil)
	rec.SetRequestObjectives([]RequestObjective{{Metric: "ttft", Max: time.Second}})
	for i := range 10 {
		r := streamed(uint64(i), 0, 0, time.Duration(i+1)*10*time.Millisecond, 5, time.Millisecond)
		rec.Add(&r)
	}
	rec.AddTokens([]TokenEvent{{At: 0, Gap: -1}, {At: time.Millisecond, Gap: time.Millisecond}})
	res := result.Result{Elapsed: 1}
	if err := rec.Fill(&res); err != nil {
		t.Fatal(err)
	}
	a, b := res.Stream, mergedShards(t, rec, rec).Stream
	if b.OutputTokens != 2*a.OutputTokens || b.Goodput.Met != 2*a.Goodput.Met || b.TTFTResponse.Count != 2*a.TTFTResponse.Count ||
		b.TTFTResponse.P99 != a.TTFTResponse.P99 || b.ITL.Count != 2*a.ITL.Count || b.Goodput.Objectives != a.Goodput.Objectives {
		t.Errorf("merged %+v from %+v", b, a)
	}
}

// Every kind's name reads back as the kind, "stream" among them.
func TestKindNamesRoundTrip(t *testing.T) {
	for k := KindNone; k < numKinds; k++ {
		if got, ok := ParseKind(k.String()); !ok || got != k {
			t.Errorf("ParseKind(%q) = %v, %v; want %v", k.String(), got, ok, k)
		}
	}
	if KindStream.String() != "stream" {
		t.Errorf("KindStream is %q, want stream", KindStream)
	}
}

// A stream ended by the server's error event (KindStream) is an error:
// counted under error_kinds "stream" in the result and as "stream" in the
// log, its status with the failed heads, its tokens in the output tokens
// and its points in the log, no TTFT, never goodput; a result written so
// reads back so, and merged recorders add it up.
func TestStreamErrorRecord(t *testing.T) {
	var log bytes.Buffer
	rec := New(NewStreamLogWriter(&log))
	rec.SetRequestObjectives([]RequestObjective{{Metric: "ttft", Max: time.Hour}})
	ok := streamed(0, 0, 0, 100*msec, 5, 10*msec)
	bad := streamed(1, 0, 0, 100*msec, 3, 10*msec)
	bad.Outcome, bad.Kind = Failed, KindStream
	for _, r := range []*Record{&ok, &bad} {
		if err := rec.Add(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := rec.FlushLog(); err != nil {
		t.Fatal(err)
	}
	other := New(nil)
	other.SetRequestObjectives([]RequestObjective{{Metric: "ttft", Max: time.Hour}})
	again := bad
	again.Seq = 2
	if err := other.Add(&again); err != nil {
		t.Fatal(err)
	}
	res := mergedShards(t, rec, other)
	var buf bytes.Buffer
	if err := result.Write(&buf, res); err != nil {
		t.Fatal(err)
	}
	back, err := result.Read(&buf, "result")
	if err != nil {
		t.Fatal(err)
	}
	c := back.Counts
	if c.Completed != 1 || c.Errors != 2 || !c.Balanced() || back.ErrorKinds["stream"] != 2 || len(back.ErrorKinds) != 1 {
		t.Errorf("counts %+v, kinds %v: want 1 completed, 2 stream errors", c, back.ErrorKinds)
	}
	if back.Status["200"] != 1 || back.FailedStatus["200"] != 2 {
		t.Errorf("status %v, failed heads %v: want one 200 answer and two failed 200 heads", back.Status, back.FailedStatus)
	}
	st := back.Stream
	if st.OutputTokens != 5+3+3 || st.TTFTResponse.Count != 1 || st.Goodput == nil || st.Goodput.Met != 1 {
		t.Errorf("stream %+v, goodput %+v: want 11 output tokens, TTFT and goodput of the completed one only", st, st.Goodput)
	}
	lr := NewLogReader(&log, "log")
	var got []LogEntry
	for lr.Scan() {
		got = append(got, lr.Entry())
	}
	if err := lr.Err(); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[1].Error != "stream" || got[1].Status != 0 || got[1].Tokens != 3 || got[1].FirstToken != 100*msec || got[1].LastToken != 120*msec {
		t.Errorf("log %+v: want the second line an error stream with its 3 tokens from 100 to 120 ms", got)
	}
}

// Prompt tokens and the output tokens asked are counted per request into
// the result, merge without loss, and go through the log; a log written
// before their columns still reads.
func TestPromptAndAskedTokens(t *testing.T) {
	a, b := New(nil), New(nil)
	var buf bytes.Buffer
	lw := NewStreamLogWriter(&buf)
	for i := range 10 {
		r := streamed(uint64(i), 0, 0, 10*msec, 8+i%2, msec) // 8 or 9 tokens of the 9 asked
		r.PromptTokens, r.AskedTokens = 100+i, 9
		lw.Write(&r)
		sh := a
		if i%2 == 1 {
			sh = b
		}
		if err := sh.Add(&r); err != nil {
			t.Fatal(err)
		}
	}
	unknown := streamed(10, 0, 0, 10*msec, 3, msec) // a body openload did not count
	lw.Write(&unknown)
	a.Add(&unknown)
	lw.Flush()

	res := mergedShards(t, a, b)
	p, q := res.Stream.PromptTokens, res.Stream.Asked
	if p == nil || p.Requests != 10 || p.Sum != 1045 || p.Min != 100 || p.Max != 109 || p.P50 != 104 || p.Mean != 104.5 {
		t.Errorf("prompt tokens %+v, want 10 requests, sum 1045, min 100, p50 104, max 109", p)
	}
	if q == nil || q.Requests != 10 || q.Sum != 90 || q.Received != 85 || q.Short != 5 {
		t.Errorf("asked %+v, want 10 requests asking 90, received 85, 5 short", q)
	}

	lr := NewLogReader(&buf, "s.csv")
	var got []LogEntry
	for lr.Scan() {
		got = append(got, lr.Entry())
	}
	if lr.Err() != nil || len(got) != 11 || got[3].PromptTokens != 103 || got[3].AskedTokens != 9 || got[10].PromptTokens != 0 || got[10].AskedTokens != 0 {
		t.Fatalf("log: %v, %d entries: %+v", lr.Err(), len(got), got)
	}
	old := LogHeader + ",first_byte_ms,first_token_ms,last_token_ms,output_tokens\n0,0.000,0.000,20.000,20.000,20.000,0.000,200,,1,9.000,10.000,17.000,8\n"
	lr = NewLogReader(strings.NewReader(old), "old.csv")
	if !lr.Scan() || lr.Entry().Tokens != 8 || lr.Entry().PromptTokens != 0 {
		t.Errorf("a log of four stream columns: %v %+v", lr.Err(), lr.Entry())
	}
}

// TestRequestMetricsInTable: each figure a per-request objective names is
// a time of result.MetricTable, by its name or as an objective writes it
// (ttft), so the two grammars name one figure alike.
func TestRequestMetricsInTable(t *testing.T) {
	for _, name := range RequestMetrics {
		found := false
		for _, m := range result.MetricTable() {
			found = found || !m.Share && m.Prefix == "" && (m.Name == name || m.Objective == name)
		}
		if !found {
			t.Errorf("request metric %q is no time of result.MetricTable", name)
		}
	}
}
