package verify

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/openload/openload/internal/recorder"
	"github.com/openload/openload/result"
)

// resultOf builds a result the way a run does, through a Recorder: n
// requests, each either answered with status (a plain answer: no stream,
// no class header, no Server-Timing) or, with status 0, refused.
func resultOf(t *testing.T, n, status int) *result.Result {
	t.Helper()
	r := recorder.New(nil)
	for i := range n {
		at := time.Duration(i) * 10 * time.Millisecond
		rec := recorder.Record{Seq: uint64(i), Scheduled: at, Done: at + 3*time.Millisecond}
		if status == 0 {
			rec.Outcome, rec.Kind = recorder.Failed, recorder.KindRefused
		} else {
			rec.Outcome, rec.Status, rec.WasSent, rec.Sent = recorder.Completed, status, true, at+time.Millisecond
		}
		if err := r.Add(&rec); err != nil {
			t.Fatal(err)
		}
	}
	res := &result.Result{Counts: result.Counts{Expected: float64(n)}}
	if err := r.Fill(res); err != nil {
		t.Fatal(err)
	}
	return res
}

// grammar is every objective the grammar accepts, by metric: every
// latency metric with every statistic, a Server-Timing metric, errors,
// client_errors and a class share, each with every operator and two
// bounds, one of which (0 with >=, a large one with <=) any figure at all
// would meet, so that a figure read as 0 from nothing would pass.
//
// The metrics are result.MetricTable's, as an objective writes them: each
// time by its name and its alias (ttft), a family by one member
// (server.queue, class.model.share).
func grammar() []string {
	var times, shares, exprs0 []string
	for _, m := range result.MetricTable() {
		switch {
		case m.Objective == "":
		case m.Count: // a status: a class as a share, a code as a count
			class, code, other := "5xx", "503", "2xx"
			if m.Prefix == "grpc." { // gRPC codes have names, no classes
				class, code, other = "unavailable", "resource_exhausted", "ok"
			}
			shares = append(shares, m.Prefix+class, m.Prefix+code+".share")
			for _, op := range []string{"<=", ">"} {
				exprs0 = append(exprs0, m.Prefix+code+op+"0", m.Prefix+other+".count"+op+"10")
			}
		case m.Share && m.Prefix != "":
			shares = append(shares, m.Prefix+"model.share")
		case m.Share:
			shares = append(shares, m.Name)
		case m.Prefix != "":
			times = append(times, m.Prefix+"queue")
		default:
			times = append(times, m.Name)
			if m.Objective != m.Name {
				times = append(times, m.Objective)
			}
		}
	}
	exprs := exprs0
	ops := []string{"<=", "<", ">=", ">"}
	for _, m := range times {
		for _, st := range latencyStats {
			for _, op := range ops {
				exprs = append(exprs, fmt.Sprintf("%s.%s%s0ms", m, st, op), fmt.Sprintf("%s.%s%s1h", m, st, op))
			}
		}
	}
	for _, m := range shares {
		for _, op := range ops {
			exprs = append(exprs, m+op+"0%", m+op+"100%")
		}
	}
	return exprs
}

// TestNothingPassesOnNothing evaluates every objective of the grammar on
// results that lack its figure and finds no PASS: an empty result (no
// request scheduled), a result of plain answers (no streams, classes or
// Server-Timing) and a result with no answer at all (refused). Where the
// figure is there, the objective is decided by value and never marked no
// data.
func TestNothingPassesOnNothing(t *testing.T) {
	cases := []struct {
		name string
		res  *result.Result
		// has says whether the result holds a figure of metric m.
		has func(m string) bool
	}{
		{"empty", resultOf(t, 0, 200), func(string) bool { return false }},
		{"plain answers", resultOf(t, 30, 200), func(m string) bool {
			switch m {
			case "response", "service", "send_delay", "errors", "client_errors":
				return true
			}
			return strings.HasPrefix(m, "status.")
		}},
		{"all refused (415)", resultOf(t, 30, 415), func(m string) bool {
			switch m {
			case "response", "service", "send_delay", "errors", "client_errors":
				return true
			}
			return strings.HasPrefix(m, "status.")
		}},
		{"no answer", resultOf(t, 30, 0), func(m string) bool { return m == "errors" || m == "client_errors" || strings.HasPrefix(m, "status.") }},
	}
	exprs := grammar()
	for _, tc := range cases {
		for _, e := range exprs {
			o, err := ParseObjective(e)
			if err != nil {
				t.Fatalf("%s: %v", e, err)
			}
			r := Evaluate(tc.res, []Objective{o})[0]
			has := tc.has(o.Metric)
			switch {
			case !has && r.Pass:
				t.Errorf("%s: %s passed on nothing: %s", tc.name, e, r.Message)
			case !has && (!r.NoData || !strings.Contains(r.Message, "no data: ")):
				t.Errorf("%s: %s: not marked no data: %s", tc.name, e, r.Message)
			case has && r.NoData:
				t.Errorf("%s: %s: marked no data, but the figure is there: %s", tc.name, e, r.Message)
			}
		}
	}
	if n := len(exprs); n < 400 {
		t.Errorf("the grammar gave %d objectives; the table above shrank", n)
	}
}

// TestNoDataSaysWhy: the no-data message says what the requests got.
func TestNoDataSaysWhy(t *testing.T) {
	tests := []struct {
		res  *result.Result
		expr string
		want string
	}{
		{resultOf(t, 30, 415), "ttft.p99<=500ms", "ttft_response.p99 <= 500.000 ms: no data: no streamed token in 30 answers; 30 answered 415"},
		{resultOf(t, 20, 0), "ttft.p99<=500ms", "no data: no streamed token: none of the 20 requests got an answer (refused 20)"},
		{resultOf(t, 20, 0), "response.p99<=200ms", "no data: none of the 20 requests got an answer (refused 20)"},
		{resultOf(t, 0, 200), "errors<=1%", "no data: no request was scheduled"},
		{resultOf(t, 10, 200), "server.queue.p99<=1s", "no data: no answer carried a Server-Timing header (10 answers; 10 answered 200)"},
		{resultOf(t, 10, 200), "class.model.share>=50%", "no data: no answer carried a class header (10 answers; 10 answered 200)"},
	}
	// Streams that failed on an error event keep their tokens, not a TTFT.
	failed := resultOf(t, 5, 0)
	failed.ErrorKinds = map[string]int64{"stream": 5}
	failed.Stream = &result.StreamResult{OutputTokens: 15}
	tests = append(tests, struct {
		res  *result.Result
		expr string
		want string
	}{failed, "ttft.p99<=500ms", "no data: no stream completed (15 tokens came in streams that failed): none of the 5 requests got an answer (stream 5)"})
	for _, tc := range tests {
		o, err := ParseObjective(tc.expr)
		if err != nil {
			t.Fatal(err)
		}
		if r := Evaluate(tc.res, []Objective{o})[0]; !strings.Contains(r.Message, tc.want) {
			t.Errorf("%s: %q, want it to hold %q", tc.expr, r.Message, tc.want)
		}
	}
}

// TestJudgeClasses: one rule classifies a run, from what its result holds.
func TestJudgeClasses(t *testing.T) {
	obj := func(e string) []Objective {
		o, err := ParseObjective(e)
		if err != nil {
			t.Fatal(err)
		}
		return []Objective{o}
	}
	tests := []struct {
		name string
		res  *result.Result
		objs []Objective
		want Class
	}{
		{"healthy", resultOf(t, 30, 200), nil, ClassValid},
		{"user objective met", resultOf(t, 30, 200), obj("response.p99<=1s"), ClassValid},
		{"user objective breached", resultOf(t, 30, 200), obj("response.p99<=1us"), ClassBreached},
		{"user objective without data", resultOf(t, 30, 200), obj("ttft.p99<=500ms"), ClassBreached},
		{"all 415: target refused", resultOf(t, 30, 415), nil, ClassTargetFailed},
		{"all 415, client errors allowed", resultOf(t, 30, 415), obj("client_errors<=100%"), ClassValid},
		{"429s are answers", resultOf(t, 30, 429), nil, ClassValid},
		{"408s are answers", resultOf(t, 30, 408), nil, ClassValid},
		{"503s are answers", resultOf(t, 30, 503), nil, ClassValid},
		{"refused: target failed", resultOf(t, 30, 0), obj("ttft.p99<=500ms"), ClassTargetFailed},
		{"nothing scheduled", resultOf(t, 0, 200), nil, ClassTargetFailed},
	}
	for _, tc := range tests {
		if got := Judge(tc.res, tc.objs).Class; got != tc.want {
			t.Errorf("%s: class %d, want %d (%+v)", tc.name, got, tc.want, tc.res.SLOs)
		}
	}
	res := resultOf(t, 30, 200)
	res.Interrupted = true
	res.Counts.Unfinished, res.Counts.Completed = 10, 20 // cut by the stop: not the target's
	if oc := Judge(res, nil); oc.Class != ClassInterrupted || TargetFailed(res) {
		t.Errorf("interrupted: class %d, target failed %v: %+v", oc.Class, TargetFailed(res), res.SLOs)
	}
}
