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

	"github.com/openload/openload/internal/recorder"
)

func runClosed(t *testing.T, rawURL string, cfg Config, cl Closed, rec *recorder.Recorder) Stats {
	t.Helper()
	cfg.URL = mustURL(t, rawURL)
	if cfg.Method == "" {
		cfg.Method = http.MethodGet
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = 5 * time.Second
	}
	if cfg.Drain == 0 {
		cfg.Drain = 2 * time.Second
	}
	stats, err := RunClosed(context.Background(), cfg, cl, rec)
	if err != nil {
		t.Fatal(err)
	}
	return stats
}

// logEntries reads back a per-request log.
func logEntries(t *testing.T, b []byte) []recorder.LogEntry {
	t.Helper()
	lr := recorder.NewLogReader(bytes.NewReader(b), "log")
	var out []recorder.LogEntry
	for lr.Scan() {
		out = append(out, lr.Entry())
	}
	if lr.Err() != nil {
		t.Fatal(lr.Err())
	}
	return out
}

// TestClosedPacedSkipsMissedSlots: one user paced to 100/s for 1 s, and a
// server that holds the 11th request (slot 10, due at 100 ms) for 250 ms.
// The user is busy from 100 ms to at least 350 ms, so the slots due at
// 110 … 340 ms (24 of them) are never sent, and none is caught up later.
func TestClosedPacedSkipsMissedSlots(t *testing.T) {
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) == 11 {
			time.Sleep(250 * time.Millisecond)
		}
	}))
	defer srv.Close()
	var logBuf bytes.Buffer
	lw := recorder.NewLogWriter(&logBuf)
	rec := recorder.New(lw)
	cl := Closed{Users: 1, Rate: 100, Duration: time.Second}
	rec.Correct(cl.Interval())
	stats := runClosed(t, srv.URL, Config{}, cl, rec)
	if err := lw.Flush(); err != nil {
		t.Fatal(err)
	}
	c := rec.Counts()
	if c.Scheduled+c.Skipped != 100 || !c.Balanced() || c.Completed != c.Scheduled {
		t.Fatalf("counts %+v: want issued + skipped = 100, all completed", c)
	}
	if c.Skipped != stats.Skipped || c.Scheduled != stats.Dispatched {
		t.Errorf("counts %+v vs stats skipped %d dispatched %d", c, stats.Skipped, stats.Dispatched)
	}
	// 24 slots are certainly missed; a slow machine may miss a few more
	// when an ordinary response takes longer than the 10 ms interval,
	// but the user is never handed more than 100 − 24 slots.
	if c.Skipped < 24 {
		t.Errorf("skipped %d slots, want ≥ 24", c.Skipped)
	}
	if stats.MaxInFlight != 1 {
		t.Errorf("max in flight %d with one user", stats.MaxInFlight)
	}
	// Each request is recorded at its slot: seq is the slot index and
	// scheduled its offset j × 10 ms, so the skipped slots are the gaps.
	// The requests never overlap: each is sent after the previous one's
	// done.
	es := logEntries(t, logBuf.Bytes())
	var skippedInLog int64
	var lastSeq int64 = -1
	var lastDone time.Duration
	for _, e := range es {
		if want := time.Duration(e.Seq) * 10 * time.Millisecond; e.Scheduled != want {
			t.Errorf("seq %d scheduled at %v, want its slot %v", e.Seq, e.Scheduled, want)
		}
		skippedInLog += int64(e.Seq) - lastSeq - 1
		if e.Sent < lastDone {
			t.Errorf("seq %d sent at %v before the previous response at %v", e.Seq, e.Sent, lastDone)
		}
		lastSeq, lastDone = int64(e.Seq), e.Done
	}
	skippedInLog += 99 - lastSeq
	if skippedInLog != c.Skipped {
		t.Errorf("gaps in the log's seq add up to %d, skipped %d", skippedInLog, c.Skipped)
	}
	// The timeline holds the skipped slots in second 0.
	if tl := rec.Timeline(); tl[0].Skipped != c.Skipped || tl[0].Due() != 100 {
		t.Errorf("second 0: %+v", tl[0])
	}
	// The corrected histogram adds ⌊v/10 ms⌋ − 1 ≥ 24 values for the
	// 250 ms response.
	if extra := rec.Corrected.TotalCount() - c.Scheduled; extra < 24 {
		t.Errorf("correction added %d values, want ≥ 24", extra)
	}
}

// TestClosedPacedUsersShareTheRate: 4 users paced to 200/s for 500 ms
// against a fast server: every slot is sent, and slot j goes to user j mod
// 4 (so no more than 4 are ever in flight).
func TestClosedPacedUsersShareTheRate(t *testing.T) {
	var inFlight, maxSeen atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := inFlight.Add(1)
		defer inFlight.Add(-1)
		for {
			m := maxSeen.Load()
			if n <= m || maxSeen.CompareAndSwap(m, n) {
				break
			}
		}
	}))
	defer srv.Close()
	rec := recorder.New(nil)
	cl := Closed{Users: 4, Rate: 200, Duration: 500 * time.Millisecond}
	if cl.Interval() != 20*time.Millisecond {
		t.Errorf("interval %v, want 4 users ÷ 200/s = 20ms", cl.Interval())
	}
	runClosed(t, srv.URL, Config{}, cl, rec)
	c := rec.Counts()
	// A fast server answers well within the 20 ms each user has per slot;
	// a busy machine may still skip one now and then, never lose one.
	if c.Scheduled+c.Skipped != 100 || !c.Balanced() {
		t.Errorf("counts %+v, want issued + skipped = 100", c)
	}
	if c.Scheduled < 50 {
		t.Errorf("issued %d of 100 slots to a fast server", c.Scheduled)
	}
	if m := maxSeen.Load(); m > 4 {
		t.Errorf("server saw %d requests at once from 4 users", m)
	}
}

// TestClosedUnpaced: without a rate, 2 users send back to back for 300 ms;
// each request is scheduled when its user was ready, so it is sent at once
// and there is nothing to skip.
func TestClosedUnpaced(t *testing.T) {
	forClients(t, closedClients, func(t *testing.T, cl clientCase) {
		var mu sync.Mutex
		inFlight, maxSeen := 0, 0
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			inFlight++
			maxSeen = max(maxSeen, inFlight)
			mu.Unlock()
			time.Sleep(2 * time.Millisecond)
			mu.Lock()
			inFlight--
			mu.Unlock()
		}))
		defer srv.Close()
		var logBuf bytes.Buffer
		lw := recorder.NewLogWriter(&logBuf)
		rec := recorder.New(lw)
		stats := runClosed(t, srv.URL, Config{Lean: cl.lean, Epoll: cl.epoll}, Closed{Users: 2, Duration: 300 * time.Millisecond}, rec)
		lw.Flush()
		c := rec.Counts()
		if c.Scheduled == 0 || c.Skipped != 0 || c.Completed != c.Scheduled || !c.Balanced() {
			t.Errorf("counts %+v", c)
		}
		// Each request takes ≥ 2 ms, so 2 users start at most 2 × 150 in
		// 300 ms.
		if c.Scheduled > 300 {
			t.Errorf("%d requests from 2 users of ≥ 2 ms each in 300 ms", c.Scheduled)
		}
		mu.Lock()
		if maxSeen > 2 {
			t.Errorf("server saw %d requests at once from 2 users", maxSeen)
		}
		mu.Unlock()
		if stats.Interrupted || stats.MaxInFlight > 2 {
			t.Errorf("stats %+v", stats)
		}
		for _, e := range logEntries(t, logBuf.Bytes()) {
			if e.Scheduled >= 300*time.Millisecond || !e.WasSent || e.Sent < e.Scheduled {
				t.Errorf("entry %+v: want scheduled within the run and sent after it", e)
			}
		}
	})
}

// TestClosedThink: one unpaced user with 40 ms of think time after each
// response: each request is scheduled exactly 40 ms after the previous
// one's done, so at most ⌈200 ms / 40 ms⌉ = 5 start in 200 ms.
func TestClosedThink(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	var logBuf bytes.Buffer
	lw := recorder.NewLogWriter(&logBuf)
	rec := recorder.New(lw)
	runClosed(t, srv.URL, Config{}, Closed{Users: 1, Duration: 200 * time.Millisecond, Think: 40 * time.Millisecond}, rec)
	lw.Flush()
	es := logEntries(t, logBuf.Bytes())
	if len(es) == 0 || len(es) > 5 {
		t.Fatalf("%d requests, want 1 to 5", len(es))
	}
	for i := 1; i < len(es); i++ {
		// The log keeps µs, truncated: allow 1 µs either way.
		if gap := es[i].Scheduled - es[i-1].Done; gap < 40*time.Millisecond-time.Microsecond || gap > 40*time.Millisecond+time.Microsecond {
			t.Errorf("request %d scheduled %v after the previous done, want the 40ms think time", i, gap)
		}
	}
}

// TestClosedDrainAccountsEveryRequest: a server that never answers, one
// user paced to 100/s for 200 ms and a drain of 100 ms: the first request
// is in flight when the drain expires (unfinished), and the user was busy
// for every other slot.
func TestClosedDrainAccountsEveryRequest(t *testing.T) {
	forClients(t, closedClients, func(t *testing.T, cl clientCase) {
		srv := hangingServer(t)
		rec := recorder.New(nil)
		runClosed(t, srv.URL, Config{Lean: cl.lean, Epoll: cl.epoll, Timeout: time.Minute, Drain: 100 * time.Millisecond}, Closed{Users: 1, Rate: 100, Duration: 200 * time.Millisecond}, rec)
		c := rec.Counts()
		if c.Scheduled != 1 || c.Unfinished != 1 || c.Skipped != 19 || !c.Balanced() {
			t.Errorf("counts %+v, want 1 unfinished and 19 never sent", c)
		}
	})
}

func TestClosedCancel(t *testing.T) {
	forClients(t, closedClients, func(t *testing.T, cl clientCase) {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
		defer srv.Close()
		for _, rate := range []float64{100, 0} {
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(150*time.Millisecond, cancel)
			rec := recorder.New(nil)
			stats, err := RunClosed(ctx, Config{Lean: cl.lean, Epoll: cl.epoll, URL: mustURL(t, srv.URL), Method: "GET", Timeout: time.Second, Drain: time.Second},
				Closed{Users: 2, Rate: rate, Duration: time.Minute}, rec)
			cancel()
			if err != nil {
				t.Fatal(err)
			}
			c := rec.Counts()
			if !stats.Interrupted || !c.Balanced() || c.Scheduled == 0 {
				t.Errorf("rate %v: interrupted %v, counts %+v", rate, stats.Interrupted, c)
			}
			if rate > 0 && c.Scheduled+c.Skipped >= 6000 {
				t.Errorf("rate %v: %d slots reached after a cancel at 150 ms of a 60 s run", rate, c.Scheduled+c.Skipped)
			}
		}
	})
}

func TestClosedRejectsBadConfig(t *testing.T) {
	rec := recorder.New(nil)
	cfg := Config{URL: mustURL(t, "http://127.0.0.1:1/"), Timeout: time.Second}
	for _, cl := range []Closed{
		{Users: 0, Duration: time.Second},
		{Users: 1, Duration: 0},
		{Users: 1, Duration: time.Second, Rate: -1},
		{Users: 1, Duration: time.Second, Think: -time.Second},
	} {
		if _, err := RunClosed(context.Background(), cfg, cl, rec); err == nil {
			t.Errorf("%+v accepted", cl)
		}
	}
	if _, err := RunClosed(context.Background(), Config{URL: cfg.URL}, Closed{Users: 1, Duration: time.Second}, rec); err == nil {
		t.Error("timeout 0 accepted")
	}
	if _, err := RunClosed(context.Background(), Config{Timeout: time.Second}, Closed{Users: 1, Duration: time.Second}, rec); err == nil {
		t.Error("no URL accepted")
	}
}
