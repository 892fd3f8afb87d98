package main

import (
	"errors"
	"fmt"
	"net/url"

	"github.com/spf13/pflag"

	"github.com/openload/openload/internal/engine"
)

// protoOptions are the protocol flags of a load run.
type protoOptions struct {
	http2      bool
	h2c        bool
	maxStreams int
	fastHTTP1  bool
}

func (p *protoOptions) flags(fs *pflag.FlagSet) {
	fs.BoolVar(&p.http2, "http2", false, "HTTP/2 over TLS, negotiated with ALPN (https URL); -c then bounds the streams in flight over all connections")
	fs.BoolVar(&p.h2c, "h2c", false, "HTTP/2 without TLS, with prior knowledge (http URL; the built-in stub serves it too)")
	fs.IntVar(&p.maxStreams, "max-streams", 0, "HTTP/2: streams in flight per connection before another connection is opened (0 = the server's limit)")
	fs.BoolVar(&p.fastHTTP1, "fast-http1", false, "plain-http HTTP/1.1 on openload's lean path (request serialised once, responses read in the worker) instead of net/http's transport: less CPU per request")
}

// protocol checks the flags against the URL (nil: the built-in stub) and
// returns the engine's protocol name.
func (p *protoOptions) protocol(fs *pflag.FlagSet, u *url.URL) (string, error) {
	switch {
	case p.http2 && p.h2c:
		return "", errors.New("--http2 and --h2c are exclusive: --http2 is HTTP/2 over TLS, --h2c without")
	case p.maxStreams < 0:
		return "", fmt.Errorf("--max-streams must be ≥ 0, got %d", p.maxStreams)
	case fs.Changed("max-streams") && !p.http2 && !p.h2c:
		return "", errors.New("--max-streams applies to HTTP/2 only: give --http2 or --h2c")
	case p.fastHTTP1 && (p.http2 || p.h2c):
		return "", errors.New("--fast-http1 is HTTP/1.1 only: drop --http2 / --h2c")
	case p.fastHTTP1 && u != nil && u.Scheme != "http":
		return "", fmt.Errorf("--fast-http1 speaks plain http only, got %s", u)
	case p.http2 && u == nil:
		return "", errors.New("--http2 needs an https URL: the built-in stub has no TLS (use --h2c for HTTP/2 with it)")
	case p.http2 && u.Scheme != "https":
		return "", fmt.Errorf("--http2 is HTTP/2 over TLS and needs an https URL, got %s (for HTTP/2 without TLS use --h2c)", u)
	case p.h2c && u != nil && u.Scheme != "http":
		return "", fmt.Errorf("--h2c is HTTP/2 without TLS and needs an http URL, got %s (for HTTP/2 over TLS use --http2)", u)
	case p.http2:
		return engine.HTTP2, nil
	case p.h2c:
		return engine.H2C, nil
	}
	return engine.HTTP1, nil
}
