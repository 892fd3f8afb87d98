package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/openload/openload/internal/framing"
	"github.com/openload/openload/internal/recorder"
	"github.com/openload/openload/schedule"
	"github.com/openload/openload/servers/scripted"
)

// eventLine reads one line of an event stream as the stream readers do:
// framing.SSE cuts the line (its line end removed) into an event, sseChunk
// reads the event's JSON.
func eventLine(line []byte) (answer bool, usage int, failed bool) {
	c := sseLine(line)
	return c.answer, c.output, c.failed
}

func sseLine(line []byte) chunk {
	ev, ok := framing.SSE.Event(bytes.TrimSuffix(line, []byte{'\r'}))
	if !ok {
		return chunk{output: -1, prompt: -1, cached: -1}
	}
	return sseChunk(ev)
}

func ndjsonLine(line []byte) chunk {
	ev, ok := framing.NDJSON.Event(bytes.TrimSuffix(line, []byte{'\r'}))
	if !ok {
		return chunk{output: -1, prompt: -1, cached: -1}
	}
	return ndjsonChunk(ev)
}

// What an SSE line says: a token event (generated tokens of any kind),
// an answer event (the answer's own text), a usage count.
func TestEventLine(t *testing.T) {
	for _, c := range []struct {
		line          string
		token, answer bool
		usage         int
	}{
		{`data: {"choices":[{"index":0,"delta":{"content":"Hi"}}]}`, true, true, -1},
		{`data:{"choices":[{"delta":{"content" : "x"}}]}` + "\r", true, true, -1},
		// vLLM's role chunk: no token.
		{`data: {"choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}`, false, false, -1},
		{`data: {"choices":[{"index":0,"delta":{"content":null}}]}`, false, false, -1},
		{`data: {"choices":[{"index":0,"text":" the"}]}`, true, true, -1},
		// An empty text stands for a token whose text is held back.
		{`data: {"choices":[{"index":0,"text":""}],"usage":null}`, true, false, -1},
		{`data: {"id":"c","choices":[{"index":0,"delta":{"content":""},"logprobs":null,"finish_reason":null}]}`, true, false, -1},
		// llama.cpp /completion's last event: no token.
		{`data: {"index":0,"content":"","tokens":[],"stop":true,"tokens_predicted":3}`, false, false, 3},
		{`data: {"index":0,"content":"","stop" : false}`, true, false, -1},
		// A closing empty text with its finish_reason (OpenAI's
		// completions, the stub): no token; a null finish_reason is none.
		{`data: {"choices":[{"index":0,"text":"","logprobs":null,"finish_reason":"length"}]}`, false, false, -1},
		{`data: {"choices":[{"index":0,"text":"","finish_reason" : null}]}`, true, false, -1},
		// Thinking, under either name, and tool-call arguments: tokens.
		{`data: {"choices":[{"delta":{"reasoning":" hm"}}]}`, true, false, -1},
		{`data: {"choices":[{"delta":{"reasoning_content":" hm"}}]}`, true, false, -1},
		{`data: {"choices":[{"delta":{"reasoning":""}}]}`, false, false, -1},
		{`data: {"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"a"}}]}}]}`, true, false, -1},
		// An escaped key inside a string is not a key.
		{`data: {"choices":[{"delta":{"role":"assistant","content":"","reasoning_content":"\"content\":\"x\""}}]}`, true, false, -1},
		{`data: {"choices":[{"delta":{"role":"assistant","x":"\"reasoning\":\"y\""}}]}`, false, false, -1},
		{`data: {"choices":[],"usage":{"prompt_tokens":7,"completion_tokens":42,"total_tokens":49}}`, false, false, 42},
		{`data: {"choices":[{"delta":{"content":"a"}}],"usage":{"completion_tokens":3}}`, true, true, 3},
		{`data: [DONE]`, false, false, -1},
		{`: keep-alive comment`, false, false, -1},
		{`event: message`, false, false, -1},
		{`{"content":"not an event line"}`, false, false, -1},
		{``, false, false, -1},
	} {
		got := sseLine([]byte(c.line))
		if got.token != c.token || got.answer != c.answer || got.output != c.usage || got.failed {
			t.Errorf("sseChunk(%q) = %+v; want token %v, answer %v, usage %d", c.line, got, c.token, c.answer, c.usage)
		}
	}
}

// vLLM's error chunk, as its serving code writes it on a mid-stream
// exception (create_streaming_error_response, then data: [DONE]).
const vllmErrorChunk = `data: {"error": {"object": "error", "message": "The decoder prompt (length 9000) is longer than the maximum model length of 8192.", "type": "BadRequestError", "param": null, "code": 400}}`

// An error event is an SSE "event: error" line or a data object with a
// top-level error member a client takes for true; an error key nested
// deeper, a string value "error", an escaped "error" inside a string and
// a null error are not.
func TestEventLineErrorEvents(t *testing.T) {
	for _, c := range []struct {
		line   string
		failed bool
	}{
		{vllmErrorChunk, true},
		{vllmErrorChunk + "\r", true},
		{`data:{"error":{"message":"overloaded","type":"server_error"}}`, true},
		{`data: { "id" : "x" , "error" : "boom" }`, true},
		{`data: {"choices":[],"error":{"code":500}}`, true},
		{`data: {"choices":[{"delta":{"content":"a}\"{"}}],"error":true}`, true}, // braces inside a string do not count
		{`data: {"content":"x\\","error":1}`, true},                              // an escaped backslash ends its string
		{`data: {"error":-2.5}`, true},
		{`event: error`, true},
		{`event:error`, true},
		{`event: error` + "\r", true},
		// Not error events.
		{`data: {"choices":[{"index":0,"error":{"message":"x"}}]}`, false},
		{`data: {"choices":[{"delta":{"content":"error"}}]}`, false},
		{`data: {"choices":[{"delta":{"content":"the \"error\": field"}}]}`, false},
		{`data: {"object":"error","choices":[{"delta":{"content":"x"}}]}`, false},
		{`data: {"choices":[{"delta":{"content":"x"}}],"error":null}`, false},
		{`data: {"error":false}`, false},
		{`data: {"error":""}`, false},
		{`data: {"error":{}}`, false},
		{`data: {"error":[ ]}`, false},
		{`data: {"error":0}`, false},
		{`data: {"error":0.0e5}`, false},
		{`data: {"meta":{"error":"x"}}`, false},
		{`data: {"choices":[{"delta":{}}]}{"error":"after the object"}`, false},
		{`data: ["error", {"error":1}]`, false},
		{`data: {"error"`, false},
		{`data: {"a":"unterminated, "error":1`, false},
		{`data: [DONE]`, false},
		{`event: message`, false},
		{`event: errors`, false},
		{`event:  error`, false}, // one space is the separator; the value is " error"
		{`: error`, false},
		{`id: error`, false},
		{`{"error":{"message":"not a data line"}}`, false},
	} {
		content, usage, failed := eventLine([]byte(c.line))
		if failed != c.failed || failed && (content || usage != -1) {
			t.Errorf("eventLine(%q) = %v, %d, %v; want failed %v", c.line, content, usage, failed, c.failed)
		}
	}
}

func TestEventLineAllocatesNothing(t *testing.T) {
	line := []byte(`data: {"id":"c","choices":[{"index":0,"delta":{"content":"tok"}}],"usage":{"completion_tokens":9}}`)
	for _, l := range [][]byte{line, []byte(vllmErrorChunk), []byte("event: error")} {
		if n := testing.AllocsPerRun(100, func() { eventLine(l) }); n != 0 {
			t.Errorf("eventLine(%q) allocates %v times per line", l, n)
		}
	}
}

// BenchmarkEventLine is one line of each kind a stream carries: a chat
// token chunk, a completions chunk with continuous usage, the blank line
// between events.
func BenchmarkEventLine(b *testing.B) {
	lines := [][]byte{
		[]byte(`data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":" tok"},"logprobs":null,"finish_reason":null}]}`),
		[]byte(`data: {"id":"cmpl-1","object":"text_completion","created":1,"model":"m","choices":[{"index":0,"text":" tok","logprobs":null,"finish_reason":null}],"usage":{"prompt_tokens":5,"completion_tokens":9,"total_tokens":14}}`),
		[]byte(``),
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		eventLine(lines[i%3])
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
var streamClients = append(append([]clientCase(nil), openClients...), clientCase{"h2c", ClientNetHTTP, false, false})

func streamConfig(cl clientCase) Config {
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
	forClients(t, streamClients, func(t *testing.T, cl clientCase) {
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
	forClients(t, streamClients, func(t *testing.T, cl clientCase) {
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
	forClients(t, openClients, func(t *testing.T, cl clientCase) {
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
	forClients(t, streamClients, func(t *testing.T, cl clientCase) {
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

// With BodyOffset every client sends, and counts the tokens of, the body
// BodyIndex names: the server reads exactly the bodies of indexes
// offset … offset+n−1 (in order, or drawn), and each record's prompt
// tokens are those of the body the server read for it.
func TestBodyOffsetOnEveryClient(t *testing.T) {
	bodies := make([][]byte, 10)
	tokens := make([]BodyTokens, len(bodies))
	for i := range bodies {
		bodies[i] = fmt.Appendf(nil, `{"p":%d}`, i)
		tokens[i] = BodyTokens{Prompt: 100 + i}
	}
	for _, sample := range []bool{false, true} {
		t.Run(map[bool]string{false: "in-order", true: "sampled"}[sample], func(t *testing.T) { testBodyOffset(t, bodies, tokens, sample) })
	}
}

func testBodyOffset(t *testing.T, bodies [][]byte, tokens []BodyTokens, sample bool) {
	const n, off = 8, 13
	forClients(t, tokenClients, func(t *testing.T, cl clientCase) {
		var mu sync.Mutex
		read := map[string]int{}
		srv := startStreamServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			b, _ := io.ReadAll(r.Body)
			mu.Lock()
			read[string(b)]++
			mu.Unlock()
		}))
		cfg := streamConfig(cl)
		if cl.test == "h2c-loop" {
			cfg.Protocol = H2C // with Epoll: the HTTP/2 event loop where it applies
		}
		cfg.Bodies, cfg.BodyTokens, cfg.BodySample, cfg.BodySeed, cfg.BodyOffset = bodies, tokens, sample, 7, off
		counted := 0
		cfg.onRecord = func(r *recorder.Record) { counted += r.PromptTokens }
		rec, _ := runAgainst(t, srv.URL, cfg, schedule.NewConstant(100, n*10*time.Millisecond))
		checkIdentity(t, rec, n)
		want, wantTokens := map[string]int{}, 0
		for seq := range uint64(n) {
			i := cfg.BodyIndex(seq)
			want[string(bodies[i])]++
			wantTokens += tokens[i].Prompt
		}
		if !sample && cfg.BodyIndex(0) != off%len(bodies) {
			t.Errorf("in order, seq 0 takes body %d, want %d", cfg.BodyIndex(0), off%len(bodies))
		}
		mu.Lock()
		defer mu.Unlock()
		if !maps.Equal(read, want) {
			t.Errorf("sample %v: the server read %v, want %v", sample, read, want)
		}
		sent := 0
		for b, k := range read {
			for i := range bodies {
				if string(bodies[i]) == b {
					sent += k * tokens[i].Prompt
				}
			}
		}
		if counted != sent {
			t.Errorf("sample %v: records count %d prompt tokens, the bodies read hold %d (want %d)", sample, counted, sent, wantTokens)
		}
	})
}

// Reading a stream allocates nothing per event (checkAllocsPerEventNone).
func TestReadStreamAllocsPerEventNone(t *testing.T) {
	checkAllocsPerEventNone(t, scripted.VLLMChat)
}

// --max-body caps a stream as it caps any body: read up to the cap,
// completed, marked over the cap, with the tokens read by then.
func TestStreamOverMaxBody(t *testing.T) {
	forClients(t, openClients, func(t *testing.T, cl clientCase) {
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
	if err := g.readStream(strings.NewReader(b), framing.SSE, &r, &shard{}); err != nil || r.Events != 2 || r.Tokens != 3 {
		t.Errorf("err %v, %d events, %d tokens; want 2 events, 3 tokens", err, r.Events, r.Tokens)
	}
}

// vLLM's chat completions chunks as its serving code writes them
// (model_dump_json: compact), before its error chunk (vllmErrorChunk,
// json.dumps: with blanks).
func vllmChunk(delta string) string {
	return `data: {"id":"chatcmpl-7","object":"chat.completion.chunk","created":1735689600,"model":"m","choices":[{"index":0,"delta":` +
		delta + `,"logprobs":null,"finish_reason":null}]}` + "\n\n"
}

// streamErrorBodies are streams that carry tokens content chunks, then an
// error event: vLLM's bytes exactly, and an SSE event: error (with a
// content chunk after it, which is never read as a token).
func streamErrorBodies(tokens int) map[string][]string {
	head := []string{vllmChunk(`{"role":"assistant","content":""}`)}
	for i := range tokens {
		head = append(head, vllmChunk(fmt.Sprintf(`{"content":"t%d "}`, i)))
	}
	return map[string][]string{
		"vllm data error": append(slices.Clone(head), vllmErrorChunk+"\n\n", "data: [DONE]\n\n"),
		"event error": append(slices.Clone(head),
			"event: error\ndata: {\"error\":{\"message\":\"Overloaded\",\"type\":\"overloaded_error\"}}\n\n",
			vllmChunk(`{"content":"late"}`), "data: [DONE]\n\n"),
	}
}

// sseWrites answers every request with pieces, each flushed on its own
// (chunked), or, when whole, all of them in one body with a
// Content-Length (read as a stream with Config.Stream: the event loop
// lends it to a goroutine).
func sseWrites(pieces []string, whole bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		if whole {
			body := strings.Join(pieces, "")
			w.Header().Set("Content-Length", strconv.Itoa(len(body)))
			io.WriteString(w, body)
			return
		}
		for _, p := range pieces {
			if _, err := io.WriteString(w, p); err != nil {
				return
			}
			w.(http.Flusher).Flush()
		}
	}
}

// runLogged is runAgainst with per-request objectives that every
// completed stream meets, and the per-request log read back.
func runLogged(t *testing.T, rawURL string, cfg Config, s schedule.Schedule) (*recorder.Recorder, []recorder.LogEntry) {
	t.Helper()
	cfg.URL = mustURL(t, rawURL)
	cfg.Timeout, cfg.Drain = 5*time.Second, 5*time.Second
	if cfg.Connections == 0 {
		cfg.Connections = 16
	}
	var log bytes.Buffer
	rec := recorder.New(recorder.NewStreamLogWriter(&log))
	rec.SetRequestObjectives([]recorder.RequestObjective{{Metric: "ttft", Max: time.Hour}})
	if _, err := Run(context.Background(), cfg, s, rec); err != nil {
		t.Fatal(err)
	}
	if err := rec.FlushLog(); err != nil {
		t.Fatal(err)
	}
	var out []recorder.LogEntry
	lr := recorder.NewLogReader(&log, "log")
	for lr.Scan() {
		out = append(out, lr.Entry())
	}
	if err := lr.Err(); err != nil {
		t.Fatal(err)
	}
	return rec, out
}

// A stream whose server sends an error event under its 200 is one error
// of kind stream, on every client: never completed, never goodput, its
// status with the failed heads, its tokens before the event kept (in the
// record, the log and the output tokens) and none after it.
func TestStreamErrorEventIsAnError(t *testing.T) {
	const reqs, tokens = 10, 3
	for name, pieces := range streamErrorBodies(tokens) {
		for _, whole := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/whole=%v", name, whole), func(t *testing.T) {
				forClients(t, streamClients, func(t *testing.T, cl clientCase) {
					srv := startStreamServer(t, sseWrites(pieces, whole))
					cfg := streamConfig(cl)
					cfg.Stream = whole
					rec, log := runLogged(t, srv.URL, cfg, schedule.NewConstant(100, 100*time.Millisecond))
					c := checkIdentity(t, rec, reqs)
					if c.Errors != reqs || c.Completed != 0 || rec.ErrorKinds()[recorder.KindStream.String()] != reqs {
						t.Fatalf("counts %+v, kinds %v: want %d errors of kind stream", c, rec.ErrorKinds(), reqs)
					}
					if len(rec.StatusCodes()) != 0 || rec.FailedStatus()["200"] != reqs {
						t.Errorf("statuses %v, failed heads %v: want 200 only among the failed heads", rec.StatusCodes(), rec.FailedStatus())
					}
					st := rec.Stream()
					if st.Events != reqs*tokens || st.OutputTokens != reqs*tokens || st.ITL.TotalCount() != reqs*(tokens-1) {
						t.Errorf("events %d, output tokens %d, ITL gaps %d: want %d, %d, %d",
							st.Events, st.OutputTokens, st.ITL.TotalCount(), reqs*tokens, reqs*tokens, reqs*(tokens-1))
					}
					if st.Met != 0 || st.TTFTResponse.TotalCount() != 0 {
						t.Errorf("goodput %d, TTFT values %d: want 0 (not completed)", st.Met, st.TTFTResponse.TotalCount())
					}
					if len(log) != reqs {
						t.Fatalf("%d log lines, want %d", len(log), reqs)
					}
					for _, e := range log {
						if e.Error != "stream" || e.Tokens != tokens || e.FirstToken < 0 || e.LastToken < e.FirstToken || e.Done < e.LastToken {
							t.Errorf("log line %+v: want error stream, %d tokens, first ≤ last token ≤ done", e, tokens)
							break
						}
					}
				})
			})
		}
	}
}

// A connection that carried a stream's error event is closed or kept as
// it must be: on one connection, answers alternating between an error
// event and a whole stream all read as their own.
func TestStreamErrorEventThenStreams(t *testing.T) {
	pieces := streamErrorBodies(2)["vllm data error"]
	forClients(t, streamClients, func(t *testing.T, cl clientCase) {
		var n atomic.Int64
		srv := startStreamServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if n.Add(1)%2 == 1 {
				sseWrites(pieces, false)(w, r)
				return
			}
			sseHandler(4, 0, -1, 0)(w, r)
		}))
		cfg := streamConfig(cl)
		cfg.Connections = 1
		rec, _ := runLogged(t, srv.URL, cfg, schedule.NewConstant(100, 200*time.Millisecond))
		c := checkIdentity(t, rec, 20)
		if c.Completed != 10 || c.Errors != 10 || rec.ErrorKinds()["stream"] != 10 {
			t.Fatalf("counts %+v, kinds %v: want 10 completed, 10 stream errors", c, rec.ErrorKinds())
		}
		if st := rec.Stream(); st.OutputTokens != 10*2+10*4 || st.Met != 10 || st.TTFTResponse.TotalCount() != 10 {
			t.Errorf("output tokens %d, goodput %d, TTFT values %d: want 60, 10, 10", st.OutputTokens, st.Met, st.TTFTResponse.TotalCount())
		}
	})
}

// The word error where it is no error event — a key nested in a choice,
// a content string, an escaped key in a string, a string value, a null
// top-level error — leaves the stream completed, its tokens counted.
func TestStreamErrorWordsAreNotErrors(t *testing.T) {
	pieces := []string{
		vllmChunk(`{"role":"assistant","content":""}`),
		vllmChunk(`{"content":"error"}`),
		vllmChunk(`{"content":"{\"error\": {\"code\": 400}}"}`),
		`data: {"object":"error","choices":[{"index":0,"delta":{"content":"x"},"error":{"message":"nested"}}],"error":null}` + "\n\n",
		"event: message\ndata: {\"choices\":[{\"delta\":{\"content\":\"y\"}}]}\n\n",
		"data: [DONE]\n\n",
	}
	forClients(t, streamClients, func(t *testing.T, cl clientCase) {
		srv := startStreamServer(t, sseWrites(pieces, false))
		rec, log := runLogged(t, srv.URL, streamConfig(cl), schedule.NewConstant(100, 100*time.Millisecond))
		c := checkIdentity(t, rec, 10)
		if c.Completed != 10 || rec.StatusCodes()[200] != 10 {
			t.Fatalf("counts %+v, kinds %v: want 10 completed", c, rec.ErrorKinds())
		}
		if st := rec.Stream(); st.OutputTokens != 40 || st.Met != 10 {
			t.Errorf("output tokens %d, goodput %d: want 40, 10", st.OutputTokens, st.Met)
		}
		if len(log) != 10 || log[0].Error != "" || log[0].Tokens != 4 {
			t.Errorf("log %+v: want 10 lines without error, 4 tokens each", log)
		}
	})
}

// topLevelError agrees with encoding/json on every valid object of one
// line: an error event iff a key at the top level, written "error", has a
// value a client takes for true (JSON's null, false, 0, "", {} and [] are
// false, as in Python and JavaScript).
func FuzzTopLevelError(f *testing.F) {
	for _, s := range []string{
		vllmErrorChunk[len("data: "):], `{"error":null}`, `{"error":{}}`, `{"error":0e3}`, `{"error":-0.0}`, `{"error":[1]}`,
		`{"choices":[{"error":1}]}`, `{"a":"\"error\":1","b":{"error":2}}`, `{"x\\":"error","error":"y"}`,
		`{"\u0065rror":1}`, `{"error" : "" , "error":"z"}`, `{"choices":[{"delta":{"content":"error"}}]}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		data := []byte(s)
		got := topLevelError(data)
		if strings.ContainsAny(s, "\r\n") || !json.Valid(data) {
			return // not one line of JSON: any answer will do, so long as it came
		}
		want := false
		dec := json.NewDecoder(bytes.NewReader(data))
		if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
			return
		}
		for dec.More() {
			key, err := dec.Token()
			if err != nil {
				t.Fatal(err)
			}
			literal := key == "error" && bytes.HasSuffix(data[:dec.InputOffset()], keyError)
			var v any
			if err := dec.Decode(&v); err != nil {
				t.Fatal(err)
			}
			if literal {
				switch v := v.(type) {
				case nil:
				case bool:
					want = want || v
				case float64:
					want = want || v != 0
				case string:
					want = want || v != ""
				case map[string]any:
					want = want || len(v) > 0
				case []any:
					want = want || len(v) > 0
				}
			}
		}
		if got != want {
			t.Errorf("topLevelError(%s) = %v, encoding/json says %v", s, got, want)
		}
	})
}
