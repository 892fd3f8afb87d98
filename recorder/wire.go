package recorder

// What went onto the wire.
//
// A request is one request of the schedule, with one record and one
// outcome; what a server reads is its attempts. Record.Attempts counts the
// times a request was written to a connection, which includes the client's
// own re-sends (Record.Resends: a kept-alive connection that failed before
// any byte of the response came back, re-sent on a new one when that is
// safe) and the retries of a retry policy. Summed over a run they are what
// the server's own log should count, and the result says so (Wire).
//
// A status belongs to a completed response only: a response whose head
// came but whose body did not (cut, reset, timed out) is an error or a
// timeout, counted once under its error kind; its head's status is kept
// apart (Result.FailedStatus), so statuses and errors add up to the
// requests.

// wireTally counts attempts and re-sends, and the statuses of responses
// that failed after their head.
type wireTally struct {
	attempts, resends, resent int64
	failed                    statusTally // tally.go
}

func (r *Recorder) addWire(rec *Record) {
	t := &r.wire
	t.attempts += int64(rec.Attempts)
	if rec.Resends > 0 {
		t.resends += int64(rec.Resends)
		t.resent++
	}
	if rec.Outcome != Completed {
		t.failed.add(rec.Status) // 0, no head, is not counted
	}
}

func (t *wireTally) merge(o *wireTally) {
	t.attempts += o.attempts
	t.resends += o.resends
	t.resent += o.resent
	t.failed.merge(&o.failed)
}

// Wire is what went onto connections during a run.
type Wire struct {
	// Attempts is the number of times requests were written to a
	// connection: first attempts, re-sends and retries. A server that
	// logs every request it reads logs this many.
	Attempts int64 `json:"attempts"`
	// Resends is the number of times the client re-sent a request on its
	// own (a kept-alive connection failed before answering), and Resent
	// the requests re-sent at least once.
	Resends int64 `json:"resends"`
	Resent  int64 `json:"resent_requests"`
}

// Wire returns the attempt counts so far.
func (r *Recorder) Wire() Wire {
	return Wire{Attempts: r.wire.attempts, Resends: r.wire.resends, Resent: r.wire.resent}
}

// FailedStatus counts, by status code ("other" outside [100, 600)), the
// responses whose head came but that failed or timed out before their end.
func (r *Recorder) FailedStatus() map[string]int64 {
	m := map[string]int64{}
	r.wire.failed.addTo(m)
	return m
}
