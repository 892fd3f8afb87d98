package engine

import (
	"bufio"
	"net"

	"github.com/openload/openload/internal/rawtcp"
)

var rawResponse = []byte("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Type: text/plain\r\n\r\nok")

// stubResponse is a response as the stub sends it: its class header and
// three Server-Timing metrics.
var stubResponse = []byte("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n" +
	"Server-Timing: queue;dur=0.036, model;dur=50.329, total;dur=50.369\r\n" +
	"X-Stub-Reason: served\r\nX-Stub-Source: model\r\n" +
	"Date: Tue, 01 Dec 2026 13:07:11 GMT\r\nContent-Length: 2\r\n\r\nok")

// rawServer answers every HTTP/1.1 request without a body with the same
// 200 response, reading requests with one reused buffer: it allocates
// (next to) nothing per request, so a benchmark's allocs/op are the
// client's.
type rawServer struct {
	*rawtcp.Server
	URL string
}

func newRawServer() *rawServer { return newRawServerOf(rawResponse) }

// newRawServerOf is a rawServer that answers with resp.
func newRawServerOf(resp []byte) *rawServer {
	s, err := rawtcp.Serve(func(c net.Conn, _ <-chan struct{}) {
		br := bufio.NewReaderSize(c, 4096)
		for rawtcp.ReadRequest(br) {
			if _, err := c.Write(resp); err != nil {
				return
			}
		}
	})
	if err != nil {
		panic(err)
	}
	return &rawServer{Server: s, URL: "http://" + s.Addr()}
}
