package stub

import (
	"container/list"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/openload/openload/field"
)

// maxBody bounds how much of a request body is read (and discarded).
const maxBody = 1 << 20

// shutdownGrace bounds how long Close waits for connections to go idle
// before closing them hard. Released requests answer at once, so this is
// only reached if a client stops reading its response.
const shutdownGrace = 5 * time.Second

// Server is the stub model server. Create it with NewServer (listening on
// loopback) or NewUnstartedServer (then Start, or mount Handler in a server
// of your own), and always Close it.
type Server struct {
	// URL is "http://127.0.0.1:PORT", set by Start.
	URL string
	// Config is the validated configuration with derived defaults filled.
	// Do not change it after NewUnstartedServer.
	Config Config

	handler http.Handler
	metrics http.Handler // GET /metrics (metrics.go)
	stall   stallPlan
	dl      deadlineGate
	lim     *limiter      // nil when the limiter is off
	planes  *planes       // primary failures, the borrowed plane and its fence
	closing chan struct{} // closed by Close: releases every wait

	mu         sync.Mutex
	queue      list.List // of *waiter, oldest first
	inModel    int
	maxInModel int
	maxQueue   int
	est        *estimator
	first      time.Time // first model request; zero until then
	closed     bool
	srv        *http.Server
	serveDone  chan struct{}
	active     sync.WaitGroup // model requests inside the handler
	closeOnce  sync.Once

	// Test hooks, set before Start. grantHook is called with mu held each
	// time a request gets a worker slot, in grant order. callHook, when set,
	// replaces the Latency sleep of a model call (false = abandoned).
	// writeHook, when set, observes every answer respond writes, just before
	// its status is written. limitClock is the rate limiter's clock.
	grantHook func(*http.Request)
	callHook  func(context.Context, *http.Request) bool
	writeHook func(writeEvent)
	// prefillHook, when set, observes each completion request's prefill
	// as the token model computes it, before it is slept.
	prefillHook func(prompt, cached int, d time.Duration)
	limitClock  func() time.Time

	tok tokenState   // the OpenAI-compatible endpoints (openai.go)
	pc  *prefixCache // their prefix cache; nil when off (prefixcache.go)

	statsMu   sync.Mutex
	counts    counters
	queueHist *hdrhistogram.Histogram
	totalHist *hdrhistogram.Histogram
}

type counters struct {
	total, canceled, closed, stalled int64
	sources                          SourceCounts
	reasons                          ReasonCounts
	deadlineSent                     int64
	dropped                          DropCounts
	maxDwellSent                     time.Duration
}

// waiter is one request queued in front of the model. ready is closed when a
// worker slot is handed to it; granted is set (with mu held) at the same time.
type waiter struct {
	ready   chan struct{}
	granted bool
	elem    *list.Element
	req     *http.Request
}

// NewUnstartedServer validates cfg, fills the derived defaults (Listen ""
// becomes 127.0.0.1:0, BelievedLatency 0 becomes Latency) and returns a
// server that binds nothing until Start.
func NewUnstartedServer(cfg Config) (*Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	s := &Server{
		Config:     cfg,
		stall:      newStallPlan(cfg),
		dl:         newDeadlineGate(cfg),
		lim:        newLimiter(cfg, time.Now()),
		planes:     newPlanes(cfg.PlaneConfig),
		pc:         newPrefixCache(cfg),
		closing:    make(chan struct{}),
		est:        newEstimator(cfg, time.Now),
		limitClock: time.Now,
		queueHist:  newHist(),
		totalHist:  newHist(),
	}
	s.handler = http.HandlerFunc(s.serveHTTP)
	s.metrics = newMetricsHandler(s)
	return s, nil
}

// NewServer is NewUnstartedServer followed by Start.
func NewServer(cfg Config) (*Server, error) {
	s, err := NewUnstartedServer(cfg)
	if err != nil {
		return nil, err
	}
	if err := s.Start(); err != nil {
		return nil, err
	}
	return s, nil
}

// listenError is Start's error when it cannot listen: a *FieldError of
// Listen, so that a caller names the field as it names Listen elsewhere,
// over the listener's error (errors.Is and As reach both).
type listenError struct {
	fe  *FieldError
	err error
}

func (e *listenError) Error() string   { return e.fe.Error() }
func (e *listenError) Unwrap() []error { return []error{e.fe, e.err} }

// Start listens on Config.Listen, serves in a goroutine and sets URL.
func (s *Server) Start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return errors.New("stub: Start after Close")
	}
	if s.srv != nil {
		return errors.New("stub: server already started")
	}
	ln, err := net.Listen("tcp", s.Config.Listen)
	if err != nil {
		return &listenError{field.Errorf("Listen", s.Config.Listen, "stub: {Listen} %s: %v", s.Config.Listen, err), err}
	}
	s.srv = &http.Server{
		Handler: s.handler,
		// nginx's defaults (client_header_timeout 60s, keepalive_timeout
		// 75s): a connection a generator opens ahead and leaves unused
		// waits as long as at the server rehearsed for. At 10 s a
		// shard's spare connections were closed 8.5 s into its run, and
		// a request written as the FIN came got a reset (deploy/e2e).
		ReadHeaderTimeout: 60 * time.Second,
		IdleTimeout:       75 * time.Second,
		ErrorLog:          log.New(io.Discard, "", 0), // library code never prints
	}
	if s.Config.H2C {
		// net/http serves h2c itself (x/net/http2/h2c is deprecated, and
		// the connections it hijacks would outlive Close).
		s.srv.Protocols = new(http.Protocols)
		s.srv.Protocols.SetHTTP1(true)
		s.srv.Protocols.SetUnencryptedHTTP2(true)
	}
	s.serveDone = make(chan struct{})
	s.URL = "http://" + ln.Addr().String()
	go func(srv *http.Server, done chan struct{}) {
		defer close(done)
		_ = srv.Serve(ln) // returns http.ErrServerClosed on Close
	}(s.srv, s.serveDone)
	return nil
}

// Handler returns the server's handler, for httptest.NewServer or a server
// of your own. Call Close on s before closing that server: Close releases
// the requests waiting in front of the model, which the other server's own
// shutdown would otherwise wait for.
func (s *Server) Handler() http.Handler { return s.handler }

// Close stops the listener (if Start was called), releases every request
// waiting in the queue, in the model or in a stall (they are answered 503),
// and returns once every goroutine the server started and every model
// request inside the handler has finished. It is safe to call more than once.
func (s *Server) Close() {
	s.closeOnce.Do(func() {
		s.mu.Lock()
		s.closed = true
		close(s.closing)
		srv, done := s.srv, s.serveDone
		s.mu.Unlock()
		if srv != nil {
			ctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
			if err := srv.Shutdown(ctx); err != nil {
				_ = srv.Close()
			}
			cancel()
			<-done
		}
		s.active.Wait()
	})
}

func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet && r.URL.Path == "/stats" {
		st := s.Stats()
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(st)
		return
	}
	if r.Method == http.MethodGet && r.URL.Path == "/metrics" {
		s.metrics.ServeHTTP(w, r)
		return
	}
	if s.serveOpenAI(w, r) {
		return
	}
	s.serveModel(w, r)
}

// answer carries one request's timings to respond.
type answer struct {
	source     Source
	reason     Reason
	arrived    time.Time // the stub's clock at receipt
	stamp      stamp     // the arrival as the deadline gate knows it
	queueDur   time.Duration
	modelDur   time.Duration
	stallDur   time.Duration
	queued     bool          // was admitted (went to a worker or waited in the queue)
	retryAfter int64         // limiter answers: Retry-After seconds
	shadow     *shadowIntent // nil: the request asked for no shadow score

	// tok is set for the OpenAI-compatible endpoints: respond writes its
	// body (a stream or a JSON answer) in the place of answerBodies.
	tok *tokenCall

	// The misplaced deadline gate's verdict (position before-stall).
	checked bool
	pass    bool
	drop    DropReason
}

// writeEvent is one answer as respond writes it (see Server.writeHook).
type writeEvent struct {
	status   int
	source   Source // as sent in X-Stub-Source
	reason   Reason
	drop     DropReason // deadline drops only
	payload  bool       // a body is written (every answer but a drop)
	dwell    time.Duration
	hasDwell bool // the deadline gate is on and the dwell time is known
}

// outcome of waiting for a worker.
type outcome int

const (
	granted  outcome = iota
	rejected         // gate said no on arrival
	timedOut         // waited MaxQueueWait
	gone             // client went away or server closed
)

func (s *Server) serveModel(w http.ResponseWriter, r *http.Request) {
	a := answer{arrived: time.Now()}
	if s.dl.on() {
		a.stamp = s.dl.arrival(r, a.arrived) // read at receipt
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(r.Body, maxBody))
	if !s.enter() {
		http.Error(w, "stub: server closed", http.StatusServiceUnavailable)
		return
	}
	defer s.active.Done()
	ctx := r.Context()

	if s.limited(w, r, &a) {
		return
	}

	// A shadow intent is decided on arrival and scored in the background:
	// the answer never waits for it.
	if si, admitted := s.planes.shadowIntent(s); si != nil {
		a.shadow = si
		if admitted {
			s.active.Add(1)
			go s.scoreBorrow(si)
		}
	}

	if !s.gate(ctx, w, r, &a) {
		return
	}
	// granted: the model call holds a worker slot.
	start := time.Now()
	finished, answered := s.primaryCall(ctx, r)
	a.modelDur = time.Since(start)
	ok := finished
	if finished {
		s.checkEarly(&a)
		// A call that ends inside a stall keeps its worker until the stall
		// ends: nothing completes during a stall.
		a.stallDur, ok = s.holdStall(ctx)
	}
	s.release(finished)
	if !ok {
		s.abandon(w)
		return
	}
	a.source, a.reason = SourceModel, ReasonServed
	if !answered {
		a.source, a.reason = SourceFallback, ReasonWorkerFailed
	}
	s.respond(w, r, &a)
}

// limited runs a model request through the rate limiter, which sits in
// front of the gates: a rejected request never reaches the queue or the
// model. It answers a rejected request (429) and reports whether it did.
func (s *Server) limited(w http.ResponseWriter, r *http.Request, a *answer) bool {
	if s.lim == nil {
		return false
	}
	now := s.limitClock()
	_, ok, reset := s.lim.allow(now)
	if ok {
		return false
	}
	a.source, a.reason = SourceLimiter, ReasonRateLimited
	a.retryAfter = retryAfter(reset, now)
	a.queueDur = time.Since(a.arrived)
	s.respond(w, r, a)
	return true
}

// gate waits for a model slot behind the gate. It reports whether one was
// granted; if not, the request has been answered (a fallback) or
// abandoned (its client gone).
func (s *Server) gate(ctx context.Context, w http.ResponseWriter, r *http.Request, a *answer) bool {
	out, reason := s.acquire(ctx, r)
	a.queueDur = time.Since(a.arrived)
	switch out {
	case gone:
		s.abandon(w)
		return false
	case rejected, timedOut:
		a.source, a.reason, a.queued = SourceFallback, reason, out == timedOut
		s.respond(w, r, a)
		return false
	}
	a.queued = true
	return true
}

// enter registers a model request, starting the stall clock on the first
// one. It returns false once the server is closed.
func (s *Server) enter() bool {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return false
	}
	s.active.Add(1)
	if s.first.IsZero() {
		s.first = time.Now()
	}
	s.mu.Unlock()
	s.statsMu.Lock()
	s.counts.total++
	s.statsMu.Unlock()
	return true
}

// acquire applies the arrival gate and, if admitted, waits in the FIFO queue
// until a worker slot is handed over, MaxQueueWait passes, the client goes
// away or the server closes.
func (s *Server) acquire(ctx context.Context, r *http.Request) (outcome, Reason) {
	s.mu.Lock()
	in := gateInput{
		Queue:    s.queue.Len(),
		InModel:  s.inModel,
		Workers:  s.Config.slots(),
		QueueCap: s.Config.QueueCap,
		Budget:   s.Config.WaitBudget,
	}
	if s.Config.Policy == PolicyAdmission {
		in.Estimate, _ = s.est.wait(in.Queue)
	}
	if ok, reason := decide(s.Config.Policy, in); !ok {
		s.mu.Unlock()
		return rejected, reason
	}
	if in.Queue == 0 && s.inModel < in.Workers {
		s.inModel++
		s.maxInModel = max(s.maxInModel, s.inModel)
		if s.grantHook != nil {
			s.grantHook(r)
		}
		s.mu.Unlock()
		return granted, ""
	}
	wt := &waiter{ready: make(chan struct{}), req: r}
	wt.elem = s.queue.PushBack(wt)
	s.maxQueue = max(s.maxQueue, s.queue.Len())
	s.mu.Unlock()

	timer := time.NewTimer(s.Config.MaxQueueWait)
	defer timer.Stop()
	var out outcome
	var reason Reason
	select {
	case <-wt.ready:
		return granted, ""
	case <-timer.C:
		out, reason = timedOut, ReasonWaitTimeout
	case <-ctx.Done():
		out = gone
	case <-s.closing:
		out = gone
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if wt.granted {
		// The slot was handed over while we were leaving.
		if out == timedOut {
			return granted, "" // just in time: serve it
		}
		s.releaseLocked(false)
		return out, ""
	}
	s.queue.Remove(wt.elem)
	return out, reason
}

// release frees a worker slot; completed says whether the model call
// finished (and so counts towards the completion rate).
func (s *Server) release(completed bool) {
	s.mu.Lock()
	s.releaseLocked(completed)
	s.mu.Unlock()
}

// releaseLocked hands the slot to the oldest waiter, or frees it.
func (s *Server) releaseLocked(completed bool) {
	if completed {
		s.est.completed()
	}
	if front := s.queue.Front(); front != nil {
		wt := s.queue.Remove(front).(*waiter)
		wt.granted = true
		close(wt.ready)
		if s.grantHook != nil {
			s.grantHook(wt.req)
		}
		return
	}
	s.inModel--
}

// modelCall takes Latency, or returns false early if the client goes away
// or the server closes.
func (s *Server) modelCall(ctx context.Context, r *http.Request) bool {
	if s.callHook != nil {
		return s.callHook(ctx, r)
	}
	if s.Config.Latency <= 0 {
		return true
	}
	t := time.NewTimer(s.Config.Latency)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	case <-s.closing:
		return false
	}
}

// holdStall waits while the current instant is inside a stall window and
// returns how long it waited; ok is false if the client went away or the
// server closed meanwhile.
func (s *Server) holdStall(ctx context.Context) (held time.Duration, ok bool) {
	if s.stall.dur <= 0 {
		return 0, true
	}
	s.mu.Lock()
	first := s.first
	s.mu.Unlock()
	begin := time.Now()
	waited := false
	for {
		now := time.Now()
		end, stalled := s.stall.within(now.Sub(first))
		if !stalled {
			if !waited {
				return 0, true
			}
			s.statsMu.Lock()
			s.counts.stalled++
			s.statsMu.Unlock()
			return now.Sub(begin), true
		}
		waited = true
		t := time.NewTimer(first.Add(end).Sub(now))
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return time.Since(begin), false
		case <-s.closing:
			t.Stop()
			return time.Since(begin), false
		}
	}
}

// abandon accounts for a request that gets no answer: the client went away
// (canceled), or Close released it (closed, answered 503).
func (s *Server) abandon(w http.ResponseWriter) {
	closed := false
	select {
	case <-s.closing:
		closed = true
	default:
	}
	s.statsMu.Lock()
	if closed {
		s.counts.closed++
	} else {
		s.counts.canceled++
	}
	s.statsMu.Unlock()
	if closed {
		http.Error(w, "stub: server closed", http.StatusServiceUnavailable)
	}
}

// respond is the single place where an answer is written. Everything that
// can delay an answer (queue, model, stalls) happens before it or at its
// top; the deadline gate (position last) checks after all of it,
// immediately before the status is written.
func (s *Server) respond(w http.ResponseWriter, r *http.Request, a *answer) {
	s.checkEarly(a)
	// Everything is frozen during a stall: fallbacks wait for its end too.
	// (Model answers were held with their worker already; this is then a
	// no-op unless a new stall began in between.)
	held, ok := s.holdStall(r.Context())
	a.stallDur += held
	if !ok {
		s.abandon(w)
		return
	}

	// The deadline gate. Nothing can delay the answer after the clock is
	// read below: the stats lock is taken first, so even waiting for it
	// counts as dwell time. Count before writing, so a client that has its
	// answer sees it in Stats.
	s.statsMu.Lock()
	now := time.Now()
	tm := timings{queue: a.queueDur, model: a.modelDur, total: now.Sub(a.arrived), stall: a.stallDur}
	ev := writeEvent{status: http.StatusOK, source: a.source, reason: a.reason, payload: true}
	if a.source == SourceLimiter {
		ev.status = http.StatusTooManyRequests
	}
	if s.dl.on() {
		dwell, pass, drop := checkDwell(s.dl.clock(now), a.stamp, s.dl.deadline)
		if a.checked { // misplaced gate: its earlier verdict stands
			pass, drop = a.pass, a.drop
		}
		tm.dwell, tm.hasDwell = dwell, a.stamp.invalid == ""
		ev.dwell, ev.hasDwell = tm.dwell, tm.hasDwell
		if pass {
			s.counts.deadlineSent++
			s.counts.maxDwellSent = max(s.counts.maxDwellSent, dwell)
		} else {
			s.counts.dropped.add(drop)
			ev = writeEvent{status: s.dl.status, source: SourceDeadline, reason: ReasonDeadline, drop: drop,
				dwell: ev.dwell, hasDwell: ev.hasDwell}
		}
	}
	if ev.payload {
		s.countSentLocked(a)
	}
	if a.queued {
		recordDuration(s.queueHist, a.queueDur)
	}
	recordDuration(s.totalHist, tm.total)
	s.statsMu.Unlock()

	h := w.Header()
	if ev.payload {
		h.Set("Content-Type", a.tok.contentType(a.source))
	}
	h.Set("X-Stub-Source", string(ev.source))
	h.Set("X-Stub-Reason", string(ev.reason))
	h.Set("X-Stub-Shadow", string(s.planes.shadow(a.shadow)))
	if ev.drop != "" {
		h.Set("X-Stub-Drop", string(ev.drop))
	}
	if ev.status == http.StatusTooManyRequests {
		h.Set("Retry-After", strconv.FormatInt(a.retryAfter, 10))
	}
	h.Set("Server-Timing", tm.header())
	if s.writeHook != nil {
		s.writeHook(ev)
	}
	w.WriteHeader(ev.status)
	if ev.payload {
		if a.tok != nil {
			s.writeTokens(w, r, a)
		} else {
			_, _ = w.Write(answerBodies[a.reason])
		}
	}
}

// checkEarly is the misplaced deadline gate (position before-stall): it
// decides before the stall holds that follow it, so an answer it passes
// can still leave late. respond keeps its verdict but reports the dwell
// time at the write. It decides once; with position last it does nothing.
func (s *Server) checkEarly(a *answer) {
	if !s.dl.on() || s.dl.position != PositionBeforeStall || a.checked {
		return
	}
	_, a.pass, a.drop = checkDwell(s.dl.clock(time.Now()), a.stamp, s.dl.deadline)
	a.checked = true
}

// countSentLocked counts an answer sent, per source and reason.
func (s *Server) countSentLocked(a *answer) {
	switch a.source {
	case SourceModel:
		s.counts.sources.Model++
	case SourceFallback:
		s.counts.sources.Fallback++
	case SourceLimiter:
		s.counts.sources.Limiter++
	}
	switch a.reason {
	case ReasonServed:
		s.counts.reasons.Served++
	case ReasonQueueFull:
		s.counts.reasons.QueueFull++
	case ReasonOverBudget:
		s.counts.reasons.OverBudget++
	case ReasonWaitTimeout:
		s.counts.reasons.WaitTimeout++
	case ReasonRateLimited:
		s.counts.reasons.RateLimited++
	case ReasonWorkerFailed:
		s.counts.reasons.WorkerFailed++
	}
}

// timings are the Server-Timing metrics of one answer.
type timings struct {
	queue, model, total, stall time.Duration
	dwell                      time.Duration
	hasDwell                   bool
}

// header formats the W3C Server-Timing header value, durations in ms with
// 3 decimals: "queue;dur=12.345, model;dur=50.012, total;dur=62.400",
// followed by ", stall;dur=…" when a stall held the answer back and
// ", dwell;dur=…" when the deadline gate is on and the dwell time is known
// (negative for a stamp from the future).
func (t timings) header() string {
	b := make([]byte, 0, 128)
	b = appendMetric(b, "queue", t.queue)
	b = append(b, ", "...)
	b = appendMetric(b, "model", t.model)
	b = append(b, ", "...)
	b = appendMetric(b, "total", t.total)
	if t.stall > 0 {
		b = append(b, ", "...)
		b = appendMetric(b, "stall", t.stall)
	}
	if t.hasDwell {
		b = append(b, ", "...)
		b = appendMetric(b, "dwell", t.dwell)
	}
	return string(b)
}

func appendMetric(b []byte, name string, d time.Duration) []byte {
	b = append(b, name...)
	b = append(b, ";dur="...)
	return strconv.AppendFloat(b, float64(d)/float64(time.Millisecond), 'f', 3, 64)
}

// answerBodies holds the JSON bodies, one per reason.
var answerBodies = func() map[Reason][]byte {
	type body struct {
		Source Source   `json:"source"`
		Reason Reason   `json:"reason"`
		Items  []string `json:"items,omitempty"`
	}
	m := make(map[Reason][]byte)
	add := func(src Source, r Reason, items ...string) {
		b, err := json.Marshal(body{src, r, items})
		if err != nil {
			panic(err)
		}
		m[r] = append(b, '\n')
	}
	add(SourceModel, ReasonServed, "personal-1", "personal-2", "personal-3")
	for _, r := range []Reason{ReasonQueueFull, ReasonOverBudget, ReasonWaitTimeout, ReasonWorkerFailed} {
		add(SourceFallback, r, "popular-1", "popular-2", "popular-3")
	}
	add(SourceLimiter, ReasonRateLimited)
	return m
}()

// Stats returns a snapshot of the server-side counters, queue state,
// estimator and histograms (the same data as GET /stats).
func (s *Server) Stats() Stats {
	var st Stats
	st.Policy = s.Config.Policy

	s.mu.Lock()
	st.QueueLen = s.queue.Len()
	st.MaxQueueLen = s.maxQueue
	st.InModel = s.inModel
	st.MaxInModel = s.maxInModel
	wait, es := s.est.wait(st.QueueLen)
	if !s.first.IsZero() {
		st.Stalls = s.stall.begun(time.Since(s.first))
	}
	first := s.first
	s.mu.Unlock()
	st.Fence = s.planes.stats(time.Since(first), !first.IsZero())
	st.Estimator = EstimatorStats{
		Name:              s.Config.Estimator,
		ThroughputPerSec:  es.perSec,
		UsingBelieved:     es.usingBelieved,
		WindowCompletions: es.samples,
		WindowCoveredSec:  es.covered.Seconds(),
		WaitEstimateMs:    float64(wait) / float64(time.Millisecond),
	}

	if s.lim != nil {
		st.Limiter = LimiterStats{
			RPS:       s.Config.LimitRPS,
			Shards:    s.Config.LimitShards,
			WindowMs:  durMs(s.Config.LimitWindow),
			Routing:   s.Config.LimitRouting,
			Seed:      s.Config.LimitSeed,
			Allowance: s.lim.allowance,
			PerShard:  s.lim.stats(),
		}
		for _, sh := range st.Limiter.PerShard {
			st.Limiter.Accepted += sh.Accepted
			st.Limiter.Rejected += sh.Rejected
		}
	}

	st.Tokens = TokenStats{
		ActiveSequences:  s.tok.active.Load(),
		Streams:          s.tok.streams.Load(),
		StreamsCompleted: s.tok.completed.Load(),
		OutputTokens:     s.tok.tokens.Load(),
		Lateness:         s.tok.lateness(),
		PrefixCache:      s.pc.stats(),
	}

	s.statsMu.Lock()
	defer s.statsMu.Unlock()
	c := s.counts
	st.Total = c.total
	st.Sources = c.sources
	st.Reasons = c.reasons
	st.Canceled = c.canceled
	st.Closed = c.closed
	st.StalledRequests = c.stalled
	st.InFlight = c.total - c.sources.Model - c.sources.Fallback - c.sources.Limiter - c.dropped.Total - c.canceled - c.closed
	st.Deadline = DeadlineStats{
		DeadlineMs:     durMs(s.Config.Deadline),
		Status:         s.Config.DeadlineStatus,
		ArrivalStamp:   s.Config.ArrivalStamp,
		ClockSkewMs:    durMs(s.Config.ClockSkew),
		Position:       s.Config.DeadlinePosition,
		Sent:           c.deadlineSent,
		Dropped:        c.dropped,
		MaxDwellSentMs: durMs(c.maxDwellSent),
	}
	st.QueueWait = percentiles(s.queueHist)
	st.TotalTime = percentiles(s.totalHist)
	return st
}
