// Package sweep runs one open run per offered rate (a sweep) and searches
// for the highest rate at which every objective holds (a capacity search).
// Every point is a full run through loadtest, with its own checks; the
// package never prints. It runs points and decides (the knee, a search's
// verdicts, the outcome); internal/report renders what it decided, from
// the sweep file (SweepFile, SearchFile, RepeatsFile) that -o also saves.
//
// # The knee
//
// A sweep names its knee: the first point, in increasing offered rate,
// where response p99 exceeds Knee × the lowest point's response p99, or an
// objective breaks, and stays so at every higher rate. Below its capacity an open server's response time
// stays near its service time; past it the queue grows for as long as the
// run lasts, and response time with it: the hockey stick.
//
// # Early stop
//
// A point (a probe of a search) may stop early once a breach is certain,
// so that a search does not hammer a server long past its knee. The rule
// uses counts only, so it cannot stop a run that would have passed: for an
// objective "response.pQ <= L", every request scheduled at least L before
// now and not yet done will have a response time above L. The requests
// scheduled by now − L are at least Due at the last snapshot taken by then;
// at most Done of them are done. When
//
//	Due(now − L) − Done(now) > (1 − Q) · N
//
// with N an upper bound on the run's count (⌊λ·D⌋ for constant arrivals,
// λ·D + 5√(λ·D) otherwise), more than a (1 − Q) share of the run is
// already above L and the percentile is breached. For "errors <= E", the
// run stops once the failed requests exceed E · N.
package sweep

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/openload/openload/internal/engine"
	"github.com/openload/openload/internal/loadtest"
	"github.com/openload/openload/result"
	"github.com/openload/openload/verify"
)

// DefaultKnee is the factor over the lowest point's response p99 that
// names the knee.
const DefaultKnee = 2

// RunFunc runs one point and judges it: loadtest.Judged, or the CLI's
// rig's Point (loadtest.Rig), whose runs are live series of
// their own.
type RunFunc func(context.Context, loadtest.Options) (loadtest.Outcome, error)

// Options describe a sweep.
type Options struct {
	// Base is the run of every point, its objectives with it
	// (Base.Objectives); each point sets its Schedule.Rate.
	Base  loadtest.Options
	Rates []float64     // offered rates, each > 0
	Pause time.Duration // between points, so one's backlog does not leak into the next
	Knee  float64       // 0: DefaultKnee
	// EarlyStop stops a point once a breach is certain (see the package
	// comment).
	EarlyStop bool
	// OnPoint, if set, is called after each point, from Run's goroutine.
	OnPoint func(Point)
	Run     RunFunc
	// taken counts the request indexes the runs so far have taken
	// (span), so that each run's bodies follow the last run's
	// (engine.Config.BodyOffset): set by Run, Repeat, RunSearch and
	// RunProfile, and shared by the copies of Options they make.
	taken *uint64
}

// Point is one run of a sweep or a search.
type Point struct {
	Rate float64 // offered: 0 for the synchronous probe, +Inf for the throughput probe
	// Kind is a profile's probe (result.PointSynchronous,
	// result.PointThroughput), empty for an open point at Rate.
	Kind     string
	Result   *result.Result
	Findings []verify.Finding
	SLOs     []verify.SLOResult // the objectives, with openload's defaults, as the run was judged (loadtest.Judged)
	// Valid: no check failed (verify.Fail); the measurement holds.
	Valid bool
	// Stopped says why the point stopped early; empty when it ran whole.
	Stopped string
}

// Label names the point in words: its offered rate ("30/s"), or which
// probe of a profile it is.
func (p Point) Label() string {
	switch p.Kind {
	case "":
		return fmtRate(p.Rate) + "/s"
	case result.PointSynchronous:
		return "the synchronous point"
	}
	return "the " + p.Kind + " probe"
}

// NoData is the first objective of the point whose figure had no samples
// (verify.SLOResult.NoData): a point that measured nothing of it fails.
// Nil when every objective had data.
func (p Point) NoData() *verify.SLOResult {
	for i := range p.SLOs {
		if p.SLOs[i].NoData && p.Stopped == "" {
			return &p.SLOs[i]
		}
	}
	return nil
}

// Pass reports whether the point met every objective, ran whole and
// measured validly.
func (p Point) Pass() bool {
	return p.Valid && p.Stopped == "" && !verify.Breached(p.SLOs)
}

// Completed is the point's throughput: completed requests per second of
// the run, from its start to its last response.
func (p Point) Completed() float64 { return result.FilePoint{Result: p.Result}.Completed() }

// Sweep is the outcome of Run.
type Sweep struct {
	Points []Point
	// Knee is the index of the knee in Points, -1 when none; KneeWhy says
	// what marked it.
	Knee    int
	KneeWhy string
	// Factor is the knee factor applied (Options.Knee, or DefaultKnee).
	Factor float64
}

// Validate checks the options.
func (o *Options) Validate() error {
	if len(o.Rates) == 0 {
		return errors.New("no rate to sweep")
	}
	for _, r := range o.Rates {
		if math.IsNaN(r) || math.IsInf(r, 0) || r <= 0 {
			return fmt.Errorf("rate %v: want a finite number > 0", r)
		}
	}
	if o.Pause < 0 {
		return fmt.Errorf("pause %v: want ≥ 0", o.Pause)
	}
	if math.IsNaN(o.Knee) || o.Knee < 0 || (o.Knee > 0 && o.Knee <= 1) {
		return fmt.Errorf("knee factor %v: want > 1", o.Knee)
	}
	return nil
}

// Run runs every rate, lowest first, and names the knee. It stops at the
// first point that could not run at all, and returns the points so far
// with the error. A point whose objective had no data fails (Point.NoData)
// and the sweep goes on: the caller says so.
func Run(ctx context.Context, o Options) (*Sweep, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	rates := slices.Clone(o.Rates)
	slices.Sort(rates)
	o.taken = new(uint64)
	sw := &Sweep{Knee: -1, Factor: o.Knee}
	if sw.Factor == 0 {
		sw.Factor = DefaultKnee
	}
	for i, r := range rates {
		if i > 0 && !pause(ctx, o.Pause) {
			break
		}
		p, err := RunPoint(ctx, o, r)
		if err != nil {
			return sw, err
		}
		sw.Points = append(sw.Points, p)
		if o.OnPoint != nil {
			o.OnPoint(p)
		}
		if p.Result.Interrupted && p.Stopped == "" {
			break // the caller's context ended
		}
	}
	sw.Knee, sw.KneeWhy = knee(sw.Points, sw.Factor)
	return sw, nil
}

// pause waits d unless ctx ends first; false when it did.
func pause(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// knee is the first point from which every point is past the knee: its
// response p99 exceeds k × the first point's, or it broke an objective (or
// stopped early). Requiring every later point to agree keeps one noisy
// point below capacity (a pause of a shared machine) from naming a knee
// that the higher rates contradict.
func knee(points []Point, k float64) (int, string) {
	if len(points) == 0 {
		return -1, ""
	}
	if k == 0 {
		k = DefaultKnee
	}
	base := points[0].Result.Response.P99
	past := func(i int) string {
		p := points[i]
		switch {
		case p.Stopped != "":
			return "stopped early: " + p.Stopped
		case verify.Breached(p.SLOs):
			for _, s := range p.SLOs {
				if !s.Pass {
					return "objective broken: " + s.Message
				}
			}
		case i > 0 && p.Result.Response.P99 > k*base:
			return fmt.Sprintf("response p99 %.3f ms > %s × the lowest rate's %.3f ms", p.Result.Response.P99, fmtFactor(k), base)
		}
		return ""
	}
	at, why := -1, ""
	for i := len(points) - 1; i >= 0; i-- {
		w := past(i)
		if w == "" {
			break
		}
		at, why = i, w
	}
	return at, why
}

func fmtFactor(k float64) string { return fmt.Sprintf("%g", k) }

// RunPoint runs the base options at rate r, judged. Within a sweep, a
// search or repeats, its bodies follow the previous run's
// (Options.taken).
func RunPoint(ctx context.Context, o Options, r float64) (Point, error) {
	run := o.Run
	if run == nil {
		run = loadtest.Judged
	}
	opt := o.Base
	opt.Schedule.Rate = r
	if o.taken != nil {
		opt.BodyOffset += *o.taken
	}
	objs := verify.WithDefault(opt.Objectives)
	var w *watch
	if o.EarlyStop {
		var cancel context.CancelFunc
		ctx, cancel = context.WithCancel(ctx)
		defer cancel()
		w = newWatch(objs, opt, cancel)
		prev := opt.Progress
		opt.Progress = func(p engine.Progress) {
			if prev != nil {
				prev(p)
			}
			w.see(p)
		}
	}
	oc, err := run(ctx, opt)
	if oc.Result == nil {
		return Point{Rate: r}, fmt.Errorf("rate %s/s: %w", fmtRate(r), err)
	}
	if o.taken != nil {
		*o.taken += span(opt, oc.Result)
	}
	p := Point{Rate: r, Result: oc.Result, Findings: oc.Findings, Valid: verify.Worst(oc.Findings) != verify.Fail, SLOs: oc.Objectives}
	if w != nil {
		p.Stopped = w.reason()
	}
	return p, nil
}

func fmtRate(r float64) string { return fmt.Sprintf("%g", r) }

// watch decides, from progress snapshots, when a breach is certain (see
// the package comment). see runs on the engine's recorder goroutine,
// reason on the caller's after the run: the mutex orders them.
type watch struct {
	mu      sync.Mutex
	objs    []verify.Objective
	n       float64 // upper bound on the run's count
	history []engine.Progress
	cancel  context.CancelFunc
	why     string
}

func newWatch(objs []verify.Objective, o loadtest.Options, cancel context.CancelFunc) *watch {
	// The count check's own bound, from the process's row
	// (schedule.Process.Spread): for gamma arrivals √(Λ/k), wider than a
	// Poisson count's √Λ when k < 1.
	return &watch{objs: objs, n: o.Schedule.MaxCount(), cancel: cancel}
}

func (w *watch) see(p engine.Progress) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.why != "" {
		return
	}
	w.history = append(w.history, p)
	for _, o := range w.objs {
		if why := w.breached(o, p); why != "" {
			w.why = why
			w.cancel()
			return
		}
	}
}

// breached is why o is certainly breached at snapshot p, or "". It
// bounds o's figure from below with the counts so far, and verify judges
// the bound (verify.Objective.BreachedFrom).
func (w *watch) breached(o verify.Objective, p engine.Progress) string {
	if o.Metric == "errors" {
		// At least this share of the run failed.
		if o.BreachedFrom(float64(p.Failed) / w.n) {
			return fmt.Sprintf("%d requests failed by %s, more than %s of the run's %.0f", p.Failed, p.Elapsed.Round(time.Millisecond), o.Expr, w.n)
		}
		return ""
	}
	if o.Metric != "response" {
		return ""
	}
	var q float64
	switch o.Stat {
	case "max":
		q = 1
	case "p50", "p90", "p95", "p99", "p999", "p9999":
		q = quantile(o.Stat)
	default:
		return ""
	}
	bound := time.Duration(o.Threshold * float64(time.Millisecond))
	// Due at the last snapshot taken by now − bound, which has waited
	// this long.
	var due int64
	var waited time.Duration
	for _, h := range w.history {
		if h.Elapsed <= p.Elapsed-bound {
			due, waited = h.Due, p.Elapsed-h.Elapsed
		}
	}
	late := due - p.Done
	// More than a 1 − q share of the run will have waited more than
	// waited: the percentile is more than it.
	atLeast := math.Nextafter(float64(waited)/float64(time.Millisecond), math.Inf(1))
	if float64(late) > (1-q)*w.n && late > 0 && o.BreachedFrom(atLeast) {
		return fmt.Sprintf("%d requests were already waiting longer than %s at %s: more than %.3g %% of the run's %.0f, so %s cannot hold (unfinished requests pile up)",
			late, bound, p.Elapsed.Round(time.Millisecond), 100*(1-q), w.n, o.Expr)
	}
	return ""
}

// quantile is the fraction a percentile stat names: p99 → 0.99.
func quantile(stat string) float64 {
	switch stat {
	case "p50":
		return 0.5
	case "p90":
		return 0.9
	case "p95":
		return 0.95
	case "p99":
		return 0.99
	case "p999":
		return 0.999
	}
	return 0.9999
}

func (w *watch) reason() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.why
}

// Rates returns steps rates from from to to, both included: evenly spaced,
// or with a constant ratio when geometric.
func Rates(from, to float64, steps int, geometric bool) ([]float64, error) {
	switch {
	case math.IsNaN(from) || math.IsInf(from, 0) || from <= 0:
		return nil, fmt.Errorf("from %v: want a finite number > 0", from)
	case math.IsNaN(to) || math.IsInf(to, 0) || to <= from:
		return nil, fmt.Errorf("to %v: want a finite number > from (%v)", to, from)
	case steps < 2:
		return nil, fmt.Errorf("steps %d: want ≥ 2", steps)
	}
	out := make([]float64, steps)
	for i := range out {
		f := float64(i) / float64(steps-1)
		if geometric {
			out[i] = from * math.Pow(to/from, f)
		} else {
			out[i] = from + (to-from)*f
		}
		out[i] = math.Round(out[i]*1000) / 1000
	}
	out[0], out[steps-1] = from, to
	return out, nil
}

// Repeat runs the base options n times at their own rate, pausing
// between runs, and returns every run. It stops early when ctx ends.
func Repeat(ctx context.Context, o Options, n int) ([]Point, error) {
	var out []Point
	o.taken = new(uint64)
	for i := range n {
		if i > 0 && !pause(ctx, o.Pause) {
			break
		}
		p, err := RunPoint(ctx, o, o.Base.Schedule.Rate)
		if err != nil {
			return out, err
		}
		out = append(out, p)
		if o.OnPoint != nil {
			o.OnPoint(p)
		}
		if p.Result.Interrupted {
			break
		}
	}
	return out, nil
}
