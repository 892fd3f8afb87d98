package engine

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/openload/openload/internal/recorder"
	"github.com/openload/openload/result"
	"github.com/openload/openload/schedule"
)

// liveCalls collects what Observe was handed, copied: the recorder may
// be read during the call only.
type liveCalls struct {
	lives  []Live
	counts []result.Counts
}

func (c *liveCalls) observe(l Live) {
	c.lives = append(c.lives, l)
	c.counts = append(c.counts, l.Rec.Counts())
}

// check holds what every run's live counts owe: the first call is made
// before the start, at 0; due and sent never fall and sent never passes
// due; only the last call is final, and there due and sent are the
// records' own counts; the bytes never fall and end counted.
func (c *liveCalls) check(t *testing.T) {
	t.Helper()
	if len(c.lives) < 2 {
		t.Fatalf("%d Observe calls, want the one before the start and the final one at least", len(c.lives))
	}
	if first := c.lives[0]; first.Due != 0 || first.Sent != 0 || first.Final || c.counts[0].Scheduled != 0 {
		t.Errorf("the call before the start: %+v, counts %+v", first, c.counts[0])
	}
	var prev Live
	for i, l := range c.lives {
		if l.Sent > l.Due || l.Due < prev.Due || l.Sent < prev.Sent || l.Final != (i == len(c.lives)-1) {
			t.Errorf("call %d: due %d sent %d final %v, after due %d sent %d", i, l.Due, l.Sent, l.Final, prev.Due, prev.Sent)
		}
		if l.BytesWritten < prev.BytesWritten || l.BytesRead < prev.BytesRead {
			t.Errorf("call %d: bytes written %d read %d, after %d and %d", i, l.BytesWritten, l.BytesRead, prev.BytesWritten, prev.BytesRead)
		}
		prev = l
	}
	last, n := c.lives[len(c.lives)-1], c.counts[len(c.counts)-1]
	if last.Due != n.Scheduled || last.Sent != n.Sent || n.Scheduled == 0 {
		t.Errorf("final: due %d sent %d, the records: scheduled %d sent %d", last.Due, last.Sent, n.Scheduled, n.Sent)
	}
	// Every path counts its bytes: requests were written, and answers
	// read when some completed.
	if last.BytesWritten == 0 || (n.Completed > 0 && last.BytesRead == 0) {
		t.Errorf("final: bytes written %d, read %d, for %d sent and %d completed", last.BytesWritten, last.BytesRead, n.Sent, n.Completed)
	}
}

// TestLiveCountsEqualRecords: on every client path and run kind (open,
// closed, sessions, interrupted, a drain that expires), the engine's live
// counts of due and sent requests end equal to the records' counts.
func TestLiveCountsEqualRecords(t *testing.T) {
	raw := newRawServer()
	defer raw.Close()
	h2c := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "ok") }))
	h2c.Config.Protocols = new(http.Protocols)
	h2c.Config.Protocols.SetHTTP1(true)
	h2c.Config.Protocols.SetUnencryptedHTTP2(true)
	h2c.Start()
	defer h2c.Close()
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	}))
	defer slow.Close()
	// open runs 100/s for d (a minute for a run cancelled at the first
	// tick) on cfg's path.
	open := func(u string, cfg Config, d time.Duration) func(context.Context, Config, *recorder.Recorder) error {
		return func(ctx context.Context, base Config, rec *recorder.Recorder) error {
			cfg.URL, cfg.Method, cfg.Observe, cfg.Timeout, cfg.Drain = mustURL(t, u), http.MethodGet, base.Observe, base.Timeout, base.Drain
			cfg.Connections = max(cfg.Connections, 4)
			_, err := Run(ctx, cfg, schedule.NewConstant(100, d), rec)
			return err
		}
	}
	const d = 300 * time.Millisecond
	for _, c := range []struct {
		name string
		run  func(context.Context, Config, *recorder.Recorder) error
		stop bool // cancel the run midway
	}{
		{"net-http", open(raw.URL, Config{}, d), false},
		{"lean", open(raw.URL, Config{Lean: true}, d), false},
		{"epoll", open(raw.URL, Config{Lean: true, Epoll: true}, d), false},
		{"h2c-loop", open(h2c.URL, Config{Protocol: H2C, Epoll: true}, d), false},
		{"interrupted", open(raw.URL, Config{Lean: true}, time.Minute), true},
		{"drain-expires", open(slow.URL, Config{Lean: true, Connections: 2}, d), false},
		{"closed-paced", func(ctx context.Context, cfg Config, rec *recorder.Recorder) error {
			cfg.URL, cfg.Connections = mustURL(t, raw.URL), 4
			_, err := RunClosed(ctx, cfg, Closed{Users: 4, Rate: 100, Duration: 300 * time.Millisecond}, rec)
			return err
		}, false},
		{"closed-free", func(ctx context.Context, cfg Config, rec *recorder.Recorder) error {
			cfg.URL, cfg.Connections = mustURL(t, raw.URL), 2
			_, err := RunClosed(ctx, cfg, Closed{Users: 2, Duration: 300 * time.Millisecond}, rec)
			return err
		}, false},
		{"sessions", func(ctx context.Context, cfg Config, rec *recorder.Recorder) error {
			cfg.URL, cfg.Method, cfg.Connections = mustURL(t, raw.URL), http.MethodGet, 4
			rec.TrackSessions([]string{"a", "b"})
			_, err := RunSessions(ctx, cfg, schedule.NewConstant(20, 300*time.Millisecond), fixedSessions{raw.URL, 2, 10 * time.Millisecond}, rec)
			return err
		}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			var calls liveCalls
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			drain := 5 * time.Second
			if c.name == "drain-expires" {
				drain = 200 * time.Millisecond
			}
			cfg := Config{Timeout: 5 * time.Second, Drain: drain, Observe: func(l Live) {
				calls.observe(l)
				if c.stop && l.Due > 0 {
					cancel()
				}
			}}
			if err := c.run(ctx, cfg, recorder.New(nil)); err != nil {
				t.Fatal(err)
			}
			calls.check(t)
		})
	}
}

// TestLiveCountsBeforeAnswers: against a server that holds every answer,
// the requests count as due and sent while none has a record, the
// offered rate is the schedule's and nothing is late.
func TestLiveCountsBeforeAnswers(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-time.After(5 * time.Second):
		}
	}))
	defer srv.Close()
	const n = 20
	var seen *Live
	var seenCounts result.Counts
	cfg := Config{URL: mustURL(t, srv.URL), Method: http.MethodGet, Connections: n, Timeout: 5 * time.Second, Drain: 5 * time.Second, Lean: true,
		Observe: func(l Live) {
			if seen == nil && l.Sent == n {
				seen, seenCounts = &l, l.Rec.Counts()
				close(release)
			}
		}}
	if _, err := Run(context.Background(), cfg, schedule.NewConstant(100, n*10*time.Millisecond), recorder.New(nil)); err != nil {
		t.Fatal(err)
	}
	if seen == nil {
		t.Fatal("no snapshot saw every request sent")
	}
	if seen.Due != n || seenCounts.Scheduled != 0 || seen.InFlight != n || seen.Waiting != 0 || seen.Start.IsZero() {
		t.Errorf("with every answer held: due %d, in flight %d, waiting %d, records %d, start %v; want %d due and in flight, no record",
			seen.Due, seen.InFlight, seen.Waiting, seenCounts.Scheduled, seen.Start, n)
	}
	// The schedule's rate while it lasts, 0 after.
	if want := 100.0; !seen.Rated || seen.Elapsed >= n*10*time.Millisecond && seen.Offered != 0 || seen.Elapsed < n*10*time.Millisecond && seen.Offered != want || seen.Lag != 0 {
		t.Errorf("offered %v (rated %v) at %v, lag %v", seen.Offered, seen.Rated, seen.Elapsed, seen.Lag)
	}
}
