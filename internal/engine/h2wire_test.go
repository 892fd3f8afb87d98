package engine

import (
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/openload/openload/internal/recorder"
	"github.com/openload/openload/schedule"
	"golang.org/x/net/http2"
)

// Every HTTP/2 attempt counted exactly: wire.attempts equals the streams
// the server processed, whatever became of the others (h2judge_test.go).

// h2Run runs s against url with cfg and returns the recorder, and the
// per-request log's entries, after checking the log against the recorder:
// the attempts column sums to wire.attempts and no completed request has
// 0 attempts.
func h2Run(t *testing.T, url string, cfg Config, s schedule.Schedule) (*recorder.Recorder, []recorder.LogEntry) {
	t.Helper()
	cfg.URL = mustURL(t, url)
	if cfg.Method == "" {
		cfg.Method = http.MethodGet
	}
	if cfg.Connections == 0 {
		cfg.Connections = 16
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = 5 * time.Second
	}
	if cfg.Drain == 0 {
		cfg.Drain = 5 * time.Second
	}
	var buf bytes.Buffer
	rec := recorder.New(recorder.NewLogWriter(&buf))
	if _, err := Run(context.Background(), cfg, s, rec); err != nil {
		t.Fatal(err)
	}
	if err := rec.FlushLog(); err != nil {
		t.Fatal(err)
	}
	var entries []recorder.LogEntry
	var sum int64
	lr := recorder.NewLogReader(&buf, "log")
	for lr.Scan() {
		e := lr.Entry()
		entries = append(entries, e)
		sum += int64(e.Attempts)
		if e.Status != 0 && e.Attempts < 1 {
			t.Errorf("request %d completed with %d and logged %d attempts", e.Seq, e.Status, e.Attempts)
		}
	}
	if err := lr.Err(); err != nil {
		t.Fatal(err)
	}
	if w := rec.Wire(); sum != w.Attempts {
		t.Errorf("the log's attempts sum to %d, wire.attempts is %d", sum, w.Attempts)
	}
	return rec, entries
}

// h2Protocols are HTTP/2's two ways, each with the URL's scheme.
var h2Protocols = []struct {
	name, proto string
	tls         bool
}{{"h2c", H2C, false}, {"tls", HTTP2, true}}

// TestH2WireCounts runs openload at a few hundred requests a second
// against x/net/http2's Server, plain and in its failure cases, and
// asks wire.attempts to equal the streams the server processed.
func TestH2WireCounts(t *testing.T) {
	forH2Clients(t, func(t *testing.T, epoll bool) {
		for _, p := range h2Protocols {
			t.Run(p.name, func(t *testing.T) {
				for _, tc := range []struct {
					name  string
					opts  h2JudgeOpts
					cfg   Config
					burst bool // bursts of 20 every 50 ms, not a constant 400/s
					// what must have happened for the case to test anything
					check func(t *testing.T, j *h2Judge, rec *recorder.Recorder)
				}{
					{"answered", h2JudgeOpts{}, Config{}, false, func(t *testing.T, j *h2Judge, rec *recorder.Recorder) {
						if c := rec.Counts(); c.Completed != c.Scheduled {
							t.Errorf("counts %+v: want all completed", c)
						}
					}},
					{"reset", h2JudgeOpts{abortEvery: 4}, Config{}, false, func(t *testing.T, j *h2Judge, rec *recorder.Recorder) {
						if c := rec.Counts(); c.Errors != c.Scheduled/4 || rec.ErrorKinds()["reset"] != c.Errors {
							t.Errorf("counts %+v, kinds %v: want a quarter reset", c, rec.ErrorKinds())
						}
					}},
					// Every request times out, its HEADERS long written.
					{"timeout", h2JudgeOpts{hold: 150 * time.Millisecond}, Config{Timeout: 50 * time.Millisecond, Connections: 64}, false, func(t *testing.T, j *h2Judge, rec *recorder.Recorder) {
						if c := rec.Counts(); c.Timeouts != c.Scheduled {
							t.Errorf("counts %+v: want all timed out", c)
						}
					}},
					// Two streams a connection, bursts of 20 for 16 workers,
					// and the server's SETTINGS late: a new connection takes
					// streams before they arrive, and x/net's Server refuses
					// those past the second (REFUSED_STREAM, until its
					// SETTINGS are acknowledged).
					{"refused", h2JudgeOpts{maxStreams: 2, hold: 5 * time.Millisecond, settingsDelay: 10 * time.Millisecond}, Config{}, true, func(t *testing.T, j *h2Judge, rec *recorder.Recorder) {
						if j.refused.Load() == 0 {
							t.Errorf("no stream was refused")
						}
						if c := rec.Counts(); c.Completed != c.Scheduled {
							t.Errorf("counts %+v: want all completed (a refused stream is re-sent)", c)
						}
					}},
					// Bursts put streams on the wire while a GOAWAY is on its way:
					// x/net's Server discards them, the client sends them again.
					{"goaway", h2JudgeOpts{goAwayAfter: 40, hold: time.Millisecond}, Config{MaxStreams: 4}, true, func(t *testing.T, j *h2Judge, rec *recorder.Recorder) {
						if j.goAways.Load() < 5 {
							t.Errorf("%d connections shut down, want at least 5", j.goAways.Load())
						}
						if c := rec.Counts(); c.Completed != c.Scheduled {
							t.Errorf("counts %+v: want all completed (a stream past GOAWAY is re-sent)", c)
						}
					}},
				} {
					t.Run(tc.name, func(t *testing.T) {
						tc.opts.tls = p.tls
						j := newH2Judge(t, tc.opts)
						cfg := tc.cfg
						cfg.Protocol, cfg.TLS, cfg.Epoll = p.proto, j.TLS, epoll
						var s schedule.Schedule = schedule.NewConstant(400, time.Second)
						if tc.burst {
							s = &bursts{n: 20, every: 50 * time.Millisecond, total: 400}
						}
						rec, _ := h2Run(t, j.URL, cfg, s)
						checkIdentity(t, rec, 400)
						if w, read := rec.Wire().Attempts, j.read.Load(); w != read {
							t.Errorf("wire.attempts %d, the server processed %d streams (refused %d)", w, read, j.refused.Load())
						}
						tc.check(t, j, rec)
						t.Logf("server read %d streams and processed %d (refused %d; GOAWAYs %d); counts %+v",
							j.streams.Load(), j.read.Load(), j.refused.Load(), j.goAways.Load(), rec.Counts())
					})
				}
			})
		}
	})
}

// TestH2WireCountsRawServer runs openload against rawH2, which refuses,
// resets and leaves streams past its GOAWAY unprocessed on every
// connection, deterministically. A short timeout ends some requests
// while x/net waits to send a twice refused stream again: their refused
// attempts must not count either.
func TestH2WireCountsRawServer(t *testing.T) {
	forH2Clients(t, func(t *testing.T, epoll bool) {
		for _, p := range h2Protocols {
			t.Run(p.name, func(t *testing.T) {
				s := newRawH2(t, p.tls, 3, 5, 25)
				cfg := Config{Protocol: p.proto, TLS: s.TLS, Timeout: 300 * time.Millisecond, MaxStreams: 4, Epoll: epoll}
				rec, _ := h2Run(t, s.URL, cfg, schedule.NewConstant(400, time.Second))
				c := checkIdentity(t, rec, 400)
				read, refused, above := s.read.Load(), s.refused.Load(), s.above.Load()
				if w := rec.Wire().Attempts; w != read {
					t.Errorf("wire.attempts %d, the server processed %d streams (refused %d, %d past GOAWAY)", w, read, refused, above)
				}
				if refused == 0 || above == 0 || read == s.answered.Load() {
					t.Errorf("refused %d, past GOAWAY %d, reset %d: the server did not do all it should", refused, above, read-s.answered.Load())
				}
				if c.Completed != s.answered.Load() {
					t.Errorf("%d completed, the server answered %d", c.Completed, s.answered.Load())
				}
				t.Logf("server processed %d (answered %d), refused %d, %d past GOAWAY; counts %+v, kinds %v",
					read, s.answered.Load(), refused, above, c, rec.ErrorKinds())
			})
		}
	})
}

// bursts is a schedule of total requests, n at once every every, from 0.
type bursts struct {
	n, total, i int
	every       time.Duration
}

func (b *bursts) Next() (time.Duration, bool) {
	if b.i >= b.total {
		return 0, false
	}
	at := time.Duration(b.i/b.n) * b.every
	b.i++
	return at, true
}

func (b *bursts) Expected() float64 { return float64(b.total) }
func (b *bursts) Exact() bool       { return true }
func (b *bursts) Name() string      { return "bursts" }

// TestH2ResendPolicy: on the HTTP/2 event loop, Config.Resend says what
// goes again of what the server did not process. By default (the test
// above) its refusals and the streams past its GOAWAY are sent again and
// answered; with never or unwritten none is, and each is its request's
// outcome, an error of kind reset, while wire.attempts still counts only
// the streams the server processed.
func TestH2ResendPolicy(t *testing.T) {
	if !h2LoopFields(&Config{Epoll: true, Protocol: H2C}) {
		t.Skip("no HTTP/2 event loop here")
	}
	for _, policy := range []string{ResendNever, ResendUnwritten} {
		t.Run(policy, func(t *testing.T) {
			s := newRawH2(t, false, 3, 0, 25)
			cfg := Config{Protocol: H2C, MaxStreams: 4, Epoll: true, Resend: policy}
			rec, _ := h2Run(t, s.URL, cfg, schedule.NewConstant(400, time.Second))
			c := checkIdentity(t, rec, 400)
			read, refused, above := s.read.Load(), s.refused.Load(), s.above.Load()
			w := rec.Wire()
			if w.Attempts != read || w.ResendsWritten != 0 || (policy == ResendNever && w.Resends != 0) {
				t.Errorf("wire %+v; the server processed %d streams, refused %d, left %d past GOAWAY", w, read, refused, above)
			}
			if refused == 0 || above == 0 {
				t.Errorf("refused %d, past GOAWAY %d: the server did not do all it should", refused, above)
			}
			if k := rec.ErrorKinds()["reset"]; c.Completed != s.answered.Load() || k != refused+above || c.Errors != k {
				t.Errorf("counts %+v, kinds %v: want %d completed and %d resets (refused %d, past GOAWAY %d)",
					c, rec.ErrorKinds(), s.answered.Load(), refused+above, refused, above)
			}
			t.Logf("server processed %d, refused %d, %d past GOAWAY; counts %+v, wire %+v", read, refused, above, c, w)
		})
	}
}

// offsets is a schedule of one request at each of d.
type offsets struct {
	d []time.Duration
	i int
}

func (o *offsets) Next() (time.Duration, bool) {
	if o.i >= len(o.d) {
		return 0, false
	}
	o.i++
	return o.d[o.i-1], true
}

func (o *offsets) Expected() float64 { return float64(len(o.d)) }
func (o *offsets) Exact() bool       { return true }
func (o *offsets) Name() string      { return "offsets" }

// TestH2Backoff: a server that refuses every stream gets, from each
// request, what x/net/http2's RoundTrip sends it: the first re-send at
// once, the second a second later, the third two seconds after that. With
// a timeout of 1.5 s that is three refusals a request, on both clients; a
// loop that re-sent at once would make seven (1 + h2Resends) in a few
// milliseconds. None is an attempt: the server processed nothing; two
// a request were re-sends (the third, held back, never went).
func TestH2Backoff(t *testing.T) {
	forH2Clients(t, func(t *testing.T, epoll bool) {
		s := newRawH2(t, false, 1, 0, 0)
		// 0.5 s either side of the second re-send, which comes at 1 s.
		cfg := Config{Protocol: H2C, Epoll: epoll, Timeout: 1500 * time.Millisecond}
		const n = 10
		rec, _ := h2Run(t, s.URL, cfg, schedule.NewConstant(2*n, 500*time.Millisecond))
		c := checkIdentity(t, rec, n)
		w := rec.Wire()
		if got := s.refused.Load(); got != 3*n || c.Timeouts != n || w.Attempts != 0 || s.read.Load() != 0 || w.ResendsUnwritten != 2*n {
			t.Errorf("refused %d streams, read %d; counts %+v, wire %+v: want %d refused (3 a request), %d timeouts, no attempt, %d re-sends",
				got, s.read.Load(), c, w, 3*n, n, 2*n)
		}
		t.Logf("refused %d; counts %+v, kinds %v, wire %+v", s.refused.Load(), c, rec.ErrorKinds(), w)
	})
}

// TestH2FrameSize: both clients keep SETTINGS_MAX_FRAME_SIZE at
// 16 KiB: x/net/http2's Transport clips its MaxReadFrameSize of 0 to that
// (config.go, configFromTransport), and the loop does as the client it
// stands beside, so a server frames its answers alike for both. A
// frame of 16 KiB is read whole; one byte more is a FRAME_SIZE_ERROR, a
// protocol error, on both. Both clients, h2c and TLS.
func TestH2FrameSize(t *testing.T) {
	forH2Clients(t, func(t *testing.T, epoll bool) {
		for _, p := range h2Protocols {
			for _, size := range []int{h2MaxFrame, h2MaxFrame + 1} {
				t.Run(fmt.Sprintf("%s/%d", p.name, size), func(t *testing.T) {
					s := newBigFrameH2(t, p.tls, size)
					cfg := Config{Protocol: p.proto, TLS: s.TLS, Epoll: epoll, Timeout: time.Second}
					rec, _ := h2Run(t, s.URL, cfg, schedule.NewConstant(100, 200*time.Millisecond))
					c := checkIdentity(t, rec, 20)
					completed, errs := int64(20), int64(0)
					if size > h2MaxFrame {
						completed, errs = 0, 20
					}
					if c.Completed != completed || c.Errors != errs || rec.ErrorKinds()["protocol"] != errs || s.clientMaxFrame.Load() != h2MaxFrame {
						t.Errorf("counts %+v, kinds %v; the client's SETTINGS_MAX_FRAME_SIZE %d: want %d completed, %d protocol errors, %d",
							c, rec.ErrorKinds(), s.clientMaxFrame.Load(), completed, errs, h2MaxFrame)
					}
				})
			}
		}
	})
}

// h2MaxFrame is HTTP/2's default SETTINGS_MAX_FRAME_SIZE (RFC 9113 §6.5.2).
const h2MaxFrame = 1 << 14

// recordsConn follows the TLS records a client sends (RFC 5246 §6.2: a
// type byte, a version, a length), to tell what came last before its end.
type recordsConn struct {
	net.Conn
	hdr  []byte
	skip int
	last atomic.Int32 // the type of the last record begun
	done atomic.Bool  // the client's end was read, or a whole alert
}

const alertRecord = 21 // an alert record's type (RFC 5246 §6.2.1)

func (c *recordsConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	for b := p[:n]; len(b) > 0; {
		if c.skip > 0 {
			k := min(c.skip, len(b))
			c.skip, b = c.skip-k, b[k:]
			if c.skip == 0 && c.last.Load() == alertRecord {
				c.done.Store(true)
			}
			continue
		}
		k := min(5-len(c.hdr), len(b))
		c.hdr, b = append(c.hdr, b[:k]...), b[k:]
		if len(c.hdr) == 5 {
			c.last.Store(int32(c.hdr[0]))
			c.skip, c.hdr = int(c.hdr[3])<<8|int(c.hdr[4]), c.hdr[:0]
		}
	}
	if err != nil {
		c.done.Store(true)
	}
	return n, err
}

type recordsListener struct {
	net.Listener
	mu    sync.Mutex
	conns []*recordsConn
}

func (l *recordsListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	rc := &recordsConn{Conn: c}
	l.mu.Lock()
	l.conns = append(l.conns, rc)
	l.mu.Unlock()
	return rc, nil
}

// TestH2CloseNotify: a client ends its TLS with close_notify (RFC 8446
// §6.1: each side must send it before closing its write side). Over TLS
// 1.2, where an alert's record says so in the clear, the last record of
// every connection, on both clients, is an alert.
func TestH2CloseNotify(t *testing.T) {
	srvTLS, cliTLS := h2TLS(t)
	srvTLS.MaxVersion, srvTLS.NextProtos = tls.VersionTLS12, []string{"h2"}
	forH2Clients(t, func(t *testing.T, epoll bool) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		rl := &recordsListener{Listener: ln}
		srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {})}
		go srv.Serve(tls.NewListener(rl, srvTLS))
		defer srv.Close()
		cfg := Config{Protocol: HTTP2, TLS: cliTLS, Epoll: epoll}
		rec, _ := h2Run(t, "https://"+ln.Addr().String(), cfg, schedule.NewConstant(100, 200*time.Millisecond))
		if c := checkIdentity(t, rec, 20); c.Completed != 20 {
			t.Fatalf("counts %+v, kinds %v: want 20 completed", c, rec.ErrorKinds())
		}
		// The server reads each end soon after the run; 5 s is for a
		// loaded machine.
		rl.mu.Lock()
		conns := rl.conns
		rl.mu.Unlock()
		for _, c := range conns {
			for end := time.Now().Add(5 * time.Second); !c.done.Load() && time.Now().Before(end); {
				time.Sleep(time.Millisecond)
			}
			if !c.done.Load() || c.last.Load() != alertRecord {
				t.Errorf("connection from %v: ended %v, its last record of type %d, want %d (an alert: close_notify)", c.RemoteAddr(), c.done.Load(), c.last.Load(), alertRecord)
			}
		}
		if len(conns) == 0 {
			t.Error("no connection")
		}
	})
}

// TestH2BodyQueued: the loop frames a body as the socket takes it
// (sendBody, h2QueueBody), so a stream opened while an earlier one's long
// body is being sent has its HEADERS go out after at most what was queued
// then, not after the rest of that body. The server grants windows of
// 1 GiB and reads slowly (64 KiB a millisecond: a 16 MiB body takes it
// 256 ms); the second request comes 50 ms after the first. Framed whole,
// the first body was all in openload's buffer by then, and the second
// HEADERS reached the server after all 16 MiB of it; queued, they come
// after what the server had read by then, what the sockets hold (a few
// MiB) and at most h2QueueBody more. Both are answered once their body
// is in, and the server read exactly the bodies sent.
func TestH2BodyQueued(t *testing.T) {
	if !h2LoopFields(&Config{Epoll: true, Protocol: H2C}) {
		t.Skip("no HTTP/2 event loop here")
	}
	const size = 16 << 20
	var before atomic.Int64 // stream 1's body bytes read before stream 3's HEADERS
	before.Store(-1)
	read := 0 // since the server's last pause
	srv := newBodyH2(t, 1<<30, func(fr *http2.Framer, f http2.Frame, body map[uint32]int) {
		if h, ok := f.(*http2.MetaHeadersFrame); ok && h.StreamID == 3 {
			before.Store(int64(body[1]))
		}
		if d, ok := f.(*http2.DataFrame); ok {
			if read += len(d.Data()); read >= 64<<10 {
				read = 0
				time.Sleep(time.Millisecond)
			}
		}
	})
	body := bytes.Repeat([]byte("x"), size)
	cfg := Config{Protocol: H2C, Epoll: true, Method: http.MethodPost, Body: body, Timeout: 10 * time.Second}
	rec, _ := h2Run(t, srv.URL, cfg, &offsets{d: []time.Duration{0, 50 * time.Millisecond}})
	c := checkIdentity(t, rec, 2)
	bodies := srv.bodies()
	if c.Completed != 2 || len(bodies) != 2 || bodies[0] != size || bodies[1] != size {
		t.Fatalf("counts %+v; the server read bodies of %v bytes: want 2 completed, %d bytes each", c, bodies, size)
	}
	if b := before.Load(); b < 0 || b >= size {
		t.Errorf("the second request's HEADERS came after %d bytes of the first body, of %d: after all of it", b, size)
	}
	t.Logf("the second HEADERS came after %d of the first body's %d bytes", before.Load(), size)
}

// TestH2WindowResume: a body the server's windows let through a piece at
// a time is sent to its end with nothing else going on. The server keeps
// HTTP/2's default windows of 65,535 bytes and, for every 16 KiB it reads,
// gives them back, the connection's first and then the stream's, as
// x/net's server does. The loop frames the next piece when the stream's
// update comes; it once left that piece unwritten until something else
// wrote on the connection (a new stream, an update of its own), and a
// lone request waited for its timeout.
func TestH2WindowResume(t *testing.T) {
	if !h2LoopFields(&Config{Epoll: true, Protocol: H2C}) {
		t.Skip("no HTTP/2 event loop here")
	}
	const size = 1 << 20
	owed := 0
	srv := newBodyH2(t, 0, func(fr *http2.Framer, f http2.Frame, _ map[uint32]int) {
		if d, ok := f.(*http2.DataFrame); ok && len(d.Data()) > 0 {
			if owed += len(d.Data()); owed >= 16<<10 {
				fr.WriteWindowUpdate(0, uint32(owed))
				fr.WriteWindowUpdate(d.StreamID, uint32(owed))
				owed = 0
			}
		}
	})
	cfg := Config{Protocol: H2C, Epoll: true, Method: http.MethodPost, Body: bytes.Repeat([]byte("x"), size), Timeout: 5 * time.Second}
	rec, _ := h2Run(t, srv.URL, cfg, &offsets{d: []time.Duration{0}})
	c := checkIdentity(t, rec, 1)
	if bodies := srv.bodies(); c.Completed != 1 || len(bodies) != 1 || bodies[0] != size {
		t.Errorf("counts %+v, kinds %v; the server read bodies of %v bytes: want 1 completed, %d bytes", c, rec.ErrorKinds(), bodies, size)
	}
}
