package engine

// Retries. A request whose attempt is answered with a status, or fails with
// an error kind, in Config.Retry.On is tried again, up to Retries times,
// after a backoff, while the retry budget allows.
//
// # One request, its original schedule
//
// A retry is part of the request it retries: the request keeps its
// scheduled time and its one record and outcome (the final attempt's), so
// scheduled == completed + errors + timeouts + unfinished still holds and
// the count of requests is the schedule's. Its timestamps (recorder.Record):
//
//	scheduled  the arrival, as for any request
//	sent       the first attempt's sent
//	done       the final attempt's done
//	response   = done − scheduled: the wait for the final answer, backoffs included
//	send delay = sent − scheduled: the generator's lateness, as before
//	service    = done − the final attempt's sent: what the server took on it
//
// and response = send delay + retry delay + service, where the retry delay
// (the earlier attempts and the backoff waits) is the final attempt's sent −
// the first attempt's sent.
//
// # The worker waits
//
// A retry is made by the worker that ran the first attempt: it sleeps the
// backoff, then sends again. The request holds that worker all along, so a
// request waiting out a backoff counts in the in-flight limit (and in max in
// flight) exactly like one waiting for its answer: when backoffs keep every
// worker busy, due requests wait inside openload and that wait shows as
// their send delay, and the report says the limit bound. This is what a
// client with a bounded pool of callers that retry inline does; it makes a
// retry storm visible instead of letting it grow without bound. Each attempt
// has its own Config.Timeout.
//
// When the drain expires during a backoff, the request is abandoned
// (unfinished, done at that moment), like one still in flight.
//
// The policy itself (which answers, the backoff, the budget) is package
// retry's (internal/retry).

import (
	"time"

	"github.com/openload/openload/internal/recorder"
	"github.com/openload/openload/internal/retry"
)

// retrier is a run's retry state.
type retrier struct {
	policy retry.Policy
	budget *retry.Budget
}

// newRetrier returns the retry state of a run whose policy passed
// Config.Validate, or nil when the policy retries nothing.
func newRetrier(p retry.Policy, now func() time.Duration) *retrier {
	if !p.Enabled() {
		return nil
	}
	return &retrier{policy: p, budget: p.NewBudget(now)}
}

// attempt sends the request and, under a retry policy, retries it; see the
// top of this file. It returns the request's one record.
func (w *worker) attempt(it item) recorder.Record {
	rt := w.g.retry
	if rt == nil {
		return w.do(it)
	}
	rt.budget.First()
	r := w.do(it)
	if !r.WasSent || !rt.policy.On.Match(&r) {
		return r
	}
	// What every attempt wrote, re-sends included (wire.go), adds up.
	first := r.Sent
	tx := sendsOf(&r)
	// Every try after the first is a retry the policy made: the earlier
	// tries are len(earlier), the retries len(earlier) once the loop
	// ends, one fewer when the drain ends a backoff.
	var earlier []recorder.Attempt
	for i := 0; ; i++ {
		if i == rt.policy.Retries {
			r.RetryExhausted = true
			break
		}
		if !rt.budget.Retry() {
			r.RetryRefused = true
			break
		}
		earlier = append(earlier, recorder.Attempt{Sent: r.Sent, Done: r.Done, Status: r.Status, Kind: r.Kind})
		lastSent := r.Sent
		if !w.g.pause(rt.policy.Wait(it.seq, i), nil) {
			// The drain expired while the request waited for its retry.
			done := w.g.since()
			return recorder.Record{
				Seq: it.seq, Scheduled: it.off, Sent: first, Done: done, WasSent: true,
				Outcome: recorder.Unfinished, Kind: recorder.KindUnfinished,
				Attempts: tx.attempts, Resends: tx.resends, Unanswered: tx.un, Retries: len(earlier) - 1, Earlier: earlier, LastSent: lastSent,
			}
		}
		r = w.do(it)
		tx.add(sendsOf(&r))
		if !r.WasSent || !rt.policy.On.Match(&r) {
			break
		}
	}
	if len(earlier) > 0 {
		r.LastSent = sendsOf(&r).last // the final try's last sent
		r.Earlier = earlier
		r.Sent = first
	}
	r.Attempts, r.Resends, r.Unanswered, r.Retries = tx.attempts, tx.resends, tx.un, len(earlier)
	return r
}

// sendsOf is what one try's record says it wrote: its counts, its first
// written attempt's sent and its last's.
func sendsOf(r *recorder.Record) sends {
	s := sends{first: r.Sent, last: r.Sent, attempts: r.Attempts, resends: r.Resends, un: r.Unanswered}
	if r.Resends > 0 {
		s.last = r.LastSent
	}
	return s
}
