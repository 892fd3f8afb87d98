package verify

import (
	"fmt"
	"strconv"

	"github.com/openload/openload/result"
)

// kindMeanings say in words what each error kind of a result means.
var kindMeanings = map[string]string{
	"refused":        "connection refused: nothing listening at the address",
	"reset":          "the server reset or closed the connection (or HTTP/2 stream) before the response was complete",
	"timeout":        "no complete response within the request timeout",
	"tls":            "TLS handshake failed or the certificate was not trusted",
	"other":          "another failure: a malformed HTTP response, a DNS failure, …",
	"unfinished":     "still waiting or in flight when the drain ended",
	"protocol":       "the server did not answer in the protocol asked for: an HTTP/2 connection (h2c, prior knowledge) got an HTTP/1.1 answer or frames it could not read",
	"save":           "a session step's answer came, but without the value its step saves for later steps (a save rule found nothing): the session cannot go on as written",
	"grpc_no_status": "a gRPC answer ended without a grpc-status (in its trailers, or in its head for a trailers-only answer): the call's outcome is unknown",
	"grpc_too_large": "a gRPC message was longer than the run's message limit (4 MiB by default, as grpc-go receives): the call was cancelled",
	"stream":         "the server ended its streamed answer with an error event (an SSE event: error, or a data object with a top-level \"error\", as vLLM sends) under its status: the tokens before it are kept, the request is not completed",
}

// KindMeaning explains an error kind (a key of Result.ErrorKinds) in words.
func KindMeaning(kind string) string {
	if m, ok := kindMeanings[kind]; ok {
		return m
	}
	return "unknown kind"
}

// faults reports what the run did about redirects, oversized bodies and
// TLS verification, when any of it applies.
func faults(res *result.Result) []Finding {
	var out []Finding
	cfg := res.Config
	if cfg.Insecure {
		out = append(out, Finding{Check: "tls", Severity: Warn,
			Message: "certificates were not verified (verification skipped): the server's identity is unchecked"})
	}
	if res.BodyOverCap > 0 {
		out = append(out, Finding{Check: "body cap", Severity: Warn,
			Message: fmt.Sprintf("%d response(s) had a body larger than the body cap, %d bytes: read up to the cap, the rest discarded by closing the connection; they count as completed, not as errors",
				res.BodyOverCap, cfg.MaxBody)})
	}
	var redirects int64
	for code, n := range res.Status {
		if c, err := strconv.Atoi(code); err == nil && c >= 300 && c < 400 {
			redirects += n
		}
	}
	switch {
	case cfg.FollowRedirects:
		msg := fmt.Sprintf("followed %d redirect(s) (following redirects, at most 10 per request); statuses are the final answers", res.Redirects)
		if redirects > 0 {
			msg += fmt.Sprintf("; %d request(s) still ended on a redirect (3xx)", redirects)
		}
		out = append(out, Finding{Check: "redirects", Severity: Pass, Message: msg})
	case redirects > 0:
		out = append(out, Finding{Check: "redirects", Severity: Pass,
			Message: fmt.Sprintf("%d response(s) were redirects (3xx): counted as completed under their status, not followed (following redirects is off)", redirects)})
	}
	return out
}
