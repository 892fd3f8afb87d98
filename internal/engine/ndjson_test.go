package engine

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/openload/openload/internal/h1"
	"github.com/openload/openload/recorder"
	"github.com/openload/openload/schedule"
)

// What each SSE event the servers send says: content, and the output and
// prompt counts of OpenAI's usage chunk (vLLM, TGI, llama.cpp chat),
// llama.cpp /completion's events and TGI /generate_stream's last event.
func TestSSECounts(t *testing.T) {
	for _, c := range []struct {
		line           string
		content        bool
		output, prompt int
	}{
		{strings.TrimSuffix(tgiChatUsage(7, 42), "\n\n"), false, 42, 7},
		{`data: {"choices":[],"usage":{"prompt_tokens":9,"total_tokens":12,"completion_tokens":3,"prompt_tokens_details":null}}`, false, 3, 9},
		// A _details key is not its count.
		{`data: {"usage":{"completion_tokens_details":{"reasoning_tokens":5},"prompt_tokens_details":{"cached_tokens":4}}}`, false, -1, -1},
		{strings.TrimSuffix(llamacppToken(" tok", 3, 11), "\n\n"), true, 3, 11},
		// n_predict and max_tokens in generation_settings are no counts.
		{strings.TrimSuffix(llamacppFinal(17, 11), "\n\n"), false, 17, 11},
		{strings.TrimSuffix(tgiToken(4, " tok"), "\n\n"), true, -1, -1},
		// TGI's last event: its token, and details' counts; generated_text
		// is no "text".
		{strings.TrimSuffix(tgiFinal(5, " end", "a b c d end", 5, 13), "\n\n"), true, 5, 13},
		{`data: {"generated_text":"all","details":null}`, false, -1, -1},
		{strings.TrimSuffix(vllmChunk(`{"content":" tok"}`), "\n\n"), true, -1, -1},
	} {
		got := sseLine([]byte(c.line))
		if got.content != c.content || got.output != c.output || got.prompt != c.prompt || got.failed || got.done {
			t.Errorf("sseChunk(%s) = %+v; want content %v, output %d, prompt %d", c.line, got, c.content, c.output, c.prompt)
		}
	}
}

// What each line of Ollama's stream says: content from response or
// message.content, counts on the done line only, and "eval_count" never
// found in "prompt_eval_count".
func TestNDJSONLine(t *testing.T) {
	for _, c := range []struct {
		line           string
		content        bool
		output, prompt int
		done, failed   bool
	}{
		{ollamaGenerateToken(" The"), true, -1, -1, false, false},
		{ollamaChatToken(" The"), true, -1, -1, false, false},
		{ollamaGenerateDone(26, 290), false, 290, 26, true, false},
		{ollamaChatDone(26, 290), false, 290, 26, true, false},
		{ollamaGenerateToken(""), false, -1, -1, false, false},
		// Only prompt_eval_count: no output count.
		{`{"response":"","done":true,"prompt_eval_count":26}`, false, -1, 26, true, false},
		{`{"done":true,"eval_count":3,"prompt_eval_count":26}`, false, 3, 26, true, false},
		// Counts on a line that is not done are not read (Ollama sends none).
		{`{"response":"a","done":false,"eval_count":3}`, true, -1, -1, false, false},
		// done as a value, or inside a string, is not the key.
		{`{"response":"done","done":false}`, true, -1, -1, false, false},
		{`{"response":"\"done\":true","done":false}`, true, -1, -1, false, false},
		{`{"done" : true}`, false, -1, -1, true, false},
		// Thinking is no content.
		{`{"model":"qwen3","created_at":"2026-08-21T10:00:00Z","response":"","thinking":"Hmm","done":false}`, false, -1, -1, false, false},
		// Ollama's error line, and the error word where it is none.
		{ollamaError, false, -1, -1, false, true},
		{`{"error":""}`, false, -1, -1, false, false},
		{ollamaGenerateToken(" error"), true, -1, -1, false, false},
		{"", false, -1, -1, false, false},
		{" \t", false, -1, -1, false, false},
	} {
		got := ndjsonLine([]byte(strings.TrimSuffix(c.line, "\n")))
		if got.content != c.content || got.output != c.output || got.prompt != c.prompt || got.done != c.done || got.failed != c.failed {
			t.Errorf("ndjsonChunk(%s) = %+v; want %+v", c.line, got, chunk{c.content, c.output, c.prompt, c.done, c.failed})
		}
	}
}

func TestChunksAllocateNothing(t *testing.T) {
	for _, s := range []string{ollamaGenerateToken(" tok"), ollamaChatDone(5, 9), ollamaError} {
		l := []byte(s)
		if n := testing.AllocsPerRun(100, func() { ndjsonLine(l) }); n != 0 {
			t.Errorf("ndjsonChunk(%q) allocates %v times per line", l, n)
		}
	}
	for _, s := range []string{llamacppFinal(9, 5), tgiFinal(3, "x", "x y z", 3, 5), tgiChatUsage(5, 9)} {
		l := []byte(s)
		if n := testing.AllocsPerRun(100, func() { sseLine(l) }); n != 0 {
			t.Errorf("sseChunk(%q) allocates %v times per line", l, n)
		}
	}
}

// readStream on each server's whole answer: its content events, its
// output count (the server's, where it sends one) and its prompt count.
func TestReadStreamServers(t *testing.T) {
	const n = 6
	g := &generator{start: time.Now()}
	for _, sb := range serverBodies(n) {
		t.Run(sb.name, func(t *testing.T) {
			var r recorder.Record
			if err := g.readStream(strings.NewReader(sb.body), sb.format, &r, &shard{}); err != nil {
				t.Fatal(err)
			}
			if r.Events != n || r.Tokens != n || r.PromptTokens != 5 {
				t.Errorf("%d events, %d tokens, %d prompt tokens; want %d, %d, 5", r.Events, r.Tokens, r.PromptTokens, n, n)
			}
		})
	}
	// A count unlike the events is the server's, and no prompt count
	// leaves the record's alone (Config.BodyTokens fills it).
	body := ollamaChatToken("a") + ollamaChatToken("b") + `{"message":{"role":"assistant","content":""},"done":true,"eval_count":40}` + "\n"
	r := recorder.Record{PromptTokens: 0}
	if err := g.readStream(strings.NewReader(body), h1.NDJSON, &r, &shard{}); err != nil || r.Events != 2 || r.Tokens != 40 || r.PromptTokens != 0 {
		t.Errorf("%v: %d events, %d tokens, %d prompt tokens; want 2, 40, 0", err, r.Events, r.Tokens, r.PromptTokens)
	}
}

// An NDJSON body that ends without its done line is a stream the server
// left unfinished, of kind stream, with the tokens it got; one that ends
// at an error line is an error event. SSE needs no last line.
func TestReadStreamNDJSONEnds(t *testing.T) {
	g := &generator{start: time.Now()}
	tokens := ollamaGenerateToken("a") + ollamaGenerateToken("b")
	for _, c := range []struct {
		name string
		body string
		want error
	}{
		{"done", tokens + ollamaGenerateDone(5, 2), nil},
		{"done, no final newline", tokens + strings.TrimSuffix(ollamaGenerateDone(5, 2), "\n"), nil},
		{"no done line", tokens, errStreamUnfinished},
		{"done false last", tokens + `{"response":"","done":false}` + "\n", errStreamUnfinished},
		{"error line", tokens + ollamaError, errStreamEvent},
		{"error line, then done", tokens + ollamaError + ollamaGenerateDone(5, 2), errStreamEvent},
	} {
		var r recorder.Record
		err := g.readStream(strings.NewReader(c.body), h1.NDJSON, &r, &shard{})
		if !errors.Is(err, c.want) || r.Events != 2 || r.Tokens != 2 {
			t.Errorf("%s: %v, %d events, %d tokens; want %v, 2 events, 2 tokens", c.name, err, r.Events, r.Tokens, c.want)
		}
		if err != nil && Kind(err) != recorder.KindStream {
			t.Errorf("%s: kind %v, want stream", c.name, Kind(err))
		}
	}
	var r recorder.Record
	if err := g.readStream(strings.NewReader(llamacppToken("a", 1, 5)), h1.SSE, &r, &shard{}); err != nil || r.Events != 1 {
		t.Errorf("SSE without a last event: %v, %d events; want nil, 1", err, r.Events)
	}
}

func TestReadStreamNDJSONAllocsPerEventNone(t *testing.T) {
	body := func(n int) []byte {
		var b bytes.Buffer
		for range n {
			b.WriteString(ollamaChatToken(" tok"))
		}
		b.WriteString(ollamaChatDone(5, n))
		return b.Bytes()
	}
	g := &generator{start: time.Now()}
	sh := &shard{}
	allocs := func(n int) float64 {
		b := body(n)
		return testing.AllocsPerRun(50, func() {
			var r recorder.Record
			if err := g.readStream(bytes.NewReader(b), h1.NDJSON, &r, sh); err != nil || r.Events != n {
				t.Fatalf("%v, %d events", err, r.Events)
			}
			sh.toks = sh.toks[:0]
		})
	}
	if small, large := allocs(10), allocs(1000); large > small+1 {
		t.Errorf("%v allocations for 1,000 events, %v for 10: events allocate", large, small)
	}
}

// ollamaHandler answers as Ollama's /api/generate (chat false) or
// /api/chat does: application/x-ndjson, each line written and flushed on
// its own (gin's c.Stream flushes after each; net/http then sends it
// chunked), tokens lines, then the done line saying eval output tokens;
// end is what ends the body instead of the done line when not "done":
// "cut" (the body ends cleanly without it), "error" (Ollama's error line).
func ollamaHandler(chat bool, tokens, eval int, end string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/x-ndjson")
		f := w.(http.Flusher)
		for i := range tokens {
			line := ollamaGenerateToken(fmt.Sprintf(" t%d", i))
			if chat {
				line = ollamaChatToken(fmt.Sprintf(" t%d", i))
			}
			io.WriteString(w, line)
			f.Flush()
		}
		switch end {
		case "done":
			if chat {
				io.WriteString(w, ollamaChatDone(5, eval))
			} else {
				io.WriteString(w, ollamaGenerateDone(5, eval))
			}
		case "error":
			io.WriteString(w, ollamaError)
		}
	}
}

// Ollama's stream through every client: its content events, its output
// tokens from eval_count (not the events counted: eval differs), and a
// body that ends without its done line, or at an error line, an error of
// kind stream with the tokens it got.
func TestNDJSONStreamsByEveryClient(t *testing.T) {
	const reqs, tokens, eval = 10, 4, 7
	for _, chat := range []bool{false, true} {
		for _, end := range []string{"done", "cut", "error"} {
			t.Run(fmt.Sprintf("chat=%v/%s", chat, end), func(t *testing.T) {
				forClients(t, streamClients, func(t *testing.T, cl client) {
					srv := startStreamServer(t, ollamaHandler(chat, tokens, eval, end))
					rec, log := runLogged(t, srv.URL, streamConfig(cl), schedule.NewConstant(100, 100*time.Millisecond))
					c := checkIdentity(t, rec, reqs)
					st := rec.Stream()
					if st == nil {
						t.Fatal("no stream figures for application/x-ndjson answers")
					}
					if st.Events != reqs*tokens {
						t.Errorf("%d events, want %d", st.Events, reqs*tokens)
					}
					if end == "done" {
						if c.Completed != reqs || st.OutputTokens != reqs*eval || st.Met != reqs {
							t.Errorf("counts %+v, output tokens %d, goodput %d: want %d completed, %d tokens (eval_count), all goodput",
								c, st.OutputTokens, st.Met, reqs, reqs*eval)
						}
						return
					}
					if c.Errors != reqs || rec.ErrorKinds()[recorder.KindStream.String()] != reqs {
						t.Fatalf("counts %+v, kinds %v: want %d errors of kind stream", c, rec.ErrorKinds(), reqs)
					}
					if st.OutputTokens != reqs*tokens || st.TTFTResponse.TotalCount() != 0 || st.Met != 0 {
						t.Errorf("output tokens %d, TTFT values %d, goodput %d: want %d (events counted), 0, 0",
							st.OutputTokens, st.TTFTResponse.TotalCount(), st.Met, reqs*tokens)
					}
					for _, e := range log {
						if e.Error != "stream" || e.Tokens != tokens {
							t.Errorf("log line %+v: want error stream, %d tokens", e, tokens)
							break
						}
					}
				})
			})
		}
	}
}

// A plain NDJSON body (Content-Length) with Config.Stream is read as
// NDJSON, not SSE, by every client: its Content-Type says which.
func TestStreamFlagReadsPlainNDJSON(t *testing.T) {
	body := ollamaGenerateToken("a") + ollamaGenerateToken("b") + ollamaGenerateDone(5, 3)
	forClients(t, openClients, func(t *testing.T, cl client) {
		srv := startStreamServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/x-ndjson")
			w.Header().Set("Content-Length", strconv.Itoa(len(body)))
			io.WriteString(w, body)
		}))
		cfg := streamConfig(cl)
		cfg.Stream = true
		rec, _ := runAgainst(t, srv.URL, cfg, schedule.NewConstant(100, 100*time.Millisecond))
		if c := checkIdentity(t, rec, 10); c.Completed != 10 {
			t.Errorf("counts %+v, want 10 completed", c)
		}
		if st := rec.Stream(); st == nil || st.Events != 20 || st.OutputTokens != 30 {
			t.Errorf("stream %+v, want 20 events, 30 output tokens", st)
		}
	})
}

// FuzzChunkKeys: on every valid one-line JSON value, sseChunk and
// ndjsonChunk find what encoding/json finds, keys matched as written (no
// escapes) at any depth: content when a content key's value is a
// non-empty string; each count from the first of its keys, in the
// document's order, whose value is a number (its leading digits), TGI's
// input_length taken at its generated_tokens; NDJSON's done when the
// first "done" is true, and its counts from the first eval_count and
// prompt_eval_count. Error events are FuzzTopLevelError's to check.
func FuzzChunkKeys(f *testing.F) {
	for _, s := range []string{
		ollamaGenerateToken("a"), ollamaChatDone(5, 9), ollamaError, llamacppToken("a", 3, 4), llamacppFinal(9, 5),
		tgiToken(2, "b"), tgiFinal(3, "c", "a b c", 3, 7), tgiChatUsage(5, 9), vllmChunk(`{"content":"x"}`),
		`{"x\"content":"v","a\\":"text"}`, `{"done":false,"done":true,"eval_count":"7","eval_count":8}`,
		`{"details":{"generated_tokens":"x","input_length":4},"generated_tokens":2,"tokens_evaluated":6}`,
		`[{"completion_tokens":-1},{"completion_tokens":12.5e1},"prompt_tokens",{"prompt_tokens" : 3}]`,
	} {
		f.Add(strings.TrimSpace(strings.TrimPrefix(s, "data: ")))
	}
	f.Fuzz(func(t *testing.T, s string) {
		data := []byte(s)
		sc, nc := sseChunk(h1.Event{Data: data}), ndjsonChunk(h1.Event{Data: data})
		if strings.ContainsAny(s, "\r\n") || !json.Valid(data) || sc.failed || nc.failed {
			return // not one line of JSON, or an error event: any answer will do, so long as it came
		}
		keys, err := jsonKeys(data)
		if err != nil {
			t.Fatal(err)
		}
		nonEmpty := func(names ...string) bool {
			for _, k := range keys {
				if v, ok := k.value.(string); ok && v != "" && slices.Contains(names, k.name) {
					return true
				}
			}
			return false
		}
		count := func(v any) int {
			if n, ok := v.(json.Number); ok {
				return digitsOf([]byte(n))
			}
			return -1
		}
		first := func(name string) (any, bool) {
			for _, k := range keys {
				if k.name == name {
					return k.value, true
				}
			}
			return nil, false
		}
		want := chunk{output: -1, prompt: -1}
		want.content = nonEmpty("content", "text")
		for _, k := range keys {
			n := count(k.value)
			switch k.name {
			case "completion_tokens", "tokens_predicted", "generated_tokens":
				if want.output < 0 {
					want.output = n
				}
				if k.name == "generated_tokens" && n >= 0 && want.prompt < 0 {
					v, _ := first("input_length")
					want.prompt = count(v)
				}
			case "prompt_tokens", "tokens_evaluated":
				if want.prompt < 0 {
					want.prompt = n
				}
			}
		}
		if sc != want {
			t.Errorf("sseChunk(%s) = %+v, encoding/json says %+v", s, sc, want)
		}
		want = chunk{output: -1, prompt: -1}
		want.content = nonEmpty("response", "content")
		if v, _ := first("done"); v == true {
			want.done = true
			v, _ := first("eval_count")
			want.output = count(v)
			v, _ = first("prompt_eval_count")
			want.prompt = count(v)
		}
		if nc != want {
			t.Errorf("ndjsonChunk(%s) = %+v, encoding/json says %+v", s, nc, want)
		}
	})
}

// jsonKey is an object member of a JSON document: its key, when written
// without escapes, and its value when a scalar (a json.Number, string,
// bool or nil; a container's is a json.Delim).
type jsonKey struct {
	name  string
	value any
}

// jsonKeys lists the members of every object in data, at any depth, in
// the document's order.
func jsonKeys(data []byte) ([]jsonKey, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	type frame struct{ object, wantKey bool }
	var (
		out   []jsonKey
		stack []frame // the open containers
		key   = -1    // the member of out whose value comes next
	)
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		if n := len(stack); n > 0 && stack[n-1].wantKey {
			if tok == json.Delim('}') {
				stack = stack[:n-1]
				continue
			}
			name := tok.(string)
			if !bytes.HasSuffix(data[:dec.InputOffset()], []byte(`"`+name+`"`)) {
				name = "" // written with escapes: not the key as searched
			}
			out = append(out, jsonKey{name: name})
			key, stack[n-1].wantKey = len(out)-1, false
			continue
		}
		// A value, or the end of an array.
		if tok == json.Delim(']') {
			stack = stack[:len(stack)-1]
			continue
		}
		if key >= 0 {
			out[key].value, key = tok, -1
		}
		if n := len(stack); n > 0 && stack[n-1].object {
			stack[n-1].wantKey = true // once this value is read
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, frame{object: true, wantKey: true})
		case json.Delim('['):
			stack = append(stack, frame{})
		}
	}
}
