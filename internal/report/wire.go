package report

import (
	"fmt"
	"io"

	"github.com/openload/openload/recorder"
)

// WireLines writes what went onto connections (recorder.Wire): the
// attempts written, which a server's log should count, the client's own
// re-sends, and the statuses of responses that failed after their head.
// Results written before these were counted have none of it.
func WireLines(w io.Writer, res *recorder.Result) {
	if wr := res.Wire; wr != nil {
		line := fmt.Sprintf("wire     %d attempts written to connections for %d requests (what the server should have read)", wr.Attempts, res.Counts.Scheduled)
		if wr.Resends > 0 {
			line += fmt.Sprintf("; %d re-sent by the client on a new connection (%d times) after a kept-alive one failed before answering", wr.Resent, wr.Resends)
		}
		if res.Retries != nil && res.Retries.RetriesSent > 0 {
			line += "; retries included"
		}
		fmt.Fprintln(w, line)
	}
	if len(res.FailedStatus) > 0 {
		fmt.Fprintf(w, "partial  %s: heads of responses that failed before their end (counted under errors, not status)\n", recorder.StatusLine(res.FailedStatus))
	}
}
