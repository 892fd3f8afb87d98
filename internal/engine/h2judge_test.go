//lint:file-ignore SA1019 the judge is x/net/http2's Server, deprecated in favour of net/http's: ServeConn serves one connection on a Server of its own, which can then be shut down (GOAWAY) alone.

package engine

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// Servers that judge openload's HTTP/2 attempt counts: each counts the
// streams it processed, the number a server's access log holds, so that a
// test can ask wire.attempts to equal it exactly.

// h2Judge is x/net/http2's Server on a loopback listener, h2c with prior
// knowledge or TLS with ALPN h2, each connection served by a Server of its
// own so that one connection can be shut down (GOAWAY) alone. read counts
// the handler's runs: x/net runs the handler once per stream it
// processed, never for a stream it refused (REFUSED_STREAM) or discarded
// above the last-stream-id of its GOAWAY.
type h2Judge struct {
	URL string
	TLS *tls.Config // the client's: trusts the server; nil for h2c

	read    atomic.Int64 // streams processed (handler runs)
	refused atomic.Int64 // streams refused past MaxConcurrentStreams (CountError)
	goAways atomic.Int64 // connections shut down mid-run
	streams atomic.Int64 // streams whose header block the server read, processed or not

	ln    net.Listener
	opts  h2JudgeOpts
	wg    sync.WaitGroup
	mu    sync.Mutex
	conns map[net.Conn]bool
}

type h2JudgeOpts struct {
	tls         bool
	maxStreams  uint32        // SETTINGS_MAX_CONCURRENT_STREAMS; 0: x/net's default
	hold        time.Duration // each handler's time
	abortEvery  int64         // the handler of every abortEvery-th stream panics with http.ErrAbortHandler: RST_STREAM after its HEADERS were read
	goAwayAfter int64         // a connection's goAwayAfter-th stream shuts it down gracefully (GOAWAY)
	// The server's first write (its SETTINGS) waits this long, as over
	// a long round trip: the client sends streams before it knows
	// maxStreams, and the server refuses those past it.
	settingsDelay time.Duration
}

// judgeConn is a server's connection that counts the requests' header
// blocks it reads (with the client's frameScan, h2.go), and whose first
// write waits delay.
type judgeConn struct {
	net.Conn
	delay   time.Duration
	once    sync.Once
	in      frameScan
	max     uint32
	streams *atomic.Int64
}

func (c *judgeConn) Write(p []byte) (int, error) {
	c.once.Do(func() { time.Sleep(c.delay) })
	return c.Conn.Write(p)
}

func (c *judgeConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	for q := p[:n]; len(q) > 0; {
		k, done := c.in.feed(q)
		q = q[k:]
		if done && c.in.typ() == http2.FrameHeaders && c.in.stream() > c.max {
			c.max = c.in.stream()
			c.streams.Add(1)
		}
	}
	return n, err
}

// judgeTLSConn is a judgeConn over TLS, whose state x/net's Server reads.
type judgeTLSConn struct {
	*judgeConn
	tc *tls.Conn
}

func (c judgeTLSConn) ConnectionState() tls.ConnectionState { return c.tc.ConnectionState() }

func newH2Judge(t testing.TB, opts h2JudgeOpts) *h2Judge {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	j := &h2Judge{ln: ln, opts: opts, conns: map[net.Conn]bool{}, URL: "http://" + ln.Addr().String()}
	var srvTLS *tls.Config
	if opts.tls {
		srvTLS, j.TLS = h2TLS(t)
		j.URL = "https://" + ln.Addr().String()
	}
	j.wg.Add(1)
	go func() {
		defer j.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			if srvTLS != nil {
				c = tls.Server(c, srvTLS)
			}
			j.track(c, true)
			j.wg.Add(1)
			go func() {
				defer j.wg.Done()
				defer j.track(c, false)
				j.serve(c)
			}()
		}
	}()
	t.Cleanup(j.close)
	return j
}

// h2TLS returns the TLS configurations of a loopback HTTP/2 server (a
// self-signed certificate for 127.0.0.1, ALPN h2) and of a client that
// trusts it.
func h2TLS(t testing.TB) (srv, cli *tls.Config) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "openload h2 judge"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IsCA: true, BasicConstraintsValid: true, IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	srv = &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}, NextProtos: []string{http2.NextProtoTLS}}
	return srv, &tls.Config{RootCAs: pool}
}

func (j *h2Judge) track(c net.Conn, add bool) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if add {
		j.conns[c] = true
	} else {
		delete(j.conns, c)
	}
}

// serve serves one connection until it closes.
func (j *h2Judge) serve(c net.Conn) {
	defer c.Close()
	if tc, ok := c.(*tls.Conn); ok {
		if err := tc.Handshake(); err != nil {
			return
		}
	}
	h2s := &http2.Server{MaxConcurrentStreams: j.opts.maxStreams, CountError: func(kind string) {
		// "stream_REFUSED_STREAM_over_max_streams_race" before its
		// SETTINGS are acknowledged, PROTOCOL_ERROR after.
		if strings.Contains(kind, "over_max_streams") {
			j.refused.Add(1)
		}
	}}
	hs := &http.Server{ErrorLog: log.New(io.Discard, "", 0)}
	var streams atomic.Int64 // this connection's
	hs.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := j.read.Add(1)
		if k := streams.Add(1); k == j.opts.goAwayAfter {
			j.goAways.Add(1)
			go hs.Shutdown(context.Background()) // GOAWAY on this connection only
		}
		if j.opts.hold > 0 {
			time.Sleep(j.opts.hold)
		}
		if j.opts.abortEvery > 0 && n%j.opts.abortEvery == 0 {
			panic(http.ErrAbortHandler)
		}
		io.WriteString(w, "ok")
	})
	if err := http2.ConfigureServer(hs, h2s); err != nil {
		panic(err)
	}
	jc := &judgeConn{Conn: c, delay: j.opts.settingsDelay, in: frameScan{preface: len(http2.ClientPreface)}, streams: &j.streams}
	c = jc
	if tc, ok := jc.Conn.(*tls.Conn); ok {
		c = judgeTLSConn{jc, tc}
	}
	h2s.ServeConn(c, &http2.ServeConnOpts{BaseConfig: hs, Handler: hs.Handler})
}

func (j *h2Judge) close() {
	j.ln.Close()
	j.mu.Lock()
	for c := range j.conns {
		c.Close()
	}
	j.mu.Unlock()
	j.wg.Wait()
}

// rawH2 is an HTTP/2 server written on x/net/http2's Framer that does,
// deterministically, what a real server does only in races: per
// connection, it refuses every refuseEvery-th stream (RST_STREAM
// REFUSED_STREAM, not processed), resets every resetEvery-th after reading
// it (RST_STREAM INTERNAL_ERROR, processed), and at its goAwayAfter-th
// stream sends GOAWAY with the previous stream as the last one, leaving
// that stream (and every later one) unprocessed though it read it. Every
// other stream gets 200 "ok" at once. read counts the processed streams
// (answered or reset), refused and above those it read and did not
// process.
//
// With stallAt, its first connection grants windows of 1 GiB, and at its
// stallAt-th HEADERS (read: processed, never answered) it reads nothing
// more and, stallFor later, resets the connection: what the client wrote
// after those HEADERS waits in its socket, and HEADERS it still held it
// never sent. Its receive buffer is 64 KiB, fixed, so what the client's
// socket holds is at most its send buffer (sendBufferMax).
//
// With pairHold, it answers streams two at a time: pairHold after it read
// the second's HEADERS, both answers in one write (newPairingH2 logs its
// writes).
//
// With window, its connections grant streams a window of that size and
// add as much to their own. With atEnd, a stream is answered once its
// request ended, and its body's size is noted (bodies). onFrame, if set,
// is called with every HEADERS and DATA frame read, and with the body
// bytes read so far by stream.
type rawH2 struct {
	URL string
	TLS *tls.Config // the client's; nil for h2c

	read, refused, above, answered atomic.Int64

	refuseEvery, resetEvery, goAwayAfter int
	stallAt                              int
	stallFor                             time.Duration
	pairHold                             time.Duration
	answerFrame                          int          // the answer's body, in one DATA frame of this size; 0: "ok"
	clientMaxFrame                       atomic.Int64 // the client's SETTINGS_MAX_FRAME_SIZE, as its SETTINGS left it
	accepted                             atomic.Int64
	window                               uint32
	atEnd                                bool
	onFrame                              func(fr *http2.Framer, f http2.Frame, body map[uint32]int)
	ended                                []int     // body bytes of each stream answered at its end, in turn (under mu)
	writes                               *writeLog // if set, logs the connections' writes (beat_linux_test.go)

	ln    net.Listener
	wg    sync.WaitGroup
	mu    sync.Mutex
	conns map[net.Conn]bool
}

func newRawH2(t testing.TB, useTLS bool, refuseEvery, resetEvery, goAwayAfter int) *rawH2 {
	t.Helper()
	return startRawH2(t, useTLS, &rawH2{refuseEvery: refuseEvery, resetEvery: resetEvery, goAwayAfter: goAwayAfter})
}

// newPairingH2 is a rawH2 that answers streams in pairs, in one write,
// hold after the second came.
func newPairingH2(t testing.TB, hold time.Duration) *rawH2 {
	t.Helper()
	return startRawH2(t, false, &rawH2{pairHold: hold, writes: &writeLog{}})
}

// newBigFrameH2 is a rawH2 whose answers carry size bytes in one DATA
// frame.
func newBigFrameH2(t testing.TB, useTLS bool, size int) *rawH2 {
	t.Helper()
	return startRawH2(t, useTLS, &rawH2{answerFrame: size})
}

// newBodyH2 is a rawH2 that answers each stream once its request ended,
// granting windows of window (0: HTTP/2's default) and calling onFrame
// with each frame it reads.
func newBodyH2(t testing.TB, window uint32, onFrame func(fr *http2.Framer, f http2.Frame, body map[uint32]int)) *rawH2 {
	t.Helper()
	return startRawH2(t, false, &rawH2{window: window, atEnd: true, onFrame: onFrame})
}

// bodies is the body size of each stream answered at its end, in turn.
func (s *rawH2) bodies() []int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.ended)
}

// newStallingH2 is a rawH2 whose first connection stalls at its stallAt-th
// HEADERS and is reset stallFor later.
func newStallingH2(t testing.TB, useTLS bool, stallAt int, stallFor time.Duration) *rawH2 {
	t.Helper()
	return startRawH2(t, useTLS, &rawH2{stallAt: stallAt, stallFor: stallFor})
}

func startRawH2(t testing.TB, useTLS bool, s *rawH2) *rawH2 {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s.ln, s.conns, s.URL = ln, map[net.Conn]bool{}, "http://"+ln.Addr().String()
	s.clientMaxFrame.Store(1 << 14) // RFC 9113 §6.5.2's default
	var srvTLS *tls.Config
	if useTLS {
		srvTLS, s.TLS = h2TLS(t)
		s.URL = "https://" + ln.Addr().String()
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			if s.stallAt > 0 {
				// A receive buffer of its own size, not tcp_rmem's
				// autotuned one (32 MiB on some machines): what the client
				// wrote past the stall waits in the client's socket.
				_ = c.(*net.TCPConn).SetReadBuffer(64 << 10)
			}
			if s.writes != nil {
				c = s.writes.conn(c)
			}
			if srvTLS != nil {
				c = tls.Server(c, srvTLS)
			}
			s.mu.Lock()
			s.conns[c] = true
			s.mu.Unlock()
			s.wg.Add(1)
			go func() {
				defer s.wg.Done()
				s.serve(c)
				s.mu.Lock()
				delete(s.conns, c)
				s.mu.Unlock()
			}()
		}
	}()
	t.Cleanup(s.close)
	return s
}

// settle waits for the connections to end by the client's close, so
// that the counts hold every frame the client wrote: the run's end does
// not wait for the server to have read them. Past 5 s it closes them.
func (s *rawH2) settle() {
	s.ln.Close()
	done := make(chan struct{})
	go func() {
		s.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		s.close()
		<-done
	}
}

func (s *rawH2) close() {
	s.ln.Close()
	s.mu.Lock()
	for c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
}

var okStatus = func() []byte {
	var b bytes.Buffer
	enc := hpack.NewEncoder(&b)
	enc.WriteField(hpack.HeaderField{Name: ":status", Value: "200"})
	enc.WriteField(hpack.HeaderField{Name: "content-length", Value: "2"})
	return b.Bytes()
}()

// serve reads one connection's frames until it closes, answering as it
// goes; after its GOAWAY it reads on (and processes nothing) until the
// client closes.
func (s *rawH2) serve(c net.Conn) {
	defer c.Close()
	br, bw := bufio.NewReader(c), bufio.NewWriter(c)
	preface := make([]byte, len(http2.ClientPreface))
	if _, err := io.ReadFull(br, preface); err != nil || string(preface) != http2.ClientPreface {
		return
	}
	fr := http2.NewFramer(bw, br)
	fr.ReadMetaHeaders = hpack.NewDecoder(4096, nil)
	stall := s.stallAt > 0 && s.accepted.Add(1) == 1
	if stall {
		fr.WriteSettings(http2.Setting{ID: http2.SettingMaxConcurrentStreams, Val: 1000},
			http2.Setting{ID: http2.SettingInitialWindowSize, Val: 1 << 30})
		fr.WriteWindowUpdate(0, 1<<30)
	} else if s.window > 0 {
		fr.WriteSettings(http2.Setting{ID: http2.SettingMaxConcurrentStreams, Val: 1000},
			http2.Setting{ID: http2.SettingInitialWindowSize, Val: s.window})
		fr.WriteWindowUpdate(0, s.window)
	} else {
		fr.WriteSettings(http2.Setting{ID: http2.SettingMaxConcurrentStreams, Val: 1000})
	}
	bw.Flush()
	body := map[uint32]int{} // body bytes read, by stream
	answer := func(id uint32) {
		s.read.Add(1)
		s.answered.Add(1)
		fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: okStatus, EndHeaders: true})
		fr.WriteData(id, true, []byte("ok"))
	}
	atEnd := func(id uint32) {
		s.mu.Lock()
		s.ended = append(s.ended, body[id])
		s.mu.Unlock()
		answer(id)
	}
	var n int       // HEADERS read on this connection
	var prev uint32 // the stream of the previous HEADERS
	gone := false   // GOAWAY sent
	var held []uint32
	for {
		f, err := fr.ReadFrame()
		if err != nil {
			return
		}
		switch f := f.(type) {
		case *http2.SettingsFrame:
			if !f.IsAck() {
				if v, ok := f.Value(http2.SettingMaxFrameSize); ok {
					s.clientMaxFrame.Store(int64(v))
				}
				fr.WriteSettingsAck()
			}
		case *http2.PingFrame:
			if !f.IsAck() {
				fr.WritePing(true, f.Data)
			}
		case *http2.DataFrame:
			body[f.StreamID] += len(f.Data())
			if s.onFrame != nil {
				s.onFrame(fr, f, body)
			}
			if s.atEnd && f.StreamEnded() {
				atEnd(f.StreamID)
			}
		case *http2.MetaHeadersFrame:
			id := f.StreamID
			n++
			if s.onFrame != nil {
				s.onFrame(fr, f, body)
			}
			if stall && n == s.stallAt {
				s.read.Add(1)
				time.Sleep(s.stallFor)
				if tc, ok := c.(*tls.Conn); ok {
					c = tc.NetConn()
				}
				_ = c.(*net.TCPConn).SetLinger(0) // Close sends RST
				return
			}
			switch {
			case s.atEnd:
				if f.StreamEnded() {
					atEnd(id)
				}
			case s.pairHold > 0:
				s.read.Add(1)
				if held = append(held, id); len(held) == 2 {
					time.Sleep(s.pairHold)
					for _, id := range held {
						s.answered.Add(1)
						fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: okStatus, EndHeaders: true})
						fr.WriteData(id, true, []byte("ok"))
					}
					held = held[:0]
				}
			case gone:
				s.above.Add(1)
			case n == s.goAwayAfter:
				s.above.Add(1)
				fr.WriteGoAway(prev, http2.ErrCodeNo, nil)
				gone = true
			case s.refuseEvery > 0 && n%s.refuseEvery == 0:
				s.refused.Add(1)
				fr.WriteRSTStream(id, http2.ErrCodeRefusedStream)
			case s.resetEvery > 0 && n%s.resetEvery == 0:
				s.read.Add(1)
				fr.WriteRSTStream(id, http2.ErrCodeInternal)
			case s.answerFrame > 0:
				s.read.Add(1)
				s.answered.Add(1)
				var b bytes.Buffer
				enc := hpack.NewEncoder(&b)
				enc.WriteField(hpack.HeaderField{Name: ":status", Value: "200"})
				enc.WriteField(hpack.HeaderField{Name: "content-length", Value: strconv.Itoa(s.answerFrame)})
				fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: b.Bytes(), EndHeaders: true})
				fr.WriteData(id, true, make([]byte, s.answerFrame))
			default:
				answer(id)
			}
			prev = id
		}
		if err := bw.Flush(); err != nil {
			return
		}
	}
}
