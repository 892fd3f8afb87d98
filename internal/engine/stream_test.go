package engine

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openload/openload/recorder"
	"github.com/openload/openload/schedule"
)

func TestEventLine(t *testing.T) {
	for _, c := range []struct {
		line    string
		content bool
		usage   int
	}{
		{`data: {"choices":[{"index":0,"delta":{"content":"Hi"}}]}`, true, -1},
		{`data:{"choices":[{"delta":{"content" : "x"}}]}` + "\r", true, -1},
		{`data: {"choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}`, false, -1},
		{`data: {"choices":[{"index":0,"delta":{"content":null}}]}`, false, -1},
		{`data: {"choices":[{"index":0,"text":" the"}]}`, true, -1},
		{`data: {"choices":[{"index":0,"text":""}],"usage":null}`, false, -1},
		// An escaped key inside a string is not a key.
		{`data: {"choices":[{"delta":{"content":"","reasoning_content":"\"content\":\"x\""}}]}`, false, -1},
		{`data: {"choices":[],"usage":{"prompt_tokens":7,"completion_tokens":42,"total_tokens":49}}`, false, 42},
		{`data: {"choices":[{"delta":{"content":"a"}}],"usage":{"completion_tokens":3}}`, true, 3},
		{`data: [DONE]`, false, -1},
		{`: keep-alive comment`, false, -1},
		{`event: message`, false, -1},
		{`{"content":"not an event line"}`, false, -1},
		{``, false, -1},
	} {
		content, usage := eventLine([]byte(c.line))
		if content != c.content || usage != c.usage {
			t.Errorf("eventLine(%q) = %v, %d; want %v, %d", c.line, content, usage, c.content, c.usage)
		}
	}
}

func TestEventLineAllocatesNothing(t *testing.T) {
	line := []byte(`data: {"id":"c","choices":[{"index":0,"delta":{"content":"tok"}}],"usage":{"completion_tokens":9}}`)
	if n := testing.AllocsPerRun(100, func() { eventLine(line) }); n != 0 {
		t.Errorf("eventLine allocates %v times per line", n)
	}
}

// sseServer streams tokens content events a gap apart, preceded by a role
// chunk without content and followed, when usage ≥ 0, by a usage chunk
// saying usage tokens; cut > 0 aborts the stream after that many tokens.
func sseHandler(tokens int, gap time.Duration, usage, cut int) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
		f := w.(http.Flusher)
		fmt.Fprint(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"}}]}\n\n")
		f.Flush()
		for i := range tokens {
			if cut > 0 && i == cut {
				panic(http.ErrAbortHandler)
			}
			time.Sleep(gap)
			fmt.Fprintf(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"t%d \"}}]}\n\n", i)
			f.Flush()
		}
		if usage >= 0 {
			fmt.Fprintf(w, "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":%d}}\n\n", usage)
		}
		fmt.Fprint(w, "data: [DONE]\n\n")
	}
}

// streamClients are the HTTP/1.1 clients plus HTTP/2 without TLS.
var streamClients = append(append([]client(nil), openClients...), client{"h2c", ClientNetHTTP, false, false})

func streamConfig(cl client) Config {
	cfg := Config{Lean: cl.lean, Epoll: cl.epoll, Method: http.MethodPost, Body: []byte(`{"stream":true}`)}
	if cl.test == "h2c" {
		cfg.Protocol = H2C
	}
	return cfg
}

func startStreamServer(t *testing.T, h http.Handler) *httptest.Server {
	srv := httptest.NewUnstartedServer(h)
	srv.Config.Protocols = new(http.Protocols)
	srv.Config.Protocols.SetHTTP1(true)
	srv.Config.Protocols.SetUnencryptedHTTP2(true)
	srv.Start()
	t.Cleanup(srv.Close)
	return srv
}

func TestStreamsMeasuredByEveryClient(t *testing.T) {
	const reqs, tokens = 20, 8
	forClients(t, streamClients, func(t *testing.T, cl client) {
		srv := startStreamServer(t, sseHandler(tokens, time.Millisecond, -1, 0))
		rec, _ := runAgainst(t, srv.URL, streamConfig(cl), schedule.NewConstant(100, 200*time.Millisecond))
		c := checkIdentity(t, rec, reqs)
		if c.Completed != reqs {
			t.Fatalf("counts %+v, want %d completed", c, reqs)
		}
		st := rec.Stream()
		if st == nil {
			t.Fatal("no stream figures for text/event-stream answers")
		}
		// No usage chunk: output tokens are the content events counted.
		if st.Events != reqs*tokens || st.OutputTokens != reqs*tokens {
			t.Errorf("events %d, output tokens %d; want %d each", st.Events, st.OutputTokens, reqs*tokens)
		}
		if n := st.ITL.TotalCount(); n != reqs*(tokens-1) {
			t.Errorf("ITL holds %d gaps, want %d", n, reqs*(tokens-1))
		}
		if n := st.TTFTResponse.TotalCount(); n != reqs || st.TTFTService.TotalCount() != reqs || st.TPOT.TotalCount() != reqs {
			t.Errorf("TTFT %d/%d, TPOT %d values; want %d each", n, st.TTFTService.TotalCount(), st.TPOT.TotalCount(), reqs)
		}
		// Every stream has the same number of tokens, so the mean of all
		// gaps is the mean TPOT, up to the histograms' 3 digits.
		if itl, tpot := st.ITL.Mean(), st.TPOT.Mean(); tpot <= 0 || math.Abs(itl-tpot) > 0.01*tpot+2 {
			t.Errorf("ITL mean %.1f µs, TPOT mean %.1f µs: want them equal", itl, tpot)
		}
		if st.TTFTResponse.Min() < st.TTFTService.Min() {
			t.Errorf("TTFT from the schedule (min %d µs) below TTFT from the send (min %d µs)", st.TTFTResponse.Min(), st.TTFTService.Min())
		}
		var per int64
		for _, s := range rec.Timeline() {
			per += s.Tokens
		}
		if per != reqs*tokens {
			t.Errorf("timeline counts %d token events, want %d", per, reqs*tokens)
		}
	})
}

func TestStreamUsageCountsTokens(t *testing.T) {
	srv := startStreamServer(t, sseHandler(3, 0, 50, 0))
	rec, _ := runAgainst(t, srv.URL, streamConfig(openClients[2]), schedule.NewConstant(100, 100*time.Millisecond))
	st := rec.Stream()
	if st == nil || st.OutputTokens != 10*50 || st.Events != 10*3 {
		t.Fatalf("stream %+v: want 500 output tokens from usage, 30 events", st)
	}
}

// A stream cut mid-way is one request ended by a reset, with the tokens it
// got; its gaps count, its TTFT does not.
func TestStreamCutIsOneReset(t *testing.T) {
	forClients(t, streamClients, func(t *testing.T, cl client) {
		srv := startStreamServer(t, sseHandler(6, 0, 6, 3))
		rec, _ := runAgainst(t, srv.URL, streamConfig(cl), schedule.NewConstant(100, 100*time.Millisecond))
		c := checkIdentity(t, rec, 10)
		if c.Errors != 10 || rec.ErrorKinds()["reset"] != 10 {
			t.Fatalf("counts %+v kinds %v: want 10 resets", c, rec.ErrorKinds())
		}
		st := rec.Stream()
		if st.OutputTokens != 30 || st.TTFTResponse.TotalCount() != 0 {
			t.Errorf("output tokens %d (want 30), TTFT values %d (want 0)", st.OutputTokens, st.TTFTResponse.TotalCount())
		}
	})
}

// With Config.Stream a plain body (Content-Length) is read as a stream
// too, by the clients that would otherwise read it whole themselves.
func TestStreamFlagReadsPlainBodies(t *testing.T) {
	body := "data: {\"choices\":[{\"text\":\"a\"}]}\n\ndata: {\"choices\":[{\"text\":\"b\"}]}\n\ndata: [DONE]\n\n"
	forClients(t, openClients, func(t *testing.T, cl client) {
		srv := startStreamServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", strconv.Itoa(len(body)))
			w.Write([]byte(body))
		}))
		cfg := streamConfig(cl)
		cfg.Stream = true
		rec, stats := runAgainst(t, srv.URL, cfg, schedule.NewConstant(100, 100*time.Millisecond))
		checkIdentity(t, rec, 10)
		if stats.Client != cl.name {
			t.Errorf("client %q, want %q: --stream must not change the client", stats.Client, cl.name)
		}
		if st := rec.Stream(); st == nil || st.Events != 20 {
			t.Errorf("stream %+v, want 20 events", st)
		}
	})
}

func TestBodiesInOrderAndSampled(t *testing.T) {
	bodies := [][]byte{[]byte(`{"p":"a"}`), []byte(`{"p":"bb"}`), []byte(`{"p":"ccc"}`)}
	forClients(t, streamClients, func(t *testing.T, cl client) {
		var mu sync.Mutex
		got := map[string]int{}
		srv := startStreamServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			b, _ := io.ReadAll(r.Body)
			mu.Lock()
			got[string(b)]++
			mu.Unlock()
		}))
		cfg := streamConfig(cl)
		cfg.Bodies = bodies
		cfg.Connections = 1 // one at a time: the server sees them in order
		runAgainst(t, srv.URL, cfg, schedule.NewConstant(100, 300*time.Millisecond))
		mu.Lock()
		defer mu.Unlock()
		for _, b := range bodies {
			if got[string(b)] != 10 {
				t.Errorf("in order: %v, want each body 10 times", got)
				break
			}
		}
	})
	cfg := Config{Bodies: bodies, BodySample: true, BodySeed: 7}
	seen := map[int]int{}
	for seq := range uint64(3000) {
		seen[cfg.BodyIndex(seq)]++
	}
	// Each of 3 bodies drawn 1000 times in expectation; ±150 is over 5
	// standard deviations (√(3000·⅓·⅔) ≈ 26).
	for i := range bodies {
		if n := seen[i]; n < 850 || n > 1150 {
			t.Errorf("sampled: body %d drawn %d times of 3000", i, n)
		}
	}
	other := cfg
	other.BodySeed = 8
	same := 0
	for seq := range uint64(300) {
		if cfg.BodyIndex(seq) == other.BodyIndex(seq) {
			same++
		}
	}
	if same > 150 {
		t.Errorf("seeds 7 and 8 agree on %d of 300 draws: the seed does not matter", same)
	}
}

// Reading a stream allocates nothing per event: a stream of 1,000 events
// costs what one of 10 does (the pooled reader, the batches' hand-over).
func TestReadStreamAllocsPerEventNone(t *testing.T) {
	body := func(n int) []byte {
		var b []byte
		for range n {
			b = append(b, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\" tok\"}}]}\n\n"...)
		}
		return append(b, "data: [DONE]\n\n"...)
	}
	g := &generator{start: time.Now()}
	sh := &shard{}
	allocs := func(n int) float64 {
		b := body(n)
		return testing.AllocsPerRun(50, func() {
			var r recorder.Record
			if err := g.readStream(bytes.NewReader(b), &r, sh); err != nil || r.Events != n {
				t.Fatalf("%v, %d events", err, r.Events)
			}
			sh.toks = sh.toks[:0]
		})
	}
	if small, large := allocs(10), allocs(1000); large > small+1 {
		t.Errorf("%v allocations for 1,000 events, %v for 10: events allocate", large, small)
	}
}

// --max-body caps a stream as it caps any body: read up to the cap,
// completed, marked over the cap, with the tokens read by then.
func TestStreamOverMaxBody(t *testing.T) {
	forClients(t, openClients, func(t *testing.T, cl client) {
		srv := startStreamServer(t, sseHandler(20, 0, -1, 0))
		cfg := streamConfig(cl)
		cfg.MaxBody = 300
		rec, _ := runAgainst(t, srv.URL, cfg, schedule.NewConstant(100, 100*time.Millisecond))
		c := checkIdentity(t, rec, 10)
		if c.Completed != 10 || rec.BodyOverCap() != 10 {
			t.Errorf("counts %+v, %d over the cap; want 10 completed over the cap", c, rec.BodyOverCap())
		}
		if st := rec.Stream(); st == nil || st.Events == 0 || st.Events >= 10*20 {
			t.Errorf("stream %+v: want some but not all of the 200 events", st)
		}
	})
}

// vLLM's continuous usage: every chunk carries content and the count so
// far; the last count is the output.
func TestReadStreamContinuousUsage(t *testing.T) {
	b := "data: {\"choices\":[{\"delta\":{\"content\":\"a\"}}],\"usage\":{\"completion_tokens\":1}}\n\n" +
		"data: {\"choices\":[{\"delta\":{\"content\":\"b c\"}}],\"usage\":{\"completion_tokens\":3}}\n\ndata: [DONE]"
	g := &generator{start: time.Now()}
	var r recorder.Record
	if err := g.readStream(strings.NewReader(b), &r, &shard{}); err != nil || r.Events != 2 || r.Tokens != 3 {
		t.Errorf("err %v, %d events, %d tokens; want 2 events, 3 tokens", err, r.Events, r.Tokens)
	}
}
