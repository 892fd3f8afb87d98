package main

import (
	"errors"
	"net/url"

	"github.com/spf13/pflag"

	"github.com/openload/openload/internal/engine"
)

// protoOptions are the protocol flags of a load run that choose the
// engine's protocol and client (Config.Protocol, Lean, Epoll); the others
// are bound to the engine's configuration directly.
type protoOptions struct {
	http2     bool
	h2c       bool
	netHTTP   bool
	noEpoll   bool
	fastHTTP1 bool // deprecated: the lean path is the default
}

func (p *protoOptions) flags(fs *pflag.FlagSet, b fieldBinding, c *engine.Config) {
	fs.BoolVar(&p.http2, "http2", false, "HTTP/2 over TLS, negotiated with ALPN (https URL); -c then bounds the streams in flight over all connections")
	fs.BoolVar(&p.h2c, "h2c", false, "HTTP/2 without TLS, with prior knowledge (http URL; the built-in stub serves it too)")
	fs.IntVar(&c.MaxStreams, b.bind("max-streams", "MaxStreams"), 0, "HTTP/2: streams in flight per connection before another connection is opened (0 = the server's limit)")
	fs.DurationVar(&c.DialTimeout, b.bind("dial-timeout", "DialTimeout"), 0, "how long establishing a connection may take; 0: --timeout")
	fs.BoolVar(&p.netHTTP, "net-http", false, "send with net/http's transport (HTTP/2: x/net/http2's) instead of openload's own clients (the default: plain-http HTTP/1.1 serialised once, read by the event loop or the workers; HTTP/2 on the event loop on Linux; https HTTP/1.1 and --follow-redirects always use net/http)")
	fs.BoolVar(&p.noEpoll, "no-epoll", false, "drive the lean client with a goroutine per connection instead of one epoll event loop (the default on Linux for open runs without retries or HEAD)")
	fs.BoolVar(&p.fastHTTP1, "fast-http1", false, "deprecated: the lean path is the default")
	_ = fs.MarkDeprecated("fast-http1", "the lean HTTP/1.1 path is the default now (--net-http turns it off)")
}

// lean reports whether plain-http HTTP/1.1 goes on the engine's lean path.
func (p *protoOptions) lean() bool { return !p.netHTTP }

// epoll reports whether the lean client runs on the engine's event loop
// where that applies.
func (p *protoOptions) epoll() bool { return !p.netHTTP && !p.noEpoll }

// protocol checks the flags' combinations (u nil: the built-in stub) and
// returns the engine's protocol name. grpc says the run makes gRPC
// calls, always HTTP/2 (h2c for an http URL, grpcflags.go), so
// --max-streams applies without --h2c. Whether the protocol suits the
// URL's scheme is engine.Config.Validate's to say.
func (p *protoOptions) protocol(fs *pflag.FlagSet, u *url.URL, grpc bool) (string, error) {
	switch {
	case p.http2 && p.h2c:
		return "", errors.New("--http2 and --h2c are exclusive: --http2 is HTTP/2 over TLS, --h2c without")
	case fs.Changed("max-streams") && !p.http2 && !p.h2c && !grpc:
		return "", errors.New("--max-streams applies to HTTP/2 only: give --http2 or --h2c")
	case p.netHTTP && p.fastHTTP1:
		return "", errors.New("--net-http and --fast-http1 are exclusive: the lean path is the default, --net-http turns it off")
	case p.netHTTP && p.noEpoll:
		return "", errors.New("--net-http and --no-epoll are exclusive: --no-epoll applies to the lean client, --net-http turns it off")
	case p.noEpoll && (p.http2 || p.h2c):
		return "", errors.New("--no-epoll applies to the HTTP/1.1 lean client: HTTP/2 runs on the event loop or, with --net-http, on x/net/http2's transport")
	case p.http2 && u == nil:
		return "", errors.New("--http2 needs an https URL: the built-in stub has no TLS (use --h2c for HTTP/2 with it)")
	case p.http2:
		return engine.HTTP2, nil
	case p.h2c:
		return engine.H2C, nil
	}
	return engine.HTTP1, nil
}
