package engine

import (
	"errors"
	"fmt"

	"golang.org/x/net/http/httpguts"

	"github.com/openload/openload/field"
	"github.com/openload/openload/internal/recorder"
)

// MaxConnections bounds Config.Connections: far more connections than one
// generator can keep busy, few enough to catch a slipped finger.
const MaxConnections = 100_000

// Validate checks every value of cfg that a run reads, each against its
// range and the others it must agree with. Its errors are *field.Error,
// naming the fields of Config (Retry's as Retry.Backoff, …). It is the one
// place these values are checked: Run and RunClosed call it, and so may
// a caller that wants to refuse a configuration before anything starts.
//
// A nil URL is not refused here, so that a configuration can be checked
// before its target is known (the CLI does, before it starts its built-in
// stub); Run and RunClosed refuse it. With a URL, the protocol must suit
// its scheme. With Targets, URL, Method, Header and Body are the first
// target's (Config.Targets).
func (cfg Config) Validate() error {
	cfg = cfg.mixed() // targets.go
	switch {
	case cfg.Connections <= 0 || cfg.Connections > MaxConnections:
		return field.Errorf("Connections", cfg.Connections, "{Connections} must be between 1 and %d, got %d", MaxConnections, cfg.Connections)
	case cfg.Timeout <= 0:
		return field.Errorf("Timeout", cfg.Timeout, "{Timeout} must be > 0, got %v", cfg.Timeout)
	case cfg.DialTimeout < 0:
		return field.Errorf("DialTimeout", cfg.DialTimeout, "{DialTimeout} must be ≥ 0 (0: {Timeout}), got %v", cfg.DialTimeout)
	case cfg.DialTimeout > cfg.Timeout:
		return field.Errorf("DialTimeout", cfg.DialTimeout, "{DialTimeout} %v is longer than {Timeout} %v, which bounds a request's dial already", cfg.DialTimeout, cfg.Timeout)
	case cfg.Drain < 0:
		return field.Errorf("Drain", cfg.Drain, "{Drain} must be ≥ 0, got %v", cfg.Drain)
	case len(cfg.ClassHeaders) > recorder.MaxClassHeaders:
		return field.Errorf("ClassHeaders", cfg.ClassHeaders, "{ClassHeaders} given %d times, at most %d", len(cfg.ClassHeaders), recorder.MaxClassHeaders)
	case cfg.StampHeader != "" && !httpguts.ValidHeaderFieldName(cfg.StampHeader):
		return field.Errorf("StampHeader", cfg.StampHeader, "{StampHeader} %q is not a valid header name", cfg.StampHeader)
	case cfg.Method != "" && !httpguts.ValidHeaderFieldName(cfg.Method): // a method is a token
		return field.Errorf("Method", cfg.Method, "{Method} %q is not a valid HTTP method", cfg.Method)
	case cfg.MaxStreams < 0:
		return field.Errorf("MaxStreams", cfg.MaxStreams, "{MaxStreams} must be ≥ 0, got %d", cfg.MaxStreams)
	case cfg.MaxBody < 0:
		return field.Errorf("MaxBody", cfg.MaxBody, "{MaxBody} must be ≥ 0 bytes (0: no cap), got %d", cfg.MaxBody)
	case cfg.GRPC && cfg.Protocol != HTTP2 && cfg.Protocol != H2C:
		return field.Errorf("GRPC", cfg.GRPC, "{GRPC} calls go over HTTP/2 only: set {Protocol} to %s or %s", HTTP2, H2C)
	case cfg.GRPCMaxMessage < 0:
		return field.Errorf("GRPCMaxMessage", cfg.GRPCMaxMessage, "{GRPCMaxMessage} must be ≥ 0 bytes (0: %d), got %d", GRPCMaxMessage, cfg.GRPCMaxMessage)
	case len(cfg.BodyTokens) > 0 && len(cfg.BodyTokens) != len(cfg.Bodies):
		return field.Errorf("BodyTokens", len(cfg.BodyTokens), "{BodyTokens} holds %d counts for %d bodies: one each", len(cfg.BodyTokens), len(cfg.Bodies))
	}
	if err := cfg.validateTargets(); err != nil { // targets.go
		return err
	}
	if err := cfg.validateResend(false); err != nil {
		return err
	}
	for _, h := range cfg.ClassHeaders {
		if !httpguts.ValidHeaderFieldName(h) {
			return field.Errorf("ClassHeaders", h, "{ClassHeaders} %q is not a valid header name", h)
		}
	}
	if err := cfg.validateProtocol(); err != nil {
		return err
	}
	return field.In("Retry", cfg.Retry.Validate())
}

// ValidateClosed is Validate for a closed run (RunClosed), which sends
// HTTP/2 through net/http whatever Epoll says.
func (cfg Config) ValidateClosed() error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	if cfg.TargetStream != nil {
		// Its users would take targets out of the stream's order.
		return field.Errorf("TargetStream", true, "{TargetStream} applies to open runs: a closed loop takes no stream of targets")
	}
	return cfg.mixed().validateResend(true) // targets.go
}

// validateResend checks Resend, and that a policy other than the
// default goes to one of openload's own clients, HTTP/1.1's or the HTTP/2
// event loop: net/http's transport re-sends by its own rule and cannot be
// told not to (wire.go), so a run through it would not do what was asked.
// Which client a run takes is connect's and newH2Loop's choice
// (engine.go, h2loop_linux.go); without a URL, only what the fields say is
// known. A closed run (closed) sends HTTP/2 through net/http.
func (cfg Config) validateResend(closed bool) error {
	switch cfg.Resend {
	case "", ResendIdempotent:
		return nil
	case ResendUnwritten, ResendNever:
	default:
		return field.Errorf("Resend", cfg.Resend, "{Resend} %q is unknown (known: %s, %s, %s)", cfg.Resend, ResendIdempotent, ResendUnwritten, ResendNever)
	}
	h2 := cfg.Protocol == HTTP2 || cfg.Protocol == H2C
	var why string
	switch {
	case cfg.Transport != nil:
		why = "a transport of the caller's"
	case cfg.FollowRedirects:
		why = "following redirects"
	case cfg.URL != nil && cfg.URL.User != nil:
		why = "a URL with credentials"
	case h2 && closed:
		why = "HTTP/2 in a closed run"
	case h2 && cfg.Retry.Enabled():
		why = "HTTP/2 with retries"
	case h2 && !h2LoopFields(&cfg):
		why = "HTTP/2 off the event loop"
	case h2:
		return nil
	case cfg.URL != nil && cfg.URL.Scheme != "http":
		why = "a URL of scheme " + cfg.URL.Scheme
	case !cfg.Lean:
		why = "the lean client is off"
	default:
		return nil
	}
	return field.Errorf("Resend", cfg.Resend, "{Resend} %s applies to openload's own clients only (HTTP/1.1 over http, HTTP/2 on the event loop), and this run goes through net/http's transport (%s), which re-sends by its own rule (GET, HEAD, OPTIONS, TRACE, anything not written yet, and HTTP/2 streams the server did not process) and cannot be told not to", cfg.Resend, why)
}

// validateProtocol checks Protocol, and against the URL's scheme when
// there is a URL.
func (cfg Config) validateProtocol() error {
	scheme := ""
	if cfg.URL != nil {
		scheme = cfg.URL.Scheme
	}
	switch cfg.Protocol {
	case "", HTTP1:
	case HTTP2:
		if cfg.URL != nil && scheme != "https" {
			return field.Errorf("Protocol", cfg.Protocol, "{Protocol} is HTTP/2 over TLS and needs an https URL, got %s", cfg.URL)
		}
	case H2C:
		if cfg.URL != nil && scheme != "http" {
			return field.Errorf("Protocol", cfg.Protocol, "{Protocol} is HTTP/2 without TLS (prior knowledge) and needs an http URL, got %s", cfg.URL)
		}
	default:
		return field.Errorf("Protocol", cfg.Protocol, "{Protocol} %q is unknown (known: %s, %s, %s)", cfg.Protocol, HTTP1, HTTP2, H2C)
	}
	return nil
}

// check is what Run and RunClosed (closed) ask of cfg: Validate or
// ValidateClosed, and a URL to send to. The error says where it comes
// from.
func (cfg Config) check(closed bool) error {
	validate := cfg.Validate
	if closed {
		validate = cfg.ValidateClosed
	}
	if err := validate(); err != nil {
		return fmt.Errorf("engine: %w", err)
	}
	if cfg.URL == nil {
		return errors.New("engine: no URL to send to")
	}
	return nil
}
