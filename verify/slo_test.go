package verify

import (
	"strings"
	"testing"

	"github.com/openload/openload/result"
)

func TestParseObjective(t *testing.T) {
	tests := []struct {
		in        string
		metric    string
		stat, op  string
		threshold float64
	}{
		{"response.p99<=200ms", "response", "p99", "<=", 200},
		{" service.max < 1.5s ", "service", "max", "<", 1500},
		{"send_delay.p99.9<=800us", "send_delay", "p999", "<=", 0.8},
		{"response.p99.99>=1ms", "response", "p9999", ">=", 1},
		{"server.dwell.max<=150ms", "server.dwell", "max", "<=", 150},
		{"server.queue.p99.9<=1s", "server.queue", "p999", "<=", 1000},
		{"errors<=1%", "errors", "rate", "<=", 0.01},
		{"errors.rate<0.005", "errors", "rate", "<", 0.005},
		{"class.model.share>=40%", "class.model", "share", ">=", 0.4},
		{"class.over-budget.share<=0.6", "class.over-budget", "share", "<=", 0.6},
		{"response.mean>2ms", "response", "mean", ">", 2},
		{"ttft.p99<=500ms", "ttft_response", "p99", "<=", 500},
		{"ttft_service.p50<=100ms", "ttft_service", "p50", "<=", 100},
		{"itl.p99<=80ms", "itl", "p99", "<=", 80},
		{"tpot.max<1s", "tpot", "max", "<", 1000},
		{"status.5xx<=1%", "status.5xx", "share", "<=", 0.01},
		{"status.503<=0", "status.503", "count", "<=", 0},
		{"status.2xx.share>=0.99", "status.2xx", "share", ">=", 0.99},
		{"status.429.count<10", "status.429", "count", "<", 10},
		{"checkout:status.4xx<=5", "status.4xx", "count", "<=", 5},
	}
	for _, tc := range tests {
		o, err := ParseObjective(tc.in)
		if err != nil {
			t.Errorf("%q: %v", tc.in, err)
			continue
		}
		if o.Metric != tc.metric || o.Stat != tc.stat || o.Op != tc.op || o.Threshold != tc.threshold {
			t.Errorf("%q parsed as %+v", tc.in, o)
		}
	}
}

func TestParseObjectiveErrors(t *testing.T) {
	tests := []struct{ in, want string }{
		{"response.p99", `objective "response.p99": no comparison`},
		{"response.p99<=", "missing metric or value"},
		{"<=200ms", "missing metric or value"},
		{"latency.p99<=200ms", `unknown metric "latency" (known metrics: response, service, send_delay, ttft, ttft_service, itl, tpot, server.NAME, errors, client_errors, status.CODE, grpc.CODE, class.VALUE.share, session, sessions_ended_early)`},
		{"response<=200ms", "response needs a statistic, e.g. response.p99"},
		{"response.p42<=200ms", `unknown statistic "p42" (one of p50 p90 p95 p99 p999 p9999 max mean)`},
		{"response.p99<=200", "value 200 needs a unit (ms, s, us), e.g. 200ms"},
		{"response.p99<=fast", `value "fast" is not a duration`},
		{"response.p99<=-1ms", "is negative"},
		{"errors<=lots", `value "lots" is not a share`},
		{"errors<=150%", "not a share between 0 and 1"},
		{"class.model<=0.5", "write a class objective as class.VALUE.share"},
		{"server.<=1ms", "write a server metric as server.NAME.STAT"},
		{"server.dwell<=1ms", "server.dwell needs a statistic, e.g. server.dwell.p99"},
		{"response.p99<=1ms<=2ms", "more than one comparison"},
		{"status<=1%", `unknown metric "status"`},
		{"status.6xx<=1%", `status "6xx" is neither a code (100 to 599, e.g. 503) nor a class (1xx to 5xx)`},
		{"status.50<=1%", `status "50" is neither`},
		{"status.5xx<=0.01", `value "0.01" is not a count of requests (a whole number such as 0 or 10); a share is written with %`},
		{"status.5xx.p99<=1%", `unknown statistic "p99" of a status: write status.5xx.share (a share) or status.5xx.count (a count)`},
		{"status.503.share<=2", "not a share between 0 and 1"},
	}
	for _, tc := range tests {
		_, err := ParseObjective(tc.in)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want it to contain %q", tc.in, err, tc.want)
		}
	}
}

func sloResult() *result.Result {
	return &result.Result{
		Counts:       result.Counts{Scheduled: 200, Sent: 200, Completed: 197, Errors: 2, Timeouts: 1},
		Status:       map[string]int64{"200": 197},
		Response:     result.Percentiles{Count: 200, P99: 150, Max: 400, Mean: 20},
		Service:      result.Percentiles{Count: 200, P99: 40},
		SendDelay:    result.Percentiles{Count: 200, P99: 0.4},
		ServerTiming: []result.ServerMetric{{Name: "queue", Percentiles: result.Percentiles{Count: 197, Max: 120}}},
		Classes: []result.ClassTable{{Header: "X-Stub-Source", Values: []result.ClassValue{
			{Value: "model", Count: 100, Share: 0.5}, {Value: "fallback", Count: 100, Share: 0.5}}}},
	}
}

func TestEvaluate(t *testing.T) {
	res := sloResult()
	tests := []struct {
		expr     string
		pass     bool
		measured float64
		msg      string
	}{
		{"response.p99<=200ms", true, 150, "response.p99 <= 200.000 ms: measured 150.000 ms"},
		{"response.p99<150ms", false, 150, "response.p99 < 150.000 ms: measured 150.000 ms (breached)"},
		{"response.p99<=150ms", true, 150, ""}, // the boundary passes with <=
		{"service.p99<=50ms", true, 40, ""},
		{"send_delay.p99<=1ms", true, 0.4, ""},
		{"server.queue.max<=100ms", false, 120, ""},
		{"errors<=1%", false, 0.015, "errors.rate <= 1 %: measured 1.5 % (breached)"},
		{"errors<=2%", true, 0.015, ""},
		{"class.model.share>=40%", true, 0.5, ""},
		{"class.never-seen.share<=0", true, 0, ""},
		{"status.200.count>=197", true, 197, "status.200.count >= 197: measured 197"},
		{"status.2xx>=99%", false, 0.985, "status.2xx.share >= 99 %: measured 98.5 % (breached)"},
		{"status.5xx<=0", true, 0, ""},
		{"status.5xx<=1%", true, 0, ""},
		{"server.dwell.max<=150ms", false, 0, `no data: no answer carried Server-Timing metric "dwell" (they carry: queue)`},
	}
	for _, tc := range tests {
		o, err := ParseObjective(tc.expr)
		if err != nil {
			t.Fatal(err)
		}
		r := Evaluate(res, []Objective{o})[0]
		if r.Pass != tc.pass || r.Measured != tc.measured || (tc.msg != "" && !strings.Contains(r.Message, tc.msg)) {
			t.Errorf("%s: pass %v measured %v %q; want %v %v %q", tc.expr, r.Pass, r.Measured, r.Message, tc.pass, tc.measured, tc.msg)
		}
	}
	res.Classes = nil
	o, _ := ParseObjective("class.model.share>=0.4")
	if r := Evaluate(res, []Objective{o})[0]; r.Pass || !r.NoData || !strings.Contains(r.Message, "no data: no answer carried a class header (197 answers; 197 answered 200)") {
		t.Errorf("class objective without classes: %+v", r)
	}
}

func FuzzParseObjective(f *testing.F) {
	for _, s := range []string{"response.p99<=200ms", "errors<=1%", "class.model.share>=0.4", "server.q.max<1s", "x<y"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		o, err := ParseObjective(s)
		if err != nil {
			if !strings.Contains(err.Error(), "objective ") {
				t.Fatalf("error does not name the expression: %v", err)
			}
			return
		}
		// Invariants of an accepted objective: a known operator, a
		// non-negative threshold, shares within [0, 1], and evaluating it
		// on any result never panics.
		if o.Threshold < 0 || (o.Share && o.Threshold > 1) {
			t.Fatalf("%q: threshold %v", s, o.Threshold)
		}
		Evaluate(sloResult(), []Objective{o})
	})
}

func TestStreamObjectives(t *testing.T) {
	res := &result.Result{Counts: result.Counts{Scheduled: 10, Completed: 10},
		Stream: &result.StreamResult{TTFTResponse: result.Percentiles{Count: 10, P99: 700}, TTFTService: result.Percentiles{Count: 10, P99: 90}}}
	objs := []Objective{}
	for _, e := range []string{"ttft.p99<=500ms", "ttft_service.p99<=500ms"} {
		o, err := ParseObjective(e)
		if err != nil {
			t.Fatal(err)
		}
		objs = append(objs, o)
	}
	rs := Evaluate(res, objs)
	if rs[0].Pass || !rs[1].Pass {
		t.Errorf("TTFT 700 ms from the schedule, 90 from the send: %+v", rs)
	}
	// A result without stream figures has no data: a breach.
	if rs := Evaluate(&result.Result{}, objs[:1]); rs[0].Pass || !rs[0].NoData || !strings.Contains(rs[0].Message, "no streamed token") {
		t.Errorf("no stream figures: %+v", rs)
	}
}
