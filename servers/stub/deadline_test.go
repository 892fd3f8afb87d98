package stub

import (
	"context"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"
)

func TestCheckDwell(t *testing.T) {
	const T = 100 * time.Millisecond
	now := time.Unix(1_700_000_000, 500)
	at := func(d time.Duration) stamp { return stamp{at: now.Add(-d)} } // arrived d before now
	cases := []struct {
		name     string
		arr      stamp
		deadline time.Duration
		dwell    time.Duration
		pass     bool
		reason   DropReason
	}{
		{"T-1ns passes", at(T - 1), T, T - 1, true, ""},
		{"exactly T passes", at(T), T, T, true, ""},
		{"T+1ns is late", at(T + 1), T, T + 1, false, DropLate},
		{"zero dwell passes", at(0), T, 0, true, ""},
		{"long ago is late", at(time.Hour), T, time.Hour, false, DropLate},
		// Negative dwell drops: clamping it to 0 would pass it.
		{"1ns in the future drops", at(-1), T, -1, false, DropFutureStamp},
		{"future drops even with a huge deadline", at(-time.Second), time.Hour, -time.Second, false, DropFutureStamp},
		{"missing stamp drops", stamp{invalid: DropNoStamp}, T, 0, false, DropNoStamp},
		{"garbled stamp drops", stamp{invalid: DropBadStamp}, T, 0, false, DropBadStamp},
		{"invalid wins over a valid-looking time", stamp{at: now, invalid: DropBadStamp}, T, 0, false, DropBadStamp},
		// time.Time.Sub saturates instead of wrapping around.
		{"epoch+1ns is late", stamp{at: time.Unix(0, 1)}, T, now.Sub(time.Unix(0, 1)), false, DropLate},
		{"far future drops", stamp{at: time.Unix(1<<40, 0)}, time.Duration(1<<63 - 1), time.Duration(-1 << 63), false, DropFutureStamp},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dwell, pass, reason := checkDwell(now, tc.arr, tc.deadline)
			if dwell != tc.dwell || pass != tc.pass || reason != tc.reason {
				t.Errorf("checkDwell = (%v, %v, %q), want (%v, %v, %q)", dwell, pass, reason, tc.dwell, tc.pass, tc.reason)
			}
		})
	}
}

func TestReadStamp(t *testing.T) {
	const name = "X-Arrival-Ns"
	cases := []struct {
		name    string
		values  []string // nil = header absent
		at      int64    // Unix ns when valid
		invalid DropReason
	}{
		{"valid", []string{"1700000000123456789"}, 1700000000123456789, ""},
		{"valid small", []string{"1"}, 1, ""},
		{"absent", nil, 0, DropNoStamp},
		{"empty", []string{""}, 0, DropNoStamp},
		{"letters", []string{"abc"}, 0, DropBadStamp},
		{"decimal point", []string{"1700000000.5"}, 0, DropBadStamp},
		{"plus sign", []string{"+1700000000123456789"}, 0, DropBadStamp},
		{"negative", []string{"-5"}, 0, DropBadStamp},
		{"zero", []string{"0"}, 0, DropBadStamp},
		{"space", []string{" 1700000000123456789"}, 0, DropBadStamp},
		{"overflows int64", []string{"99999999999999999999"}, 0, DropBadStamp},
		{"RFC 3339 instead of ns", []string{"2023-11-14T22:13:20Z"}, 0, DropBadStamp},
		{"two values", []string{"1", "2"}, 0, DropBadStamp},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := http.Header{}
			if tc.values != nil {
				h[name] = tc.values
			}
			got := readStamp(h, name)
			if got.invalid != tc.invalid {
				t.Fatalf("readStamp(%q).invalid = %q, want %q", tc.values, got.invalid, tc.invalid)
			}
			if tc.invalid == "" && !got.at.Equal(time.Unix(0, tc.at)) {
				t.Errorf("readStamp(%q).at = %v, want %v", tc.values, got.at, time.Unix(0, tc.at))
			}
		})
	}
}

func TestParseArrivalStamp(t *testing.T) {
	for in, want := range map[string]string{
		"receive":                   "",
		"header:x-arrival-ns":       "X-Arrival-Ns",
		"header:X-Request-Start-Ns": "X-Request-Start-Ns",
	} {
		if got, err := parseArrivalStamp(in); err != nil || got != want {
			t.Errorf("parseArrivalStamp(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}

// The gate's clock: the receive source keeps the monotonic reading and
// ignores the skew; a header source uses the wall clock shifted by it.
func TestDeadlineGateClock(t *testing.T) {
	t0 := time.Now() // has a monotonic reading
	recv := newDeadlineGate(testConfig(func(c *Config) { c.ClockSkew = time.Hour }))
	if got := recv.clock(t0); got != t0 {
		t.Errorf("receive clock(%v) = %v, want it unchanged", t0, got)
	}
	hdr := newDeadlineGate(testConfig(func(c *Config) {
		c.ArrivalStamp, c.ClockSkew = "header:x-arrival-ns", -5*time.Millisecond
	}))
	if hdr.header != "X-Arrival-Ns" {
		t.Fatalf("header = %q", hdr.header)
	}
	got := hdr.clock(t0)
	if want := t0.Round(0).Add(-5 * time.Millisecond); got != want {
		t.Errorf("header clock(%v) = %v, want %v", t0, got, want)
	}
	// A request stamped at t0 by a clock 5ms ahead of the stub's is in the
	// stub's future: dropped, not clamped.
	if _, pass, reason := checkDwell(got, stamp{at: time.Unix(0, t0.UnixNano())}, time.Second); pass || reason != DropFutureStamp {
		t.Errorf("skewed stamp: pass %v reason %q, want future-stamp", pass, reason)
	}
}

func stampHeader(t time.Time) http.Header {
	return http.Header{"X-Arrival-Ns": {strconv.FormatInt(t.UnixNano(), 10)}}
}

// The wire contract of a dropped answer, for every drop reason, and of an
// answer that passes.
func TestDeadlineContract(t *testing.T) {
	for _, status := range []int{http.StatusServiceUnavailable, http.StatusNoContent} {
		t.Run(strconv.Itoa(status), func(t *testing.T) {
			cfg := testConfig(func(c *Config) {
				c.Latency = 0
				// A minute: the pass case below only needs the request to
				// take less than that (the client gives up after 15s).
				c.Deadline, c.DeadlineStatus = time.Minute, status
				c.ArrivalStamp = "header:X-Arrival-Ns"
			})
			s := startServer(t, cfg, nil)
			c := newClient(t)
			send := func(h http.Header) result {
				r := doHeader(context.Background(), c, http.MethodPost, s.URL+"/predict", h)
				if r.err != nil {
					t.Fatal(r.err)
				}
				return r
			}
			now := time.Now()
			drops := []struct {
				name     string
				h        http.Header
				drop     DropReason
				hasDwell bool
			}{
				{"an hour old", stampHeader(now.Add(-time.Hour)), DropLate, true},
				{"no stamp", nil, DropNoStamp, false},
				{"garbled", http.Header{"X-Arrival-Ns": {"yesterday"}}, DropBadStamp, false},
				{"from the future", stampHeader(now.Add(time.Hour)), DropFutureStamp, true},
			}
			for _, d := range drops {
				r := send(d.h)
				if r.status != status || r.source != "deadline" || r.reason != "deadline" || r.header.Get("X-Stub-Drop") != string(d.drop) {
					t.Errorf("%s: got %d source %q reason %q drop %q, want %d deadline deadline %s",
						d.name, r.status, r.source, r.reason, r.header.Get("X-Stub-Drop"), status, d.drop)
				}
				if len(r.body) != 0 {
					t.Errorf("%s: dropped answer has a body: %q", d.name, r.body)
				}
				if r.header.Get("Retry-After") != "" || r.header.Get("Content-Type") != "" {
					t.Errorf("%s: unexpected headers %v", d.name, r.header)
				}
				dwell, ok := r.timing["dwell"]
				if ok != d.hasDwell {
					t.Errorf("%s: Server-Timing %q: dwell present %v, want %v", d.name, r.header.Get("Server-Timing"), ok, d.hasDwell)
				}
				switch d.drop {
				case DropLate:
					if dwell < ms(time.Hour) {
						t.Errorf("%s: dwell %.3fms, want >= 1h", d.name, dwell)
					}
				case DropFutureStamp:
					if dwell >= 0 {
						t.Errorf("%s: dwell %.3fms, want negative", d.name, dwell)
					}
				}
			}

			r := send(stampHeader(time.Now()))
			if r.status != 200 || r.source != "model" || r.reason != "served" || r.header.Get("X-Stub-Drop") != "" || len(r.body) == 0 {
				t.Fatalf("fresh stamp: %d %q %q drop %q body %q, want 200 model served", r.status, r.source, r.reason, r.header.Get("X-Stub-Drop"), r.body)
			}
			if dwell, ok := r.timing["dwell"]; !ok || dwell < 0 {
				t.Errorf("fresh stamp: Server-Timing %q, want dwell >= 0", r.header.Get("Server-Timing"))
			}

			st := s.Stats()
			checkAccounting(t, st)
			d := st.Deadline
			want := DropCounts{Late: 1, NoStamp: 1, BadStamp: 1, FutureStamp: 1, Total: 4}
			if d.Dropped != want || d.Sent != 1 || d.DeadlineMs != 60000 || d.Status != status ||
				d.ArrivalStamp != "header:X-Arrival-Ns" || d.Position != PositionLast {
				t.Errorf("deadline stats %+v", d)
			}
			if d.MaxDwellSentMs < 0 || d.MaxDwellSentMs > d.DeadlineMs {
				t.Errorf("max_dwell_sent_ms %v outside [0, %v]", d.MaxDwellSentMs, d.DeadlineMs)
			}
			if st.Sources.Model != 1 || st.TotalTime.Count != 5 {
				t.Errorf("sources %+v, total_ms count %d; want 1 model answer and 5 answers timed", st.Sources, st.TotalTime.Count)
			}
		})
	}
}

// --clock-skew moves the stub's clock against a header stamp, and does not
// apply to the receive source.
func TestDeadlineClockSkew(t *testing.T) {
	cases := []struct {
		name    string
		arrival string
		skew    time.Duration
		drop    DropReason // "" = passes
	}{
		{"stub behind the stamping clock", "header:X-Arrival-Ns", -time.Hour, DropFutureStamp},
		{"stub ahead of the stamping clock", "header:X-Arrival-Ns", time.Hour, DropLate},
		{"receive ignores skew", ArrivalReceive, time.Hour, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, err := NewUnstartedServer(testConfig(func(c *Config) {
				c.Latency, c.Deadline, c.ArrivalStamp, c.ClockSkew = 0, time.Minute, tc.arrival, tc.skew
			}))
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			req := httptest.NewRequest(http.MethodPost, "/predict", nil)
			req.Header = stampHeader(time.Now())
			rec := httptest.NewRecorder()
			s.Handler().ServeHTTP(rec, req)
			if got := rec.Header().Get("X-Stub-Drop"); got != string(tc.drop) {
				t.Errorf("X-Stub-Drop = %q, want %q (status %d)", got, tc.drop, rec.Code)
			}
			if tc.drop == "" && rec.Code != 200 {
				t.Errorf("status %d, want 200", rec.Code)
			}
		})
	}
}

// The gate's position is the contract: checked last, an answer held by a
// stall past the deadline is dropped; checked before the stall, the same
// answer passes and leaves late. Both assertions are lower bounds on time:
// the stall holds the answer at least stallFor after it arrived.
func TestDeadlinePosition(t *testing.T) {
	const deadline, stallFor = 50 * time.Millisecond, 200 * time.Millisecond
	run := func(pos DeadlinePosition) (writeEvent, Stats) {
		s, err := NewUnstartedServer(testConfig(func(c *Config) {
			c.Latency, c.Policy = 0, PolicyNone
			c.StallAt, c.StallFor = 0, stallFor // from the first request on
			c.Deadline, c.DeadlinePosition = deadline, pos
		}))
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		var ev writeEvent
		s.writeHook = func(e writeEvent) { ev = e }
		s.Handler().ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodPost, "/predict", nil))
		return ev, s.Stats()
	}

	ev, st := run(PositionLast)
	if ev.payload || ev.status != 503 || ev.drop != DropLate || ev.dwell < stallFor {
		t.Errorf("last: %+v, want a late drop with dwell >= %v", ev, stallFor)
	}
	if st.Deadline.Dropped.Late != 1 || st.Deadline.Sent != 0 {
		t.Errorf("last: deadline stats %+v", st.Deadline)
	}

	// The misplaced gate checks right after the model call (latency 0), so
	// it passes the answer unless the machine took over 50ms to get there;
	// then the demonstration is inconclusive, and it is tried again.
	for attempt := 1; ; attempt++ {
		ev, st = run(PositionBeforeStall)
		if !ev.payload && attempt < 5 {
			t.Logf("attempt %d: the misplaced gate dropped the answer (%+v); slow machine, trying again", attempt, ev)
			continue
		}
		break
	}
	if !ev.payload || ev.status != 200 || ev.dwell < stallFor {
		t.Fatalf("before-stall: %+v, want the answer sent with dwell >= %v", ev, stallFor)
	}
	if st.Deadline.Sent != 1 || st.Deadline.MaxDwellSentMs < ms(stallFor) || st.Deadline.MaxDwellSentMs <= st.Deadline.DeadlineMs {
		t.Errorf("before-stall: deadline stats %+v, want max_dwell_sent_ms above the deadline", st.Deadline)
	}
}

// Property: whatever the model latencies, stalls, queue policies, clock
// skews and stamps, no answer is ever written with a payload and a dwell
// time above the deadline; every answer without one is a drop with the
// configured status. Checked on the server's own record of every write.
func TestDeadlineNeverSendsLate(t *testing.T) {
	const rounds, perRound = 8, 50
	rng := rand.New(rand.NewPCG(7, 7))
	dur := func(lo, hi time.Duration) time.Duration { return lo + time.Duration(rng.Int64N(int64(hi-lo)+1)) }
	var totalLate, totalSent int64
	for round := range rounds {
		cfg := testConfig(func(c *Config) {
			c.Workers = 1 + rng.IntN(3)
			c.Policy = Policies[rng.IntN(len(Policies))]
			c.QueueCap = 1 + rng.IntN(4)
			c.Estimator, c.WaitBudget = EstimatorBelieved, dur(time.Millisecond, 10*time.Millisecond)
			c.MaxQueueWait = dur(time.Millisecond, 10*time.Millisecond)
			c.StallAt, c.StallFor = dur(0, 5*time.Millisecond), dur(time.Millisecond, 5*time.Millisecond)
			c.StallEvery = c.StallFor + dur(time.Millisecond, 15*time.Millisecond)
			c.Deadline = dur(time.Millisecond, 8*time.Millisecond)
			if round == 0 {
				// A deadline no request comes near, so that sends are
				// certainly exercised.
				c.Deadline = time.Minute
			}
			c.DeadlineStatus = []int{503, 204}[rng.IntN(2)]
			if rng.IntN(2) == 0 {
				c.ArrivalStamp = "header:X-Arrival-Ns"
				c.ClockSkew = dur(-3*time.Millisecond, 3*time.Millisecond)
			}
			if rng.IntN(3) == 0 {
				c.LimitRPS, c.LimitShards, c.LimitWindow = 2000, 1+rng.IntN(4), 10*time.Millisecond
			}
		})
		latencies := make([]time.Duration, perRound) // the model latency of each request
		stamps := make([]time.Duration, perRound)    // how long before its send a request was stamped
		for i := range perRound {
			latencies[i] = dur(0, 3*cfg.Deadline)
			stamps[i] = dur(-time.Millisecond, cfg.Deadline+time.Millisecond)
			if cfg.Deadline == time.Minute {
				latencies[i], stamps[i] = dur(0, 3*time.Millisecond), dur(-time.Millisecond, 3*time.Millisecond)
			}
		}

		s, err := NewUnstartedServer(cfg)
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		var mu sync.Mutex
		var events []writeEvent
		s.writeHook = func(e writeEvent) {
			mu.Lock()
			events = append(events, e)
			mu.Unlock()
		}
		s.callHook = func(_ context.Context, r *http.Request) bool {
			i, _ := strconv.Atoi(r.Header.Get("X-Test-N"))
			time.Sleep(latencies[i])
			return true
		}
		kinds := make([]int, perRound)
		for i := range perRound {
			kinds[i] = rng.IntN(20) // 0: no stamp, 1: garbled, else stamped
		}
		var wg sync.WaitGroup
		recs := make([]*httptest.ResponseRecorder, perRound)
		for i := range perRound {
			recs[i] = httptest.NewRecorder()
			req := httptest.NewRequest(http.MethodPost, "/predict", nil)
			req.Header.Set("X-Test-N", strconv.Itoa(i))
			switch kinds[i] {
			case 0:
			case 1:
				req.Header.Set("X-Arrival-Ns", "12:00")
			default:
				req.Header.Set("X-Arrival-Ns", strconv.FormatInt(time.Now().Add(-stamps[i]).UnixNano(), 10))
			}
			wg.Go(func() { s.Handler().ServeHTTP(recs[i], req) })
			if i%5 == 4 {
				time.Sleep(time.Millisecond) // spread arrivals over stalls and windows
			}
		}
		wg.Wait()
		s.Close()

		st := s.Stats()
		checkAccounting(t, st)
		if len(events) != perRound {
			t.Fatalf("round %d: %d writes observed for %d requests", round, len(events), perRound)
		}
		var bad []writeEvent
		for _, e := range events {
			switch {
			case e.payload:
				if !e.hasDwell || e.dwell < 0 || e.dwell > cfg.Deadline || e.drop != "" || (e.status != 200 && e.status != 429) {
					bad = append(bad, e)
				}
				totalSent++
			default:
				if e.status != cfg.DeadlineStatus || e.source != SourceDeadline || e.drop == "" {
					bad = append(bad, e)
				}
				if e.drop == DropLate {
					totalLate++
				}
			}
		}
		if len(bad) > 0 {
			t.Errorf("round %d, deadline %v, status %d: %d of %d writes break the contract, first %+v\nconfig %+v",
				round, cfg.Deadline, cfg.DeadlineStatus, len(bad), len(events), bad[0], cfg)
		}
		for i, rec := range recs {
			if rec.Code == 200 || rec.Code == 429 {
				if rec.Body.Len() == 0 {
					t.Errorf("round %d request %d: %d without a body", round, i, rec.Code)
				}
			} else if rec.Code != cfg.DeadlineStatus || rec.Body.Len() != 0 {
				t.Errorf("round %d request %d: %d with %d body bytes", round, i, rec.Code, rec.Body.Len())
			}
		}
		if st.Deadline.MaxDwellSentMs > ms(cfg.Deadline) {
			t.Errorf("round %d: max_dwell_sent_ms %v > deadline %v", round, st.Deadline.MaxDwellSentMs, cfg.Deadline)
		}
		t.Logf("round %d: workers %d policy %s deadline %v stamp %s skew %v limiter %d/%d: sent %d dropped %+v",
			round, cfg.Workers, cfg.Policy, cfg.Deadline, cfg.ArrivalStamp, cfg.ClockSkew, cfg.LimitRPS, cfg.LimitShards,
			st.Deadline.Sent, st.Deadline.Dropped)
	}
	// Not vacuous: model latencies up to 3× the deadline make late drops
	// certain, and the first round's minute-long deadline makes sends certain.
	if totalLate == 0 || totalSent == 0 {
		t.Errorf("late drops %d, sends %d: the property was not exercised", totalLate, totalSent)
	}
}
