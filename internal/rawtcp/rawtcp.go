// Package rawtcp is a loopback TCP server for tests that need an HTTP peer
// net/http's server will not be: one that allocates nothing per request,
// or misbehaves (resets, stalls, malformed answers, silent closes). For
// the peer that is not there at all, RefusedAddr holds a loopback port
// that refuses every connection.
package rawtcp

import (
	"bufio"
	"bytes"
	"net"
	"sync"
)

// Server hands every accepted connection to its handler on a goroutine of
// its own.
type Server struct {
	ln    net.Listener
	wg    sync.WaitGroup
	mu    sync.Mutex
	conns []net.Conn
	done  chan struct{}
}

// Serve listens on an ephemeral 127.0.0.1 port and calls handle for every
// connection; done is closed when the server closes. The connection is
// closed when handle returns.
func Serve(handle func(c net.Conn, done <-chan struct{})) (*Server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &Server{ln: ln, done: make(chan struct{})}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.mu.Lock()
			s.conns = append(s.conns, c)
			s.mu.Unlock()
			s.wg.Add(1)
			go func() {
				defer s.wg.Done()
				defer c.Close()
				handle(c, s.done)
			}()
		}
	}()
	return s, nil
}

// Addr is the server's host:port.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Close closes the listener and every connection, then waits for the
// handlers to return.
func (s *Server) Close() {
	close(s.done)
	s.ln.Close()
	s.mu.Lock()
	for _, c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
}

// ReadRequest reads one HTTP/1.1 request head without a body (what the
// tests send), reporting false when the connection ends first.
func ReadRequest(br *bufio.Reader) bool {
	for {
		line, err := br.ReadSlice('\n')
		if err != nil {
			return false
		}
		if len(bytes.TrimRight(line, "\r\n")) == 0 {
			return true
		}
	}
}
