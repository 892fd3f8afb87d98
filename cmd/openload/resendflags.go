package main

import (
	"github.com/spf13/pflag"

	"github.com/openload/openload/internal/engine"
)

// resendFlag registers --resend, bound to c.Resend: what openload's
// HTTP/1.1 clients send again after a kept-alive connection failed under
// a request before any byte of its answer, and what its HTTP/2 event loop
// sends again of what the server did not process. engine.Config.Validate
// checks the value, and refuses one other than idempotent for a run that
// goes through net/http (https HTTP/1.1, --net-http, --follow-redirects,
// HTTP/2 with retries), whose transport re-sends by its own rule.
func resendFlag(fs *pflag.FlagSet, b fieldBinding, c *engine.Config) {
	fs.StringVar(&c.Resend, b.bind("resend", "Resend"), engine.ResendIdempotent,
		"send a request once more, on a new connection, when its kept-alive one failed before any byte of the answer, as the `policy` says: idempotent (if nothing was written, or the method is idempotent: GET, HEAD, OPTIONS, TRACE, PUT, DELETE), unwritten (only if nothing was written) or never (the failure is the outcome, as with wrk); re-sends are counted and reported. HTTP/2 sends again what the server refused or left past its GOAWAY, unless unwritten or never. net/http (https HTTP/1.1, --net-http, --follow-redirects, HTTP/2 with --retries) takes idempotent only")
}
