// Package engine issues a schedule's requests at their scheduled times
// (open model) and hands every request's fate to a recorder.
//
// One dispatcher goroutine walks the schedule. It sleeps until the next
// arrival is due, then issues every arrival that is due at once (one wake-up
// per batch, not per request) to a fixed pool of Connections workers. Each
// worker owns at most one request in flight, so the pool is the in-flight
// limit: when every worker is busy, due requests wait in a queue inside
// openload, and that wait is send delay, never service time. The dispatcher
// never waits for responses, so a stalled server does not stop arrivals.
//
// Plain-http HTTP/1.1 goes on the lean path (Config.Lean, lean.go)
// when asked: each worker owns a connection and writes the request,
// serialised once, itself. Everything else goes through net/http's client.
//
// On Linux, an open run on the lean path that sends no HEAD and makes no
// retries is driven by one event loop instead (Config.Epoll,
// epoll_linux.go): a single goroutine owns the schedule and every
// connection, sleeps in epoll_wait(2) on the sockets and a timerfd, writes
// each request when it is due and reads each plain response when it
// arrives; the dispatcher and the workers are not started. Its thread asks
// the kernel for a short scheduler slice, so that it runs soon after it
// wakes on cores the server under test shares. The words stay the same:
// the connections are the in-flight limit, and waiting for one is send
// delay. HTTP/2 (h2c and TLS) has an event loop of its own on the same
// terms (h2loop_linux.go): streams over a few connections, frames by
// x/net/http2's Framer and hpack.
//
// A request's sent time is taken when it has a connection in hand, just
// before it is written (with net/http: when the transport hands it one,
// httptrace GotConn); when no connection could be had (refused, DNS, TLS),
// it is the moment the worker started the attempt. Its done time is taken
// after the response body has been read to the end and closed.
//
// Each worker puts its records in a shard of its own (sink.go); a single
// recorder goroutine collects the shards and owns the recorder
// (histograms, timeline, log) without locks.
//
// RunClosed (closed.go) runs a closed loop instead, users that wait for each
// response before sending again, to show what closed-loop tools report.
//
// With a retry policy (Config.Retry, retry.go) the worker that ran a
// request's first attempt also makes its retries, sleeping each backoff in
// between: a request waiting out a backoff holds its worker and counts in
// the in-flight limit. A retried request keeps its scheduled time, so its
// response time runs from there to the final attempt's done.
//
// What does not need the engine's state lives beside it: the retry policy
// and budget in package retry, HTTP/1.1 framing (request serialisation,
// response heads, bodies) in package h1, and openload's self-monitoring in
// package selfmon.
package engine

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/openload/openload/internal/framing"
	"github.com/openload/openload/internal/recorder"
	"github.com/openload/openload/internal/retry"
	"github.com/openload/openload/internal/selfmon"
	"github.com/openload/openload/internal/servertiming"
	"github.com/openload/openload/result"
	"github.com/openload/openload/schedule"
)

// Config describes what to send and how; Validate (config.go) checks it.
type Config struct {
	URL         *url.URL
	Method      string
	Header      http.Header
	Body        []byte
	Connections int           // in-flight / connection limit, 1 … MaxConnections
	Timeout     time.Duration // per request, from the attempt's start; > 0
	// DialTimeout bounds establishing a connection, at most Timeout
	// (dial.go); 0: Timeout.
	DialTimeout time.Duration
	Drain       time.Duration // wait for in-flight requests after the schedule ends
	// ClassHeaders are response headers whose values group requests
	// (recorder.Record.Class), at most recorder.MaxClassHeaders.
	ClassHeaders []string
	// ServerTiming parses Server-Timing response headers into the record.
	ServerTiming bool
	// StampHeader, if set, names a request header that carries each
	// request's scheduled time as Unix nanoseconds (wall clock): Stats.Start
	// + the scheduled offset. It is sent in canonical form.
	StampHeader string
	// Progress, if set, is called about once a second during an open-model
	// run with a snapshot, on the recorder's goroutine: it must return
	// quickly.
	Progress func(Progress)
	// Observe, if set, is called once before the run starts (before any
	// wait for StartAt, the recorder empty), then on the recorder's
	// goroutine about once a second during a run (open or closed) and
	// once more after the last record was added (Live.Final): the only
	// moments it may read the recorder. It must return quickly; it adds
	// nothing per request.
	Observe func(Live)
	// Transport, if set, replaces the default HTTP/1.1 keep-alive transport.
	Transport http.RoundTripper
	// Protocol is HTTP1 (also when empty), HTTP2 (TLS, ALPN; https URL)
	// or H2C (prior knowledge; http URL). See h2.go for how Connections
	// maps to streams and connections with HTTP/2.
	Protocol string
	// MaxStreams caps the streams in flight on one HTTP/2 connection; 0
	// leaves it to the server's SETTINGS_MAX_CONCURRENT_STREAMS.
	MaxStreams int
	// TLS, if set, configures TLS for https URLs (e.g. RootCAs that trust
	// a test server's certificate).
	TLS *tls.Config
	// Lean sends plain-http HTTP/1.1 requests with the lean client
	// (lean.go) instead of net/http's transport.
	Lean bool
	// Epoll drives the lean client with one event loop instead of a
	// goroutine per connection, where that applies: Linux, open runs,
	// no HEAD, no retries (epoll_linux.go); and HTTP/2 on an event loop
	// of its own instead of x/net/http2's transport: Linux, open runs,
	// no retries, no redirects followed (h2loop_linux.go).
	Epoll bool
	// Retry is the retry policy (package retry; retry.go sends the
	// retries); the zero value retries nothing.
	Retry retry.Policy
	// Resend is what openload's HTTP/1.1 clients send again, once, on a
	// new connection when a kept-alive one failed under a request before
	// any byte of its answer (wire.go): ResendIdempotent (also when
	// empty), ResendUnwritten or ResendNever. net/http's transport, which
	// sends https and HTTP/2, re-sends by its own rule: it takes only
	// ResendIdempotent.
	Resend string
	// Insecure skips TLS certificate verification (faults.go); off by
	// default: certificates are verified.
	Insecure bool
	// FollowRedirects follows up to MaxRedirects redirects and counts the
	// final status; by default a 3xx is a completed response (faults.go).
	FollowRedirects bool
	// StartAt, if set, is the wall-clock instant of the schedule's offset
	// 0: the run waits for it (connections are opened before), so that
	// shards on several machines start together (startat.go).
	StartAt time.Time
	// MaxBody, if > 0, caps the response body bytes read; the rest is
	// discarded by closing the connection and the response counted as
	// over the cap, still completed (faults.go).
	MaxBody int64
	// Bodies, if not empty, replace Body: request seq sends
	// Bodies[BodyIndex(seq)], in order or, with BodySample, drawn by
	// BodySeed (body.go), from BodyOffset on: the runs of a sweep take
	// them on from where the run before stopped (internal/sweep).
	Bodies     [][]byte
	BodySample bool
	BodySeed   uint64
	BodyOffset uint64
	// BodyTokens, if not empty, holds what openload knows of each of
	// Bodies (one each): the prompt tokens it counted and the output
	// tokens the body asks for, copied into the request's record
	// (Record.PromptTokens, unless the server's usage count came, and
	// Record.AskedTokens).
	BodyTokens []BodyTokens
	// Targets, if not empty, are the run's request mix: request seq goes
	// to Targets[TargetIndex(seq)], in turn or drawn by TargetWeights and
	// TargetSeed (targets.go), and its record carries the index
	// (Record.Target). They replace URL, Method, Header and Body, which
	// hold the first target's for what reads them; Bodies is not used
	// with them.
	Targets       []Target
	TargetWeights []float64 // nil: in turn, as vegeta takes them
	TargetSeed    uint64
	// TargetStream, if set, is a lazy mix (targets.go): request seq
	// goes to the seq-th target it gives, read as the run sends, as
	// vegeta's -lazy reads them. URL, Method, Header and Body are its
	// first target's (the run's origin); Targets and Bodies are not
	// used with it, and its records name no target (Record.Target 0).
	// Open runs only, on the goroutine clients (the event loops take
	// their requests from tables made before the start).
	TargetStream TargetStream
	// Stream reads every response body as an event stream (stream.go);
	// without it only text/event-stream responses are.
	Stream bool
	// GRPC sends each request as a gRPC call over HTTP/2 (grpc.go): the
	// URL's path is /pkg.Service/Method, Body or Bodies the request's
	// framed messages, Header its metadata; the answer's grpc-status is
	// its outcome. HTTP2 or H2C only. GRPCMaxMessage, if > 0, caps an
	// answer's message (0: GRPCMaxMessage, 4 MiB).
	GRPC           bool
	GRPCMaxMessage int64

	onRecord func(*recorder.Record) // tests: sees each record before the recorder does
	bytes    *wireBytes             // the run's generator's byte counts (bytes.go), set by Run
}

// Stats describes the run beyond what the recorder holds.
type Stats struct {
	Start       time.Time     // wall-clock start (offset 0): Config.StartAt when set
	Late        time.Duration // with Config.StartAt: how far past it the wait ended, < 0 if before (startat.go)
	End         time.Duration // offset of the last record's done
	ScheduleEnd time.Duration // offset at which dispatching ended
	Interrupted bool          // ctx was cancelled before the schedule ended
	MaxInFlight int
	LimitWaited int64 // requests that found every worker busy when due
	LogErr      error // first error writing the per-request log, if any
	// LoopErr is why the epoll client's event loop stopped before the
	// schedule's end, if it did (epoll_linux.go): the requests it had are
	// recorded, the rest of the schedule never was.
	LoopErr    error
	Dispatched int64
	Skipped    int64 // closed mode: pacing slots no user took (see RunClosed)
	// With Config.TargetStream: TargetsEnded when the stream ended
	// before the schedule, which stopped there (ScheduleEnd), TargetsErr
	// why when it was an error, and TargetsWaited the arrivals that came
	// due before their target had come (their wait is send delay).
	TargetsEnded  bool
	TargetsErr    error
	TargetsWaited int64
	// Generator is openload's own CPU use and GC pauses during the run
	// (package selfmon).
	Generator result.Generator
	// Client is what sent the requests: ClientEpoll (epoll_linux.go),
	// ClientLean (lean.go) or ClientNetHTTP.
	Client string
	// Predial is what was opened before the clock started (predial.go).
	Predial Predial
	// Path is the row of the engine's clients that sent an open run
	// (PathH2Loop … PathNetHTTP, client.go); "" for a closed loop.
	Path string
	// Refusal is the run's first refused answer, the beginning of its
	// body included (refusal.go); nil when no answer was a client error.
	Refusal *Refusal
	// BytesWritten and BytesRead are what openload wrote to its
	// connections and read from them until the last record, over TLS the
	// TCP connection's bytes (bytes.go); 0 with a transport of the
	// caller's.
	BytesWritten, BytesRead int64
}

// The clients of Stats.Client.
const (
	ClientEpoll   = "epoll"
	ClientLean    = "lean"
	ClientNetHTTP = "net/http"
)

func (g *generator) clientName() string {
	if g.lean != nil {
		return ClientLean
	}
	return ClientNetHTTP
}

// InterruptDrain bounds the drain after an interruption (ctx cancelled):
// the user asked to stop, so in-flight requests get at most this long.
const InterruptDrain = 2 * time.Second

var (
	errTimeout = errors.New("request timeout")
	errDrain   = errors.New("drain expired")
)

type item struct {
	seq  uint64
	off  time.Duration
	step *stepCall // a session's step (session.go); nil in every other run
	tgt  *Target   // its target, read lazily (Config.TargetStream); nil in every other run
}

// Run executes the schedule against cfg.URL and adds one record per
// scheduled request to rec. It returns when every scheduled request has an
// outcome. Cancelling ctx stops scheduling (the arrivals not yet due are
// never scheduled); in-flight requests then get cfg.Drain to finish.
func Run(ctx context.Context, cfg Config, s schedule.Schedule, rec *recorder.Recorder) (Stats, error) {
	cfg = cfg.mixed()                        // targets.go
	if err := cfg.check(false); err != nil { // config.go
		return Stats{}, err
	}
	var stats Stats
	g := begin(ctx, cfg, rec, &stats, make(chan item, 1<<14), predialCount(cfg.Connections, s.Expected()), s)
	defer g.release()

	var wg sync.WaitGroup
	dispatchDone := make(chan struct{})
	row, c := openClient(g, s, &stats, dispatchDone) // client.go
	stats.Path, stats.Client = row.path, row.client
	c.start(ctx, &wg)
	g.windDown(ctx, dispatchDone, &wg)
	stats.Dispatched = g.dispatched.Load()
	stats.LimitWaited = g.limitWaited.Load()
	stats.TargetsWaited = g.targetsWaited.Load()
	g.finish(ctx, &stats)
	return stats, nil
}

// begin sets up a run of cfg (checked) and starts its clock: the drain
// context, cancelled when the drain expires so that in-flight requests are
// abandoned and counted unfinished; the client, and the connections it
// opens before the start (predial.go); self-monitoring; the retry state;
// and the recorder goroutine, which owns rec until windDown returns. due
// is the open model's queue (nil for a closed loop), s the arrivals'
// schedule (nil for a closed loop). The caller defers g.release().
//
// Observe is called once before anything else, rec empty: a run waiting
// for its StartAt is seen waiting, its figures at 0.
func begin(ctx context.Context, cfg Config, rec *recorder.Recorder, stats *Stats, due chan item, predial int, s schedule.Schedule) *generator {
	cfg.StampHeader = http.CanonicalHeaderKey(cfg.StampHeader)
	drain, cancel := context.WithCancelCause(context.Background())
	g := &generator{cfg: cfg, due: due, drain: drain, drainCancel: cancel, pick: newPicker(&cfg), sched: s}
	if cfg.TargetStream != nil {
		g.lazy.ch = cfg.TargetStream.Targets()
	}
	g.cfg.bytes = &g.bytes
	g.nextDue.Store(notDue)
	if cfg.Observe != nil {
		cfg.Observe(Live{Rec: rec, Start: cfg.StartAt})
	}
	g.disconnect = g.connect()
	waitUntil(ctx, cfg.StartAt, predialLead) // startat.go
	g.holdEarly()                            // beat_linux.go
	stats.Predial = g.predial(predial)
	// The open model's dispatcher sleeps precisely to offset 0; a closed
	// loop's users would start at once, so its wait goes all the way.
	lead := startLead
	if due == nil {
		lead = 0
	}
	start, late := startClock(ctx, cfg.StartAt, lead) // startat.go: zero without StartAt
	g.mon = selfmon.Start()
	g.retry = newRetrier(cfg.Retry, g.since)
	stats.Client = g.clientName()
	g.rd = g.record(rec, stats)
	stats.Start, stats.Late = start, late
	if start.IsZero() {
		stats.Start = time.Now()
	}
	g.start = stats.Start
	rec.Begin(stats.Start)
	return g
}

// release closes the run's connections and its drain context.
func (g *generator) release() {
	closeWarm(g) // not adopted: the loop did not start
	g.disconnect()
	g.drainCancel(nil)
}

// finish fills the figures both models report once windDown returned.
func (g *generator) finish(ctx context.Context, stats *Stats) {
	stats.BytesWritten, stats.BytesRead = g.bytes.endW, g.bytes.endR // set before rd.done closed
	stats.Generator = g.mon.Stop()
	stats.MaxInFlight = int(g.maxInFlight.Load())
	stats.End = time.Duration(g.lastDone.Load())
	stats.Refusal = g.refusals.get()
	stats.Interrupted = ctx.Err() != nil && stats.Interrupted
}

// connect sets up how g sends: the lean HTTP/1.1 path (lean.go) when the
// configuration asks for it and allows it, an HTTP client otherwise. It
// returns a function that closes the connections g owns. g.drain must be
// set: when it is done, the lean path's exchanges in flight are aborted.
func (g *generator) connect() func() {
	cfg := g.cfg
	cfg.TLS = tlsConfig(cfg)
	// The lean path always sends the run's one request: it cannot follow
	// a redirect elsewhere.
	if cfg.Transport == nil && cfg.Lean && !cfg.FollowRedirects && (cfg.Protocol == "" || cfg.Protocol == HTTP1) {
		if ft := newLeanTransport(cfg, g.drain); ft != nil {
			g.lean = ft
			ft.refusals = &g.refusals
			stop := context.AfterFunc(g.drain, ft.abort)
			return func() { stop(); ft.closeAll() }
		}
	}
	transport := cfg.Transport
	closeIdle := func() {}
	switch {
	case transport == nil && (cfg.Protocol == HTTP2 || cfg.Protocol == H2C):
		transport, closeIdle = newH2Transport(cfg)
	case transport == nil:
		owned := NewTransport(cfg.Connections, cfg.Timeout)
		d := cfg.dialer()
		d.drain = g.drain
		owned.DialContext = countDials(d.DialContext) // dial.go, wire.go
		// The handshake too, with cfg.TLS: the run waits for a dial
		// under way (bytes.go).
		owned.DialTLSContext = d.transportTLS(owned.DialContext, cfg.TLS, owned.TLSHandshakeTimeout)
		owned.TLSClientConfig = cfg.TLS // unused beside DialTLSContext; kept for what reads the transport
		transport = owned
		closeIdle = owned.CloseIdleConnections
	}
	g.client = &http.Client{
		Transport:     transport,
		CheckRedirect: checkRedirect(cfg), // faults.go
	}
	return closeIdle
}

// windDown waits for dispatching to end (the schedule is spent or ctx was
// cancelled), then gives the requests in flight or queued the drain — at
// most InterruptDrain after an interruption — abandons what is left, waits
// for every worker and then for the recorder.
func (g *generator) windDown(ctx context.Context, dispatchDone <-chan struct{}, wg *sync.WaitGroup) {
	select {
	case <-dispatchDone:
	case <-ctx.Done():
	}
	drain := g.cfg.Drain
	if ctx.Err() != nil {
		drain = min(drain, InterruptDrain)
	}
	drainTimer := time.AfterFunc(drain, func() { g.drainCancel(errDrain) })
	<-dispatchDone
	wg.Wait()
	g.bytes.settle() // the drain bounds it: it ends the dials (transportTLS)
	drainTimer.Stop()
	close(g.rd.stop)
	<-g.rd.done
}

// recording is the recorder goroutine of a run: closing stop asks it to
// collect what is left and end; done is closed when it has.
type recording struct {
	stop chan struct{}
	done chan struct{}
}

// record starts the recorder goroutine: it adds the records of g's shards
// to rec (sink.go) until asked to stop, and then the last ones.
func (g *generator) record(rec *recorder.Recorder, stats *Stats) *recording {
	rd := &recording{stop: make(chan struct{}), done: make(chan struct{})}
	mix := len(g.cfg.Targets) > 0
	add := func(r *recorder.Record) {
		if mix {
			// A pure function of seq: the record of every outcome, a
			// request never sent included, names the target it was for.
			r.Target = uint32(g.pick.index(r.Seq))
		}
		g.cfg.bodyTokens(r)
		if g.cfg.onRecord != nil {
			g.cfg.onRecord(r)
		}
		if err := rec.Add(r); err != nil && stats.LogErr == nil {
			stats.LogErr = err
		}
	}
	g.sink.tokens = rec.AddTokens // stream.go
	g.sink.ends = rec.AddSession  // session.go
	go func() {
		defer close(rd.done)
		collect := time.NewTicker(collectEvery)
		defer collect.Stop()
		// Once a second: the progress snapshot, and a flush of the
		// per-request log so that a hard exit loses at most a second.
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			select {
			case <-rd.stop:
				g.sink.collect(add)
				g.bytes.end()
				if g.cfg.Observe != nil {
					g.cfg.Observe(g.live(rec, true))
				}
				return
			case <-collect.C:
				g.sink.collect(add)
			case <-tick.C:
				g.sink.collect(add)
				if err := rec.FlushLog(); err != nil && stats.LogErr == nil {
					stats.LogErr = err
				}
				if g.cfg.Progress != nil {
					g.cfg.Progress(g.progress(rec))
				}
				if g.cfg.Observe != nil {
					g.cfg.Observe(g.live(rec, false))
				}
			}
		}
	}()
	return rd
}

// NewTransport returns the HTTP/1.1 keep-alive transport the engine uses by
// default: at most conns connections, no proxy, no compression.
func NewTransport(conns int, timeout time.Duration) *http.Transport {
	return &http.Transport{
		Proxy:                 nil,
		DialContext:           dialer{timeout: timeout}.DialContext, // dial.go
		MaxIdleConns:          conns,
		MaxIdleConnsPerHost:   conns,
		MaxConnsPerHost:       conns,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   timeout,
		DisableCompression:    true,
		ForceAttemptHTTP2:     false,
		ExpectContinueTimeout: 0,
	}
}

// generator is the sending side of one run (Run or RunClosed): the client
// and its connections, the workers' shared counters, the drain and the
// recorder goroutine. It lives from begin to release.
type generator struct {
	cfg    Config
	client *http.Client   // nil on the lean path
	lean   *leanTransport // the lean HTTP/1.1 path, or nil (lean.go)
	warm   chan *leanConn // connections opened before the start (predial.go)
	h2warm []h2news       // the HTTP/2 loop's, opened before the start (h2dial_linux.go)
	// warmHold keeps the kernel stamping from before the clock starts (and
	// the HTTP/2 loop's connections are opened) until a loop takes it
	// (holdEarly, holdStamps).
	warmHold io.Closer
	start    time.Time
	due      chan item
	sink     sink        // records on their way to the recorder (sink.go)
	pick     picker      // which of the run's requests each one sends (targets.go)
	lazy     lazyTargets // Config.TargetStream's, taken by the dispatcher (targets.go)
	// targetsWaited counts the arrivals that waited for their target
	// (Stats.TargetsWaited).
	targetsWaited atomic.Int64
	drain         context.Context
	// set up by begin
	drainCancel context.CancelCauseFunc
	disconnect  func() // closes the connections the run owns
	mon         *selfmon.Monitor
	rd          *recording

	busy       atomic.Int64
	dispatched atomic.Int64
	started    atomic.Int64 // requests whose sending began (progress.go)
	// taken counts the requests that came due, each of which gets exactly
	// one record; unsent the started ones whose record says they never
	// left (no request could be made of them); nextDue is the offset of
	// the schedule's next arrival not taken yet, notDue when none is
	// (Live, progress.go).
	taken       atomic.Int64
	unsent      atomic.Int64
	nextDue     atomic.Int64
	sched       schedule.Schedule // the arrivals' schedule, for Live's offered rate; nil for a closed loop
	mark        progressMark      // the recorder goroutine's last progress snapshot
	maxInFlight atomic.Int64
	lastDone    atomic.Int64
	limitWaited atomic.Int64 // the dispatcher's or the loop's; read by Observe
	retry       *retrier     // nil without retries (retry.go)
	refusals    refusals     // the first refused answer (refusal.go)
	bytes       wireBytes    // written to and read from connections (bytes.go)
}

func (g *generator) since() time.Duration { return time.Since(g.start) }

// dispatch walks the schedule (arrive): each arrival, once due, is
// queued for the workers.
func (g *generator) dispatch(ctx context.Context, s schedule.Schedule, stats *Stats) {
	sh := g.sink.newShard()
	g.arrive(ctx, s, stats, func(seq uint64, off time.Duration, t *Target) {
		g.taken.Add(1)
		if g.busy.Load()+int64(len(g.due)) >= int64(g.cfg.Connections) {
			g.limitWaited.Add(1)
		}
		it := item{seq: seq, off: off, tgt: t}
		select {
		case g.due <- it:
		default:
			// The queue is full: every worker is busy and thousands wait.
			// Block until one frees up, unless the drain expires.
			select {
			case g.due <- it:
			case <-g.drain.Done():
				g.abandon(it, sh)
			}
		}
	})
}

// arrive walks the schedule: sleep until the next arrival is due, then
// hand start every arrival that is due, counted as dispatched first (the
// progress line never shows more requests sent than due). It is the open
// run's dispatcher (dispatch) and the session run's (session.go). With
// a TargetStream each arrival takes its target once due (nextTarget),
// before it counts: an arrival left without one was never scheduled.
func (g *generator) arrive(ctx context.Context, s schedule.Schedule, stats *Stats, start func(seq uint64, off time.Duration, t *Target)) {
	sl := newSleeper()
	defer sl.close()
	defer g.nextDue.Store(notDue)
	off, ok := s.Next()
	seq := seqOf(s, 0)
	for ok {
		g.nextDue.Store(int64(off))
		if ctx.Err() != nil {
			stats.Interrupted = true
			stats.ScheduleEnd = g.since()
			return
		}
		if now := g.since(); off > now {
			// Sleep in slices of at most maxSleep so that cancellation is
			// seen promptly, then re-read the clock.
			sl.sleep(min(max(off-now, minSleep), maxSleep))
			continue
		}
		var t *Target
		if g.lazy.ch != nil {
			if t = g.nextTarget(ctx, stats, off); t == nil { // targets.go
				stats.ScheduleEnd = g.since()
				return
			}
		}
		g.dispatched.Add(1)
		start(seq, off, t)
		off, ok = s.Next()
		seq = seqOf(s, seq+1)
	}
	stats.ScheduleEnd = g.since()
}

// seqOf is the number of the arrival s.Next returned last, next being
// the number that follows the one before: a shard's requests keep their
// index in the whole schedule (schedule.Indexed), so that the body, the
// retry jitter and the log's seq of request j are the whole run's.
func seqOf(s schedule.Schedule, next uint64) uint64 {
	if ix, ok := s.(schedule.Indexed); ok {
		return ix.Index()
	}
	return next
}

// minSleep is the shortest sleep of the dispatcher. Above a few thousand
// requests a second the next arrival is usually less than this away; the
// dispatcher then sleeps minSleep and issues the few arrivals that came due
// in one batch, instead of waking for each. Each wake-up readies workers on
// another thread, so batching saves CPU, at the price of up to minSleep of
// lateness, which shows as send delay (see docs/MEASUREMENTS.md,
// “minSleep”).
const minSleep = 300 * time.Microsecond

// maxSleep bounds one sleep of the dispatcher.
const maxSleep = 20 * time.Millisecond

// abandon records a request that never left the generator in sh and
// returns its done offset.
func (g *generator) abandon(it item, sh *shard) time.Duration {
	done := g.since()
	g.note(done)
	sh.put(&recorder.Record{Seq: it.seq, Scheduled: it.off, Done: done, Outcome: recorder.Unfinished, Kind: recorder.KindUnfinished})
	return done
}

func (g *generator) note(done time.Duration) {
	for {
		cur := g.lastDone.Load()
		if int64(done) <= cur || g.lastDone.CompareAndSwap(cur, int64(done)) {
			return
		}
	}
}

type worker struct {
	g     *generator
	conn  *leanConn // the lean path's connection, when idle (lean.go)
	shard *shard    // where its records go (sink.go)

	hr        *headReader // reads the lean path's plain heads, or nil (heads.go)
	stampBuf  []byte      // digits of the last stamp (stamp.go)
	stampVals []string    // unused header value slots (stamp.go)

	tmpls []netTemplate // what each request copies, one per target (fastreq.go)
}

func (g *generator) newWorker() *worker {
	w := &worker{g: g, shard: g.sink.newShard()}
	if g.lean != nil {
		w.hr = newHeadReader(g.cfg)
	}
	return w
}

func (g *generator) worker() {
	w := g.newWorker()
	for it := range g.due {
		w.issue(it)
	}
}

// issue sends one request and hands its record to the recorder; after the
// drain expired it abandons the request instead. It returns the request's
// done offset.
func (w *worker) issue(it item) time.Duration {
	g := w.g
	if g.drain.Err() != nil {
		return g.abandon(it, w.shard)
	}
	g.busyOne()
	r := w.attempt(it)
	g.done(&r, w.shard)
	return r.Done
}

// notSent counts r's request, started, out of the sent when its record
// says it never left (Live.Sent).
func (g *generator) notSent(r *recorder.Record) {
	if !r.WasSent {
		g.unsent.Add(1)
	}
}

// busyOne counts a request in flight, and as started for the progress
// line.
func (g *generator) busyOne() {
	g.started.Add(1)
	n := g.busy.Add(1)
	for {
		m := g.maxInFlight.Load()
		if n <= m || g.maxInFlight.CompareAndSwap(m, n) {
			return
		}
	}
}

// done counts r's request out of flight and puts r in sh.
func (g *generator) done(r *recorder.Record, sh *shard) {
	g.busy.Add(-1)
	g.notSent(r)
	g.note(r.Done)
	sh.put(r)
}

func (w *worker) do(it item) recorder.Record {
	g := w.g
	if g.lean != nil {
		return w.doLean(it)
	}
	r := recorder.Record{Seq: it.seq, Scheduled: it.off}
	// The request's attempts are followed by trace hooks of its own: a
	// hook of an earlier request's transport goroutine that runs late
	// cannot count here (wire.go).
	tries, base := newNetTries(g.drain, g.since)
	ctx, cancel := context.WithTimeoutCause(base, g.cfg.Timeout, errTimeout)
	defer cancel()
	var (
		req *http.Request
		err error
	)
	if it.step != nil {
		req, err = w.stepRequest(ctx, it) // session.go
	} else {
		req, err = w.request(ctx, it)
	}
	if err != nil {
		r.Done = g.since()
		r.Outcome, r.Kind = recorder.Failed, recorder.KindOther
		return r
	}
	attempt := g.since()
	resp, err := g.client.Do(req)
	tx, hand, rerr, quiet := tries.end(err == nil)
	if err == nil && it.step != nil {
		it.step.answer(resp) // session.go
	}
	if err == nil {
		err = g.response(resp, &r, w.shard)
	} else {
		err = truncated(err, rerr)
	}
	r.Done = g.since()
	if err == nil {
		r.Outcome = recorder.Completed
	} else {
		r.Outcome, r.Kind = classify(ctx, err)
		r.TLSCause = tlsCause(r.Kind, err) // tlscause.go
	}
	netUnanswered(&tx, &r, quiet)
	tx.apply(&r, attempt, hand)
	return r
}

// netUnanswered counts the last attempt of a request net/http sent (its
// re-sends netTries counted as they happened, wire.go) when it wrote and
// got no answer (quiet; a head cut short counts as none): closed under it
// when it ended reset, silent when it timed out or the drain ended it.
func netUnanswered(tx *sends, r *recorder.Record, quiet bool) {
	if !quiet || r.Status != 0 {
		return
	}
	switch {
	case r.Outcome == recorder.Failed && r.Kind == recorder.KindReset:
		tx.noAnswer(true)
	case r.Outcome == recorder.TimedOut, r.Outcome == recorder.Unfinished:
		tx.noAnswer(false)
	}
}

// response takes what the record needs from resp's head, reads its body to
// the end (or the run's MaxBody) and closes it; an event stream's content
// events go to sh (stream.go).
func (g *generator) response(resp *http.Response, r *recorder.Record, sh *shard) error {
	r.Status = resp.StatusCode
	fromHeader(g.cfg, resp.Header, r)
	r.Redirects = redirects(resp)
	if g.cfg.GRPC && resp.StatusCode == http.StatusOK {
		return g.grpcBody(resp, r, sh) // grpc.go
	}
	return g.body(resp.Body, streamFormat(g.cfg.Stream, resp.Header.Get("Content-Type")), r, sh)
}

// body reads b to the end (or the run's MaxBody), as a stream of format f
// when f is not nil (stream.go), and closes it. Memory is bounded whatever
// the body's size (faults.go).
func (g *generator) body(b io.ReadCloser, f framing.Format, r *recorder.Record, sh *shard) error {
	var gb *grab
	if g.refusals.wants(r.Status, r.Seq) {
		gb = newGrab()
		b = &grabBody{rc: b, g: gb}
	}
	var err error
	if f != nil {
		err = g.readStream(b, f, r, sh)
	} else {
		err = g.readBody(b, r)
	}
	if cerr := b.Close(); err == nil {
		err = cerr
	}
	if gb != nil && err == nil {
		g.refusals.keep(r.Seq, r.Status, gb)
	}
	return err
}

// fromHeader puts in r the values of cfg's class headers and the
// Server-Timing metrics of a response's header h: what a headReader
// (heads.go) takes from the bytes of a plain head.
func fromHeader(cfg Config, h http.Header, r *recorder.Record) {
	for i, name := range cfg.ClassHeaders[:min(len(cfg.ClassHeaders), recorder.MaxClassHeaders)] {
		r.Class[i] = h.Get(name)
	}
	if cfg.ServerTiming {
		servertiming.Parse(h.Values("Server-Timing"), func(m servertiming.Metric) {
			if m.HasDur && r.NTimings < recorder.MaxTimings {
				r.Timings[r.NTimings] = recorder.Timing{Name: m.Name, Dur: msDuration(m.Dur)}
				r.NTimings++
			}
		})
	}
}

// doLean is do on the lean HTTP/1.1 path (lean.go): no context, request
// copy or timer of its own; the timeout is the connection's deadline.
func (w *worker) doLean(it item) recorder.Record {
	g := w.g
	r := recorder.Record{Seq: it.seq, Scheduled: it.off}
	attempt := g.since()
	deadline := g.start.Add(attempt + g.cfg.Timeout)
	var stamp []byte
	if g.cfg.StampHeader != "" {
		stamp = w.stampDigits(it.off)
	}
	if w.conn == nil {
		w.conn = g.takeWarm() // predial.go
	}
	v := g.lean.variant(&g.pick, it.seq)
	switch {
	case it.step != nil:
		v = it.step.v // a session's step, serialised as it was made (session.go)
	case it.tgt != nil:
		lv := newVariant(&g.cfg, *it.tgt) // read lazily, sent once: serialised here (targets.go)
		v = &lv
	}
	var h heads
	a, tx, hand, err := g.lean.roundTrip(&w.conn, v, it.seq, deadline, stamp, g.since, w.hr, &h)
	switch {
	case a.resp != nil:
		if it.step != nil {
			it.step.answer(a.resp) // session.go
		}
		err = g.response(a.resp, &r, w.shard)
	default:
		r.Status = a.status // read by h1.ParseHead, or 0: no response
		h.apply(&r)
		if a.body != nil && err == nil {
			err = g.body(a.body, a.format, &r, w.shard) // chunked
		}
	}
	g.leanOutcome(&r, g.since(), attempt, hand, &tx, err)
	return r
}

// leanOutcome completes r, an exchange of the lean client attempted at
// offset attempt that ended at done with err: its done offset, its sent
// offsets and attempts (tx; hand: when the last connection was in hand, -1
// when none could be had) and its outcome.
func (g *generator) leanOutcome(r *recorder.Record, done, attempt, hand time.Duration, tx *sends, err error) {
	r.Done = done
	tx.apply(r, attempt, hand)
	switch {
	case err == nil:
		r.Outcome = recorder.Completed
	case g.drain.Err() != nil:
		r.Outcome, r.Kind = recorder.Unfinished, recorder.KindUnfinished
	case r.Done >= attempt+g.cfg.Timeout, errors.Is(err, os.ErrDeadlineExceeded):
		r.Outcome, r.Kind = recorder.TimedOut, recorder.KindTimeout
	default:
		r.Outcome, r.Kind = recorder.Failed, Kind(err)
	}
}

// classify maps a request error to its outcome and kind.
func classify(ctx context.Context, err error) (recorder.Outcome, recorder.ErrorKind) {
	switch context.Cause(ctx) {
	case errDrain:
		return recorder.Unfinished, recorder.KindUnfinished
	case errTimeout:
		return recorder.TimedOut, recorder.KindTimeout
	}
	return recorder.Failed, Kind(err)
}

// Kind classifies a transport error: refused, reset, timeout, tls or other;
// or the error event of a streamed answer (stream.go).
func Kind(err error) recorder.ErrorKind {
	var (
		netErr   net.Error
		recErr   tls.RecordHeaderError
		alertErr tls.AlertError
		certErr  *tls.CertificateVerificationError
		unkAuth  x509.UnknownAuthorityError
		hostErr  x509.HostnameError
		invErr   x509.CertificateInvalidError
	)
	switch {
	case errors.Is(err, errStreamEvent), errors.Is(err, errStreamUnfinished):
		return recorder.KindStream
	case errors.Is(err, errGRPCNoStatus):
		return recorder.KindGRPCStatus
	case errors.Is(err, errGRPCTooLarge):
		return recorder.KindGRPCSize
	case errors.Is(err, syscall.ECONNREFUSED):
		return recorder.KindRefused
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE),
		errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF),
		errors.Is(err, syscall.ECONNABORTED):
		return recorder.KindReset
	case errors.As(err, &recErr), errors.As(err, &alertErr), errors.As(err, &certErr),
		errors.As(err, &unkAuth), errors.As(err, &hostErr), errors.As(err, &invErr):
		return recorder.KindTLS
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, os.ErrDeadlineExceeded):
		return recorder.KindTimeout
	case errors.As(err, &netErr) && netErr.Timeout():
		return recorder.KindTimeout
	case h2Reset(err): // faults.go
		return recorder.KindReset
	case h2Protocol(err): // faults.go
		return recorder.KindProtocol
	case plainHTTPOverTLS(err): // faults.go
		return recorder.KindTLS
	case tlsAlert(err): // tlscause.go
		return recorder.KindTLS
	}
	return recorder.KindOther
}
