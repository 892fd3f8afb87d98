package engine

import (
	"bufio"
	"bytes"
	"net"
	"sync"
)

// rawServer answers every HTTP/1.1 request without a body with the same
// 200 response, reading requests with one reused buffer: it allocates
// (next to) nothing per request, so a benchmark's allocs/op are the
// client's.
type rawServer struct {
	ln   net.Listener
	URL  string
	wg   sync.WaitGroup
	mu   sync.Mutex
	conn []net.Conn
}

var rawResponse = []byte("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Type: text/plain\r\n\r\nok")

func newRawServer() *rawServer {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	s := &rawServer{ln: ln, URL: "http://" + ln.Addr().String()}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.mu.Lock()
			s.conn = append(s.conn, c)
			s.mu.Unlock()
			s.wg.Add(1)
			go s.serve(c)
		}
	}()
	return s
}

func (s *rawServer) serve(c net.Conn) {
	defer s.wg.Done()
	defer c.Close()
	br := bufio.NewReaderSize(c, 4096)
	for {
		// Read header lines up to the empty one.
		for {
			line, err := br.ReadSlice('\n')
			if err != nil {
				return
			}
			if len(bytes.TrimRight(line, "\r\n")) == 0 {
				break
			}
		}
		if _, err := c.Write(rawResponse); err != nil {
			return
		}
	}
}

func (s *rawServer) Close() {
	s.ln.Close()
	s.mu.Lock()
	for _, c := range s.conn {
		c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
}
