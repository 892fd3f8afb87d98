package recorder

import (
	"slices"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/openload/openload/result"
)

// Sessions: in a session run each arrival is a user who walks several
// steps (engine.RunSessions). Every step is a request and has a Record of
// its own, its Target the step's index; each session also ends in one
// SessionRecord, so that sessions are counted as requests are: started,
// completed, ended early at a step, or unfinished at the end.

// SessionOutcome is how a session ended.
type SessionOutcome uint8

const (
	// SessionCompleted: every step was sent and the last one's answer read.
	SessionCompleted SessionOutcome = iota
	// SessionEndedEarly: a step failed and the session's failure rule
	// ended it there (SessionRecord.EndedAt).
	SessionEndedEarly
	// SessionUnfinished: the run ended (drain expired, interrupted)
	// before the session's last step was done.
	SessionUnfinished
)

// SessionRecord is one session's account.
type SessionRecord struct {
	Seq     uint64        // the arrival's seq in the run's schedule
	Arrival time.Duration // its offset: the first step's scheduled time
	End     time.Duration // the last step's done; when it was cut, for an unfinished one
	Steps   int           // the steps that have a Record
	Outcome SessionOutcome
	EndedAt int // the step index it ended early at; -1 unless SessionEndedEarly
}

// Time is the session's own time: from its arrival to its end.
func (s *SessionRecord) Time() time.Duration { return s.End - s.Arrival }

// sessionTally is the recorder's side of result.Sessions.
type sessionTally struct {
	started, completed, endedEarly, unfinished, stepRecords int64
	endedAt                                                 []int64 // by step index
	time                                                    *hdrhistogram.Histogram
	seconds                                                 []sessionSecond
}

// sessionSecond counts the sessions that started and ended in a second.
type sessionSecond struct{ started, ended int64 }

// TrackSessions keeps the figures of a session run: each step's, as a
// request mix's targets' (Result.Steps; steps[i] names the step of index
// i, Record.Target, and the per-request log's target column holds it),
// and the sessions' own (Result.Sessions, from AddSession). Steps past
// MaxTargetParts share the last part, as targets do; the sessions ended
// early are counted at every step. Call it before the first Add.
func (r *Recorder) TrackSessions(steps []string) {
	r.steps = newPartTallies(steps, MaxTargetParts)
	r.sessions = &sessionTally{endedAt: make([]int64, len(steps)), time: result.NewHistogram()}
	if r.log != nil && len(steps) > 0 {
		r.log.target = true
	}
}

// AddSession records one session's account; its steps' records are
// added by Add. It is called, as Add is, by the goroutine that owns the
// recorder. A session ended early at a step the run has not (EndedAt out
// of range) is counted ended early and at no step, which the sessions
// check shows.
func (r *Recorder) AddSession(s *SessionRecord) {
	t := r.sessions
	if t == nil { // without TrackSessions: kept, with no steps
		t = &sessionTally{endedAt: []int64{}, time: result.NewHistogram()}
		r.sessions = t
	}
	t.started++
	t.stepRecords += int64(s.Steps)
	switch s.Outcome {
	case SessionCompleted:
		t.completed++
		r.record(t.time, s.Time())
	case SessionEndedEarly:
		t.endedEarly++
		if s.EndedAt >= 0 && s.EndedAt < len(t.endedAt) {
			t.endedAt[s.EndedAt]++
		}
		r.record(t.time, s.Time())
	default:
		// An unfinished session's time is a lower bound: it is in the
		// counts and the timeline, not in the time's percentiles.
		t.unfinished++
	}
	t.second(s.Arrival).started++
	t.second(s.End).ended++
}

// second is the tally of the second that holds offset d (from 0).
func (t *sessionTally) second(d time.Duration) *sessionSecond {
	i := max(int(d/time.Second), 0)
	for len(t.seconds) <= i {
		t.seconds = append(t.seconds, sessionSecond{})
	}
	return &t.seconds[i]
}

// fillSessions returns the sessions as a result holds them, Expected
// taken from was (the caller's, set before Fill); nil when the run had
// none.
func (r *Recorder) fillSessions(was *result.Sessions) (*result.Sessions, error) {
	t := r.sessions
	if t == nil {
		return nil, nil
	}
	s := &result.Sessions{Started: t.started, Completed: t.completed, EndedEarly: t.endedEarly, Unfinished: t.unfinished,
		EndedAt: slices.Clone(t.endedAt), StepRecords: t.stepRecords, Time: result.Summarize(t.time),
		Timeline: make([]result.SessionSecond, len(t.seconds))}
	if was != nil {
		s.Expected = was.Expected
	}
	var err error
	if s.Histogram, err = result.EncodeHistogram(t.time); err != nil {
		return nil, err
	}
	var in int64
	for i, sec := range t.seconds {
		in += sec.started - sec.ended
		s.Timeline[i] = result.SessionSecond{Second: i, Started: sec.started, Ended: sec.ended, InProgress: in}
	}
	return s, nil
}
