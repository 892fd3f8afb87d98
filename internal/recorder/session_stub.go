package recorder

// Placeholder until the recorder's session tally lands (issue 52).
func (r *Recorder) AddSession(s *SessionRecord) {}

// TrackSessions is a placeholder until the session tally lands.
func (r *Recorder) TrackSessions(steps []string) {}
