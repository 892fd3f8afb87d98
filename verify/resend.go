package verify

import (
	"fmt"
	"strings"

	"github.com/openload/openload/result"
)

// resends reports the requests the server was written and closed the
// connection under without a byte of an answer, and what the client did
// about them (recorder.Wire; the engine's wire.go): re-sent on a new
// connection, which hides the drop from the outcomes and the statuses, or
// ended as a reset. A server that reads a request and closes without
// answering (nginx's return 444) and one that closes a kept-alive
// connection as a request arrives (a keep-alive race) look the same to a
// client; the server's own log tells which.
//
//	closed > 0                   warn: "the server closed N connections after a request was written …; M GETs re-sent"
//	only unwritten re-sends      pass: the server never saw those attempts
//	re-sends not split by cause  warn (results written before they were), pass (HTTP/2's own)
//	nothing re-sent or dropped   no finding
//
// It warns at any share and never fails. A failed check means the
// measurement itself cannot be trusted (verify's rule), and here every
// attempt, drop and re-send is counted, the accounting holds, and the
// server's log can be checked against them: what the counts say is about
// the server. Nor could a threshold be right for both causes: a share of
// re-sends that is alarming from a server dropping what it read is what a
// replayed gap near the server's keep-alive timeout produces from a
// healthy one. The verdict on the server is the objectives': a run that
// means drops to count as failures re-sends nothing written (the engine's
// ResendNever or ResendUnwritten), and its drops are then resets, which
// the default objective on errors judges.
func resends(res *result.Result) (Finding, bool) {
	w := res.Wire
	if w == nil {
		return Finding{}, false
	}
	f := Finding{Check: "re-sends", Severity: Warn}
	switch {
	case w.Closed == 0 && w.ResendsUnwritten == 0 && w.Resends == 0:
		return Finding{}, false
	case !w.Counted:
		f.Message = fmt.Sprintf("the client re-sent %s on a new connection (%s) after a kept-alive one failed before answering; the result was written before why was counted: each may be a request the server read and dropped",
			plural(w.Resent, "request"), plural(w.Resends, "time"))
		return f, true
	case w.Resends > w.ResendsWritten+w.ResendsUnwritten:
		// Re-sends the engine could not split: HTTP/2's transport
		// re-sends a stream the server refused, or one it had not
		// processed before GOAWAY.
		f.Message = fmt.Sprintf("the client re-sent %s (%s) after the connection failed under them before any answer", plural(w.Resent, "request"), plural(w.Resends, "time"))
		if p := res.Config.Protocol; p == "h2" || p == "h2c" {
			f.Severity = Pass
			f.Message += ": streams the server refused, or had not processed before it closed the connection (GOAWAY)"
		}
		return f, true
	case w.Closed == 0:
		f.Severity = Pass
		f.Message = fmt.Sprintf("%s re-sent on a new connection after a kept-alive one failed before any byte of them was written: the server never saw those attempts",
			plural(w.ResendsUnwritten, "request"))
		return f, true
	}
	var parts []string
	parts = append(parts, fmt.Sprintf("the server closed %s after a request was written, before a byte of its answer (%.1f %% of the %d requests written to it)",
		plural(w.Closed, "connection"), 100*float64(w.Closed)/float64(max(w.Attempts, 1)), w.Attempts))
	if w.ResendsWritten > 0 {
		parts = append(parts, fmt.Sprintf("%s re-sent on a new connection, each counted by its re-send's outcome", plural(w.ResendsWritten, methodNoun(res.Config.Method))))
	}
	if rest := w.Closed - w.ResendsWritten; rest > 0 {
		retried := ""
		if res.Retries != nil {
			retried = ", or went to the retry policy"
		}
		if w.ResendsWritten > 0 {
			parts = append(parts, fmt.Sprintf("the other %d ended as resets%s", rest, retried))
		} else {
			parts = append(parts, fmt.Sprintf("none re-sent: each ended as a reset%s", retried))
		}
	}
	if w.ResendsUnwritten > 0 {
		parts = append(parts, fmt.Sprintf("%s re-sent before any byte of them was written (the server never saw those)", plural(w.ResendsUnwritten, "more request")))
	}
	f.Message = strings.Join(parts, "; ") +
		" (a server dropping what it read, as nginx's 444 does, and a keep-alive race look alike here; the server's log tells which)"
	return f, true
}

// methodNoun is how the re-sent requests are called: "GET", or "request"
// when the method is not known.
func methodNoun(method string) string {
	if method == "" {
		return "request"
	}
	return method
}

// plural is "1 GET", "2 GETs", "1 time", "3 times".
func plural(n int64, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
