package engine

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"

	"github.com/openload/openload/internal/recorder"
	"github.com/openload/openload/schedule"
)

// The differential test of HTTP/2's two clients: each case runs on
// x/net/http2's transport and on the event loop (h2loop_linux.go),
// against the same kind of server, h2c and TLS, and the outcomes must
// agree: counts, statuses, error kinds, streamed tokens and, where the
// server's own count is exact, wire.attempts against it.

// h2Outcome is what a run of a case says, in a form two runs compare.
type h2Outcome struct {
	Completed, Errors, Timeouts, Unfinished int64
	Statuses                                string
	Kinds                                   string
	Attempts                                int64 // wire.attempts
	Events, Tokens                          int64 // of streams
}

func outcomeOf(rec *recorder.Recorder) h2Outcome {
	c := rec.Counts()
	o := h2Outcome{Completed: c.Completed, Errors: c.Errors, Timeouts: c.Timeouts, Unfinished: c.Unfinished,
		Statuses: fmt.Sprint(rec.StatusCodes()), Kinds: fmt.Sprint(rec.ErrorKinds()), Attempts: rec.Wire().Attempts}
	if st := rec.Stream(); st != nil {
		o.Events, o.Tokens = st.Events, st.OutputTokens
	}
	return o
}

// diffHandler is the Go server's side of the cases: /status/N answers N;
// /echo checks the body's length against ?n=; /big?n= writes n bytes;
// /sse streams five tokens; /hold answers after 300 ms; /abort resets the stream after its head.
func diffHandler(w http.ResponseWriter, r *http.Request) {
	switch {
	case strings.HasPrefix(r.URL.Path, "/status/"):
		code, _ := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/status/"))
		w.WriteHeader(code)
		io.WriteString(w, "status")
	case r.URL.Path == "/echo":
		want, _ := strconv.Atoi(r.URL.Query().Get("n"))
		n, _ := io.Copy(io.Discard, r.Body)
		if n != int64(want) {
			w.WriteHeader(http.StatusBadRequest)
		}
		fmt.Fprintf(w, "%d", n)
	case r.URL.Path == "/big":
		n, _ := strconv.Atoi(r.URL.Query().Get("n"))
		chunk := bytes.Repeat([]byte("x"), 32<<10)
		for n > 0 {
			k := min(n, len(chunk))
			if _, err := w.Write(chunk[:k]); err != nil {
				return
			}
			n -= k
		}
	case r.URL.Path == "/sse":
		w.Header().Set("Content-Type", "text/event-stream")
		f := w.(http.Flusher)
		for range 5 {
			io.WriteString(w, `data: {"choices":[{"delta":{"content":"tok"}}]}`+"\n\n")
			f.Flush()
			time.Sleep(time.Millisecond)
		}
		io.WriteString(w, `data: {"choices":[],"usage":{"completion_tokens":5}}`+"\n\ndata: [DONE]\n\n")
	case r.URL.Path == "/hold":
		time.Sleep(300 * time.Millisecond)
		io.WriteString(w, "late")
	case r.URL.Path == "/abort":
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		panic(http.ErrAbortHandler)
	default:
		io.WriteString(w, "ok")
	}
}

// goServer starts net/http's server with diffHandler, h2c or TLS, and
// counts the requests its handler ran.
func goServer(t *testing.T, useTLS bool, served *atomic.Int64) (url string, cli *Config) {
	t.Helper()
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		served.Add(1)
		diffHandler(w, r)
	})
	srv := httptest.NewUnstartedServer(h)
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	cfg := &Config{}
	if useTLS {
		srv.EnableHTTP2 = true
		srv.StartTLS()
		cfg.Protocol, cfg.TLS = HTTP2, tlsTrusting(srv)
	} else {
		srv.Config.Protocols = new(http.Protocols)
		srv.Config.Protocols.SetHTTP1(true)
		srv.Config.Protocols.SetUnencryptedHTTP2(true)
		srv.Start()
		cfg.Protocol = H2C
	}
	t.Cleanup(srv.Close)
	return srv.URL, cfg
}

// closer is an HTTP/2 server on x/net's Framer that answers every stream
// but each connection's every-th, after which it closes the connection
// without a word: that stream was read (processed, counted) and got no
// answer.
func closer(t *testing.T, every int, served *atomic.Int64) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				br, bw := bufio.NewReader(c), bufio.NewWriter(c)
				pre := make([]byte, len(http2.ClientPreface))
				if _, err := io.ReadFull(br, pre); err != nil {
					return
				}
				fr := http2.NewFramer(bw, br)
				fr.ReadMetaHeaders = hpack.NewDecoder(4096, nil)
				fr.WriteSettings()
				bw.Flush()
				n := 0
				for {
					f, err := fr.ReadFrame()
					if err != nil {
						return
					}
					switch f := f.(type) {
					case *http2.SettingsFrame:
						if !f.IsAck() {
							fr.WriteSettingsAck()
						}
					case *http2.MetaHeadersFrame:
						served.Add(1)
						if n++; n == every {
							bw.Flush()
							return
						}
						fr.WriteHeaders(http2.HeadersFrameParam{StreamID: f.StreamID, BlockFragment: okStatus, EndHeaders: true})
						fr.WriteData(f.StreamID, true, []byte("ok"))
					}
					if err := bw.Flush(); err != nil {
						return
					}
				}
			}()
		}
	}()
	return "http://" + ln.Addr().String()
}

func TestH2Differential(t *testing.T) {
	big := bytes.Repeat([]byte("0123456789abcdef"), 1<<16) // 1 MiB: past x/net's server windows
	for _, p := range h2Protocols {
		t.Run(p.name, func(t *testing.T) {
			for _, tc := range []struct {
				name string
				// server starts the case's server and returns its URL,
				// the client's configuration (protocol, TLS) and what it
				// counts of the streams it processed (nil: not exact).
				server func(t *testing.T) (string, Config, *atomic.Int64)
				cfg    func(base string) Config
				s      func() schedule.Schedule
				check  func(t *testing.T, o h2Outcome)
				// racy: which requests were written before their
				// timeout may depend on the dial's time: wire.attempts
				// is checked against the server only.
				racy bool
			}{
				{name: "statuses", cfg: func(base string) Config {
					var ts []Target
					for _, code := range []string{"200", "404", "503"} {
						ts = append(ts, Target{Method: http.MethodGet, URL: mustURL(t, base+"/status/"+code)})
					}
					return Config{Targets: ts}
				}, check: func(t *testing.T, o h2Outcome) {
					if o.Statuses != "map[200:34 404:33 503:33]" {
						t.Errorf("statuses %s", o.Statuses)
					}
				}},
				{name: "POST bodies", cfg: func(base string) Config {
					return Config{URL: mustURL(t, base+"/echo?n=3"), Method: http.MethodPost, Bodies: [][]byte{[]byte("abc"), []byte("def")}}
				}, check: allOK},
				{name: "large request bodies", cfg: func(base string) Config {
					return Config{URL: mustURL(t, base+"/echo?n="+strconv.Itoa(len(big))), Method: http.MethodPost, Body: big, Connections: 8, Drain: 30 * time.Second}
				}, s: func() schedule.Schedule { return schedule.NewConstant(40, 500*time.Millisecond) }, check: allOK},
				{name: "large answers", cfg: func(base string) Config {
					// x/net's TLS under -race takes seconds for these.
					return Config{URL: mustURL(t, base+"/big?n="+strconv.Itoa(9<<20)), Connections: 4, Drain: 30 * time.Second}
				}, s: func() schedule.Schedule { return schedule.NewConstant(20, 500*time.Millisecond) }, check: allOK},
				{name: "event streams", cfg: func(base string) Config {
					return Config{URL: mustURL(t, base+"/sse")}
				}, check: func(t *testing.T, o h2Outcome) {
					allOK(t, o)
					if o.Events != 5*o.Completed || o.Tokens != 5*o.Completed {
						t.Errorf("%d events, %d tokens for %d streams: want 5 each", o.Events, o.Tokens, o.Completed)
					}
				}},
				{name: "reset after the head", cfg: func(base string) Config {
					return Config{URL: mustURL(t, base+"/abort")}
				}, check: func(t *testing.T, o h2Outcome) {
					if o.Errors != 100 || o.Kinds != "map[reset:100]" {
						t.Errorf("errors %d, kinds %s: want 100 resets", o.Errors, o.Kinds)
					}
				}},
				{name: "timeouts", cfg: func(base string) Config {
					// Long enough for a TLS handshake under -race.
					return Config{URL: mustURL(t, base+"/hold"), Timeout: 100 * time.Millisecond, Connections: 64}
				}, racy: true, check: func(t *testing.T, o h2Outcome) {
					if o.Timeouts != 100 {
						t.Errorf("%d timeouts, want 100", o.Timeouts)
					}
				}},
				{name: "RST_STREAM and GOAWAY", server: func(t *testing.T) (string, Config, *atomic.Int64) {
					s := newRawH2(t, p.tls, 3, 5, 25)
					return s.URL, Config{TLS: s.TLS, MaxStreams: 4}, &s.read
				}, cfg: func(base string) Config {
					// x/net waits 1 s before it sends a twice refused
					// stream again, 2 s before the next time.
					return Config{URL: mustURL(t, base), Drain: 10 * time.Second}
				},
					check: func(t *testing.T, o h2Outcome) {
						// x/net's backoff (1 s, 2 s, 4 s) may outlast the
						// timeout of a stream refused three times.
						if o.Completed+o.Errors+o.Timeouts != 100 || o.Errors == 0 || !strings.Contains(o.Kinds, fmt.Sprintf("reset:%d", o.Errors)) {
							t.Errorf("outcome %+v: want completed, reset (and timed out) only", o)
						}
					}},
				{name: "GOAWAY graceful", server: func(t *testing.T) (string, Config, *atomic.Int64) {
					j := newH2Judge(t, h2JudgeOpts{tls: p.tls, goAwayAfter: 10, hold: time.Millisecond})
					return j.URL, Config{TLS: j.TLS, MaxStreams: 4}, &j.read
				}, cfg: func(base string) Config { return Config{URL: mustURL(t, base)} },
					s: func() schedule.Schedule { return &bursts{n: 20, every: 50 * time.Millisecond, total: 100} }, check: allOK},
			} {
				t.Run(tc.name, func(t *testing.T) {
					var outs [2]h2Outcome
					for k, cl := range h2Clients {
						var served atomic.Int64
						var url string
						var base Config
						counted := &served
						if tc.server != nil {
							url, base, counted = tc.server(t)
							base.Protocol = p.proto
						} else {
							var cp *Config
							url, cp = goServer(t, p.tls, &served)
							base = *cp
						}
						cfg := tc.cfg(url)
						cfg.Protocol, cfg.TLS, cfg.Epoll = base.Protocol, base.TLS, cl.epoll
						if base.MaxStreams > 0 {
							cfg.MaxStreams = base.MaxStreams
						}
						var s schedule.Schedule = schedule.NewConstant(200, 500*time.Millisecond)
						if tc.s != nil {
							s = tc.s()
						}
						if cfg.URL == nil {
							cfg = cfg.mixed()
						}
						rec, stats := runAgainst(t, cfg.URL.String(), cfg, s)
						if want := h2ClientName(cl.epoll); stats.Client != want {
							t.Errorf("%s: client %q, want %q", cl.name, stats.Client, want)
						}
						checkIdentity(t, rec, int64(s.Expected()))
						outs[k] = outcomeOf(rec)
						if n := counted.Load(); outs[k].Attempts != n {
							t.Errorf("%s: wire.attempts %d, the server processed %d", cl.name, outs[k].Attempts, n)
						}
						tc.check(t, outs[k])
						t.Logf("%s: %+v", cl.name, outs[k])
					}
					// Exact agreement where the case leaves no race.
					a, b := outs[0], outs[1]
					if tc.racy {
						a.Attempts, b.Attempts = 0, 0
					}
					if tc.server != nil {
						// Which streams a GOAWAY or a refusal catches
						// depends on timing: the totals must agree.
						a.Completed, a.Errors, a.Timeouts, a.Kinds, a.Attempts, a.Statuses = 0, 0, 0, "", 0, ""
						b.Completed, b.Errors, b.Timeouts, b.Kinds, b.Attempts, b.Statuses = 0, 0, 0, "", 0, ""
					}
					if a != b {
						t.Errorf("the clients disagree:\n%s %+v\n%s %+v", h2Clients[0].name, outs[0], h2Clients[1].name, outs[1])
					}
				})
			}
		})
	}
}

// TestH2DifferentialServerCloses: a server that closes each connection
// at its 10th stream, unanswered. That stream was written and read
// (counted), and fails as a reset on both clients; the others complete.
func TestH2DifferentialServerCloses(t *testing.T) {
	var outs []h2Outcome
	for _, cl := range h2Clients {
		var served atomic.Int64
		url := closer(t, 10, &served)
		rec, _ := runAgainst(t, url, Config{Protocol: H2C, Epoll: cl.epoll, Connections: 1}, schedule.NewConstant(200, 500*time.Millisecond))
		checkIdentity(t, rec, 100)
		o := outcomeOf(rec)
		if o.Attempts != served.Load() || o.Completed != 90 || o.Kinds != "map[reset:10]" {
			t.Errorf("%s: %+v, the server read %d: want 90 completed, 10 reset, every read stream an attempt", cl.name, o, served.Load())
		}
		if w := rec.Wire(); w.Closed != 10 {
			t.Errorf("%s: wire %+v: want 10 attempts closed unanswered", cl.name, w)
		}
		outs = append(outs, o)
	}
	if !slices.Equal(outs[:1], outs[1:]) {
		t.Errorf("the clients disagree: %+v", outs)
	}
}

func allOK(t *testing.T, o h2Outcome) {
	t.Helper()
	if o.Completed == 0 || o.Errors+o.Timeouts+o.Unfinished != 0 || o.Statuses != fmt.Sprintf("map[200:%d]", o.Completed) {
		t.Errorf("outcome %+v: want every request completed with 200", o)
	}
}
