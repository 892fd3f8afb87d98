package metrics

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"time"
)

// CheckAddr checks a --metrics-addr value: HOST:PORT, the host empty
// (every interface), a name or an IP, the port a number in 0-65535 (0:
// any free port).
func CheckAddr(addr string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("%q is not HOST:PORT, e.g. 127.0.0.1:9464", addr)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return fmt.Errorf("%q: port %q is not a number in 0-65535", addr, port)
	}
	if host != "" && net.ParseIP(host) == nil && !validName(host) {
		return fmt.Errorf("%q: %q is not a host name or an IP address", addr, host)
	}
	return nil
}

func validName(h string) bool {
	for _, c := range h {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '.') {
			return false
		}
	}
	return true
}

// Server serves an exporter's /metrics.
type Server struct {
	ln   net.Listener
	srv  *http.Server
	done chan error
}

// Serve binds addr now, so that a port in use is known before the run
// starts, and serves e's metrics on /metrics until Close.
func Serve(addr string, e *Exporter) (*Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", e.Handler())
	s := &Server{ln: ln, done: make(chan error, 1),
		srv: &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}}
	go func() { s.done <- s.srv.Serve(ln) }()
	return s, nil
}

// Addr is the address it listens on (the port chosen when 0 was given).
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Close stops serving: scrapes in progress get until ctx ends.
func (s *Server) Close(ctx context.Context) error {
	err := s.srv.Shutdown(ctx)
	if serr := <-s.done; !errors.Is(serr, http.ErrServerClosed) && err == nil {
		err = serr
	}
	return err
}
