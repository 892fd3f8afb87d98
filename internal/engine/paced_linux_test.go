//go:build linux

package engine

import (
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/openload/openload/schedule"
)

// paced's rule: a sleep of a 1/pacedShare of a slot's time in use, at
// most batchSleep (minSleep on the HTTP/2 loop, which is not bounded);
// none when that is under batchSleepMin or would gather fewer than
// pacedResponses responses.
func TestPaced(t *testing.T) {
	const now = time.Second
	for _, tc := range []struct {
		held  time.Duration
		inUse int
		want  time.Duration // the sleep; 0: never
	}{
		{held: 4 * time.Millisecond, inUse: 128, want: minSleep},                 // held/8 = 500 µs, capped
		{held: time.Millisecond, inUse: 64, want: time.Millisecond / pacedShare}, // 125 µs, 8 responses
		{held: 2500 * time.Microsecond, inUse: 8},                                // 300 µs gathers 0.96
		{held: 300 * time.Microsecond, inUse: 256},                               // 37.5 µs: under batchSleepMin
		{held: 0, inUse: 64}, // nothing freed yet
	} {
		a := loopArrivals{gap: minSleep, held: tc.held}
		want := never
		if tc.want > 0 {
			want = now + tc.want
		}
		if got := a.paced(now, tc.inUse); got != want {
			t.Errorf("held %v, %d in use: paced %v, want %v", tc.held, tc.inUse, got-now, want-now)
		}
	}
}

// At its in-flight limit a loop on the beat stays there, paced: the
// arrivals beyond 256 slots that each answer after 20 ms wait, and the
// loop takes the responses in at its paced wakes; with 8 slots a sleep
// would gather fewer than pacedResponses and it wakes for each response.
// Either way every request ends completed. The rule holds while a slot's
// time in use stays under 38 ms with 256 (256 × minSleep ≥ 2 × held), so
// a loaded machine that slows the server's sleep does not change which
// way the test goes. Both loops. Not parallel: it sets testPaced.
func TestPacedAtLimit(t *testing.T) {
	const hold = 20 * time.Millisecond
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { time.Sleep(hold) }))
	srv.Config.Protocols = new(http.Protocols)
	srv.Config.Protocols.SetHTTP1(true)
	srv.Config.Protocols.SetUnencryptedHTTP2(true)
	srv.Start()
	defer srv.Close()
	var sleeps atomic.Int64
	testPaced = func() { sleeps.Add(1) }
	defer func() { testPaced = nil }()
	for _, tc := range []struct {
		name  string
		cfg   Config
		rate  float64
		dur   time.Duration
		paced bool
	}{
		// 256 slots of 20 ms hold 12,800/s: 2,000 arrivals at 20,000/s wait.
		{"http1", Config{Lean: true, Epoll: true, Connections: 256}, 20000, 100 * time.Millisecond, true},
		{"h2c", Config{Protocol: H2C, Epoll: true, Connections: 256}, 20000, 100 * time.Millisecond, true},
		// 8 slots hold 400/s: 50 arrivals at 1,000/s wait.
		{"http1-8", Config{Lean: true, Epoll: true, Connections: 8}, 1000, 50 * time.Millisecond, false},
		{"h2c-8", Config{Protocol: H2C, Epoll: true, Connections: 8}, 1000, 50 * time.Millisecond, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sleeps.Store(0)
			s := schedule.NewConstant(tc.rate, tc.dur)
			want := int64(tc.rate * tc.dur.Seconds())
			rec, stats := runAgainst(t, srv.URL, tc.cfg, s)
			if stats.Client != ClientEpoll {
				t.Fatalf("client %q, want the event loop", stats.Client)
			}
			if c := checkIdentity(t, rec, want); c.Completed != want {
				t.Errorf("counts %+v: want %d completed", c, want)
			}
			if stats.LimitWaited == 0 {
				t.Errorf("no arrival waited for the limit of %d: the test proves nothing", tc.cfg.Connections)
			}
			n := sleeps.Load()
			t.Logf("%d arrivals waited for the limit; %d paced sleeps", stats.LimitWaited, n)
			if tc.paced && n == 0 {
				t.Errorf("no paced sleep at the limit of %d", tc.cfg.Connections)
			}
			if !tc.paced && n > 0 {
				t.Errorf("%d paced sleeps at the limit of %d, where a sleep gathers under %d responses", n, tc.cfg.Connections, pacedResponses)
			}
		})
	}
}
