package sweep

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/openload/openload/result"
	"github.com/openload/openload/schedule"
)

// # The sweep profile
//
// A sweep that finds its own rates, as GuideLLM's sweep profile does
// (vllm-project/guidellm, src/guidellm/benchmark/profile.py, SweepProfile):
// a synchronous benchmark first, then a throughput benchmark, then rates
// spaced linearly between the two completed rates. Read there:
// next_strategy runs SynchronousStrategy, takes its successful requests
// per second, runs ThroughputStrategy, takes its rate, then
// np.linspace(synchronous_rate, throughput_rate, sweep_size − 1)[1:], so
// GuideLLM's last rate is the throughput rate itself and its sweep_size
// counts the two probes. openload's points are strictly between the two
// (an open run at the throughput rate is its first point past capacity
// by construction), Points of them, and its probes are its own:
//
//   - synchronous: a closed loop of one user, unpaced, for the base run's
//     duration (loadtest.Options.Closed, Connections 1, Schedule.Rate 0);
//   - throughput: the throughput probe, every request at once (rate inf,
//     schedule.AtOnceSchedule), bounded by the base run's connection limit.
//
// Each rate is completed ÷ elapsed (Point.Completed), the table's
// completed/s: answers of any status count, as they do there.

// ProfileOptions describe a profile sweep: Options without Rates.
type ProfileOptions struct {
	Options
	// Points is the number of open rates between the synchronous and the
	// throughput rate, evenly spaced, both ends excluded.
	Points int
	// Requests is the throughput probe's count; 0: ProbeCount.
	Requests int64
	// OnProbe, if set, is called before the throughput probe with its
	// count and the synchronous rate it was drawn from.
	OnProbe func(count int64, sync float64)
	// OnRates, if set, is called once the probes have found the rates,
	// before the open points run.
	OnRates func(sync, max float64, rates []float64)
}

// ProbeCount is the throughput probe's default count: what Connections
// synchronous users would complete in d at rate sync. No more than
// Connections are ever in flight, each at least the synchronous answer's
// time (Little's law), so the probe lasts at least about d; longer, by the
// factor Connections × sync ÷ its rate, where the server does not scale to
// Connections.
func ProbeCount(sync float64, d time.Duration, connections int) int64 {
	n := math.Ceil(sync*d.Seconds()) * float64(max(connections, 1))
	return int64(min(max(n, 1), float64(schedule.MaxArrivals)))
}

// ProfileRates are n rates evenly spaced strictly between sync and max,
// rounded as Rates rounds them.
func ProfileRates(sync, max float64, n int) ([]float64, error) {
	if n < 1 {
		return nil, fmt.Errorf("points %d: want ≥ 1", n)
	}
	if !(sync > 0) || math.IsInf(sync, 0) {
		return nil, fmt.Errorf("the synchronous point completed %.3g/s: no rate to start from", sync)
	}
	if !(max > sync) || math.IsInf(max, 0) {
		return nil, fmt.Errorf("the throughput probe completed %.1f/s, no more than the synchronous point's %.1f/s: no rates between them to sweep", max, sync)
	}
	all, err := Rates(sync, max, n+2, false)
	if err != nil {
		return nil, err
	}
	return all[1 : n+1], nil
}

// validate checks a profile's options.
func (o *ProfileOptions) validate() error {
	if len(o.Rates) > 0 {
		return errors.New("a profile sweep finds its own rates: give none")
	}
	if o.Points < 1 {
		return fmt.Errorf("points %d: want ≥ 1", o.Points)
	}
	if o.Requests < 0 {
		return fmt.Errorf("requests %d: want ≥ 0", o.Requests)
	}
	if o.Base.Schedule.Duration <= 0 {
		return fmt.Errorf("duration %v: the synchronous point and each open point need one > 0", o.Base.Schedule.Duration)
	}
	o.Rates = []float64{1} // Validate's own checks, of the rest
	defer func() { o.Rates = nil }()
	if err := o.Validate(); err != nil {
		return err
	}
	// What the base run holds that a probe cannot take (sessions, a
	// shard: loadtest refuses them in a closed loop or all at once) is
	// refused before anything runs.
	syncOpt := o.syncOptions().Base
	if err := syncOpt.Validate(); err != nil {
		return fmt.Errorf("the synchronous point: %w", err)
	}
	probe := o.probeOptions(max(o.Requests, 1)).Base
	probe.Schedule.Rate = math.Inf(1)
	if err := probe.Validate(); err != nil {
		return fmt.Errorf("the throughput probe: %w", err)
	}
	return nil
}

// syncOptions are the synchronous point's: one user, unpaced, for the
// base duration (RunPoint sets the rate, 0).
func (o *ProfileOptions) syncOptions() Options {
	opt := o.Options
	opt.Base.Closed, opt.Base.Connections, opt.Base.Think = true, 1, 0
	opt.Base.Schedule.Kind, opt.Base.Schedule.Count = schedule.Constant, 0
	return opt
}

// probeOptions are the throughput probe's: n at once (RunPoint sets the
// rate, +Inf), bounded by the base connection limit; no duration, so no
// warm-up within it.
func (o *ProfileOptions) probeOptions(n int64) Options {
	opt := o.Options
	opt.Base.Schedule.Kind, opt.Base.Schedule.Count = schedule.Constant, n
	opt.Base.Schedule.Duration, opt.Base.Warmup = 0, 0
	return opt
}

// RunProfile runs the synchronous point, the throughput probe, then
// Points open rates between their completed rates, and names the knee
// among the open points. The points come back by rate: the synchronous
// point, the open points, the throughput probe (which ran second). When
// the probes leave no rates between them, the sweep holds the probes and
// the error says why.
func RunProfile(ctx context.Context, o ProfileOptions) (*Sweep, error) {
	if err := o.validate(); err != nil {
		return nil, err
	}
	o.taken = new(uint64)
	sw := &Sweep{Knee: -1, Factor: o.Knee}
	if sw.Factor == 0 {
		sw.Factor = DefaultKnee
	}
	run := func(opt Options, r float64, kind string) (Point, bool, error) {
		p, err := runKind(ctx, opt, r, kind)
		if err != nil {
			return p, false, err
		}
		if o.OnPoint != nil {
			o.OnPoint(p)
		}
		return p, p.Result.Interrupted, nil
	}
	syncPt, stop, err := run(o.syncOptions(), 0, result.PointSynchronous)
	if err != nil {
		return sw, err
	}
	sw.Points = append(sw.Points, syncPt)
	if stop || !pause(ctx, o.Pause) {
		return sw, nil
	}
	rSync := syncPt.Completed()
	if !(rSync > 0) {
		return sw, fmt.Errorf("the synchronous point completed nothing in %s: no rate to start from", syncPt.Result.Config.Duration)
	}
	// The throughput probe: everything at once, bounded by the limit.
	n := o.Requests
	if n == 0 {
		n = ProbeCount(rSync, o.Base.Schedule.Duration, o.Base.Connections)
	}
	if o.OnProbe != nil {
		o.OnProbe(n, rSync)
	}
	probePt, stop, err := run(o.probeOptions(n), math.Inf(1), result.PointThroughput)
	if err != nil {
		return sw, err
	}
	defer func() { sw.Points = append(sw.Points, probePt) }() // last, by rate
	if stop {
		return sw, nil
	}
	rates, err := ProfileRates(rSync, probePt.Completed(), o.Points)
	if err != nil {
		return sw, err
	}
	if o.OnRates != nil {
		o.OnRates(rSync, probePt.Completed(), rates)
	}
	for _, r := range rates {
		if !pause(ctx, o.Pause) {
			break
		}
		p, stop, err := run(o.Options, r, "")
		if err != nil {
			return sw, err
		}
		sw.Points = append(sw.Points, p)
		if stop {
			break
		}
	}
	open := sw.Points[1:]
	if k, why := knee(open, sw.Factor); k >= 0 {
		sw.Knee, sw.KneeWhy = k+1, why
	}
	return sw, nil
}

// runKind is RunPoint for a point of kind (a probe, or "" for an open
// point at r).
func runKind(ctx context.Context, o Options, r float64, kind string) (Point, error) {
	p, err := RunPoint(ctx, o, r)
	p.Kind = kind
	if err != nil && kind != "" {
		err = fmt.Errorf("%s: %w", p.Label(), errors.Unwrap(err))
	}
	return p, err
}
