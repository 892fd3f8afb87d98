package verify

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/openload/openload/internal/recorder"
	"github.com/openload/openload/result"
)

// mixOf builds the result of a mix through a Recorder: 30 requests to
// "fast" answered 200 in 2 ms, 10 to "GET http://h:8080/x" refused, none
// to "idle", and stray requests of an index past the names.
func mixOf(t *testing.T, stray int) *result.Result {
	t.Helper()
	r := recorder.New(nil)
	r.TrackTargets([]string{"fast", "GET http://h:8080/x", "idle"})
	add := func(n int, target uint32, status int) {
		for i := range n {
			at := time.Duration(i) * 10 * time.Millisecond
			rec := recorder.Record{Scheduled: at, Done: at + 2*time.Millisecond, Target: target}
			if status == 0 {
				rec.Outcome, rec.Kind = recorder.Failed, recorder.KindRefused
			} else {
				rec.Outcome, rec.Status, rec.WasSent, rec.Sent = recorder.Completed, status, true, at
			}
			if err := r.Add(&rec); err != nil {
				t.Fatal(err)
			}
		}
	}
	add(30, 0, 200)
	add(10, 1, 0)
	add(stray, 7, 200)
	res := &result.Result{Counts: result.Counts{Expected: float64(40 + stray)}}
	if err := r.Fill(res); err != nil {
		t.Fatal(err)
	}
	return res
}

func TestParseScopedObjective(t *testing.T) {
	for _, c := range []struct{ expr, scope, metric, stat string }{
		{"checkout:response.p99<=300ms", "checkout", "response", "p99"},
		{"GET http://h:8080/x : errors <= 1%", "GET http://h:8080/x", "errors", "rate"},
		{"a b:send_delay.max<1ms", "a b", "send_delay", "max"},
		{"class.a:b.share>=1%", "", "class.a:b", "share"}, // a class value's colon
		{"response.p99<=1s", "", "response", "p99"},
	} {
		o, err := ParseObjective(c.expr)
		if err != nil || o.Scope != c.scope || o.Metric != c.metric || o.Stat != c.stat {
			t.Errorf("%s: %+v, %v; want scope %q metric %s.%s", c.expr, o, err, c.scope, c.metric, c.stat)
		}
	}
	for _, c := range []struct{ expr, want string }{
		{":response.p99<=1s", "no name before the colon"},
		{"checkout:itl.p99<=1s", "itl is not a figure of a part: a scoped objective judges response, service, send_delay, ttft_response, ttft_service, tpot, errors, client_errors, status.CODE, and scoped to a scenario grpc.CODE, session, sessions_ended_early"},
		{"checkout:class.x.share>=1%", "class.x is not a figure of a part"},
		{"checkout:latency.p99<=1s", `unknown metric "checkout:latency"`},
	} {
		if _, err := ParseObjective(c.expr); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.expr, err, c.want)
		}
	}
}

// TestScopedObjectives: a scoped objective judges its target's figures;
// a target without the figure, or none of that name, is no data.
func TestScopedObjectives(t *testing.T) {
	res := mixOf(t, 0)
	for _, c := range []struct {
		expr         string
		pass, noData bool
		want         string
	}{
		{"fast:response.p99<=3ms", true, false, "fast:response.p99 <= 3.000 ms: measured 2.000 ms"},
		{"fast:errors<=0%", true, false, "measured 0 %"},
		{"GET http://h:8080/x:errors<=1%", false, false, "measured 100 %"},
		{"GET http://h:8080/x:response.p99<=1h", false, true, "no data: none of the 10 requests got an answer (refused 10)"},
		{"idle:errors<=100%", false, true, "no data: no request was scheduled"},
		{"nope:response.p99<=1h", false, true, `no data: the run has no target "nope"`},
	} {
		o, err := ParseObjective(c.expr)
		if err != nil {
			t.Fatal(err)
		}
		r := Evaluate(res, []Objective{o})[0]
		if r.Pass != c.pass || r.NoData != c.noData || !strings.Contains(r.Message, c.want) {
			t.Errorf("%s: pass %v, no data %v, %q; want %v %v %q", c.expr, r.Pass, r.NoData, r.Message, c.pass, c.noData, c.want)
		}
	}
	o, _ := ParseObjective("fast:response.p99<=1h")
	if r := Evaluate(resultOf(t, 10, 200), []Objective{o})[0]; r.Pass || !strings.Contains(r.Message, "no data: the run has no request mix") {
		t.Errorf("a run without a mix: %+v", r)
	}
}

// TestNothingPassesOnNothingInAPart: every objective a part can take,
// scoped to a target that got no request, to one that got no answer and
// to one the run has not, is never a PASS.
func TestNothingPassesOnNothingInAPart(t *testing.T) {
	res := mixOf(t, 0)
	n := 0
	for _, e := range grammar() {
		o, err := ParseObjective(e)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Contains(partMetrics(), o.Metric) {
			continue
		}
		for _, scope := range []string{"idle", "GET http://h:8080/x", "nope"} {
			so, err := ParseObjective(scope + ":" + e)
			if err != nil {
				t.Fatalf("%s:%s: %v", scope, e, err)
			}
			// The refused target has shares (of its 10 requests), no
			// latency: nothing was answered, nothing sent.
			has := scope == "GET http://h:8080/x" && o.Share
			r := Evaluate(res, []Objective{so})[0]
			switch {
			case !has && r.Pass:
				t.Errorf("%s: passed on nothing: %s", so.Expr, r.Message)
			case !has && !r.NoData:
				t.Errorf("%s: not marked no data: %s", so.Expr, r.Message)
			case has && r.NoData:
				t.Errorf("%s: marked no data, but the figure is there: %s", so.Expr, r.Message)
			}
			n++
		}
	}
	if n < 300 {
		t.Errorf("%d scoped objectives; the grammar shrank", n)
	}
}

func TestScopedErrorsKeepTheDefault(t *testing.T) {
	o, err := ParseObjective("fast:errors<=5%")
	if err != nil {
		t.Fatal(err)
	}
	objs := WithDefault([]Objective{o})
	if len(objs) != 3 || !objs[1].Default || objs[1].Metric != "errors" {
		t.Errorf("with defaults: %+v", objs)
	}
}

func TestCheckScopes(t *testing.T) {
	var objs []Objective
	for _, e := range []string{"response.p99<=1s", "fast:errors<=1%", "fats:response.p99<=1s"} {
		o, err := ParseObjective(e)
		if err != nil {
			t.Fatal(err)
		}
		objs = append(objs, o)
	}
	names := []string{"fast", "GET http://h/a, b"}
	if err := CheckScopes(objs[:2], names); err != nil {
		t.Errorf("known names refused: %v", err)
	}
	err := CheckScopes(objs, names)
	want := `objective "fats:response.p99<=1s": no target or scenario named "fats" (known: "fast", "GET http://h/a, b")`
	if err == nil || err.Error() != want {
		t.Errorf("got %v\nwant %s", err, want)
	}
	if err := CheckScopes(objs[1:2], nil); err == nil || !strings.Contains(err.Error(), "the run has no request mix") {
		t.Errorf("without a mix: %v", err)
	}
}

func TestTargetAccounting(t *testing.T) {
	find := func(res *result.Result) Finding {
		for _, f := range Run(res, Options{}) {
			if f.Check == "target accounting" {
				return f
			}
		}
		t.Fatal("no target accounting check")
		return Finding{}
	}
	if f := find(mixOf(t, 0)); f.Severity != Pass || !strings.Contains(f.Message, "each of 3 targets") || !strings.Contains(f.Message, "together 40") {
		t.Errorf("balanced mix: %+v", f)
	}
	if f := find(mixOf(t, 4)); f.Severity != Fail || !strings.Contains(f.Message, "hold 40 of the 44 requests scheduled: 4 in no target") {
		t.Errorf("stray records: %+v", f)
	}
	res := mixOf(t, 0)
	res.Targets[1].Counts.Errors--
	if f := find(res); f.Severity != Fail || !strings.Contains(f.Message, `target "GET http://h:8080/x"`) || !strings.Contains(f.Message, "1 requests unaccounted for") {
		t.Errorf("unbalanced target: %+v", f)
	}
	for _, f := range Run(resultOf(t, 10, 200), Options{}) {
		if f.Check == "target accounting" {
			t.Errorf("a run without a mix has the check: %+v", f)
		}
	}
}
