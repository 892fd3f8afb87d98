package engine

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/openload/openload/internal/rawtcp"
	"github.com/openload/openload/internal/recorder"
	"github.com/openload/openload/internal/retry"
	"github.com/openload/openload/schedule"
)

// heldServer answers the first n requests it receives with first, holding
// each until all n have arrived (or 5 s passed), and every later request
// with then. Holding makes the test independent of timing: no answer, so no
// retry, can leave before every first attempt has been received, so the
// first n requests are exactly the first attempts.
func heldServer(n int64, first, then int) *httptest.Server {
	var count atomic.Int64
	all := make(chan struct{})
	var once sync.Once
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		k := count.Add(1)
		if k > n {
			w.WriteHeader(then)
			return
		}
		if k == n {
			once.Do(func() { close(all) })
		}
		select {
		case <-all:
		case <-time.After(5 * time.Second):
		}
		w.WriteHeader(first)
	}))
}

// runRetry runs s against url with a per-request log and returns the
// recorder and the log's entries.
func runRetry(t *testing.T, url string, cfg Config, s schedule.Schedule) (*recorder.Recorder, []recorder.LogEntry) {
	t.Helper()
	cfg.URL = mustURL(t, url)
	cfg.Method = http.MethodGet
	if cfg.Connections == 0 {
		cfg.Connections = 32
	}
	cfg.Timeout = 10 * time.Second
	if cfg.Drain == 0 {
		cfg.Drain = 10 * time.Second
	}
	var buf bytes.Buffer
	lw := recorder.NewLogWriter(&buf)
	rec := recorder.New(lw)
	if _, err := Run(context.Background(), cfg, s, rec); err != nil {
		t.Fatal(err)
	}
	if err := lw.Flush(); err != nil {
		t.Fatal(err)
	}
	return rec, logEntries(t, buf.Bytes())
}

func on429(t *testing.T) retry.On {
	on, err := retry.ParseOn("429")
	if err != nil {
		t.Fatal(err)
	}
	return on
}

// TestRetryKeepsTheOriginalSchedule: 10 requests; the server answers each
// first attempt 429 and each retry 200. One retry after exactly 150 ms
// (no jitter). Every request is one request: scheduled 10, completed 10
// with 200, 10 first attempts, 10 retries sent, none refused; every attempt
// counted (10 × 429, 10 × 200). Each response time runs from the original
// schedule to the retry's done, so it is at least the backoff, and
// response = send delay + retry delay + service with retry delay ≥ backoff.
func TestRetryKeepsTheOriginalSchedule(t *testing.T) {
	forClients(t, openClients, func(t *testing.T, cl clientCase) {
		const n, backoff = 10, 150 * time.Millisecond
		srv := heldServer(n, http.StatusTooManyRequests, http.StatusOK)
		defer srv.Close()
		cfg := Config{Lean: cl.lean, Epoll: cl.epoll, Retry: retry.Policy{On: on429(t), Retries: 1, Backoff: backoff, Jitter: retry.JitterNone,
			Budget: 1, MinPerSec: 100, Window: time.Second}}
		rec, entries := runRetry(t, srv.URL, cfg, schedule.NewConstant(100, 100*time.Millisecond))
		c := checkIdentity(t, rec, n)
		if c.Completed != n || rec.StatusCodes()[200] != n || len(rec.StatusCodes()) != 1 {
			t.Errorf("final outcomes %+v, statuses %v; want %d completed with 200", c, rec.StatusCodes(), n)
		}
		rc := rec.RetryCounts()
		if rc.FirstAttempts != n || rc.RetriesSent != n || rc.RefusedByBudget != 0 || rc.Exhausted != 0 || rc.Retried != n {
			t.Errorf("retry counts %+v, want %d first attempts, %d retries sent, none refused or exhausted", rc, n, n)
		}
		if rc.AttemptStatus["429"] != n || rc.AttemptStatus["200"] != n {
			t.Errorf("attempt statuses %v, want 429 ×%d and 200 ×%d", rc.AttemptStatus, n, n)
		}
		var limited, retries int64
		for _, s := range rec.Timeline() {
			limited += s.RateLimited
			retries += s.Retries
		}
		if limited != n || retries != n {
			t.Errorf("timeline: %d 429s and %d retries, want %d each", limited, retries, n)
		}
		if min := time.Duration(rec.Response.Min()) * time.Microsecond; min < backoff {
			t.Errorf("smallest response time %v < the backoff %v: not measured from the original schedule", min, backoff)
		}
		if len(entries) != n {
			t.Fatalf("%d log entries", len(entries))
		}
		for _, e := range entries {
			if e.Attempts != 2 || e.Status != 200 || !e.WasSent {
				t.Errorf("log entry %+v, want 2 attempts ending in 200", e)
			}
		}
	})
}

// TestRetryRecordTimes checks one retried record's timestamps exactly, as
// the recorder sees them: the first attempt's sent, the final done, the
// earlier attempt kept, and the three figures plus the retry delay adding
// up.
func TestRetryRecordTimes(t *testing.T) {
	forClients(t, openClients, func(t *testing.T, cl clientCase) {
		const backoff = 100 * time.Millisecond
		srv := heldServer(1, http.StatusTooManyRequests, http.StatusOK)
		defer srv.Close()
		cfg := Config{Lean: cl.lean, Epoll: cl.epoll, URL: mustURL(t, srv.URL), Method: http.MethodGet, Connections: 2, Timeout: 10 * time.Second, Drain: 10 * time.Second,
			Retry: retry.Policy{On: on429(t), Retries: 3, Backoff: backoff, Jitter: retry.JitterNone, Budget: 0.5, MinPerSec: 1, Window: time.Second}}
		rec := recorder.New(nil)
		g := &generator{cfg: cfg, drain: context.Background()}
		defer g.connect()()
		g.start = time.Now()
		if err := cfg.Validate(); err != nil {
			t.Fatal(err)
		}
		g.retry = newRetrier(cfg.Retry, g.since)
		r := g.newWorker().attempt(item{seq: 7, off: 0})
		if err := rec.Add(&r); err != nil {
			t.Fatal(err)
		}
		if r.Seq != 7 || r.Status != 200 || r.Outcome != recorder.Completed || r.Attempts != 2 || len(r.Earlier) != 1 {
			t.Fatalf("record %+v", r)
		}
		a := r.Earlier[0]
		switch {
		case a.Status != 429 || a.Sent != r.Sent:
			t.Errorf("earlier attempt %+v, record sent %v: the first attempt's sent must be the record's", a, r.Sent)
		case r.LastSent < a.Done+backoff:
			t.Errorf("retry sent at %v, before the first answer (%v) + backoff", r.LastSent, a.Done)
		case r.RetryDelay() != r.LastSent-r.Sent || r.Service() != r.Done-r.LastSent:
			t.Errorf("retry delay %v, service %v", r.RetryDelay(), r.Service())
		case r.Response() != r.SendDelay()+r.RetryDelay()+r.Service():
			t.Errorf("response %v ≠ send delay %v + retry delay %v + service %v", r.Response(), r.SendDelay(), r.RetryDelay(), r.Service())
		case r.Response() < backoff:
			t.Errorf("response %v < backoff", r.Response())
		}
	})
}

// TestRetryBudgetRefuses: every attempt is answered 429; 10 requests, up
// to 3 retries each, budget 0 + 0.5/s over 4 s windows, i.e. 2 retries a
// window. Exactly 2 retries can be granted (the retries are decided within
// moments of each other, far less than 4 s), so 8
// requests end with a refusal after their first attempt, and the 2 granted
// ones are refused their second retry: 10 refusals, 0 exhausted.
func TestRetryBudgetRefuses(t *testing.T) {
	forClients(t, openClients, func(t *testing.T, cl clientCase) {
		const n = 10
		srv := heldServer(n, http.StatusTooManyRequests, http.StatusTooManyRequests)
		defer srv.Close()
		cfg := Config{Lean: cl.lean, Epoll: cl.epoll, Retry: retry.Policy{On: on429(t), Retries: 3, Backoff: 0, Budget: 0, MinPerSec: 0.5, Window: 4 * time.Second}}
		rec, entries := runRetry(t, srv.URL, cfg, schedule.NewConstant(100, 100*time.Millisecond))
		c := checkIdentity(t, rec, n)
		rc := rec.RetryCounts()
		if c.Completed != n || rc.RetriesSent != 2 || rc.RefusedByBudget != n || rc.Exhausted != 0 || rc.AttemptStatus["429"] != n+2 {
			t.Errorf("counts %+v, retries %+v; want 2 retries sent, %d refused", c, rc, n)
		}
		attempts := 0
		for _, e := range entries {
			attempts += e.Attempts
		}
		if attempts != n+2 {
			t.Errorf("log: %d attempts, want %d", attempts, n+2)
		}
	})
}

// TestRetryExhausted: every attempt fails with 503; up to 2 retries, no
// backoff, a budget that never binds. Each request makes 3 attempts and
// ends with its last 503, exhausted.
func TestRetryExhausted(t *testing.T) {
	forClients(t, openClients, func(t *testing.T, cl clientCase) {
		const n = 5
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusServiceUnavailable)
		}))
		defer srv.Close()
		on, err := retry.ParseOn("429,503")
		if err != nil {
			t.Fatal(err)
		}
		cfg := Config{Lean: cl.lean, Epoll: cl.epoll, Retry: retry.Policy{On: on, Retries: 2, Budget: 1, MinPerSec: 100, Window: time.Second}}
		rec, entries := runRetry(t, srv.URL, cfg, schedule.NewConstant(50, 100*time.Millisecond))
		c := checkIdentity(t, rec, n)
		rc := rec.RetryCounts()
		if c.Completed != n || rec.StatusCodes()[503] != n || rc.RetriesSent != 2*n || rc.Exhausted != n || rc.RefusedByBudget != 0 || rc.AttemptStatus["503"] != 3*n {
			t.Errorf("counts %+v statuses %v retries %+v", c, rec.StatusCodes(), rc)
		}
		for _, e := range entries {
			if e.Attempts != 3 {
				t.Errorf("entry %+v: want 3 attempts", e)
			}
		}
	})
}

// TestRetryOnRefused: error kinds are retried too. The target refuses
// every connection; one retry each.
func TestRetryOnRefused(t *testing.T) {
	forClients(t, openClients, func(t *testing.T, cl clientCase) {
		addr, release, err := rawtcp.RefusedAddr()
		if err != nil {
			t.Fatal(err)
		}
		defer release()
		url := "http://" + addr
		on, err := retry.ParseOn("refused")
		if err != nil {
			t.Fatal(err)
		}
		cfg := Config{Lean: cl.lean, Epoll: cl.epoll, Retry: retry.Policy{On: on, Retries: 1, Budget: 1, MinPerSec: 100, Window: time.Second}}
		rec, _ := runRetry(t, url, cfg, schedule.NewConstant(50, 100*time.Millisecond))
		c := checkIdentity(t, rec, 5)
		rc := rec.RetryCounts()
		if c.Errors != 5 || rc.RetriesSent != 5 || rc.Exhausted != 5 || rc.AttemptErrors["refused"] != 10 {
			t.Errorf("counts %+v retries %+v", c, rc)
		}
	})
}

// TestRetryDrainDuringBackoff: the drain (100 ms) expires while every
// request waits out a 1 h backoff: each is unfinished, with its one attempt
// kept, and the run ends at the drain, not after the backoff.
func TestRetryDrainDuringBackoff(t *testing.T) {
	forClients(t, openClients, func(t *testing.T, cl clientCase) {
		const n = 4
		srv := heldServer(n, http.StatusTooManyRequests, http.StatusOK)
		defer srv.Close()
		cfg := Config{Lean: cl.lean, Epoll: cl.epoll, Drain: 100 * time.Millisecond,
			Retry: retry.Policy{On: on429(t), Retries: 1, Backoff: time.Hour, Jitter: retry.JitterNone, Budget: 1, MinPerSec: 100, Window: time.Second}}
		rec, entries := runRetry(t, srv.URL, cfg, schedule.NewConstant(100, 40*time.Millisecond))
		c := checkIdentity(t, rec, n)
		rc := rec.RetryCounts()
		if c.Unfinished != n || rc.RetriesSent != 0 || rc.Retried != n || rc.AttemptStatus["429"] != n {
			t.Errorf("counts %+v retries %+v", c, rc)
		}
		for _, e := range entries {
			if e.Attempts != 1 || e.Error != "unfinished" || !e.WasSent {
				t.Errorf("entry %+v", e)
			}
		}
	})
}
