package engine

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"

	"github.com/openload/openload/internal/recorder"
)

// zeroH2 is an HTTP/2 server that allocates nothing per request, so that
// a benchmark's allocs/op are the client's: it reads frames with
// x/net/http2's Framer (headers with ReadFrameHeader, payloads straight
// from its reader, so that no frame value is made), never decodes the
// request's header block, and answers every request, once its stream
// ended, with a HEADERS of the indexed ":status: 200" and a DATA "ok",
// flushed when it read everything it had. Streams are otherwise ignored:
// WINDOW_UPDATE, PRIORITY and RST_STREAM frames are read and dropped.
type zeroH2 struct {
	URL string
	TLS *tls.Config // the client's; nil for h2c

	grpc bool // answer as a gRPC server (zeroGRPC)
	ln   net.Listener
	wg   sync.WaitGroup
	mu   sync.Mutex
	cs   map[net.Conn]bool
}

// status200 is the header block ":status: 200", indexed (RFC 7541
// Appendix A, entry 8).
var status200 = []byte{0x88}

func newZeroH2(tb testing.TB, useTLS bool) *zeroH2 { return newZero(tb, useTLS, false) }

// newZeroGRPC is zeroH2 answering every call as a unary gRPC method does
// (grpc.go): a head of :status 200 and content-type application/grpc, a
// DATA of one message "ok", trailers grpc-status 0; its header blocks
// encoded by the connection's hpack.Encoder, which indexes them as
// grpc-go's does, so that from the second call on each field is one
// byte and the client's decoder allocates nothing for it.
func newZeroGRPC(tb testing.TB) *zeroH2 { return newZero(tb, false, true) }

// grpcMsg is zeroGRPC's answer's message.
var grpcMsg = []byte{0, 0, 0, 0, 2, 'o', 'k'}

func newZero(tb testing.TB, useTLS, grpc bool) *zeroH2 {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	z := &zeroH2{ln: ln, URL: "http://" + ln.Addr().String(), cs: map[net.Conn]bool{}, grpc: grpc}
	var srvTLS *tls.Config
	if useTLS {
		srvTLS, z.TLS = h2TLS(tb)
		z.URL = "https://" + ln.Addr().String()
	}
	z.wg.Add(1)
	go func() {
		defer z.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			if srvTLS != nil {
				c = tls.Server(c, srvTLS)
			}
			z.mu.Lock()
			z.cs[c] = true
			z.mu.Unlock()
			z.wg.Add(1)
			go func() {
				defer z.wg.Done()
				z.serve(c)
			}()
		}
	}()
	tb.Cleanup(z.close)
	return z
}

func (z *zeroH2) close() {
	z.ln.Close()
	z.mu.Lock()
	for c := range z.cs {
		c.Close()
	}
	z.mu.Unlock()
	z.wg.Wait()
}

func (z *zeroH2) serve(c net.Conn) {
	defer c.Close()
	br, bw := bufio.NewReaderSize(c, 64<<10), bufio.NewWriterSize(c, 64<<10)
	pay := make([]byte, 1<<14)
	if _, err := io.ReadFull(br, pay[:len(http2.ClientPreface)]); err != nil {
		return
	}
	fr := http2.NewFramer(bw, br)
	fr.WriteSettings(http2.Setting{ID: http2.SettingMaxConcurrentStreams, Val: 1000})
	bw.Flush()
	ok := []byte("ok")
	var hb bytes.Buffer
	enc := hpack.NewEncoder(&hb)
	block := func(fs ...hpack.HeaderField) []byte {
		hb.Reset()
		for _, f := range fs {
			enc.WriteField(f)
		}
		return hb.Bytes()
	}
	for {
		fh, err := fr.ReadFrameHeader()
		if err != nil {
			return
		}
		if int(fh.Length) > len(pay) {
			return
		}
		p := pay[:fh.Length]
		if _, err := io.ReadFull(br, p); err != nil {
			return
		}
		switch fh.Type {
		case http2.FrameSettings:
			if !fh.Flags.Has(http2.FlagSettingsAck) {
				fr.WriteSettingsAck()
			}
		case http2.FramePing:
			if !fh.Flags.Has(http2.FlagPingAck) {
				var d [8]byte
				copy(d[:], p)
				fr.WritePing(true, d)
			}
		case http2.FrameHeaders, http2.FrameData:
			if fh.Type == http2.FrameData && fh.Length > 0 {
				fr.WriteWindowUpdate(0, fh.Length) // a body's bytes back to the connection's window
			}
			if fh.Flags.Has(http2.FlagHeadersEndStream) && z.grpc {
				fr.WriteHeaders(http2.HeadersFrameParam{StreamID: fh.StreamID, EndHeaders: true,
					BlockFragment: block(hpack.HeaderField{Name: ":status", Value: "200"}, hpack.HeaderField{Name: "content-type", Value: "application/grpc"})})
				fr.WriteData(fh.StreamID, false, grpcMsg)
				fr.WriteHeaders(http2.HeadersFrameParam{StreamID: fh.StreamID, EndHeaders: true, EndStream: true,
					BlockFragment: block(hpack.HeaderField{Name: "grpc-status", Value: "0"})})
			} else if fh.Flags.Has(http2.FlagHeadersEndStream) { // the same bit as DATA's END_STREAM
				fr.WriteHeaders(http2.HeadersFrameParam{StreamID: fh.StreamID, BlockFragment: status200, EndHeaders: true})
				fr.WriteData(fh.StreamID, true, ok)
			}
		}
		if br.Buffered() == 0 {
			if err := bw.Flush(); err != nil {
				return
			}
		}
	}
}

// BenchmarkH2OpenRun is BenchmarkOpenRun over HTTP/2, h2c and TLS, on
// the event loop and on x/net/http2's transport, against zeroH2: a whole
// open run of b.N GETs (schedule, client, server, recorder) with 16
// streams in flight on one connection. allocs/op are the client's and the
// recorder's: the server allocates nothing per request.
func BenchmarkH2OpenRun(b *testing.B) {
	for _, p := range h2Protocols {
		for _, cl := range h2Clients {
			b.Run(p.name+"-"+cl.name, func(b *testing.B) {
				z := newZeroH2(b, p.tls)
				cfg := Config{URL: mustURL(b, z.URL), Method: http.MethodGet, Connections: 16, Timeout: 5 * time.Second,
					Drain: 5 * time.Second, Protocol: p.proto, TLS: z.TLS, Epoll: cl.epoll}
				benchRun(b, cfg, clientCase{name: h2ClientName(cl.epoll)}, recorder.New(nil))
			})
		}
	}
}

// BenchmarkGRPCUnary is BenchmarkH2OpenRun's h2c run of unary gRPC calls
// (grpc.go) against zeroGRPC: a 7-byte framed message each way, the
// answer's message read as its one event, its grpc-status counted. Read
// it beside BenchmarkH2OpenRun/h2c-loop, the same run of plain GETs: the
// issue asks a call's CPU within 1.5 × an HTTP request's.
func BenchmarkGRPCUnary(b *testing.B) {
	for _, cl := range h2Clients {
		b.Run("h2c-"+cl.name, func(b *testing.B) {
			z := newZeroGRPC(b)
			cfg := Config{URL: mustURL(b, z.URL+"/openload.bench.Echo/Unary"), Body: []byte{0, 0, 0, 0, 2, 'h', 'i'}, Connections: 16,
				Timeout: 5 * time.Second, Drain: 5 * time.Second, Protocol: H2C, Epoll: cl.epoll, GRPC: true}
			rec := recorder.New(nil)
			benchRun(b, cfg, clientCase{name: h2ClientName(cl.epoll)}, rec)
			var ok int64
			rec.EachGRPC(func(code int, n int64) {
				if code == 0 {
					ok = n
				}
			})
			if ok != int64(b.N) {
				b.Fatalf("%d calls answered OK, want %d", ok, b.N)
			}
		})
	}
}
