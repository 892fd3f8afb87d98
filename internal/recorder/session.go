package recorder

import "time"

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
