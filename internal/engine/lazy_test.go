package engine

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openload/openload/internal/recorder"
	"github.com/openload/openload/schedule"
)

// chanStream is a TargetStream the test feeds by hand.
type chanStream struct {
	ch  chan Target
	err error
}

func (s *chanStream) Targets() <-chan Target { return s.ch }
func (s *chanStream) Err() error             { return s.err }

// lazyTarget is the i-th target of a lazy test: its path names it, and
// its template adds the seq of the request that sends it.
func lazyTarget(t testing.TB, base string, i int) Target {
	return Target{Name: fmt.Sprint(i), Method: http.MethodGet, URL: mustURL(t, base), Path: decT(fmt.Sprintf("/t/%d/", i))}
}

// waitHeard waits until srv has read n requests.
func waitHeard(t *testing.T, srv *mixServer, n int) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(5 * time.Millisecond) {
		srv.mu.Lock()
		got := len(srv.heard)
		srv.mu.Unlock()
		if got >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server read %d requests, want %d before the stream went on", got, n)
		}
	}
}

// A lazy mix (Config.TargetStream) on every client that takes it: five
// targets, then a pause, then ten more and the stream's end. The first
// requests are sent before the stream goes on; request seq goes to the
// seq-th target; the request whose target came late left late, its
// wait in its send delay, not re-timed; the stream's end, before the
// schedule's, stops scheduling there, every request taken accounted for.
func TestLazyTargets(t *testing.T) {
	forClients(t, streamClients, func(t *testing.T, cl clientCase) {
		srv := newMixServer(t)
		cfg := mixConfig(cl)
		st := &chanStream{ch: make(chan Target, 64)}
		cfg.TargetStream = st
		var release time.Time // when target 5 was given
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 5 {
				st.ch <- lazyTarget(t, srv.URL, i)
			}
			waitHeard(t, srv, 5)              // sent while the stream is open
			time.Sleep(50 * time.Millisecond) // request 5, due at 25 ms, is overdue
			release = time.Now()
			for i := 5; i < 15; i++ {
				st.ch <- lazyTarget(t, srv.URL, i)
			}
			close(st.ch)
		}()
		// 200/s for 1 s: 200 due, 15 targets.
		recs, rec, stats := records(t, srv.URL, cfg, schedule.NewConstant(200, time.Second))
		wg.Wait()
		want := map[string]string{"epoll": ClientLean, "h2c": ClientNetHTTP}[cl.test]
		if want == "" {
			want = cl.name
		}
		if c := checkIdentity(t, rec, 15); c.Completed != 15 || stats.Client != want {
			t.Fatalf("counts %+v on %s, want 15 completed on %s", c, stats.Client, want)
		}
		if !stats.TargetsEnded || stats.TargetsErr != nil || stats.Interrupted {
			t.Errorf("ended %v (%v), interrupted %v: want the stream's end", stats.TargetsEnded, stats.TargetsErr, stats.Interrupted)
		}
		srv.mu.Lock()
		for _, h := range srv.heard {
			var i, seq int
			if _, err := fmt.Sscanf(h.uri, "/t/%d/%d", &i, &seq); err != nil || i != seq {
				t.Errorf("request %s: want /t/SEQ/SEQ, target seq for request seq", h.uri)
			}
		}
		srv.mu.Unlock()
		if len(srv.count()) != 15 {
			t.Errorf("server read %v, want each of 15 targets once", srv.count())
		}
		r5 := recs[5]
		late := release.Sub(stats.Start)
		if stats.TargetsWaited < 1 || r5.Sent < late || r5.Scheduled != 25*time.Millisecond {
			t.Errorf("%d arrivals waited; request 5 scheduled %v, sent %v, its target given at %v: want it scheduled at 25ms and sent after its target came",
				stats.TargetsWaited, r5.Scheduled, r5.Sent, late)
		}
		// Every arrival from 5 on that came due before the targets were
		// given waited for its target, the ones after 5 behind it (and
		// the first ones may have come due before theirs were given).
		var due int64
		for seq, r := range recs {
			if seq >= 5 && r.Scheduled < late {
				due++
			}
		}
		if stats.TargetsWaited < due || stats.TargetsWaited > 15 {
			t.Errorf("%d arrivals counted as waiting; %d of 5..14 came due before their targets were given", stats.TargetsWaited, due)
		}
		if r0 := recs[0]; r5.SendDelay() <= r0.SendDelay() {
			t.Errorf("send delay %v of request 5, which waited for its target, ≤ request 0's %v", r5.SendDelay(), r0.SendDelay())
		}
		for seq, r := range recs {
			if r.Target != 0 {
				t.Errorf("record %d names target %d: a lazy mix's name none", seq, r.Target)
			}
		}
	})
}

// A lazy target the run cannot send (another origin) ends the stream
// with its error: the targets before it were sent.
func TestLazyTargetRefused(t *testing.T) {
	srv := newMixServer(t)
	st := &chanStream{ch: make(chan Target, 4)}
	st.ch <- lazyTarget(t, srv.URL, 0)
	st.ch <- Target{Name: "elsewhere", Method: http.MethodGet, URL: mustURL(t, "http://elsewhere.invalid/")}
	st.ch <- lazyTarget(t, srv.URL, 2)
	close(st.ch)
	_, rec, stats := records(t, srv.URL, Config{Lean: true, Connections: 2, TargetStream: st}, schedule.NewConstant(100, time.Second))
	checkIdentity(t, rec, 1)
	if !stats.TargetsEnded || stats.TargetsErr == nil || !strings.Contains(stats.TargetsErr.Error(), "target 1 (elsewhere) goes to http://elsewhere.invalid:80") {
		t.Errorf("ended %v with %v, want target 1's origin refused", stats.TargetsEnded, stats.TargetsErr)
	}
}

// Cancelling the run while it waits for a target stops it at once, as
// an interruption: what was sent is kept.
func TestLazyTargetsInterrupted(t *testing.T) {
	srv := newMixServer(t)
	st := &chanStream{ch: make(chan Target, 4)}
	st.ch <- lazyTarget(t, srv.URL, 0)
	ctx, cancel := context.WithCancel(context.Background())
	var stats Stats
	rec := recorder.New(nil)
	done := make(chan error, 1)
	go func() {
		var err error
		stats, err = Run(ctx, Config{URL: mustURL(t, srv.URL), Method: http.MethodGet, Lean: true, Connections: 2, Timeout: 5 * time.Second, Drain: time.Second, TargetStream: st},
			schedule.NewConstant(100, time.Hour), rec)
		done <- err
	}()
	waitHeard(t, srv, 1)
	cancel() // the stream never ends: only the cancel stops the run
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	checkIdentity(t, rec, 1)
	if !stats.Interrupted || stats.TargetsEnded {
		t.Errorf("interrupted %v, ended %v: want an interruption", stats.Interrupted, stats.TargetsEnded)
	}
}

// A TargetStream goes with no table of targets or bodies, and in open
// runs only.
func TestLazyValidate(t *testing.T) {
	u := mustURL(t, "http://h/")
	base := Config{URL: u, Connections: 1, Timeout: time.Second, TargetStream: &chanStream{}}
	for _, c := range []struct {
		cfg  func(Config) Config
		want string
	}{
		{func(c Config) Config { c.Targets = []Target{{URL: u}}; return c }, "cannot go with Targets"},
		{func(c Config) Config { c.Bodies = [][]byte{{}}; return c }, "cannot go with Bodies"},
	} {
		if err := c.cfg(base).Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v, want %q", err, c.want)
		}
	}
	if err := base.ValidateClosed(); err == nil || !strings.Contains(err.Error(), "open runs") {
		t.Errorf("closed: %v", err)
	}
}
