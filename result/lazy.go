package result

// Lazy is a run whose targets were read as it sent them: request seq
// went to the seq-th target read.
type Lazy struct {
	// Waited counts the requests that came due before their target had
	// been read: their wait is in their send delay.
	Waited int64 `json:"waited"`
	// Ended says the targets ran out before the schedule did, which
	// stopped there, at AtS s; Error, when set, is the error that ended
	// them (a target that could not be read or sent).
	Ended bool    `json:"ended,omitempty"`
	AtS   float64 `json:"at_s,omitempty"`
	Error string  `json:"error,omitempty"`
}

// merge adds b to l. A run whose targets were read lazily is never a
// shard (one run reads a stream once, and the CLI refuses to shard it),
// so the results a merge adds hold none; should they, nothing is lost:
// the waits add, and the targets ended where the first that ended did.
func (l *Lazy) merge(b *Lazy) *Lazy {
	switch {
	case l == nil:
		return b
	case b == nil:
		return l
	}
	m := *l
	m.Waited += b.Waited
	if !m.Ended {
		m.Ended, m.AtS, m.Error = b.Ended, b.AtS, b.Error
	}
	return &m
}
