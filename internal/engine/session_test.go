package engine

import (
	"context"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/openload/openload/internal/recorder"
	"github.com/openload/openload/result"
	"github.com/openload/openload/schedule"
)

// fixedSessions are sessions of steps GETs to url, think apart: the
// engine's side of a session run, without internal/session's templates.
type fixedSessions struct {
	url   string
	steps int
	think time.Duration
}

func (f fixedSessions) Session(uint64) Session { return &fixedWalk{f: f} }

// leanSessions are fixedSessions that say their steps go to the run's
// origin: the lean client sends them.
type leanSessions struct{ fixedSessions }

func (leanSessions) SameOrigin(*url.URL) bool { return true }

type fixedWalk struct {
	f    fixedSessions
	next int
}

func (w *fixedWalk) Next(prev *Answer) (Step, Verdict) {
	if prev != nil && prev.Failed() {
		return Step{}, Stop
	}
	if w.next == w.f.steps {
		return Step{}, Done
	}
	req, err := http.NewRequest(http.MethodGet, w.f.url, nil)
	if err != nil {
		panic(err)
	}
	w.next++
	return Step{Index: w.next - 1, Think: w.f.think, Request: req}, Go
}

func (w *fixedWalk) Take(*Answer) error { return nil }

// TestSessionsTiming: 10 sessions of 3 steps 50 ms apart. Every step has
// a record, its Target its step; step k+1 is scheduled at step k's done
// plus the think time, exactly, and sent no earlier; every session
// completes, from its arrival to its last step's done.
func TestSessionsTiming(t *testing.T) {
	srv := newRawServer()
	defer srv.Close()
	for _, c := range []struct {
		src  SessionSource
		path string
	}{
		{fixedSessions{srv.URL, 3, 50 * time.Millisecond}, PathNetHTTP},
		{leanSessions{fixedSessions{srv.URL, 3, 50 * time.Millisecond}}, PathLean},
	} {
		t.Run(c.path, func(t *testing.T) { testSessionsTiming(t, srv.URL, c.src, c.path) })
	}
}

func testSessionsTiming(t *testing.T, u string, src SessionSource, path string) {
	var recs []recorder.Record
	cfg := Config{URL: mustURL(t, u), Method: http.MethodGet, Connections: 4, Timeout: 5 * time.Second, Drain: 5 * time.Second, Lean: true,
		onRecord: func(r *recorder.Record) { recs = append(recs, *r) }}
	rec := recorder.New(nil)
	rec.TrackSessions([]string{"a", "b", "c"})
	stats, err := RunSessions(context.Background(), cfg, schedule.NewConstant(20, 500*time.Millisecond), src, rec)
	if err != nil {
		t.Fatal(err)
	}
	if stats.Path != path || stats.Dispatched != 10 || len(recs) != 30 {
		t.Fatalf("path %s, %d arrivals, %d records; want %s, 10 and 30", stats.Path, stats.Dispatched, len(recs), path)
	}
	bySession := map[uint64][]recorder.Record{}
	for _, r := range recs {
		if r.Outcome != recorder.Completed || uint64(r.Target) != r.Seq&0xffff {
			t.Fatalf("record %+v", r)
		}
		bySession[r.Seq>>16] = append(bySession[r.Seq>>16], r)
	}
	for seq, rs := range bySession {
		if len(rs) != 3 {
			t.Fatalf("session %d: %d steps", seq, len(rs))
		}
		for k := 1; k < 3; k++ {
			prev, r := rs[k-1], rs[k]
			if r.Target != prev.Target+1 || r.Scheduled != prev.Done+50*time.Millisecond || r.Sent < r.Scheduled {
				t.Errorf("session %d step %d: scheduled %v, sent %v; step %d done %v", seq, k, r.Scheduled, r.Sent, k-1, prev.Done)
			}
		}
	}
	res := result.Result{Sessions: &result.Sessions{}}
	if err := rec.Fill(&res); err != nil {
		t.Fatal(err)
	}
	if s := res.Sessions; s.Started != 10 || s.Completed != 10 || s.StepRecords != 30 {
		t.Errorf("sessions %+v", s)
	}
}

// BenchmarkSessionRun is BenchmarkOpenRun with its b.N requests as
// steps: sessions of 10 steps, no think time, arriving at 100,000/s, on
// net/http's client and on the lean one. Against BenchmarkOpenRun's
// net-http and lean runs it is what walking steps costs beside sending
// the same requests (issue 52: within 15 %).
func BenchmarkSessionRun(b *testing.B) {
	srv := newRawServer()
	defer srv.Close()
	for _, c := range []struct {
		name string
		src  SessionSource
	}{
		{"net-http", fixedSessions{srv.URL, 10, 0}},
		{"lean", leanSessions{fixedSessions{srv.URL, 10, 0}}},
	} {
		b.Run(c.name, func(b *testing.B) {
			cfg := Config{URL: mustURL(b, srv.URL), Method: http.MethodGet, Connections: 4, Timeout: 5 * time.Second, Drain: 5 * time.Second, Lean: true}
			rec := recorder.New(nil)
			rec.TrackSessions([]string{"1", "2", "3", "4", "5", "6", "7", "8", "9", "10"})
			n := max(1, b.N/10)
			b.ReportAllocs()
			b.ResetTimer()
			_, err := RunSessions(context.Background(), cfg, schedule.NewConstant(1e5, time.Duration(n)*10*time.Microsecond), c.src, rec)
			b.StopTimer()
			if err != nil {
				b.Fatal(err)
			}
			if got := rec.Counts(); got.Completed != int64(10*n) {
				b.Fatalf("counts %+v, want %d completed", got, 10*n)
			}
		})
	}
}

// nilSessions make a first step without a request.
type nilSessions struct{}

func (nilSessions) Session(uint64) Session { return &nilWalk{} }

type nilWalk struct{}

func (w *nilWalk) Next(prev *Answer) (Step, Verdict) {
	if prev != nil {
		if prev.Failed() {
			return Step{}, Stop
		}
		return Step{}, Done
	}
	return Step{Index: 0}, Go
}

func (*nilWalk) Take(*Answer) error { return nil }

// TestSessionsUnsendableStep: a step without a request is a failure of
// kind other, never sent, and its session ends early at it: counted,
// never a crash (the first step has no step before it to end at).
func TestSessionsUnsendableStep(t *testing.T) {
	srv := newRawServer()
	defer srv.Close()
	var recs []recorder.Record
	cfg := Config{URL: mustURL(t, srv.URL), Method: http.MethodGet, Connections: 2, Timeout: 5 * time.Second, Drain: 5 * time.Second,
		onRecord: func(r *recorder.Record) { recs = append(recs, *r) }}
	rec := recorder.New(nil)
	rec.TrackSessions([]string{"a"})
	if _, err := RunSessions(context.Background(), cfg, schedule.NewConstant(20, 200*time.Millisecond), nilSessions{}, rec); err != nil {
		t.Fatal(err)
	}
	res := result.Result{Sessions: &result.Sessions{}}
	if err := rec.Fill(&res); err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if r.Outcome != recorder.Failed || r.Kind != recorder.KindOther || r.WasSent {
			t.Errorf("record %+v, want failed, other, unsent", r)
		}
	}
	if s := res.Sessions; len(recs) != 4 || s.Started != 4 || s.EndedEarly != 4 || s.EndedAt[0] != 4 {
		t.Errorf("%d records, sessions %+v; want 4 each ended early at step 0", len(recs), s)
	}
}
