package report

import (
	"fmt"
	"io"

	"github.com/openload/openload/result"
)

// WireLines writes what went onto connections (recorder.Wire): the
// attempts written, which a server's log should count, less those that
// got no byte of an answer, which it may not have read; the attempts the
// server closed the connection under without answering, and what became
// of them (re-sent, or a reset); the client's other re-sends; and the
// statuses of responses that failed after their head; the bytes openload
// wrote and read. Results written before these were counted have less of
// it.
func WireLines(w io.Writer, res *result.Result) {
	if wr := res.Wire; wr != nil {
		line := fmt.Sprintf("wire     %d attempts written to connections for %d requests", wr.Attempts, res.Counts.Scheduled)
		if u := wr.Unread(); u > 0 {
			line += fmt.Sprintf(" (what the server read, less up to the %d that got no byte of an answer)", u)
		} else {
			line += " (what the server should have read)"
		}
		line += wireDrops(wr, res.Config.Method)
		if b := wr.Bytes; b != nil {
			line += fmt.Sprintf("; %d bytes written, %d read (on the TCP connections, TLS included)", b.Written, b.Read)
		}
		if res.Retries != nil && res.Retries.RetriesSent > 0 {
			line += "; retries included"
		}
		fmt.Fprintln(w, line)
	}
	if len(res.FailedStatus) > 0 {
		fmt.Fprintf(w, "partial  %s: heads of responses that failed before their end (counted under errors, not status)\n", statusLine(res.FailedStatus))
	}
}

// wireDrops is the wire line's part on the attempts that got no answer
// and on the re-sends, "" when there were none.
func wireDrops(wr *result.Wire, method string) string {
	if !wr.Counted || wr.Resends > wr.ResendsWritten+wr.ResendsUnwritten {
		// Re-sends not split by cause: an older result, or HTTP/2's.
		if wr.Resends == 0 {
			return ""
		}
		return fmt.Sprintf("; %d re-sent by the client on a new connection (%d times) after a kept-alive one failed before answering", wr.Resent, wr.Resends)
	}
	var s string
	if wr.Closed > 0 {
		s += fmt.Sprintf("; DROPPED: the server closed the connection under %d of them before a byte of an answer (%.1f %%)", wr.Closed, 100*float64(wr.Closed)/float64(max(wr.Attempts, 1)))
		if method == "" {
			method = "request"
		}
		switch rest := wr.Closed - wr.ResendsWritten; {
		case wr.ResendsWritten == 0:
			s += ", none re-sent (resets)"
		case rest == 0:
			s += fmt.Sprintf(", each re-sent by the client on a new connection (%d %ss)", wr.ResendsWritten, method)
		default:
			s += fmt.Sprintf(": %d %ss re-sent by the client on a new connection, %d not (resets)", wr.ResendsWritten, method, rest)
		}
	}
	if wr.Silent > 0 {
		s += fmt.Sprintf("; %d got nothing before their timeout or the drain's end", wr.Silent)
	}
	if wr.ResendsUnwritten > 0 {
		s += fmt.Sprintf("; %d re-sent before any byte of them was written (the server never saw those)", wr.ResendsUnwritten)
	}
	return s
}
