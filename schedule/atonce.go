package schedule

import (
	"fmt"
	"math"
	"time"

	"github.com/openload/openload/field"
)

// AtOnce names the throughput probe where a result records its arrival
// process: a rate of +Inf, Spec.Count requests all due at offset 0, as
// vLLM's default --request-rate inf sends them. A result stores its rate as
// 0 (JSON holds no +Inf) with this arrival, so that the probe reads back
// as one. New builds it from Spec{Rate: +Inf, Count: N}; its Kind stays
// Constant or empty, since no process draws its offsets.
const AtOnce = "inf"

// IsAtOnce reports whether s describes the throughput probe: a rate of
// +Inf.
func (s Spec) IsAtOnce() bool { return math.IsInf(s.Rate, 1) }

// validateAtOnce checks a probe's spec: a count, and nothing that spreads
// arrivals over time (a duration, stages, a process that draws gaps).
// Without a count, +Inf is refused as any rate that is no number is, with
// what to add.
func (s Spec) validateAtOnce() error {
	switch {
	case s.Count <= 0:
		return field.Errorf("Rate", s.Rate, "{Rate} must be a finite number, got %v; for the throughput probe, every request at once, add {Count} N", s.Rate)
	case s.Count > MaxArrivals:
		return field.Errorf("Count", s.Count, "{Count} %d is more than the %d a schedule can hold", s.Count, int64(MaxArrivals))
	case s.Kind != "" && s.Kind != Constant:
		return field.Errorf("Kind", s.Kind, "{Rate} inf sends every request at once: {Kind} %s has no gaps to draw", s.Kind)
	case s.Stages != "":
		return field.Errorf("Stages", s.Stages, "{Rate} inf sends every request at once: {Stages} do not apply")
	case s.Duration != 0:
		return field.Errorf("Duration", s.Duration, "{Rate} inf sends every request at once: {Duration} does not apply (the run lasts as long as the server takes), got %v", s.Duration)
	}
	return nil
}

// AtOnceSchedule is the throughput probe: count arrivals, all at offset
// 0. What bounds them is the run's connection limit; the wait for a
// connection is each request's send delay, the queue the probe made.
type AtOnceSchedule struct {
	count, i int64
}

// NewAtOnce returns the probe of n requests at once.
func NewAtOnce(n int64) *AtOnceSchedule { return &AtOnceSchedule{count: n} }

// Next implements Schedule.
func (a *AtOnceSchedule) Next() (time.Duration, bool) {
	if a.i >= a.count {
		return 0, false
	}
	a.i++
	return 0, true
}

// Count is the number of arrivals the schedule holds.
func (a *AtOnceSchedule) Count() int64 { return a.count }

// Expected implements Schedule: the count asked for.
func (a *AtOnceSchedule) Expected() float64 { return float64(a.count) }

// Exact implements Schedule: the count is the one asked for.
func (a *AtOnceSchedule) Exact() bool { return true }

// Name implements Schedule.
func (a *AtOnceSchedule) Name() string {
	return fmt.Sprintf("all %d at once (rate inf)", a.count)
}
