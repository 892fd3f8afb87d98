package engine

import (
	"net/http"
	"testing"
	"time"
)

// BenchmarkH2Do is BenchmarkWorkerDo over HTTP/2, h2c and TLS: one
// worker, one stream at a time on one connection, against rawH2
// (h2judge_test.go), which answers every stream at once. allocs/op
// include the server's (hpack decoding, its answer), which are the same
// before and after a change of the client.
func BenchmarkH2Do(b *testing.B) {
	for _, p := range h2Protocols {
		b.Run(p.name, func(b *testing.B) {
			s := newRawH2(b, p.tls, 0, 0, 0)
			cfg := Config{URL: mustURL(b, s.URL), Method: http.MethodGet, Timeout: 5 * time.Second, Protocol: p.proto, TLS: s.TLS}
			benchDo(b, cfg, "", 0)
			if n := s.read.Load(); n < int64(b.N) {
				b.Fatalf("the server processed %d streams of %d", n, b.N)
			}
		})
	}
}
