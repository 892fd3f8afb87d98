package verify

import (
	"strings"
	"testing"

	"github.com/openload/openload/result"
)

// stepPart is a step that got n requests, all answered 200, with
// response p99 resp ms.
func stepPart(name string, n int64, resp float64) result.Part {
	return result.Part{Name: name, Counts: result.PartCounts{Scheduled: n, Sent: n, Completed: n},
		Status: map[string]int64{"200": n}, ErrorKinds: map[string]int64{},
		Response: result.Percentiles{Count: n, P50: resp / 2, P99: resp, Max: resp}, Service: result.Percentiles{Count: n, P99: resp / 2},
		SendDelay: result.Percentiles{Count: n, P99: 0.1}}
}

// shopRun is a session run's own result, built by hand: 50 sessions of
// login → browse → checkout, 45 completed, 4 ended early (one at login,
// three at checkout), 1 unfinished; checkout's response p99 250 ms, one
// of its 48 requests failed.
func shopRun() *result.Result {
	checkout := stepPart("checkout", 48, 250)
	checkout.Counts.Completed, checkout.Counts.Errors = 47, 1
	checkout.Status["200"], checkout.ErrorKinds["reset"] = 47, 1
	steps := []result.Part{stepPart("login", 50, 40), stepPart("browse", 49, 120), checkout}
	var n int64
	for _, p := range steps {
		n += p.Counts.Scheduled
	}
	return &result.Result{Counts: result.Counts{Expected: float64(n), Scheduled: n, Sent: n, Completed: n - 1, Errors: 1},
		Status: map[string]int64{"200": n - 1}, Response: result.Percentiles{Count: n, P99: 250}, Steps: steps,
		Sessions: &result.Sessions{Expected: 50, Started: 50, Completed: 45, EndedEarly: 4, Unfinished: 1, EndedAt: []int64{1, 0, 3},
			StepRecords: n, Time: result.Percentiles{Count: 49, P50: 2600, P90: 3900, P99: 4200, Max: 4800}}}
}

// chatRun is a conversation's result: turn1 and turn2 streamed, turn3
// was answered without a stream.
func chatRun() *result.Result {
	t1, t2, t3 := stepPart("turn1", 10, 900), stepPart("turn2", 10, 800), stepPart("turn3", 10, 700)
	t1.Stream = &result.PartStream{Streamed: 10, TTFTResponse: result.Percentiles{Count: 10, P50: 300, P99: 400},
		TTFTService: result.Percentiles{Count: 10, P50: 250, P99: 350}, TPOT: result.Percentiles{Count: 10, P50: 20, P99: 30}, OutputTokens: 1000}
	t2.Stream = &result.PartStream{Streamed: 10, TTFTResponse: result.Percentiles{Count: 10, P50: 120, P99: 600},
		TTFTService: result.Percentiles{Count: 10, P50: 100, P99: 150}, TPOT: result.Percentiles{Count: 10, P50: 21, P99: 31}, OutputTokens: 1000}
	return &result.Result{Counts: result.Counts{Expected: 30, Scheduled: 30, Sent: 30, Completed: 30}, Steps: []result.Part{t1, t2, t3},
		Sessions: &result.Sessions{Expected: 10, Started: 10, Completed: 10, EndedAt: []int64{0, 0, 0}, StepRecords: 30,
			Time: result.Percentiles{Count: 10, P99: 9000}}}
}

// scenariosRun is a run of three scenarios: shop and chat of sessions,
// plain of single requests.
func scenariosRun(t *testing.T) *result.Result {
	return &result.Result{Scenarios: []result.Scenario{{Name: "shop", Result: shopRun()}, {Name: "chat", Result: chatRun()},
		{Name: "plain", Result: resultOf(t, 10, 200)}}}
}

func TestParseSessionObjectives(t *testing.T) {
	for _, c := range []struct {
		expr, scope, metric, stat string
		threshold                 float64
		share                     bool
	}{
		{"shop:checkout:response.p99<=300ms", "shop:checkout", "response", "p99", 300, false},
		{"shop:checkout:errors<=1%", "shop:checkout", "errors", "rate", 0.01, true},
		{"checkout:send_delay.max<1ms", "checkout", "send_delay", "max", 1, false},
		{"session.p99<=5s", "", "session", "p99", 5000, false},
		{"shop:session.max<=10s", "shop", "session", "max", 10000, false},
		{"sessions_ended_early<=1%", "", "sessions_ended_early", "rate", 0.01, true},
		{"shop:sessions_ended_early.rate<0.05", "shop", "sessions_ended_early", "rate", 0.05, true},
		{"chat:turn2:ttft.p99<=500ms", "chat:turn2", "ttft_response", "p99", 500, false},
		{"chat:turn2:ttft_response.p50<=500ms", "chat:turn2", "ttft_response", "p50", 500, false},
		{"turn2:ttft_service.p99<=200ms", "turn2", "ttft_service", "p99", 200, false},
		{"chat:turn1:tpot.p50<=25ms", "chat:turn1", "tpot", "p50", 25, false},
	} {
		o, err := ParseObjective(c.expr)
		if err != nil || o.Scope != c.scope || o.Metric != c.metric || o.Stat != c.stat || o.Threshold != c.threshold || o.Share != c.share {
			t.Errorf("%s: %+v, %v; want scope %q metric %s.%s %v share %v", c.expr, o, err, c.scope, c.metric, c.stat, c.threshold, c.share)
		}
	}
	for _, c := range []struct{ expr, want string }{
		{"chat:turn2:itl.p99<=1s", "itl is not a figure of a part"},
		{"session<=5s", "session needs a statistic, e.g. session.p99"},
		{"sessions_ended_early<=5s", `value "5s" is not a share`},
		{"shop::response.p99<=1s", ""}, // scope "shop:", refused by CheckScopes
	} {
		_, err := ParseObjective(c.expr)
		if c.want == "" {
			if err != nil {
				t.Errorf("%s: %v", c.expr, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.expr, err, c.want)
		}
	}
}

// TestSessionObjectives: a step of a scenario, a step of a session run's
// own result, a turn's stream figures and the session figures, each
// PASS, FAIL and no data.
func TestSessionObjectives(t *testing.T) {
	ended := func(started, unfinished int64) *result.Result {
		r := shopRun()
		r.Sessions = &result.Sessions{Expected: 5, Started: started, Unfinished: unfinished, EndedAt: []int64{0, 0, 0}}
		return r
	}
	for _, c := range []struct {
		res          *result.Result
		expr         string
		pass, noData bool
		want         string
	}{
		// SCEN:STEP on a run of scenarios.
		{scenariosRun(t), "shop:checkout:response.p99<=300ms", true, false, "shop:checkout:response.p99 <= 300.000 ms: measured 250.000 ms"},
		{scenariosRun(t), "shop:checkout:response.p99<=200ms", false, false, "measured 250.000 ms (breached)"},
		{scenariosRun(t), "shop:checkout:errors<=1%", false, false, "measured 2.08 % (breached)"},
		{scenariosRun(t), "shop:login:errors<=1%", true, false, "measured 0 %"},
		{scenariosRun(t), "shop:chekout:response.p99<=1s", false, true, `no data: scenario "shop" has no step "chekout" (its steps: "login", "browse", "checkout")`},
		{scenariosRun(t), "plain:x:response.p99<=1s", false, true, `no data: scenario "plain" has no steps or targets, so no "x"`},
		// A part of one scenario by its name alone; of two, refused.
		{scenariosRun(t), "login:response.p99<30ms", false, false, "login:response.p99 < 30.000 ms: measured 40.000 ms (breached)"},
		{&result.Result{Scenarios: []result.Scenario{{Name: "a", Result: shopRun()}, {Name: "b", Result: shopRun()}}}, "login:response.p99<1h", false, true,
			`no data: scenarios "a", "b" each have "login": name one as SCENARIO:login`},
		{scenariosRun(t), "shp:checkout:response.p99<=1s", false, true, `no data: the run has no request mix, so no target "shp:checkout"`},
		// A scenario's session figures.
		{scenariosRun(t), "shop:session.p99<=5s", true, false, "shop:session.p99 <= 5000.000 ms: measured 4200.000 ms"},
		{scenariosRun(t), "shop:session.p99<=4s", false, false, "(breached)"},
		{scenariosRun(t), "shop:sessions_ended_early<=10%", true, false, "shop:sessions_ended_early.rate <= 10 %: measured 8.16 %"},
		{scenariosRun(t), "shop:sessions_ended_early<=1%", false, false, "measured 8.16 % (breached)"},
		{scenariosRun(t), "chat:sessions_ended_early<=0%", true, false, "measured 0 %"},
		{scenariosRun(t), "plain:session.p99<=1h", false, true, "no data: the run has no sessions"},
		{scenariosRun(t), "session.p99<=1h", false, true, `no data: the run has no sessions of its own; scenarios "shop", "chat" have theirs: scope the objective to one (shop:…)`},
		{scenariosRun(t), "shop:checkout:session.p99<=1h", false, true, `no data: session is a figure of a scenario's sessions, and "shop:checkout" is a step or target, not a scenario`},
		{scenariosRun(t), "shop:checkout:grpc.unavailable<=1%", false, true, `no data: grpc.unavailable is a figure of a scenario's gRPC calls, and "shop:checkout" is a step or target, not a scenario`},
		// A turn's stream figures.
		{scenariosRun(t), "chat:turn2:ttft.p99<=500ms", false, false, "chat:turn2:ttft_response.p99 <= 500.000 ms: measured 600.000 ms (breached)"},
		{scenariosRun(t), "chat:turn2:ttft_service.p99<=500ms", true, false, "measured 150.000 ms"},
		{scenariosRun(t), "chat:turn1:ttft.p50<=300ms", true, false, "measured 300.000 ms"},
		{scenariosRun(t), "chat:turn1:tpot.p50<=20ms", true, false, "measured 20.000 ms"},
		{scenariosRun(t), "chat:turn2:tpot.p99<30ms", false, false, "measured 31.000 ms (breached)"},
		{scenariosRun(t), "chat:turn3:ttft.p99<=1h", false, true, "no data: no streamed token in 10 answers; 10 answered 200"},
		{scenariosRun(t), "shop:checkout:tpot.p99<=1h", false, true, "no data: no streamed token in 47 answers; 47 answered 200"},
		// A session run's own result: its steps by name.
		{shopRun(), "checkout:response.p99<=300ms", true, false, "checkout:response.p99 <= 300.000 ms: measured 250.000 ms"},
		{shopRun(), "login:response.p99<30ms", false, false, "measured 40.000 ms (breached)"},
		{shopRun(), "nope:response.p99<=1h", false, true, `no data: the run has no step "nope" (its steps: "login", "browse", "checkout")`},
		{shopRun(), "session.p99<=5s", true, false, "measured 4200.000 ms"},
		{shopRun(), "session.max<=4s", false, false, "measured 4800.000 ms (breached)"},
		{shopRun(), "sessions_ended_early<=10%", true, false, "measured 8.16 %"},
		{shopRun(), "checkout:sessions_ended_early<=100%", false, true, "no data: sessions_ended_early is a figure of a scenario's sessions"},
		{chatRun(), "turn1:ttft.p99<=500ms", true, false, "measured 400.000 ms"},
		{chatRun(), "turn3:ttft_service.p99<=1h", false, true, "no data: no streamed token in 10 answers"},
		// Sessions none of which ended, none started, none at all.
		{ended(10, 10), "session.p99<=1h", false, true, "no data: no session ended: 10 started, 10 unfinished when the run ended"},
		{ended(10, 10), "sessions_ended_early<=100%", false, true, "no data: no session ended: 10 started, 10 unfinished when the run ended"},
		{ended(0, 0), "session.p50>=0ms", false, true, "no data: no session started (5 expected)"},
		{resultOf(t, 10, 200), "session.p99<=1h", false, true, "no data: the run has no sessions"},
		{resultOf(t, 10, 200), "sessions_ended_early<=100%", false, true, "no data: the run has no sessions"},
	} {
		o, err := ParseObjective(c.expr)
		if err != nil {
			t.Fatal(err)
		}
		r := Evaluate(c.res, []Objective{o})[0]
		if r.Pass != c.pass || r.NoData != c.noData || !strings.Contains(r.Message, c.want) {
			t.Errorf("%s: pass %v, no data %v, %q; want %v %v %q", c.expr, r.Pass, r.NoData, r.Message, c.pass, c.noData, c.want)
		}
	}
}

// TestCheckScopesSteps: a scenario's steps are names SCEN:STEP; a
// misspelt step of a known scenario is said as one.
func TestCheckScopesSteps(t *testing.T) {
	obj := func(e string) Objective {
		o, err := ParseObjective(e)
		if err != nil {
			t.Fatal(err)
		}
		return o
	}
	names := []string{"shop", "shop:login", "shop:checkout", "plain"}
	ok := []Objective{obj("shop:checkout:response.p99<=300ms"), obj("shop:session.p99<=5s"), obj("plain:errors<=1%"), obj("session.p99<=5s")}
	if err := CheckScopes(ok, names); err != nil {
		t.Errorf("known scopes refused: %v", err)
	}
	for _, c := range []struct{ expr, want string }{
		{"shop:chekout:response.p99<=300ms", `objective "shop:chekout:response.p99<=300ms": scenario "shop" has no step "chekout" (its steps: "login", "checkout")`},
		{"plain:x:response.p99<=300ms", `objective "plain:x:response.p99<=300ms": no target or scenario named "plain:x" (known: "shop", "shop:login", "shop:checkout", "plain")`},
		{"shp:checkout:errors<=1%", `objective "shp:checkout:errors<=1%": no target or scenario named "shp:checkout" (known: "shop", "shop:login", "shop:checkout", "plain")`},
	} {
		if err := CheckScopes([]Objective{obj(c.expr)}, names); err == nil || err.Error() != c.want {
			t.Errorf("got %v\nwant %s", err, c.want)
		}
	}
}
