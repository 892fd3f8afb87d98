package engine

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/openload/openload/internal/recorder"
	"github.com/openload/openload/schedule"
)

// Sessions (RunSessions): each arrival of the schedule is a user who
// walks several steps, each a request. The arrivals stay open, as every
// run's: a user arrives when the schedule says, whatever the others are
// waiting for. Within a session the walk is closed, as a person's is:
// step k+1 is due at step k's done plus its think time, and that due
// time is the step's scheduled time. So response time (done − due) holds
// what the user waited, a stalled server's wait included; service time
// (done − sent) what the server took; send delay (sent − due) how late
// openload clicked.
//
// Steps go through net/http's client (PathNetHTTP): a session's request
// is made anew from what earlier answers said (values saved, cookies),
// which the loops' and the lean client's requests, fixed before the run,
// are not. At most Config.Connections steps are in flight: a step due
// when all are busy waits for one, and the wait is its send delay, as an
// open run's request's is. After the last arrival the sessions still
// walking get Config.Drain to end; one that has not is unfinished.

// SessionSource makes a run's sessions.
type SessionSource interface {
	// Session is the session of the schedule's arrival seq. It is
	// called by the dispatcher, once per arrival, so it must be quick;
	// the session's own work happens in Next and Take.
	Session(seq uint64) Session
}

// Session is one user's walk. Next and Take are called from the session's
// own goroutine, one at a time.
type Session interface {
	// Next returns the session's next step, given the previous step's
	// answer (nil before the first), and whether to send it (Go), end
	// the session (Done) or end it early at prev's step (Stop).
	Next(prev *Answer) (Step, Verdict)
	// Take reads what later steps need from a step's answer (values,
	// cookies, a conversation's text) once its exchange ended, before its
	// record is made: an error fails the step (recorder.KindSave).
	Take(a *Answer) error
}

// Verdict is what a session does next.
type Verdict uint8

const (
	Go   Verdict = iota // send the step
	Done                // the session is complete
	Stop                // the session ends early, at the previous step
)

// Step is one step of a session.
type Step struct {
	Index int           // the step's index in its scenario (Record.Target)
	Think time.Duration // the pause after the previous step's done; not for a first step
	// Request is the step's request; its body, if any, comes from
	// GetBody (http.NewRequest sets it for a bytes.Reader).
	Request *http.Request
	// Keep asks for the answer's body (up to MaxKeep bytes) in Answer.
	Keep bool
}

// MaxKeep bounds the body an answer keeps for Take: a model's answer of
// thousands of tokens streamed as SSE is a few hundred kB.
const MaxKeep = 4 << 20

// Answer is a step's answer, as Take and Next see it.
type Answer struct {
	Step   int
	Record *recorder.Record // its outcome, status and stamps
	Header http.Header      // nil when no head came
	// Body is the body read, when the step asked to keep it; Cut when it
	// was longer than MaxKeep (Body then holds its first MaxKeep bytes).
	Body []byte
	Cut  bool
	// TakeErr is what Take said of the answer.
	TakeErr error
}

// Failed reports whether the step failed as its user sees it: no answer,
// an answer that is an error (a status ≥ 400), or one Take refused.
func (a *Answer) Failed() bool {
	return a.Record.Outcome != recorder.Completed || a.Record.Status >= 400 || a.TakeErr != nil
}

// MaxSteps bounds a session's steps: a record names its step in 16 bits.
const MaxSteps = 1 << 16

// stepSeq is the seq of session seq's step k: sessions keep their
// arrival's seq whichever shard runs them, so a step's seq is the same in
// every shard's log.
func stepSeq(seq uint64, k int) uint64 { return seq<<16 | uint64(k) }

// stepCall is what a session's step hands the worker beside the item: the
// request to send, and the answer to fill.
type stepCall struct {
	req  *http.Request
	keep bool
	ans  *Answer
}

// RunSessions runs s's arrivals as sessions of src and adds one record per
// step, and one session record per session, to rec.
func RunSessions(ctx context.Context, cfg Config, s schedule.Schedule, src SessionSource, rec *recorder.Recorder) (Stats, error) {
	cfg = cfg.mixed()
	if len(cfg.Targets) > 0 || len(cfg.Bodies) > 0 {
		return Stats{}, fmt.Errorf("engine: a session run makes its requests from its steps: no targets or bodies")
	}
	if cfg.Retry.Enabled() {
		return Stats{}, fmt.Errorf("engine: a session run makes no retries: a step's failure is the session's to handle")
	}
	if err := cfg.check(false); err != nil {
		return Stats{}, err
	}
	// The steps' requests are made at run time: net/http's client.
	cfg.Lean, cfg.Epoll = false, false
	var stats Stats
	g := begin(ctx, cfg, rec, &stats, make(chan item), predialCount(cfg.Connections, s.Expected()))
	defer g.release()
	stats.Path, stats.Client = PathNetHTTP, ClientNetHTTP

	free := make(chan *worker, cfg.Connections)
	for range cfg.Connections {
		free <- g.newWorker()
	}
	ends := g.sink.newShard()  // the session records
	th := newThinkers(g.since) // alarm.go
	thinking := make(chan struct{})
	go func() {
		defer close(thinking)
		th.run()
	}()
	var wg sync.WaitGroup
	dispatchDone := make(chan struct{})
	go func() {
		defer close(dispatchDone)
		g.arrive(ctx, s, &stats, func(seq uint64, off time.Duration) {
			sess := src.Session(seq)
			wg.Go(func() {
				sr := g.walk(sess, seq, off, free, ends, th)
				ends.putSession(&sr)
			})
		})
	}()
	g.windDown(ctx, dispatchDone, &wg)
	th.stop()
	<-thinking
	stats.Dispatched = g.dispatched.Load()
	stats.LimitWaited = g.limitWaited.Load()
	g.finish(ctx, &stats)
	return stats, nil
}

// arrive walks the schedule as dispatch does, calling start for each
// arrival when it is due.
func (g *generator) arrive(ctx context.Context, s schedule.Schedule, stats *Stats, start func(seq uint64, off time.Duration)) {
	sl := newSleeper()
	defer sl.close()
	off, ok := s.Next()
	seq := seqOf(s, 0)
	for ok {
		if ctx.Err() != nil {
			stats.Interrupted = true
			stats.ScheduleEnd = g.since()
			return
		}
		if now := g.since(); off > now {
			sl.sleep(min(max(off-now, minSleep), maxSleep))
			continue
		}
		g.dispatched.Add(1)
		start(seq, off)
		off, ok = s.Next()
		seq = seqOf(s, seq+1)
	}
	stats.ScheduleEnd = g.since()
}

// walk runs one session that arrived at off: each step waits until it is
// due, for a free worker, and is sent; its answer goes to the session.
func (g *generator) walk(sess Session, seq uint64, off time.Duration, free chan *worker, ends *shard, th *thinkers) recorder.SessionRecord {
	sr := recorder.SessionRecord{Seq: seq, Arrival: off, End: off, EndedAt: -1}
	var prev *Answer
	for {
		st, v := sess.Next(prev)
		switch v {
		case Done:
			return sr
		case Stop:
			sr.Outcome, sr.EndedAt = recorder.SessionEndedEarly, prev.Step
			return sr
		}
		due := off
		if prev != nil {
			due = prev.Record.Done + st.Think
			if due > g.since() {
				select {
				case <-th.at(due):
				case <-g.drain.Done():
					// The drain expired before the step was due: it
					// never was, and has no record.
					sr.Outcome, sr.End = recorder.SessionUnfinished, g.since()
					return sr
				}
			}
		}
		it := item{seq: stepSeq(seq, st.Index), off: due}
		var w *worker
		select {
		case w = <-free:
		default:
			g.limitWaited.Add(1)
			select {
			case w = <-free:
			case <-g.drain.Done():
			}
		}
		a := &Answer{Step: st.Index}
		var r recorder.Record
		sh := ends
		if w == nil || g.drain.Err() != nil {
			// Due, but never sent: the drain expired first.
			r = recorder.Record{Seq: it.seq, Scheduled: due, Done: g.since(), Outcome: recorder.Unfinished, Kind: recorder.KindUnfinished}
		} else {
			it.step = &stepCall{req: st.Request, keep: st.Keep, ans: a}
			g.busyOne()
			r = w.attempt(it)
			g.busy.Add(-1)
			sh = w.shard
		}
		r.Target = uint16(st.Index)
		a.Record = &r
		if r.Outcome == recorder.Completed {
			if a.TakeErr = sess.Take(a); a.TakeErr != nil {
				r.Outcome, r.Kind = recorder.Failed, recorder.KindSave
			}
		}
		g.note(r.Done)
		sh.put(&r)
		if w != nil {
			free <- w
		}
		sr.Steps++
		sr.End = r.Done
		if r.Outcome == recorder.Unfinished {
			sr.Outcome = recorder.SessionUnfinished
			return sr
		}
		prev = a
	}
}

// stepRequest is a session step's request, with the run's context and
// stamp header.
func (w *worker) stepRequest(ctx context.Context, it item) (*http.Request, error) {
	req := it.step.req.WithContext(ctx)
	if req.GetBody != nil {
		body, err := req.GetBody()
		if err != nil {
			return nil, err
		}
		req.Body = body
	}
	if w.g.cfg.StampHeader != "" {
		req.Header = req.Header.Clone()
		req.Header[w.g.cfg.StampHeader] = w.stamp(it.off)
	}
	return req, nil
}

// answer hands the step's answer its head, and its body when kept.
func (c *stepCall) answer(resp *http.Response) {
	c.ans.Header = resp.Header
	if c.keep {
		resp.Body = &keepBody{ReadCloser: resp.Body, a: c.ans}
	}
}

// keepBody is a response body that keeps what is read of it, up to
// MaxKeep bytes, for a session's Take.
type keepBody struct {
	io.ReadCloser
	a *Answer
}

func (k *keepBody) Read(p []byte) (int, error) {
	n, err := k.ReadCloser.Read(p)
	if room := MaxKeep - len(k.a.Body); n > 0 && room > 0 {
		k.a.Body = append(k.a.Body, p[:min(n, room)]...)
		k.a.Cut = k.a.Cut || n > room
	} else if n > 0 {
		k.a.Cut = true
	}
	return n, err
}
