package stub

import "time"

// Source says who produced an answer.
type Source string

// Reason says why an answer came from its source.
type Reason string

// Answer sources and reasons, as sent in X-Stub-Source and X-Stub-Reason.
const (
	SourceModel    Source = "model"
	SourceFallback Source = "fallback"
	SourceLimiter  Source = "limiter"  // 429 from the sharded rate limiter
	SourceDeadline Source = "deadline" // the deadline gate dropped the answer

	ReasonServed      Reason = "served"       // the model answered
	ReasonQueueFull   Reason = "queue-full"   // bounded: QueueCap requests were already waiting
	ReasonOverBudget  Reason = "over-budget"  // admission: estimated wait > WaitBudget
	ReasonWaitTimeout Reason = "wait-timeout" // waited MaxQueueWait in the queue
	ReasonRateLimited Reason = "rate-limited" // the request's limiter shard had no allowance left
	// ReasonWorkerFailed: the model attempt failed (--primary-fail) and
	// was not compensated, or its one retry failed too.
	ReasonWorkerFailed Reason = "worker-failed"
	ReasonDeadline     Reason = "deadline" // dropped: see X-Stub-Drop for why
)

// gateInput is everything the arrival gate looks at.
type gateInput struct {
	Queue    int           // requests already waiting in front of the model
	InModel  int           // worker slots taken
	Workers  int           // worker slots in all
	QueueCap int           // bounded policy cap
	Estimate time.Duration // admission: estimated wait for this request
	Budget   time.Duration // admission: WaitBudget
}

// decide is the arrival gate as a pure function. It returns (true, "") when
// the request may go to a worker or join the queue, and (false, reason) when
// it must get the fallback at once.
//
// A free worker (empty queue and InModel < Workers) always admits. Otherwise:
//   - none admits;
//   - bounded rejects when Queue >= QueueCap (exactly at cap rejects, cap−1
//     joins as the cap-th waiter);
//   - admission rejects when Estimate > Budget (exactly at budget admits).
func decide(p Policy, in gateInput) (admit bool, reason Reason) {
	if in.Queue == 0 && in.InModel < in.Workers {
		return true, ""
	}
	switch p {
	case PolicyBounded:
		if in.Queue >= in.QueueCap {
			return false, ReasonQueueFull
		}
	case PolicyAdmission:
		if in.Estimate > in.Budget {
			return false, ReasonOverBudget
		}
	}
	return true, ""
}
