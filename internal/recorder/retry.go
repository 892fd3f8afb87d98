package recorder

import (
	"net/http"
	"time"

	"github.com/openload/openload/result"
)

// Retries, from the recorder's side.
//
// The engine retries a request whose attempt was answered with a status, or
// failed with an error kind, the run retries on (retry.Policy); the request
// stays one request, with one record and one outcome, so the accounting
// identity is untouched. Its record carries its earlier attempts, and the
// recorder counts
//
//	first attempts   requests whose first attempt left the generator (= sent)
//	retries sent     attempts after the first that left the generator
//	refused          retries due that the retry budget refused
//	exhausted        requests still to retry when the retries per request ran out
//	retried          requests with at least one retry sent
//
// and the status or error of every attempt, earlier and final. The outcome
// counts, Status and ErrorKinds stay those of the final attempts.
//
// Two per-second figures of the timeline count attempts: Second.Retries
// (retries sent in the second, by their sent time) and Second.RateLimited
// (429 answers received in the second, by their done time, every attempt
// counted, with retries or without).

// Attempt is one earlier attempt of a retried request (see Record.Earlier).
type Attempt struct {
	Sent   time.Duration // when it started going onto a connection
	Done   time.Duration // when its answer was read, or it failed
	Status int           // 0 when no response was read
	Kind   ErrorKind     // KindNone when a response was read
}

// RetryDelay is the final attempt's sent − the first attempt's sent: the
// earlier attempts, the backoff waits and the client's re-sends. Zero for a
// request sent once.
func (r *Record) RetryDelay() time.Duration {
	if !r.WasSent || !r.sentAgain() {
		return 0
	}
	return r.LastSent - r.Sent
}

// retryTally is what the recorder counts about attempts.
type retryTally struct {
	retries, refused, exhausted, retried int64
	status                               statusTally // earlier attempts
	kinds                                kindTally   // earlier attempts
}

// addAttempts counts the attempts of one record; Add calls it.
func (r *Recorder) addAttempts(rec *Record) {
	if rec.Outcome == Completed && rec.Status == http.StatusTooManyRequests {
		r.second(rec.Done).RateLimited++
	}
	if len(rec.Earlier) == 0 && !rec.RetryRefused && !rec.RetryExhausted {
		return
	}
	t := &r.retry
	t.retries += int64(rec.Retries)
	if rec.RetryRefused {
		t.refused++
	}
	if rec.RetryExhausted {
		t.exhausted++
	}
	if len(rec.Earlier) == 0 {
		return
	}
	t.retried++
	for i := range rec.Earlier {
		a := &rec.Earlier[i]
		if a.Kind == KindNone {
			// A failed attempt has no status, even if its head came.
			t.status.add(a.Status)
		}
		t.kinds[a.Kind]++
		if a.Kind == KindNone && a.Status == http.StatusTooManyRequests {
			r.second(a.Done).RateLimited++
		}
		if i > 0 {
			r.second(a.Sent).Retries++
		}
	}
	// The final attempt is a retry too, unless the request was abandoned
	// while it waited for it.
	if rec.Retries >= len(rec.Earlier) {
		r.second(rec.LastSent).Retries++
	}
}

// RetryCounts returns the attempt counts so far (Policy left empty).
func (r *Recorder) RetryCounts() result.RetryCounts {
	t := &r.retry
	c := result.RetryCounts{
		FirstAttempts:   r.sent,
		RetriesSent:     t.retries,
		RefusedByBudget: t.refused,
		Exhausted:       t.exhausted,
		Retried:         t.retried,
		AttemptStatus:   map[string]int64{},
		AttemptErrors:   map[string]int64{},
	}
	// Every attempt: the earlier ones and the final ones.
	t.status.addTo(c.AttemptStatus)
	r.status.addTo(c.AttemptStatus)
	t.kinds.addTo(c.AttemptErrors)
	r.kinds.addTo(c.AttemptErrors)
	return c
}
