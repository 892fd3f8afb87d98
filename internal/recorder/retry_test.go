package recorder

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

const msec = time.Millisecond

// retriedRecords: a request retried once after a 429 (then 200), one
// refused its retry by the budget (429 kept), one retried twice and
// exhausted (503 ×3), and one abandoned at the drain while it waited for
// its retry.
func retriedRecords() []Record {
	return []Record{
		{Seq: 0, Scheduled: 0, Sent: 1 * msec, Done: 1600 * msec, WasSent: true, Outcome: Completed, Status: 200,
			Attempts: 2, Retries: 1, Earlier: []Attempt{{Sent: 1 * msec, Done: 20 * msec, Status: 429}}, LastSent: 1500 * msec},
		{Seq: 1, Scheduled: 10 * msec, Sent: 11 * msec, Done: 30 * msec, WasSent: true, Outcome: Completed, Status: 429,
			Attempts: 1, RetryRefused: true},
		{Seq: 2, Scheduled: 20 * msec, Sent: 21 * msec, Done: 2300 * msec, WasSent: true, Outcome: Completed, Status: 503,
			Attempts: 3, Retries: 2, RetryExhausted: true, LastSent: 2200 * msec, Earlier: []Attempt{
				{Sent: 21 * msec, Done: 40 * msec, Status: 503}, {Sent: 1100 * msec, Done: 1120 * msec, Status: 503}}},
		{Seq: 3, Scheduled: 30 * msec, Sent: 31 * msec, Done: 3000 * msec, WasSent: true, Outcome: Unfinished, Kind: KindUnfinished,
			Attempts: 1, LastSent: 31 * msec, Earlier: []Attempt{{Sent: 31 * msec, Done: 50 * msec, Status: 429}}},
	}
}

func TestRetriedRecordFigures(t *testing.T) {
	r := retriedRecords()[0]
	if r.Response() != 1600*msec || r.SendDelay() != 1*msec || r.RetryDelay() != 1499*msec || r.Service() != 100*msec {
		t.Errorf("response %v send delay %v retry delay %v service %v", r.Response(), r.SendDelay(), r.RetryDelay(), r.Service())
	}
	if r.Response() != r.SendDelay()+r.RetryDelay()+r.Service() {
		t.Error("response ≠ send delay + retry delay + service")
	}
	once := Record{Sent: 5 * msec, Done: 9 * msec, WasSent: true, Attempts: 1}
	if once.RetryDelay() != 0 || once.Service() != 4*msec {
		t.Errorf("a request tried once: retry delay %v service %v", once.RetryDelay(), once.Service())
	}
	// Re-sent by the client on a new connection: the re-send shows as
	// retry delay, the service time is the final attempt's.
	resent := Record{Sent: 5 * msec, LastSent: 7 * msec, Done: 9 * msec, WasSent: true, Attempts: 2, Resends: 1}
	if resent.RetryDelay() != 2*msec || resent.Service() != 2*msec || resent.SendDelay() != 5*msec {
		t.Errorf("a re-sent request: retry delay %v service %v send delay %v", resent.RetryDelay(), resent.Service(), resent.SendDelay())
	}
}

func TestRetryCountsAndLog(t *testing.T) {
	var buf bytes.Buffer
	lw := NewLogWriter(&buf)
	r := New(lw)
	recs := retriedRecords()
	for i := range recs {
		if err := r.Add(&recs[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := lw.Flush(); err != nil {
		t.Fatal(err)
	}
	c := r.RetryCounts()
	if c.FirstAttempts != 4 || c.RetriesSent != 3 || c.RefusedByBudget != 1 || c.Exhausted != 1 || c.Retried != 3 {
		t.Errorf("retry counts %+v", c)
	}
	// 429: seq 0's first, seq 1's only, seq 3's only; 503: seq 2's three.
	if c.AttemptStatus["429"] != 3 || c.AttemptStatus["503"] != 3 || c.AttemptStatus["200"] != 1 || c.AttemptErrors["unfinished"] != 1 {
		t.Errorf("attempt statuses %v errors %v", c.AttemptStatus, c.AttemptErrors)
	}
	// The final outcomes are untouched.
	if n := r.Counts(); n.Scheduled != 4 || n.Completed != 3 || n.Unfinished != 1 || r.StatusCodes()[429] != 1 {
		t.Errorf("counts %+v statuses %v", n, r.StatusCodes())
	}
	// Per second: 429s by done, retries by sent.
	tl := r.Timeline()
	if tl[0].RateLimited != 3 || tl[1].Retries != 2 || tl[2].Retries != 1 {
		t.Errorf("timeline %+v", tl)
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	want := []string{
		LogHeader,
		"0,0.000,1.000,1600.000,100.000,1600.000,1.000,200,,2",
		"1,10.000,11.000,30.000,19.000,20.000,1.000,429,,1",
		"2,20.000,21.000,2300.000,100.000,2280.000,1.000,503,,3",
		"3,30.000,31.000,3000.000,2969.000,2970.000,1.000,,unfinished,1",
	}
	for i := range want {
		if i >= len(lines) || lines[i] != want[i] {
			t.Errorf("log line %d: got %q, want %q", i+1, lines[min(i, len(lines)-1)], want[i])
		}
	}
	lr := NewLogReader(strings.NewReader(buf.String()), "run.csv")
	var attempts []int
	for lr.Scan() {
		attempts = append(attempts, lr.Entry().Attempts)
	}
	if lr.Err() != nil || len(attempts) != 4 || attempts[0] != 2 || attempts[2] != 3 {
		t.Errorf("read attempts %v, err %v", attempts, lr.Err())
	}

	// Merging counts the attempts once more, not twice per record.
	if m := mergedShards(t, r, r); m.Retries == nil || m.Retries.RetriesSent != 6 || m.Retries.AttemptStatus["429"] != 6 || m.Timeline[0].RateLimited != 6 {
		t.Errorf("merged %+v", m.Retries)
	}
}

// Logs written before the attempts column are read with attempts 1 for a
// sent request and 0 otherwise; other field counts are refused.
func TestLogReaderNineOrTenColumns(t *testing.T) {
	old := "seq,scheduled_ms,sent_ms,done_ms,service_ms,response_ms,send_delay_ms,status,error\n" +
		"0,0.000,0.200,50.400,50.200,50.400,0.200,200,\n" +
		"1,1500.000,,2500.000,,1000.000,,,unfinished\n"
	lr := NewLogReader(strings.NewReader(old), "old.csv")
	var got []int
	for lr.Scan() {
		got = append(got, lr.Entry().Attempts)
	}
	if lr.Err() != nil || len(got) != 2 || got[0] != 1 || got[1] != 0 {
		t.Errorf("nine-column log: attempts %v, err %v", got, lr.Err())
	}
	for _, tc := range []struct{ in, want string }{
		{LogHeader + "\n0,0.000,0.200,50.400,50.200,50.400,0.200,200,,1,x\n", "run.csv:2: 11 fields, want 9, 10, 14 or 16"},
		{LogHeader + "\n0,0.000,0.200,50.400,50.200,50.400,0.200,200,,two\n", `run.csv:2: bad attempts "two"`},
		{LogHeader + "\n0,0.000,0.200,50.400,50.200,50.400,0.200,200,,-1\n", `run.csv:2: bad attempts "-1"`},
	} {
		lr := NewLogReader(strings.NewReader(tc.in), "run.csv")
		for lr.Scan() {
		}
		if lr.Err() == nil || !strings.Contains(lr.Err().Error(), tc.want) {
			t.Errorf("%q: error %v, want %q", tc.in, lr.Err(), tc.want)
		}
	}
}
