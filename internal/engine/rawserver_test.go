package engine

import (
	"bufio"
	"net"

	"github.com/openload/openload/internal/rawtcp"
)

var rawResponse = []byte("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Type: text/plain\r\n\r\nok")

// rawServer answers every HTTP/1.1 request without a body with the same
// 200 response, reading requests with one reused buffer: it allocates
// (next to) nothing per request, so a benchmark's allocs/op are the
// client's.
type rawServer struct {
	*rawtcp.Server
	URL string
}

func newRawServer() *rawServer {
	s, err := rawtcp.Serve(func(c net.Conn, _ <-chan struct{}) {
		br := bufio.NewReaderSize(c, 4096)
		for rawtcp.ReadRequest(br) {
			if _, err := c.Write(rawResponse); err != nil {
				return
			}
		}
	})
	if err != nil {
		panic(err)
	}
	return &rawServer{Server: s, URL: "http://" + s.Addr()}
}
