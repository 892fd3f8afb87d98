package recorder

import "strconv"

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
	failedStatus              [600]int64
	failedOther               int64 // failed after a head with a status outside [100, 600)
}

func (r *Recorder) addWire(rec *Record) {
	t := &r.wire
	t.attempts += int64(rec.Attempts)
	if rec.Resends > 0 {
		t.resends += int64(rec.Resends)
		t.resent++
	}
	if rec.Outcome == Completed || rec.Status == 0 {
		return
	}
	if rec.Status >= 100 && rec.Status < 600 {
		t.failedStatus[rec.Status]++
	} else {
		t.failedOther++
	}
}

func (t *wireTally) merge(o *wireTally) {
	t.attempts += o.attempts
	t.resends += o.resends
	t.resent += o.resent
	for i := range t.failedStatus {
		t.failedStatus[i] += o.failedStatus[i]
	}
	t.failedOther += o.failedOther
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
	for code, n := range r.wire.failedStatus {
		if n > 0 {
			m[strconv.Itoa(code)] = n
		}
	}
	if r.wire.failedOther > 0 {
		m["other"] = r.wire.failedOther
	}
	return m
}
