//lint:file-ignore SA1019 h2Reset matches the errors of x/net/http2's client, which h2.go uses.

package engine

import (
	"crypto/tls"
	"errors"
	"io"
	"net/http"
	"strings"

	"golang.org/x/net/http2"

	"github.com/openload/openload/internal/recorder"
)

// What the engine does with misbehaving servers beyond classifying errors
// (Kind): TLS verification, redirects and oversized bodies.
//
//   - TLS certificates are verified unless Config.Insecure says otherwise,
//     explicitly.
//   - A redirect is an answer: by default the 3xx is a completed response
//     counted under its status. With Config.FollowRedirects the engine
//     follows up to MaxRedirects of them and counts the final status; each
//     record carries the redirects it followed (Record.Redirects).
//   - Response bodies are read and discarded with pooled buffers, so memory
//     does not depend on their size. With Config.MaxBody > 0 at most
//     MaxBody+1 bytes are read: a body longer than MaxBody is cut there, the
//     rest discarded by closing the connection, and the response, which
//     did complete, is marked Record.BodyOverCap. It is not an error.

// MaxRedirects is how many redirects one request follows at most with
// Config.FollowRedirects; the answer to the last one is then the request's
// final status (a 3xx).
const MaxRedirects = 10

// tlsConfig returns the TLS configuration of a run: cfg.TLS, with
// verification off only when cfg.Insecure says so.
func tlsConfig(cfg Config) *tls.Config {
	if !cfg.Insecure {
		return cfg.TLS
	}
	c := &tls.Config{}
	if cfg.TLS != nil {
		c = cfg.TLS.Clone()
	}
	c.InsecureSkipVerify = true
	return c
}

// ClientTLS is the TLS configuration the run's requests use (TLS, with
// verification off only with Insecure), for a caller's own request to
// the same target.
func (cfg Config) ClientTLS() *tls.Config { return tlsConfig(cfg) }

// checkRedirect is the client's redirect policy for cfg.
func checkRedirect(cfg Config) func(*http.Request, []*http.Request) error {
	if !cfg.FollowRedirects {
		// Redirects are answers too: count the 3xx, do not follow it.
		return func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	}
	return func(req *http.Request, via []*http.Request) error {
		if len(via) > MaxRedirects {
			// Stop following: the last 3xx is the final answer.
			return http.ErrUseLastResponse
		}
		followRedirect(req) // wire.go
		return nil
	}
}

// redirects counts the redirects followed to get resp.
func redirects(resp *http.Response) int {
	n := 0
	for req := resp.Request; req != nil && req.Response != nil; req = req.Response.Request {
		n++
	}
	return n
}

// readBody reads body to its end, or past the run's MaxBody, discarding
// what it reads; io.Discard reads with pooled buffers.
func (g *generator) readBody(body io.Reader, r *recorder.Record) error {
	max := g.cfg.MaxBody
	if max <= 0 {
		_, err := io.Copy(io.Discard, body)
		return err
	}
	n, err := io.CopyN(io.Discard, body, max+1)
	if n > max {
		// Over the cap: the caller closes the body unread, which closes
		// the connection (HTTP/1.1) or resets the stream (HTTP/2).
		r.BodyOverCap = true
		return nil
	}
	if errors.Is(err, io.EOF) {
		return nil
	}
	return err
}

// h2Reset reports whether err is an HTTP/2 stream reset (RST_STREAM) or a
// GOAWAY that ended the request: the server reset the exchange. Requests
// still on a connection that the GOAWAY ended get x/net's unexported
// "client connection lost" or "force closed" errors, matched by text.
func h2Reset(err error) bool {
	var (
		se  http2.StreamError
		gae http2.GoAwayError
	)
	if errors.As(err, &se) || errors.As(err, &gae) {
		return true
	}
	msg := err.Error()
	return strings.Contains(msg, "http2: client connection lost") || strings.Contains(msg, "http2: client connection force closed")
}

// h2Protocol reports whether err is HTTP/2 failing on what the server
// wrote: frames it could not read — x/net/http2's ErrFrameTooLarge, which
// is what an HTTP/1.1 answer to the connection preface reads as ("note
// that the frame header looked like an HTTP/1.1 header"), the usual
// answer of a server that does not speak h2c — or a connection error,
// or a request that waited for a connection whose exchange of SETTINGS
// never completed (x/net/http2's unexported "client conn could not be
// established", what the requests queued behind the first one get).
func h2Protocol(err error) bool {
	var ce http2.ConnectionError
	return errors.Is(err, http2.ErrFrameTooLarge) || errors.As(err, &ce) ||
		strings.Contains(err.Error(), "http2: client conn could not be established")
}

// plainHTTPOverTLS reports whether err is net/http's answer to a TLS
// handshake that met a plain-HTTP server ("server gave HTTP response to
// HTTPS client"): the TLS record error is replaced by a text error there.
func plainHTTPOverTLS(err error) bool {
	return err != nil && strings.Contains(err.Error(), "server gave HTTP response to HTTPS client")
}
