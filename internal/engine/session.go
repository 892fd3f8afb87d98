package engine

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
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
// Steps go through the lean HTTP/1.1 client (PathLean) when every step
// goes to the run's URL's origin over plain HTTP/1.1 (SameOrigin): each
// step's request is serialised as it is made (a variant of its own), and
// its answer read with its whole head, which the session needs for its
// cookies and saves. Otherwise, and for HTTP/2 and TLS, through
// net/http's client (PathNetHTTP). Not the event loops: their requests are
// fixed before the run, a step's is made from what earlier answers said. At most Config.Connections steps are in flight: a step due
// when all are busy waits for one, and the wait is its send delay, as an
// open run's request's is. After the last arrival the sessions still
// walking get Config.Drain to end; one that has not is unfinished.

// SameOrigin is what a SessionSource says when it knows where its steps
// go: true when every step's URL has u's scheme and host, so that the
// lean client, which dials u's, can send them.
type SameOrigin interface {
	SameOrigin(u *url.URL) bool
}

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
	// GetBody (http.NewRequest sets it for a bytes.Reader). Nil: none
	// could be made (a URL from a saved value that is no URL); the step
	// is then a failure of kind other, counted, never sent.
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
	v    *variant // on the lean client: req serialised (newStepVariant)
}

// RunSessions runs s's arrivals as sessions of src and adds one record per
// step, and one session record per session, to rec.
func RunSessions(ctx context.Context, cfg Config, s schedule.Schedule, src SessionSource, rec *recorder.Recorder) (Stats, error) {
	cfg = cfg.mixed()
	if len(cfg.Targets) > 0 || len(cfg.Bodies) > 0 || cfg.TargetStream != nil {
		return Stats{}, fmt.Errorf("engine: a session run makes its requests from its steps: no targets or bodies")
	}
	if cfg.Retry.Enabled() {
		return Stats{}, fmt.Errorf("engine: a session run makes no retries: a step's failure is the session's to handle")
	}
	if err := cfg.check(false); err != nil {
		return Stats{}, err
	}
	// The steps' requests are made at run time: not the event loops; the
	// lean client when it can reach every step.
	cfg.Epoll = false
	if so, ok := src.(SameOrigin); !ok || !so.SameOrigin(cfg.URL) {
		cfg.Lean = false
	}
	var stats Stats
	g := begin(ctx, cfg, rec, &stats, make(chan item), predialCount(cfg.Connections, s.Expected()), s)
	defer g.release()
	stats.Path, stats.Client = PathNetHTTP, ClientNetHTTP
	if g.lean != nil {
		stats.Path, stats.Client = PathLean, ClientLean
	}

	sr := newSessionRun(g, cfg.Connections)
	var wg sync.WaitGroup
	for range cfg.Connections {
		wg.Go(func() { sr.work(g.newWorker()) })
	}
	wg.Go(sr.ready.pump)
	wg.Go(sr.th.run)
	stop := context.AfterFunc(g.drain, sr.th.flush) // the drain expired: every thinker ends
	defer stop()
	dispatchDone := make(chan struct{})
	go func() {
		defer close(dispatchDone)
		g.arrive(ctx, s, &stats, func(seq uint64, off time.Duration, _ *Target) {
			sr.live.Add(1)
			sr.push(&walker{sess: src.Session(seq), due: off, rec: recorder.SessionRecord{Seq: seq, Arrival: off, End: off, EndedAt: -1}})
		})
		sr.arrived()
	}()
	g.windDown(ctx, dispatchDone, &wg)
	stats.Dispatched = g.dispatched.Load()
	stats.LimitWaited = g.limitWaited.Load()
	g.finish(ctx, &stats)
	return stats, nil
}

// A session run has no goroutine per session: a session in progress is
// a walker, which is in one of three places. In the ready queue, its
// step due; on a worker, which sends the step, hands the answer to the
// session and asks it for the next; or with the thinkers (alarm.go), its
// next step not due yet. So 10,000 users reading between clicks cost
// their walkers, not 10,000 stacks, and a step is sent by a worker whose
// stack has long grown to net/http's depth.

// walker is one session in progress.
type walker struct {
	sess Session
	rec  recorder.SessionRecord
	prev *Answer
	step Step          // the step to send, once Next gave it
	due  time.Duration // when step is due (the first: the arrival)
	has  bool          // step is set
}

// sessionRun is what a session run's workers share.
type sessionRun struct {
	g     *generator
	conns int64
	ready *walkQueue
	th    *thinkers
	live  atomic.Int64 // sessions started and not ended
	done  atomic.Bool  // every arrival has been pushed
	quit  chan struct{}
	once  sync.Once
}

func newSessionRun(g *generator, conns int) *sessionRun {
	r := &sessionRun{g: g, conns: int64(conns), quit: make(chan struct{})}
	r.ready = newWalkQueue(r.quit)
	r.th = newThinkers(g.since, r.ready.push)
	return r
}

// push queues w, its step due: a step that finds every connection busy
// waits for one, and counts as such.
func (r *sessionRun) push(w *walker) {
	if r.g.busy.Load() >= r.conns {
		r.g.limitWaited.Add(1)
	}
	r.ready.push(w)
}

// arrived says every arrival has been pushed.
func (r *sessionRun) arrived() {
	r.done.Store(true)
	if r.live.Load() == 0 {
		r.end()
	}
}

// end stops the workers, the queue and the thinkers: every session ended.
func (r *sessionRun) end() {
	r.once.Do(func() {
		close(r.quit)
		r.th.stop()
	})
}

// work serves the ready walkers until every session has ended.
func (r *sessionRun) work(w *worker) {
	for {
		select {
		case wk := <-r.ready.out:
			r.serve(w, wk)
		case <-r.quit:
			return
		}
	}
}

// serve walks wk as far as it can go now: it sends each step that is
// due, and leaves wk with the thinkers when the next is not, or ends it.
func (r *sessionRun) serve(w *worker, wk *walker) {
	g := r.g
	for {
		if !wk.has {
			st, v := wk.sess.Next(wk.prev)
			switch v {
			case Done:
				r.finish(w, wk)
				return
			case Stop:
				wk.rec.Outcome, wk.rec.EndedAt = recorder.SessionEndedEarly, wk.prev.Step
				r.finish(w, wk)
				return
			}
			wk.step, wk.has = st, true
			if wk.prev != nil {
				wk.due = wk.prev.Record.Done + st.Think
			}
		}
		if wk.due > g.since() {
			if g.drain.Err() != nil {
				// The drain expired before the step was due: it never
				// was, and has no record.
				wk.rec.Outcome, wk.rec.End = recorder.SessionUnfinished, g.since()
				r.finish(w, wk)
				return
			}
			r.th.at(wk.due, wk)
			return
		}
		r.send(w, wk)
		if wk.prev.Record.Outcome == recorder.Unfinished {
			wk.rec.Outcome = recorder.SessionUnfinished
			r.finish(w, wk)
			return
		}
	}
}

// send sends wk's step, due, on w; its answer goes to the session before
// its record is made.
func (r *sessionRun) send(w *worker, wk *walker) {
	g := r.g
	st := &wk.step
	it := item{seq: stepSeq(wk.rec.Seq, st.Index), off: wk.due}
	a := &Answer{Step: st.Index}
	var rec recorder.Record
	// Every step that comes here has one record: it counts as due now,
	// when a worker takes it up (Live.Due).
	g.taken.Add(1)
	if g.drain.Err() != nil {
		// Due, but never sent: the drain expired first.
		rec = recorder.Record{Seq: it.seq, Scheduled: it.off, Done: g.since(), Outcome: recorder.Unfinished, Kind: recorder.KindUnfinished}
	} else if v, err := r.variant(st.Request); st.Request == nil || err != nil {
		// No request could be made of it (Step.Request nil), or its
		// body could not be had: it never left, and failed.
		rec = recorder.Record{Seq: it.seq, Scheduled: it.off, Done: g.since(), Outcome: recorder.Failed, Kind: recorder.KindOther}
	} else {
		it.step = &stepCall{req: st.Request, keep: st.Keep, ans: a, v: v}
		g.busyOne()
		rec = w.attempt(it)
		g.busy.Add(-1)
		g.notSent(&rec)
	}
	rec.Target = uint32(st.Index)
	a.Record = &rec
	// An answer that is an error (a status ≥ 400) already failed the
	// step, under its status: nothing in it is for later steps.
	if rec.Outcome == recorder.Completed && rec.Status < 400 {
		if a.TakeErr = wk.sess.Take(a); a.TakeErr != nil {
			rec.Outcome, rec.Kind = recorder.Failed, recorder.KindSave
		}
	}
	// Taken: what the session keeps is its own now. A walker that thinks
	// for a minute holds no head or body meanwhile.
	a.Header, a.Body = nil, nil
	g.note(rec.Done)
	w.shard.put(&rec)
	wk.rec.Steps++
	wk.rec.End = rec.Done
	wk.prev, wk.has, wk.step = a, false, Step{}
}

// finish ends wk's session: its account goes to the recorder.
func (r *sessionRun) finish(w *worker, wk *walker) {
	w.shard.putSession(&wk.rec)
	if r.live.Add(-1) == 0 && r.done.Load() {
		r.end()
	}
}

// walkQueue is the ready walkers, unbounded: neither the dispatcher nor
// the thinkers ever wait for a worker to take one.
type walkQueue struct {
	in   chan *walker
	out  chan *walker
	quit <-chan struct{}
}

func newWalkQueue(quit <-chan struct{}) *walkQueue {
	return &walkQueue{in: make(chan *walker, 256), out: make(chan *walker), quit: quit}
}

func (q *walkQueue) push(w *walker) {
	select {
	case q.in <- w:
	case <-q.quit:
	}
}

// pump moves walkers from in to out, holding those no worker took yet.
func (q *walkQueue) pump() {
	var held []*walker
	for {
		if len(held) == 0 {
			select {
			case w := <-q.in:
				held = append(held, w)
			case <-q.quit:
				return
			}
			continue
		}
		select {
		case w := <-q.in:
			held = append(held, w)
		case q.out <- held[0]:
			held[0] = nil
			held = held[1:]
		case <-q.quit:
			return
		}
	}
}

// variant serialises a step's request for the lean client (nil on
// net/http's). Its answer's head is read whole (not quick): the session
// takes cookies and values from it.
func (r *sessionRun) variant(req *http.Request) (*variant, error) {
	if r.g.lean == nil || req == nil {
		return nil, nil
	}
	var body []byte
	if req.GetBody != nil {
		rc, err := req.GetBody()
		if err != nil {
			return nil, err
		}
		if body, err = io.ReadAll(rc); err != nil {
			return nil, err
		}
	}
	v := newVariant(&r.g.cfg, Target{Method: req.Method, URL: req.URL, Header: req.Header, Body: body})
	v.quick = false
	return &v, nil
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
