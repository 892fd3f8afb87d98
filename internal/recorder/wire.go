package recorder

import "github.com/openload/openload/result"

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

// # What the server did not answer
//
// A written attempt that got no byte of an answer may not have been read
// by the server; every other written attempt was (a byte of an answer
// comes only after the request it answers). Record.Unanswered counts the
// first kind, split by how they ended: Closed when the connection was
// closed or reset under them (the server read the request and closed
// without answering, as nginx's 444 does, or closed a kept-alive
// connection while the request was on its way, a race no client can see
// through), Silent when nothing came before their timeout or the drain's
// end. It counts the client's re-sends by cause too: after a written
// attempt that got no answer (ResentWritten, each one of Closed), or
// after an attempt none of whose bytes were written (ResentUnwritten: the
// server never saw it, and the attempt is not in Attempts). Summed over a
// run (Wire), they bound what the server read:
//
//	attempts − closed − silent ≤ read by the server ≤ attempts

// Unanswered is what became of the written attempts of one request that
// got no byte of an answer, and the client's re-sends by cause (see
// above).
type Unanswered struct {
	Closed          int // the connection was closed or reset under a written attempt before a byte of its answer
	Silent          int // no byte of an answer before a written attempt's timeout or the drain's end
	ResentWritten   int // re-sends after a Closed attempt
	ResentUnwritten int // re-sends after an attempt none of whose bytes were written
}

// Add adds o's counts to u's: another try of the same request.
func (u *Unanswered) Add(o Unanswered) {
	u.Closed += o.Closed
	u.Silent += o.Silent
	u.ResentWritten += o.ResentWritten
	u.ResentUnwritten += o.ResentUnwritten
}

// wireTally counts attempts and re-sends, the attempts that got no
// answer, and the statuses of responses that failed after their head.
type wireTally struct {
	attempts, resends, resent int64
	closed, silent            int64
	resentWritten, resentNot  int64
	failed                    statusTally // tally.go
}

func (r *Recorder) addWire(rec *Record) {
	t := &r.wire
	t.attempts += int64(rec.Attempts)
	if rec.Resends > 0 {
		t.resends += int64(rec.Resends)
		t.resent++
	}
	if u := &rec.Unanswered; *u != (Unanswered{}) {
		t.closed += int64(u.Closed)
		t.silent += int64(u.Silent)
		t.resentWritten += int64(u.ResentWritten)
		t.resentNot += int64(u.ResentUnwritten)
	}
	if rec.Outcome != Completed {
		t.failed.add(rec.Status) // 0, no head, is not counted
	}
}

// Wire returns the attempt counts so far.
func (r *Recorder) Wire() result.Wire {
	t := &r.wire
	return result.Wire{Attempts: t.attempts, Resends: t.resends, Resent: t.resent,
		Closed: t.closed, Silent: t.silent, ResendsWritten: t.resentWritten, ResendsUnwritten: t.resentNot, Counted: true}
}

// FailedStatus counts, by status code ("other" outside [100, 600)), the
// responses whose head came but that failed or timed out before their end.
func (r *Recorder) FailedStatus() map[string]int64 {
	m := map[string]int64{}
	r.wire.failed.addTo(m)
	return m
}
