package metrics

import (
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/openload/openload/internal/engine"
	"github.com/openload/openload/internal/recorder"
)

// Snapshot is what a run's recorder and engine held at one Observe: the
// figures a scrape reports until the next one replaces it whole.
type Snapshot struct {
	// Scheduled and Sent are counted at their own moments, live: the
	// requests that came due and those whose sending began (engine.Live's
	// Due and Sent); in the final snapshot the result's counts. The
	// outcomes are counted from the records as they arrive (Recorder.Counts),
	// warm-up included, as the result's counts.
	Scheduled, Sent, Completed, Failed, TimedOut, Unfinished int64
	Kinds                                                    []KindCount   // the result's error_kinds
	Statuses                                                 []StatusCount // the result's status
	GRPC                                                     []StatusCount // the result's grpc, by code (−1: other)
	Attempts, Resends                                        int64         // the result's wire
	InFlight, Waiting, LimitWaited                           int64         // engine.Live
	BytesWritten, BytesRead                                  int64         // engine.Live; at the end the result's wire.bytes
	Response, Service, SendDelay                             Histogram
	Stream                                                   *StreamSnapshot // nil unless the run streams
	Classes                                                  []ClassCount
	Final                                                    bool
	// Start is the wall-clock instant of the run's offset 0, zero when not
	// known yet (a run that is not waiting for a start instant, before it
	// starts).
	Start time.Time
	// Lag is engine.Live's; Offered the schedule's rate now, when Rated.
	Lag     time.Duration
	Offered float64
	Rated   bool
}

// KindCount is one error kind's count.
type KindCount struct {
	Kind string
	N    int64
}

// StatusCount is one status code's count; Code 0 stands for the codes
// outside [100, 600) ("other").
type StatusCount struct {
	Code int
	N    int64
}

// ClassCount is one class header value's count.
type ClassCount struct {
	Header, Value string
	N             int64
}

// StreamSnapshot holds the stream figures of a run of streamed answers.
type StreamSnapshot struct {
	TTFTSchedule, TTFTSend, ITL, TPOT Histogram
	Requests, OutputTokens            int64
}

// Histogram is an HdrHistogram turned into classic buckets:
// Cumulative[i] counts the values at or below LatencyBounds[i].
type Histogram struct {
	Count      uint64
	Sum        float64 // seconds
	Cumulative []uint64
}

// Take reads l's recorder into a snapshot. It runs on the recorder's
// goroutine, once a second (and once before the start, the recorder
// empty): its cost is a walk over each histogram's
// recorded range and a few small slices, none per request.
func Take(l engine.Live) *Snapshot {
	r := l.Rec
	c := r.Counts()
	w := r.Wire()
	s := &Snapshot{
		Scheduled: l.Due, Sent: l.Sent, Completed: c.Completed,
		Failed: c.Errors, TimedOut: c.Timeouts, Unfinished: c.Unfinished,
		Attempts: w.Attempts, Resends: w.Resends,
		InFlight: l.InFlight, Waiting: l.Waiting, LimitWaited: l.LimitWaited,
		BytesWritten: l.BytesWritten, BytesRead: l.BytesRead,
		Response:  buckets(r.Response),
		Service:   buckets(r.Service),
		SendDelay: buckets(r.SendDelay),
		Final:     l.Final,
		Start:     l.Start, Lag: l.Lag, Offered: l.Offered, Rated: l.Rated,
	}
	if l.Final {
		// The records are all in: the result's own counts, which the
		// engine's live ones equal by then.
		s.Scheduled, s.Sent = c.Scheduled, c.Sent
	}
	r.EachErrorKind(func(k recorder.ErrorKind, n int64) { s.Kinds = append(s.Kinds, KindCount{k.String(), n}) })
	r.EachStatus(func(code int, n int64) { s.Statuses = append(s.Statuses, StatusCount{code, n}) })
	r.EachGRPC(func(code int, n int64) { s.GRPC = append(s.GRPC, StatusCount{code, n}) })
	r.EachClass(func(h, v string, n int64) { s.Classes = append(s.Classes, ClassCount{h, v, n}) })
	if st := r.Stream(); st != nil {
		s.Stream = &StreamSnapshot{
			TTFTSchedule: buckets(st.TTFTResponse), TTFTSend: buckets(st.TTFTService), ITL: buckets(st.ITL), TPOT: buckets(st.TPOT),
			Requests: st.Requests, OutputTokens: st.OutputTokens,
		}
	}
	return s
}

// buckets counts h's values (µs) into LatencyBounds. A value is counted
// under a bound when its whole HdrHistogram bin lies at or below it, so a
// bucket never claims a value above its bound; below 2.048 ms the bins
// are 1 µs wide and the counts exact, above they are within 0.1 % of
// the bound (three significant digits). The sum adds each bin's middle
// value, as HdrHistogram's mean does.
func buckets(h *hdrhistogram.Histogram) Histogram {
	out := Histogram{Count: uint64(h.TotalCount()), Cumulative: make([]uint64, len(boundsUs))}
	if out.Count == 0 {
		return out
	}
	i := 0
	var below uint64 // values in bins wholly at or below boundsUs[i-1]
	var sum float64
	for _, bar := range h.Distribution() {
		if bar.Count == 0 {
			continue
		}
		for i < len(boundsUs) && bar.To > boundsUs[i] {
			out.Cumulative[i] = below
			i++
		}
		below += uint64(bar.Count)
		sum += float64(bar.Count) * float64(bar.From+bar.To) / 2
	}
	for ; i < len(boundsUs); i++ {
		out.Cumulative[i] = below
	}
	out.Sum = sum / 1e6
	return out
}
