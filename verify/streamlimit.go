package verify

import (
	"fmt"
	"math"
	"time"

	"github.com/openload/openload/result"
)

// A bound connection limit on a run of streamed answers.
//
// A model server's answer holds its connection for seconds, so a limit
// sized for short answers binds: at 20/s with 5 s answers about 100 are in
// flight at once, and with 64 connections the rest wait inside openload.
// Their wait is send delay, and it is in TTFT from the schedule but not in
// TTFT from the send: the gap between the two p90s is openload's queue, not
// the server's. By Little's law the limit that holds the offered load is
// about rate × answer time; the answer time is the measured service time
// (sent to done) of the run, whose requests are the streamed answers.

// StreamLimit says, for a run of streamed answers whose connection limit
// bound, what the wait did to TTFT and the limit the offered load takes:
// "812 of 1000 requests waited; TTFT from the schedule p90 2104 ms
// against 205 ms from the send: the wait is openload's. At 20/s × 5.1 s
// answers (service p90) it takes 102 connections: raise the connection
// limit to that". ok is false when the run did not stream or the limit
// did not bind (or the run was a closed loop, whose users are the limit).
func StreamLimit(res *result.Result) (text string, ok bool) {
	l := res.Limit
	if res.Stream == nil || l.Waited == 0 || res.Closed() {
		return "", false
	}
	s := res.Stream
	text = fmt.Sprintf("%d of %d requests waited; TTFT from the schedule p90 %.0f ms against %.0f ms from the send: the wait is openload's",
		l.Waited, res.Counts.Scheduled, s.TTFTResponse.P90, s.TTFTService.P90)
	rate := offeredRate(res)
	answer, which := res.Service.P90, "service p90"
	if answer <= 0 {
		answer, which = res.Service.Mean, "service mean"
	}
	if rate <= 0 || answer <= 0 {
		return text, true // no answer measured: no size to give
	}
	need := NeededConnections(rate, time.Duration(answer*float64(time.Millisecond)))
	text += fmt.Sprintf(". At %s/s × %.1f s answers (%s) it takes %d connections", fmtCount(rate), answer/1000, which, need)
	if need <= l.Connections {
		// The mean load fits: the bind came from arrivals bunched above it.
		return text + fmt.Sprintf(", within the %d given: the arrivals came bunched", l.Connections), true
	}
	return text + ": raise the connection limit to that", true
}

// NeededConnections is the connection limit that holds rate requests per
// second whose answers take answer each (Little's law: in flight =
// arrival rate × time in the system), rounded up.
func NeededConnections(rate float64, answer time.Duration) int {
	n := math.Ceil(rate*answer.Seconds() - 1e-9)
	if n > math.MaxInt32 {
		return math.MaxInt32
	}
	return int(n)
}

// offeredRate is the run's offered rate: its constant rate, or for stages
// the mean, ∫λ dt over the duration.
func offeredRate(res *result.Result) float64 {
	if res.Config.Stages == "" && res.Config.Rate > 0 && !math.IsInf(res.Config.Rate, 0) {
		return res.Config.Rate
	}
	d, err := time.ParseDuration(res.Config.Duration)
	if err != nil || d <= 0 || math.IsInf(res.Counts.Expected, 0) {
		return 0
	}
	return res.Counts.Expected / d.Seconds()
}
