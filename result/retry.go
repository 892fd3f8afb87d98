package result

// RetryCounts counts the attempts of a run with retries. FirstAttempts is
// Counts.Sent; the outcome counts are the final attempts'.
type RetryCounts struct {
	// Policy describes the retry policy, e.g. "up to 1 retry on 429,503,
	// backoff 2s equal jitter, budget 10% + 10/s over 10s".
	Policy          string `json:"policy"`
	FirstAttempts   int64  `json:"first_attempts"`
	RetriesSent     int64  `json:"retries_sent"`
	RefusedByBudget int64  `json:"refused_by_budget"`
	Exhausted       int64  `json:"exhausted"`
	Retried         int64  `json:"retried"`
	// AttemptStatus and AttemptErrors count every attempt, earlier and
	// final, by status code ("other" outside [100, 600)) and error kind.
	AttemptStatus map[string]int64 `json:"attempt_status"`
	AttemptErrors map[string]int64 `json:"attempt_errors,omitempty"`
}

// merge sums the retry counts; the shards share one policy
// (sameSettings).
func (r *RetryCounts) merge(o *RetryCounts) *RetryCounts {
	if o == nil {
		return r
	}
	sum := RetryCounts{Policy: o.Policy}
	if r != nil {
		sum = *r
	}
	sum.FirstAttempts += o.FirstAttempts
	sum.RetriesSent += o.RetriesSent
	sum.RefusedByBudget += o.RefusedByBudget
	sum.Exhausted += o.Exhausted
	sum.Retried += o.Retried
	sum.AttemptStatus = addCounts(sum.AttemptStatus, o.AttemptStatus)
	if sum.AttemptStatus == nil {
		sum.AttemptStatus = map[string]int64{}
	}
	sum.AttemptErrors = addCounts(sum.AttemptErrors, o.AttemptErrors)
	return &sum
}
