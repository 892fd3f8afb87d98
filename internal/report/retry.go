package report

import (
	"fmt"
	"io"

	"github.com/openload/openload/result"
)

// RetryNote is the line under the latency table of a run with retries: how
// the figures of a retried request add up.
const RetryNote = "retried requests: response = send delay + retry delay (earlier attempts and backoff waits) + service (the final attempt's); sent is the first attempt's"

// RetryLines writes the retry policy and the attempt counts of a run with
// retries (nothing without): first attempts, retries sent, retries the
// budget refused, requests that ran out of retries, and the status and
// error of every attempt, next to the final answers of the status line.
func RetryLines(w io.Writer, res *result.Result) {
	r := res.Retries
	if r == nil {
		return
	}
	fmt.Fprintf(w, "retries  %s\n", r.Policy)
	fmt.Fprintf(w, "         first attempts %d · retries sent %d · refused by budget %d · out of retries %d · requests retried %d\n",
		r.FirstAttempts, r.RetriesSent, r.RefusedByBudget, r.Exhausted, r.Retried)
	line := statusLine(r.AttemptStatus)
	if len(r.AttemptErrors) > 0 {
		if line != "" {
			line += " · "
		}
		line += statusLine(r.AttemptErrors)
	}
	if line == "" {
		line = "none"
	}
	fmt.Fprintf(w, "attempts %s (every attempt; status and errors above are the final ones)\n", line)
}
