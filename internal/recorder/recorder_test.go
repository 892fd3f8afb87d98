package recorder

import (
	"bytes"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/openload/openload/result"
)

func ms(v float64) time.Duration { return time.Duration(v * float64(time.Millisecond)) }

func sampleRecords() []Record {
	return []Record{
		{Seq: 0, Scheduled: 0, Sent: ms(0.2), Done: ms(50.4), WasSent: true, Outcome: Completed, Status: 200, Attempts: 1},
		{Seq: 1, Scheduled: ms(6.25), Sent: ms(6.5), Done: ms(1200), WasSent: true, Outcome: Completed, Status: 503, Attempts: 1},
		// Refused: no connection, nothing written.
		{Seq: 2, Scheduled: ms(12.5), Sent: ms(13), Done: ms(14), WasSent: true, Outcome: Failed, Kind: KindRefused},
		{Seq: 3, Scheduled: ms(1000), Sent: ms(1000.1), Done: ms(31000.1), WasSent: true, Outcome: TimedOut, Kind: KindTimeout, Attempts: 1},
		{Seq: 4, Scheduled: ms(1500), Done: ms(2500), Outcome: Unfinished, Kind: KindUnfinished},
	}
}

func TestAddCountsEveryRecordOnce(t *testing.T) {
	r := New(nil)
	for _, rec := range sampleRecords() {
		rec := rec
		if err := r.Add(&rec); err != nil {
			t.Fatal(err)
		}
	}
	c := r.Counts()
	want := result.Counts{Scheduled: 5, Sent: 4, Completed: 2, Errors: 1, Timeouts: 1, Unfinished: 1}
	if c != want {
		t.Errorf("counts %+v, want %+v", c, want)
	}
	if !c.Balanced() {
		t.Error("not balanced")
	}
	if r.Response.TotalCount() != 5 || r.Service.TotalCount() != 4 || r.SendDelay.TotalCount() != 4 {
		t.Errorf("histogram counts %d %d %d, want 5 4 4", r.Response.TotalCount(), r.Service.TotalCount(), r.SendDelay.TotalCount())
	}
	if r.Censored() != 2 {
		t.Errorf("censored %d, want 2", r.Censored())
	}
	// The unfinished request waited 1 s and was never sent: its response
	// time is recorded (a lower bound), so the max response is the timeout's
	// 30 s, and the unsent one shows in the response histogram only.
	if got := r.Response.Max(); !r.Response.ValuesAreEquivalent(got, 30_000_000) {
		t.Errorf("max response %d µs, want ≈ 30 s", got)
	}
	tl := r.Timeline()
	if len(tl) != 32 {
		t.Fatalf("timeline has %d seconds, want 32", len(tl))
	}
	if tl[0].Scheduled != 3 || tl[0].Sent != 3 || tl[0].Completed != 1 || tl[0].Errors != 1 {
		t.Errorf("second 0: %+v", tl[0])
	}
	if tl[1].Scheduled != 2 || tl[1].Sent != 1 || tl[1].Completed != 1 {
		t.Errorf("second 1: %+v", tl[1])
	}
	if tl[2].Errors != 1 || tl[31].Errors != 1 {
		t.Errorf("seconds 2 and 31: %+v %+v", tl[2], tl[31])
	}
	if got := r.StatusCodes(); got[200] != 1 || got[503] != 1 || len(got) != 2 {
		t.Errorf("statuses %v", got)
	}
	if got := r.ErrorKinds(); got["refused"] != 1 || got["timeout"] != 1 || got["unfinished"] != 1 || len(got) != 3 {
		t.Errorf("kinds %v", got)
	}
}

func TestClampAndMerge(t *testing.T) {
	a, b := New(nil), New(nil)
	huge := Record{Scheduled: 0, Sent: 0, Done: 2 * time.Hour, WasSent: true, Outcome: Completed, Status: 200}
	if err := a.Add(&huge); err != nil {
		t.Fatal(err)
	}
	if a.Clamped() != 2 { // response and service both exceed 1 h
		t.Errorf("clamped %d, want 2", a.Clamped())
	}
	for _, rec := range sampleRecords() {
		rec := rec
		b.Add(&rec)
	}
	m := mergedShards(t, a, b)
	if c := m.Counts; c.Scheduled != 6 || !c.Balanced() {
		t.Errorf("merged counts %+v", c)
	}
	if m.Dropped != 0 {
		t.Errorf("dropped %d merging same-range histograms", m.Dropped)
	}
	if m.Response.Count != 6 || m.Clamped != 2 {
		t.Errorf("merged response count %d, clamped %d", m.Response.Count, m.Clamped)
	}
}

func TestLogRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	lw := NewLogWriter(&buf)
	r := New(lw)
	recs := sampleRecords()
	for i := range recs {
		if err := r.Add(&recs[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := lw.Flush(); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	want := []string{
		LogHeader,
		"0,0.000,0.200,50.400,50.200,50.400,0.200,200,,1",
		"1,6.250,6.500,1200.000,1193.500,1193.750,0.250,503,,1",
		"2,12.500,13.000,14.000,1.000,1.500,0.500,,refused,0",
		"3,1000.000,1000.100,31000.100,30000.000,30000.100,0.100,,timeout,1",
		"4,1500.000,,2500.000,,1000.000,,,unfinished,0",
	}
	if len(lines) != len(want) {
		t.Fatalf("log:\n%s", buf.String())
	}
	for i := range want {
		if lines[i] != want[i] {
			t.Errorf("line %d:\n got %s\nwant %s", i+1, lines[i], want[i])
		}
	}
	lr := NewLogReader(strings.NewReader(buf.String()), "run.csv")
	i := 0
	for lr.Scan() {
		e, rec := lr.Entry(), recs[i]
		if e.Seq != rec.Seq || e.Scheduled != rec.Scheduled || e.Done != rec.Done || e.WasSent != rec.WasSent ||
			(rec.WasSent && e.Sent != rec.Sent) || e.Status != rec.Status || e.Error != rec.Kind.String() {
			t.Errorf("entry %d: %+v from %+v", i, e, rec)
		}
		i++
	}
	if lr.Err() != nil || i != len(recs) {
		t.Errorf("read %d entries, err %v", i, lr.Err())
	}
}

func TestLogReaderErrorsNameTheLine(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", "run.csv: empty log"},
		{"a,b\n", "run.csv:1: not an openload log"},
		{LogHeader + "\n0,0.000,,1.000,,1.000,,,\nx,1,2,3,4,5,6,7,8\n", "run.csv:3: bad seq"},
		{LogHeader + "\n0,zero,,1.000,,1.000,,,\n", "run.csv:2: scheduled_ms: bad time"},
		{LogHeader + "\n0,1.2345,,1.000,,1.000,,,\n", "more than 3 decimals"},
		{LogHeader + "\n0,1.000,,1.000\n", "run.csv:2: 4 fields"},
	} {
		lr := NewLogReader(strings.NewReader(tc.in), "run.csv")
		for lr.Scan() {
		}
		if lr.Err() == nil || !strings.Contains(lr.Err().Error(), tc.want) {
			t.Errorf("%q: error %v, want %q", tc.in, lr.Err(), tc.want)
		}
	}
}

func TestResultRoundTrip(t *testing.T) {
	r := New(nil)
	recs := sampleRecords()
	for i := range recs {
		r.Add(&recs[i])
	}
	res := &result.Result{Tool: "openload", Counts: result.Counts{Expected: 5}}
	if err := r.Fill(res); err != nil {
		t.Fatal(err)
	}
	if res.Counts.Expected != 5 || res.Counts.Scheduled != 5 || res.Status["503"] != 1 {
		t.Errorf("filled %+v status %v", res.Counts, res.Status)
	}
	var buf bytes.Buffer
	if err := result.Write(&buf, res); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{`"version": 1`, `"counts"`, `"expected": 5`, `"unfinished": 1`, `"p999"`, `"send_delay"`, `"timeline"`} {
		if !strings.Contains(buf.String(), key) {
			t.Errorf("result JSON lacks %s", key)
		}
	}
	back, err := result.Read(bytes.NewReader(buf.Bytes()), "r.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{"response", "service", "send_delay"} {
		h, err := back.Histogram(m)
		if err != nil {
			t.Fatal(err)
		}
		var orig = map[string]int64{"response": r.Response.TotalCount(), "service": r.Service.TotalCount(), "send_delay": r.SendDelay.TotalCount()}[m]
		if h.TotalCount() != orig {
			t.Errorf("%s: decoded %d values, want %d", m, h.TotalCount(), orig)
		}
	}
	h, _ := back.Histogram("response")
	if !h.Equals(r.Response) {
		t.Error("decoded response histogram differs from the recorded one")
	}
	if _, err := back.Histogram("ttfb"); err == nil || !strings.Contains(err.Error(), "known: response, service, send_delay") {
		t.Errorf("unknown metric error: %v", err)
	}
}

func TestReadResultErrors(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"version": 2}`, "r.json: result version 2, this openload reads version 1"},
		{`{"version": 1, "counts": {`, "r.json: truncated result"},
		{`{"version": 1,, }`, "r.json: corrupt result"},
		{``, "r.json: truncated result"},
	} {
		_, err := result.Read(strings.NewReader(tc.in), "r.json")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want %q", tc.in, err, tc.want)
		}
	}
}

func TestRedactHeaders(t *testing.T) {
	h := http.Header{"Authorization": {"Bearer s3cret"}, "Cookie": {"a=b"}, "Proxy-Authorization": {"x"}, "X-Api-Key": {"k"}, "Accept": {"*/*"}}
	got := result.RedactHeaders(h, "x-api-key")
	for _, k := range []string{"Authorization", "Cookie", "Proxy-Authorization", "X-Api-Key"} {
		if got[k][0] != result.Redacted {
			t.Errorf("%s not redacted: %v", k, got[k])
		}
	}
	if got["Accept"][0] != "*/*" {
		t.Errorf("Accept changed: %v", got["Accept"])
	}
	if h["Authorization"][0] != "Bearer s3cret" {
		t.Error("RedactHeaders modified its input")
	}
}

func TestAppendMillis(t *testing.T) {
	for d, want := range map[time.Duration]string{0: "0.000", 999: "0.000", time.Microsecond: "0.001", 1234567 * time.Microsecond: "1234.567", -1500 * time.Microsecond: "-1.500"} {
		if got := string(appendMillis(nil, d)); got != want {
			t.Errorf("appendMillis(%v) = %s, want %s", d, got, want)
		}
	}
}

// BenchmarkAdd records one request into the histograms and the timeline.
func BenchmarkAdd(b *testing.B) {
	b.ReportAllocs()
	r := New(nil)
	rec := Record{Scheduled: ms(500), Sent: ms(500.2), Done: ms(550), WasSent: true, Outcome: Completed, Status: 200}
	r.Add(&rec) // grow the timeline once
	for b.Loop() {
		r.Add(&rec)
	}
}

// BenchmarkLogWrite writes one CSV line.
func BenchmarkLogWrite(b *testing.B) {
	b.ReportAllocs()
	lw := NewLogWriter(discard{})
	rec := Record{Seq: 123456, Scheduled: ms(500), Sent: ms(500.2), Done: ms(550), WasSent: true, Outcome: Completed, Status: 200}
	for b.Loop() {
		lw.Write(&rec)
	}
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }
