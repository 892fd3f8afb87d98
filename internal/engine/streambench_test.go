package engine

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openload/openload/internal/recorder"
	"github.com/openload/openload/schedule"
	"github.com/openload/openload/servers/scripted"
)

// BenchmarkStreamEvents measures how many token events openload records a
// second, with the streaming server in another process: this test binary
// re-executed as sseChild, a minimal OpenAI-style SSE server (chunked,
// one data line per token, one write per token), so that the figures are
// the generator's, not the server's (the stub's own cost is its helper's
// to measure). Each of b.N requests streams benchTokens tokens at
// benchTokenRate a second, arriving at benchStreamRate a second, so about
// benchStreamRate × benchTokens ÷ benchTokenRate streams are open at once
// (2,000) and benchStreamRate × benchTokens events arrive a second
// (100,000). Run it as
//
//	go test ./internal/engine/ -run '^$' -bench StreamEvents -benchtime 20000x -count 1
//
// (20,000 streams: a 10 s schedule). It reports token events recorded per
// second of the whole run (ramp-up and the last streams' tail included)
// and in its median steady second, the send delay p99 of the arrivals, the generator's
// CPU time per 1,000 events, its peak RSS, and allocations per stream
// (allocs/op; ÷ 50 per event).
func BenchmarkStreamEvents(b *testing.B) {
	addr, stop := startSSEChild(b)
	defer stop()
	dur := time.Duration(float64(b.N) / benchStreamRate * float64(time.Second))
	cfg := Config{
		URL: mustURL(b, "http://"+addr+"/v1/completions"), Method: http.MethodPost, Body: []byte(`{"model":"m","stream":true}`),
		Connections: 4000, Timeout: 30 * time.Second, Drain: 30 * time.Second, Lean: true, Epoll: true, Stream: true,
	}
	rec := recorder.New(nil)
	rec.StreamRun()
	b.ReportAllocs()
	b.ResetTimer()
	stats, err := Run(context.Background(), cfg, schedule.NewConstant(benchStreamRate, dur), rec)
	b.StopTimer()
	if err != nil {
		b.Fatal(err)
	}
	c := rec.Counts()
	st := rec.Stream()
	if c.Completed != int64(b.N) || st.Events != int64(b.N)*benchTokens {
		b.Fatalf("counts %+v, %d events: want %d completed with %d events", c, st.Events, b.N, int64(b.N)*benchTokens)
	}
	wall := stats.End.Seconds()
	b.ReportMetric(float64(st.Events)/wall, "events/s")
	// The steady state: the median second between the first second (the
	// streams ramp up) and the schedule's end (they ramp down after it).
	var steady []int64
	for i, sec := range rec.Timeline() {
		if i >= 1 && time.Duration(i+1)*time.Second <= dur {
			steady = append(steady, sec.Tokens)
		}
	}
	if len(steady) > 0 {
		slices.Sort(steady)
		b.ReportMetric(float64(steady[len(steady)/2]), "steady-events/s")
	}
	b.ReportMetric(float64(rec.SendDelay.ValueAtQuantile(99))/1000, "send-delay-p99-ms")
	if g := stats.Generator; g.CPUKnown {
		b.ReportMetric(1000*g.CPUSeconds/float64(st.Events), "cpu-s/1000events")
	}
	if rss, ok := peakRSSMB(); ok {
		b.ReportMetric(rss, "peak-RSS-MB")
	}
	b.ReportMetric(float64(stats.MaxInFlight), "max-streams")
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	b.ReportMetric(float64(ms.HeapInuse)/(1<<20), "heap-inuse-end-MB")
}

// BenchmarkReadStream reads one streamed answer of each server (the
// scripted servers', servers_test.go) per op with the reader every
// client shares (readStream, eventReader), fed one event at a time as a
// network would bring it: the per-event cost of the hot path, which
// must not allocate (allocs/op stays 0 once the pooled reader is warm).
// The answers are written once, before the timed loop.
func BenchmarkReadStream(b *testing.B) {
	const tokens = 50
	for _, f := range scripted.Formats() {
		b.Run(f.String(), func(b *testing.B) {
			body, format := scriptedAnswer(b, f, scripted.Options{}, tokens)
			g := &generator{start: time.Now()}
			sh := &shard{}
			r := &oneEventReader{}
			b.ReportAllocs()
			b.SetBytes(int64(len(body)))
			b.ResetTimer()
			for b.Loop() {
				var rec recorder.Record
				r.reset(body)
				if err := g.readStream(r, format, &rec, sh); err != nil || rec.Events != tokens || rec.Tokens != tokens {
					b.Fatalf("%v: %d events, %d tokens; want %d", err, rec.Events, rec.Tokens, tokens)
				}
				sh.toks = sh.toks[:0]
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*tokens), "ns/event")
		})
	}
}

// oneEventReader hands out its body one line end at a time: one read per
// event line, as a server flushing each event brings them.
type oneEventReader struct{ rest []byte }

func (r *oneEventReader) reset(b []byte) { r.rest = b }

func (r *oneEventReader) Read(p []byte) (int, error) {
	if len(r.rest) == 0 {
		return 0, io.EOF
	}
	n := bytes.IndexByte(r.rest, '\n') + 1
	if n == 0 {
		n = len(r.rest)
	}
	n = copy(p, r.rest[:n])
	r.rest = r.rest[n:]
	return n, nil
}

const (
	benchStreamRate = 2000 // streams begun a second
	benchTokens     = 50   // tokens per stream
	benchTokenRate  = 50   // tokens a second per stream
)

// sseChildEnv makes this test binary the benchmark's server (TestMain).
const sseChildEnv = "OPENLOAD_SSE_CHILD"

// startSSEChild starts the SSE server in a child process and returns its
// address and a function that stops it.
func startSSEChild(b *testing.B) (string, func()) {
	b.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), sseChildEnv+"=1")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		b.Fatalf("SSE child: %v", err)
	}
	return strings.TrimSpace(line), func() {
		stdin.Close() // the child exits when its stdin closes
		cmd.Wait()
	}
}

// sseChild serves until its standard input closes: for every request a
// chunked text/event-stream answer of benchTokens content events, one
// every 1/benchTokenRate, then a usage chunk and [DONE]. One goroutine
// paces every stream with one ticker, writing the tokens due to each
// stream's connection, one write(2) each.
func sseChild() {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println(ln.Addr().String())
	go func() {
		io.Copy(io.Discard, os.Stdin)
		os.Exit(0)
	}()
	var mu sync.Mutex
	var streams []*sseStream
	go func() {
		tick := time.NewTicker(time.Second / benchTokenRate)
		var due []*sseStream
		for range tick.C {
			mu.Lock()
			due = append(due[:0], streams...)
			streams = streams[:0]
			mu.Unlock()
			for _, s := range due {
				if s.next() {
					mu.Lock()
					streams = append(streams, s)
					mu.Unlock()
				}
			}
		}
	}()
	for {
		c, err := ln.Accept()
		if err != nil {
			os.Exit(1)
		}
		go func() {
			br := bufio.NewReader(c)
			for {
				if err := skipRequest(br); err != nil {
					c.Close()
					return
				}
				s := &sseStream{c: c, done: make(chan bool, 1)}
				if _, err := c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n")); err != nil {
					c.Close()
					return
				}
				mu.Lock()
				streams = append(streams, s)
				mu.Unlock()
				if !<-s.done {
					c.Close()
					return
				}
			}
		}()
	}
}

type sseStream struct {
	c    net.Conn
	k    int
	buf  []byte
	done chan bool // true: the answer ended, the connection serves another
}

const sseToken = `data: {"choices":[{"index":0,"delta":{"content":" tok"}}]}` + "\n\n"

// next writes the stream's next token (and its end after the last); it
// reports whether the stream goes on.
func (s *sseStream) next() bool {
	s.buf = s.buf[:0]
	s.buf = appendChunk(s.buf, sseToken)
	s.k++
	last := s.k == benchTokens
	if last {
		s.buf = appendChunk(s.buf, fmt.Sprintf("data: {\"choices\":[],\"usage\":{\"completion_tokens\":%d}}\n\n", benchTokens))
		s.buf = appendChunk(s.buf, "data: [DONE]\n\n")
		s.buf = append(s.buf, "0\r\n\r\n"...)
	}
	if _, err := s.c.Write(s.buf); err != nil {
		s.done <- false
		return false
	}
	if last {
		s.done <- true
	}
	return !last
}

func appendChunk(b []byte, data string) []byte {
	b = strconv.AppendInt(b, int64(len(data)), 16)
	b = append(b, "\r\n"...)
	b = append(b, data...)
	return append(b, "\r\n"...)
}

// skipRequest reads one request head and its Content-Length body.
func skipRequest(br *bufio.Reader) error {
	n := 0
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			return err
		}
		if line == "\r\n" {
			break
		}
		if v, ok := strings.CutPrefix(strings.ToLower(line), "content-length:"); ok {
			n, _ = strconv.Atoi(strings.TrimSpace(v))
		}
	}
	_, err := br.Discard(n)
	return err
}
