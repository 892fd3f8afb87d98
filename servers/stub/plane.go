package stub

import (
	"context"
	"math/rand/v2"
	"net/http"
	"sync"
	"time"
)

// planes runs the fence against real time: it turns the clock into
// offsets from the first request, publishes the borrowed plane's health
// samples and the revision changes as they fall due, draws the injected
// failures and scores the borrows on the borrowed plane's workers.
type planes struct {
	// off: no shadow intents, no primary failures, no plane faults. The
	// stub then skips the planes altogether (their counters stay 0), so
	// that the other patterns pay nothing for them.
	off    bool
	cfg    PlaneConfig
	faults []planeFault
	slots  chan struct{} // the borrowed plane's workers

	mu        sync.Mutex
	f         *fence
	rng       *rand.Rand
	intentN   int64 // requests that could have asked for a shadow score
	lastTick  int64 // last health tick considered; -1 before the first
	revisions int   // revision faults applied
	begun     map[PlaneFaultKind]int
}

func newPlanes(cfg PlaneConfig) *planes {
	faults, _ := parsePlaneFaults(cfg.PlaneFaults) // validated by Config.Validate
	return &planes{
		off:    cfg.ShadowShare == 0 && cfg.PrimaryFail == 0 && len(faults) == 0,
		cfg:    cfg,
		faults: faults,
		slots:  make(chan struct{}, cfg.BorrowWorkers),
		f: newFence(fenceParams{mode: cfg.Fence, primaryBudget: cfg.PrimaryBudget, borrowedBudget: cfg.BorrowBudget,
			window: cfg.BudgetWindow, depthLimit: cfg.BorrowDepth, maxAge: cfg.HealthMaxAge}),
		rng:      rand.New(rand.NewPCG(cfg.PlaneSeed, 0x9e3779b97f4a7c15)),
		lastTick: -1,
		begun:    make(map[PlaneFaultKind]int),
	}
}

// catchUpLocked applies, in time order, what fell due by offset d: the
// revision changes and the health samples (one per HealthEvery, none
// inside a stale-health window; a sample's depth is the depth now).
func (p *planes) catchUpLocked(d time.Duration) {
	for i, n := 0, 0; i < len(p.faults); i++ {
		if p.faults[i].kind != FaultRevision || p.faults[i].at > d {
			continue
		}
		if n++; n > p.revisions {
			p.revisions = n
			p.f.revise(p.faults[i].at)
		}
	}
	tick := int64(d / p.cfg.HealthEvery)
	if tick > p.lastTick {
		p.lastTick = tick
		at := time.Duration(tick) * p.cfg.HealthEvery
		if !faultActive(p.faults, FaultStaleHealth, at) {
			p.f.health(at, p.f.borrowDepth)
		}
	}
}

// shadowIntent is one request's shadow intent; b is guarded by planes.mu.
type shadowIntent struct {
	b borrow
}

// intent decides whether the request arriving at offset d asks for a
// shadow score (an exact share of requests: the n-th asks when
// ⌊n·share⌋ grows) and, if so, what the fence says. An admitted intent
// is returned with admitted true: the caller scores it in the background.
func (p *planes) intent(d time.Duration) (si *shadowIntent, admitted bool) {
	if p.off {
		return nil, false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.catchUpLocked(d)
	if p.cfg.ShadowShare <= 0 || faultActive(p.faults, FaultPrimarySaturate, d) {
		return nil, false
	}
	n := p.intentN
	p.intentN++
	if int64(float64(n+1)*p.cfg.ShadowShare) == int64(float64(n)*p.cfg.ShadowShare) {
		return nil, false
	}
	si = &shadowIntent{b: p.f.admit(d)}
	return si, si.b.open
}

// shadowIntent is intent at the offset of now from s's first request.
func (p *planes) shadowIntent(s *Server) (*shadowIntent, bool) {
	if p.off {
		return nil, false
	}
	return p.intent(s.sinceFirst(time.Now()))
}

// shadow is the X-Stub-Shadow value of si now.
func (p *planes) shadow(si *shadowIntent) Shadow {
	if si == nil {
		return ShadowNone
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return si.b.decision
}

// primaryAttempt brackets one primary attempt; end reports whether it
// failed (drawn at PrimaryFail, always during primary-saturate).
func (p *planes) primaryStart(d time.Duration, retry bool) {
	p.mu.Lock()
	p.catchUpLocked(d)
	p.f.primaryStart(d, retry)
	p.mu.Unlock()
}

func (p *planes) primaryEnd(d time.Duration) (failed bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.catchUpLocked(d)
	p.f.primaryEnd(d)
	return faultActive(p.faults, FaultPrimarySaturate, d) || (p.cfg.PrimaryFail > 0 && p.rng.Float64() < p.cfg.PrimaryFail)
}

// compensatePrimary asks the fence for a retry of a failed primary attempt.
func (p *planes) compensatePrimary(d time.Duration) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.catchUpLocked(d)
	return p.f.primaryFailed(d)
}

func (p *planes) stats(d time.Duration, started bool) FenceStats {
	p.mu.Lock()
	defer p.mu.Unlock()
	if started {
		p.catchUpLocked(d)
	}
	st := p.f.stats(d)
	if !started {
		st.HealthAgeMs = -1
	}
	for _, f := range p.faults {
		if started && d >= f.at {
			if st.Faults == nil {
				st.Faults = make(map[PlaneFaultKind]int)
			}
			st.Faults[f.kind]++
		}
	}
	for i := range st.Timeline {
		from := time.Duration(i) * time.Second
		for _, f := range p.faults {
			// Active at some instant of [from, from+1s): a window that
			// overlaps it, or a revision inside it.
			if (f.dur > 0 && f.at < from+time.Second && f.at+f.dur > from) || (f.dur == 0 && f.at >= from && f.at < from+time.Second) {
				st.Timeline[i].Faults = append(st.Timeline[i].Faults, f.kind)
			}
		}
	}
	return st
}

// sinceFirst is the offset of now from the first model request (the
// clock of the stalls and the plane faults).
func (s *Server) sinceFirst(now time.Time) time.Duration {
	s.mu.Lock()
	first := s.first
	s.mu.Unlock()
	return now.Sub(first)
}

// borrowAttempt runs one attempt on the borrowed plane: a worker, then
// BorrowLatency (SlowFactor times that, and a failure, when begun inside
// borrow-slow). alive is false when the server closed meanwhile.
func (s *Server) borrowAttempt() (ok, alive bool) {
	p := s.planes
	select {
	case p.slots <- struct{}{}:
	case <-s.closing:
		return false, false
	}
	defer func() { <-p.slots }()
	d := s.sinceFirst(time.Now())
	slow := faultActive(p.faults, FaultBorrowSlow, d)
	lat := p.cfg.BorrowLatency
	if slow {
		lat *= time.Duration(p.cfg.SlowFactor)
	}
	failed := slow
	if !slow && p.cfg.BorrowFail > 0 {
		p.mu.Lock()
		failed = p.rng.Float64() < p.cfg.BorrowFail
		p.mu.Unlock()
	}
	if lat > 0 {
		t := time.NewTimer(lat)
		defer t.Stop()
		select {
		case <-t.C:
		case <-s.closing:
			return false, false
		}
	}
	return !failed, true
}

// scoreBorrow scores an admitted intent in the background (the user's
// answer never waits for it): an attempt, one retry if it failed and the
// fence grants one, then the score delivered, late during late-score.
// The caller has done s.active.Add(1) for it.
func (s *Server) scoreBorrow(si *shadowIntent) {
	defer s.active.Done()
	p := s.planes
	ok, alive := s.borrowAttempt()
	if alive && !ok {
		d := s.sinceFirst(time.Now())
		p.mu.Lock()
		p.catchUpLocked(d)
		retry := p.f.borrowFailed(d, &si.b)
		p.mu.Unlock()
		if retry {
			ok, alive = s.borrowAttempt()
		}
	}
	d := s.sinceFirst(time.Now())
	p.mu.Lock()
	defer p.mu.Unlock()
	p.catchUpLocked(d)
	if !alive || !ok {
		p.f.drop(d, &si.b)
		return
	}
	p.f.score(d, &si.b, faultActive(p.faults, FaultLateScore, d))
}

// primaryCall is the model call of a request with the primary plane's
// failures: an attempt that fails is retried once when the primary
// budget grants a token. ok is false when the answer must be the
// worker-failed fallback; finished is false when the call was abandoned.
func (s *Server) primaryCall(ctx context.Context, r *http.Request) (finished, ok bool) {
	p := s.planes
	if p.off {
		finished = s.modelCall(ctx, r)
		return finished, finished
	}
	p.primaryStart(s.sinceFirst(time.Now()), false)
	finished = s.modelCall(ctx, r)
	failed := p.primaryEnd(s.sinceFirst(time.Now()))
	if !finished || !failed {
		return finished, finished
	}
	if !p.compensatePrimary(s.sinceFirst(time.Now())) {
		return true, false
	}
	p.primaryStart(s.sinceFirst(time.Now()), true)
	finished = s.modelCall(ctx, r)
	failed = p.primaryEnd(s.sinceFirst(time.Now()))
	return finished, finished && !failed
}
