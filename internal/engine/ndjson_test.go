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

	"github.com/openload/openload/internal/framing"
	"github.com/openload/openload/internal/recorder"
	"github.com/openload/openload/schedule"
	"github.com/openload/openload/servers/scripted"
)

// What each SSE event the servers send says: an answer (every answer
// event here is a token event, and no other event is), and the output and
// prompt counts of OpenAI's usage chunk (vLLM, TGI, llama.cpp and Ollama
// chat), llama.cpp /completion's events and TGI /generate_stream's last
// event. Each line is the scripted server's (line, from the end when
// negative, of an answer of n tokens to answerPrompt, or to req).
func TestSSECounts(t *testing.T) {
	const n = 3
	for _, c := range []struct {
		f              scripted.Format
		o              scripted.Options
		req            string // "" asks n tokens (Format.Request)
		line           int
		answer         bool
		output, prompt int
	}{
		{f: scripted.VLLMChat, line: 0, output: -1, prompt: -1}, // the role chunk
		{f: scripted.VLLMChat, line: 1, answer: true, output: -1, prompt: -1},
		{f: scripted.VLLMChat, line: -2, output: n, prompt: answerWords},
		{f: scripted.VLLMCompletions, line: 0, answer: true, output: -1, prompt: -1},
		{f: scripted.VLLMCompletions, line: -2, output: n, prompt: answerWords},
		{f: scripted.TGIChat, line: 0, answer: true, output: -1, prompt: -1},
		{f: scripted.TGIChat, line: -2, output: n, prompt: answerWords},
		{f: scripted.TGIGenerateStream, line: 0, answer: true, output: -1, prompt: -1},
		// TGI's last event: its token, and details' counts; generated_text
		// is no "text".
		{f: scripted.TGIGenerateStream, line: -1, answer: true, output: n, prompt: answerWords},
		{f: scripted.TGIGenerateStream, req: `{"inputs":"a b","parameters":{"max_new_tokens":3}}`, line: -1, answer: true, output: -1, prompt: -1},
		{f: scripted.LlamaCppCompletion, line: 1, answer: true, output: 2, prompt: answerWords}, // running counts
		// n_predict and max_tokens in generation_settings (-1: none asked)
		// are no counts.
		{f: scripted.LlamaCppCompletion, o: scripted.Options{ContextLen: answerWords + 17}, req: `{"prompt":"` + answerPrompt + `","stream":true}`,
			line: -1, output: 17, prompt: answerWords},
		{f: scripted.LlamaCppChat, line: 0, output: -1, prompt: -1},  // the role delta, content null
		{f: scripted.LlamaCppChat, line: -3, output: -1, prompt: -1}, // finish_reason, delta {}
		{f: scripted.LlamaCppChat, line: -2, output: n, prompt: answerWords},
		{f: scripted.OllamaOpenAIChat, line: 0, answer: true, output: -1, prompt: -1},
		{f: scripted.OllamaOpenAIChat, line: -2, output: n, prompt: answerWords},
	} {
		req := []byte(c.req)
		if c.req == "" {
			req = c.f.Request("m", answerPrompt, n)
		}
		body, _ := serveScripted(t, c.f, c.o, req)
		line := strings.TrimSuffix(at(lines(body), c.line), "\n")
		got := sseLine([]byte(line))
		if got.answer != c.answer || got.token != c.answer || got.output != c.output || got.prompt != c.prompt || got.failed || got.done {
			t.Errorf("%s: sseChunk(%s) = %+v; want answer and token %v, output %d, prompt %d", c.f, line, got, c.answer, c.output, c.prompt)
		}
	}
	for _, c := range []struct {
		line                   string
		output, prompt, cached int
	}{
		{`data: {"choices":[],"usage":{"prompt_tokens":9,"total_tokens":12,"completion_tokens":3,"prompt_tokens_details":null}}`, 3, 9, -1},
		// A _details key is not its count; vLLM's cached count is in one.
		{`data: {"usage":{"completion_tokens_details":{"reasoning_tokens":5},"prompt_tokens_details":{"cached_tokens":4}}}`, -1, -1, 4},
		{`data: {"generated_text":"all","details":null}`, -1, -1, -1},
	} {
		if got := sseLine([]byte(c.line)); got.answer || got.token || got.output != c.output || got.prompt != c.prompt || got.cached != c.cached || got.failed || got.done {
			t.Errorf("sseChunk(%s) = %+v; want output %d, prompt %d, cached %d", c.line, got, c.output, c.prompt, c.cached)
		}
	}
}

// ollamaLines are Ollama's native lines, by the scripted servers: a
// token line of generate and of chat, their done lines for a prompt of
// 26 words and 3 tokens (prompt_eval_count 26 before eval_count 3), a
// thinking line, and the error line of a stream that fails.
func ollamaLines(tb testing.TB) (genToken, chatToken, genDone, chatDone, thinking, failed string) {
	tb.Helper()
	req := func(f scripted.Format) []byte { return f.Request("m", strings.Repeat("w ", 26), 3) }
	gen, _ := serveScripted(tb, scripted.OllamaGenerate, scripted.Options{}, req(scripted.OllamaGenerate))
	chat, _ := serveScripted(tb, scripted.OllamaChat, scripted.Options{}, req(scripted.OllamaChat))
	think := answerLines(tb, scripted.OllamaChat, scripted.Options{Thinking: 1}, 2)
	fail := answerLines(tb, scripted.OllamaGenerate, scripted.Options{Cut: scripted.CutError, CutAfter: 1}, 2)
	return at(lines(gen), 0), at(lines(chat), 0), at(lines(gen), -1), at(lines(chat), -1), think[0], at(fail, -1)
}

// What each line of Ollama's stream says: content from response or
// message.content, counts on the done line only, and "eval_count" never
// found in "prompt_eval_count".
func TestNDJSONLine(t *testing.T) {
	genToken, chatToken, genDone, chatDone, thinking, failed := ollamaLines(t)
	for _, c := range []struct {
		line           string
		token, answer  bool
		output, prompt int
		done, failed   bool
	}{
		{genToken, true, true, -1, -1, false, false},
		{chatToken, true, true, -1, -1, false, false},
		{genDone, false, false, 3, 26, true, false},
		{chatDone, false, false, 3, 26, true, false},
		// Ollama sends no line without text but its done line; one would
		// be no token.
		{`{"model":"m","created_at":"2026-08-21T10:00:00Z","response":"","done":false}`, false, false, -1, -1, false, false},
		// Only prompt_eval_count: no output count.
		{`{"response":"","done":true,"prompt_eval_count":26}`, false, false, -1, 26, true, false},
		{`{"done":true,"eval_count":3,"prompt_eval_count":26}`, false, false, 3, 26, true, false},
		// Counts on a line that is not done are not read (Ollama sends none).
		{`{"response":"a","done":false,"eval_count":3}`, true, true, -1, -1, false, false},
		// done as a value, or inside a string, is not the key.
		{`{"response":"done","done":false}`, true, true, -1, -1, false, false},
		{`{"response":"\"done\":true","done":false}`, true, true, -1, -1, false, false},
		{`{"done" : true}`, false, false, -1, -1, true, false},
		// Thinking is a token, no answer.
		{thinking, true, false, -1, -1, false, false},
		// Ollama's error line, and the error word where it is none.
		{failed, false, false, -1, -1, false, true},
		{`{"error":""}`, false, false, -1, -1, false, false},
		{`{"response":" error","done":false}`, true, true, -1, -1, false, false},
		{"", false, false, -1, -1, false, false},
		{" \t", false, false, -1, -1, false, false},
	} {
		got := ndjsonLine([]byte(strings.TrimSuffix(c.line, "\n")))
		want := chunk{c.token, c.answer, c.output, c.prompt, -1, c.done, c.failed}
		if got != want {
			t.Errorf("ndjsonChunk(%s) = %+v; want %+v", c.line, got, want)
		}
	}
}

func TestChunksAllocateNothing(t *testing.T) {
	genToken, _, _, chatDone, _, failed := ollamaLines(t)
	for _, s := range []string{genToken, chatDone, failed} {
		l := []byte(s)
		if n := testing.AllocsPerRun(100, func() { ndjsonLine(l) }); n != 0 {
			t.Errorf("ndjsonChunk(%q) allocates %v times per line", l, n)
		}
	}
	for _, c := range []struct {
		f scripted.Format
		o scripted.Options
	}{
		{scripted.LlamaCppCompletion, scripted.Options{}}, {scripted.TGIGenerateStream, scripted.Options{}}, {scripted.TGIChat, scripted.Options{}},
		{scripted.VLLMChat, scripted.Options{}},
		// Thinking and empty-text tokens take the longer way (generated).
		{scripted.VLLMChat, scripted.Options{Thinking: 2}}, {scripted.LlamaCppChat, scripted.Options{Thinking: 2}},
		{scripted.VLLMCompletions, scripted.Options{EmptyEvery: 1}},
	} {
		f := c.f
		for _, s := range answerLines(t, f, c.o, 3) {
			l := []byte(s)
			if n := testing.AllocsPerRun(100, func() { sseLine(l) }); n != 0 {
				t.Errorf("sseChunk(%q) allocates %v times per line", l, n)
			}
		}
	}
}

// readStream on each server's whole answer: its content events, its
// output count (the server's, where it sends one) and its prompt count.
func TestReadStreamServers(t *testing.T) {
	const n = 6
	g := &generator{start: time.Now()}
	for _, f := range scripted.Formats() {
		t.Run(f.String(), func(t *testing.T) {
			body, format := scriptedAnswer(t, f, scripted.Options{}, n)
			var r recorder.Record
			if err := g.readStream(bytes.NewReader(body), format, &r, &shard{}); err != nil {
				t.Fatal(err)
			}
			if r.Events != n || r.Tokens != n || r.PromptTokens != answerWords {
				t.Errorf("%d events, %d tokens, %d prompt tokens; want %d, %d, %d", r.Events, r.Tokens, r.PromptTokens, n, n, answerWords)
			}
		})
	}
	// Thinking is token events, no answer: the first answer event is
	// the fifth token event (its stamp after the first token's, read in
	// one piece here, so not before it).
	for _, f := range []scripted.Format{scripted.OllamaChat, scripted.OllamaGenerate, scripted.VLLMChat, scripted.LlamaCppChat} {
		body, format := scriptedAnswer(t, f, scripted.Options{Thinking: 4}, n)
		var r recorder.Record
		if err := g.readStream(bytes.NewReader(body), format, &r, &shard{}); err != nil || r.Events != n || r.Tokens != n || r.PromptTokens != answerWords ||
			r.FirstAnswer < r.FirstToken || r.FirstAnswer == 0 {
			t.Errorf("%s thinking: %v: %d events, %d tokens, %d prompt tokens, first token %v, first answer %v; want %d, %d, %d, an answer",
				f, err, r.Events, r.Tokens, r.PromptTokens, r.FirstToken, r.FirstAnswer, n, n, answerWords)
		}
	}
	// Every answer token but the last empty (vLLM's held text): each is a
	// token.
	for _, f := range []scripted.Format{scripted.VLLMChat, scripted.VLLMCompletions} {
		body, format := scriptedAnswer(t, f, scripted.Options{EmptyEvery: 1}, n)
		var r recorder.Record
		if err := g.readStream(bytes.NewReader(body), format, &r, &shard{}); err != nil || r.Events != n || r.Tokens != n {
			t.Errorf("%s empty text: %v: %d events, %d tokens; want %d each", f, err, r.Events, r.Tokens, n)
		}
	}
	// No prompt count (vLLM without include_usage) leaves the record's
	// alone (Config.BodyTokens fills it).
	body, format := serveScripted(t, scripted.VLLMChat, scripted.Options{}, []byte(`{"stream":true,"max_tokens":2,"messages":[{"role":"user","content":"a b"}]}`))
	r := recorder.Record{PromptTokens: 9}
	if err := g.readStream(bytes.NewReader(body), format, &r, &shard{}); err != nil || r.Events != 2 || r.Tokens != 2 || r.PromptTokens != 9 {
		t.Errorf("no usage: %v: %d events, %d tokens, %d prompt tokens; want 2, 2, 9", err, r.Events, r.Tokens, r.PromptTokens)
	}
}

// An NDJSON body that ends without its done line is a stream the server
// left unfinished, of kind stream, with the tokens it got; one that ends
// at an error line is an error event. SSE needs no last line.
func TestReadStreamNDJSONEnds(t *testing.T) {
	g := &generator{start: time.Now()}
	answer := func(o scripted.Options) string {
		b, _ := scriptedAnswer(t, scripted.OllamaGenerate, o, 3)
		return string(b)
	}
	cut := func(mode scripted.CutMode) scripted.Options { return scripted.Options{Cut: mode, CutAfter: 2} }
	done, _ := scriptedAnswer(t, scripted.OllamaGenerate, scripted.Options{}, 2)
	doneLine := at(lines(done), -1)
	for _, c := range []struct {
		name string
		body string
		want error
	}{
		{"done", string(done), nil},
		{"done, no final newline", strings.TrimSuffix(string(done), "\n"), nil},
		{"no done line", answer(cut(scripted.CutEnd)), errStreamUnfinished},
		{"done false last", answer(cut(scripted.CutEnd)) + `{"response":"","done":false}` + "\n", errStreamUnfinished},
		{"error line", answer(cut(scripted.CutError)), errStreamEvent},
		{"error line, then done", answer(cut(scripted.CutError)) + doneLine, errStreamEvent},
	} {
		var r recorder.Record
		err := g.readStream(strings.NewReader(c.body), framing.NDJSON, &r, &shard{})
		if !errors.Is(err, c.want) || r.Events != 2 || r.Tokens != 2 {
			t.Errorf("%s: %v, %d events, %d tokens; want %v, 2 events, 2 tokens", c.name, err, r.Events, r.Tokens, c.want)
		}
		if err != nil && Kind(err) != recorder.KindStream {
			t.Errorf("%s: kind %v, want stream", c.name, Kind(err))
		}
	}
	body, format := scriptedAnswer(t, scripted.LlamaCppCompletion, scripted.Options{Cut: scripted.CutEnd, CutAfter: 1}, 3)
	var r recorder.Record
	if err := g.readStream(bytes.NewReader(body), format, &r, &shard{}); err != nil || r.Events != 1 {
		t.Errorf("SSE without a last event: %v, %d events; want nil, 1", err, r.Events)
	}
}

func TestReadStreamNDJSONAllocsPerEventNone(t *testing.T) {
	checkAllocsPerEventNone(t, scripted.OllamaChat)
}

// checkAllocsPerEventNone: reading format f's answer allocates nothing
// per event: one of 1,000 events costs what one of 10 does (the pooled
// reader, the batches' hand-over), give or take 10. AllocsPerRun counts
// every allocation of the process while it runs, so a goroutine of
// another test still ending, or a collection that empties the reader's
// pool, adds a few: .ci/run once read 3 for 1,000 events and 1 for 10,
// with the bound at 1. One allocation per event would add 990, one per
// hundred events 10.
func checkAllocsPerEventNone(t *testing.T, f scripted.Format) {
	t.Helper()
	g := &generator{start: time.Now()}
	sh := &shard{}
	allocs := func(n int) float64 {
		b, format := scriptedAnswer(t, f, scripted.Options{}, n)
		return testing.AllocsPerRun(50, func() {
			var r recorder.Record
			if err := g.readStream(bytes.NewReader(b), format, &r, sh); err != nil || r.Events != n {
				t.Fatalf("%v, %d events", err, r.Events)
			}
			sh.toks = sh.toks[:0]
		})
	}
	if small, large := allocs(10), allocs(1000); large > small+10 {
		t.Errorf("%s: %v allocations for 1,000 events, %v for 10: events allocate", f, large, small)
	}
}

// Ollama's stream through every client, from the scripted server over a
// real connection: its token events (thinking included), its output
// tokens from eval_count, its answer's first token after the thinking,
// and a body that ends
// without its done line, or at an error line, an error of kind stream
// with the tokens it got.
func TestNDJSONStreamsByEveryClient(t *testing.T) {
	const reqs, tokens, eval = 10, 4, 7
	for _, f := range []scripted.Format{scripted.OllamaGenerate, scripted.OllamaChat} {
		for _, end := range []string{"done", "cut", "error"} {
			t.Run(fmt.Sprintf("%s/%s", f, end), func(t *testing.T) {
				o := scripted.Options{Model: "m", Thinking: eval - tokens}
				switch end {
				case "cut":
					o = scripted.Options{Model: "m", Cut: scripted.CutEnd, CutAfter: tokens}
				case "error":
					o = scripted.Options{Model: "m", Cut: scripted.CutError, CutAfter: tokens}
				}
				forClients(t, streamClients, func(t *testing.T, cl clientCase) {
					srv := startStreamServer(t, scripted.New(f, o))
					cfg := streamConfig(cl)
					cfg.Body = f.Request("m", answerPrompt, eval)
					rec, log := runLogged(t, srv.URL+f.Path(), cfg, schedule.NewConstant(100, 100*time.Millisecond))
					c := checkIdentity(t, rec, reqs)
					st := rec.Stream()
					if st == nil {
						t.Fatal("no stream figures for application/x-ndjson answers")
					}
					if end == "done" {
						if st.Events != reqs*eval || st.TTFAService.TotalCount() != reqs || st.TTFAService.Min() < st.TTFTService.Min() {
							t.Errorf("%d events, %d TTFA values (min %d µs, TTFT's %d µs); want %d, %d, not below TTFT",
								st.Events, st.TTFAService.TotalCount(), st.TTFAService.Min(), st.TTFTService.Min(), reqs*eval, reqs)
						}
						if c.Completed != reqs || st.OutputTokens != reqs*eval || st.Met != reqs {
							t.Errorf("counts %+v, output tokens %d, goodput %d: want %d completed, %d tokens (eval_count), all goodput",
								c, st.OutputTokens, st.Met, reqs, reqs*eval)
						}
						return
					}
					if st.Events != reqs*tokens {
						t.Errorf("%d events, want %d", st.Events, reqs*tokens)
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
	// 3 token events, eval_count 3: the first token is thinking.
	body, _ := scriptedAnswer(t, scripted.OllamaGenerate, scripted.Options{Thinking: 1}, 3)
	forClients(t, openClients, func(t *testing.T, cl clientCase) {
		srv := startStreamServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/x-ndjson")
			w.Header().Set("Content-Length", strconv.Itoa(len(body)))
			w.Write(body)
		}))
		cfg := streamConfig(cl)
		cfg.Stream = true
		rec, _ := runAgainst(t, srv.URL, cfg, schedule.NewConstant(100, 100*time.Millisecond))
		if c := checkIdentity(t, rec, 10); c.Completed != 10 {
			t.Errorf("counts %+v, want 10 completed", c)
		}
		if st := rec.Stream(); st == nil || st.Events != 30 || st.OutputTokens != 30 || st.TTFAService.TotalCount() != 10 {
			t.Errorf("stream %+v, want 30 events, 30 output tokens, 10 TTFA values", st)
		}
	})
}

// FuzzChunkKeys: on every valid one-line JSON value, sseChunk and
// ndjsonChunk find what encoding/json finds, keys matched as written (no
// escapes) at any depth: an answer when a content key's value is a
// non-empty string, a token when an answer, thinking or arguments, or an
// empty content in an event without a role, a true stop or a
// finish_reason string; each count from the first of its keys, in the
// document's order, whose value is a number (its leading digits), TGI's
// input_length taken at its generated_tokens; NDJSON's done when the
// first "done" is true, and its counts from the first eval_count and
// prompt_eval_count. Error events are FuzzTopLevelError's to check.
func FuzzChunkKeys(f *testing.F) {
	var seeds []string
	for _, fm := range scripted.Formats() {
		seeds = append(seeds, answerLines(f, fm, scripted.Options{}, 2)...)
	}
	_, _, _, _, thinking, failed := ollamaLines(f)
	for _, s := range append(seeds, thinking, failed,
		`{"x\"content":"v","a\\":"text"}`, `{"done":false,"done":true,"eval_count":"7","eval_count":8}`,
		`{"details":{"generated_tokens":"x","input_length":4},"generated_tokens":2,"tokens_evaluated":6}`,
		`[{"completion_tokens":-1},{"completion_tokens":12.5e1},"prompt_tokens",{"prompt_tokens" : 3}]`,
	) {
		s = strings.TrimPrefix(strings.TrimPrefix(s, "data:"), " ")
		f.Add(strings.TrimSpace(s))
	}
	f.Fuzz(func(t *testing.T, s string) {
		data := []byte(s)
		sc, nc := sseChunk(framing.Event{Data: data}), ndjsonChunk(framing.Event{Data: data})
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
		empty := func(names ...string) bool {
			for _, k := range keys {
				if v, ok := k.value.(string); ok && v == "" && slices.Contains(names, k.name) {
					return true
				}
			}
			return false
		}
		want := chunk{output: -1, prompt: -1, cached: -1}
		want.answer = nonEmpty("content", "text")
		_, role := first("role")
		stop, _ := first("stop")
		finish, _ := first("finish_reason")
		_, finished := finish.(string)
		want.token = want.answer || nonEmpty("reasoning", "reasoning_content", "arguments") || empty("content", "text") && !role && stop != true && !finished
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
			case "cached_tokens":
				if want.cached < 0 {
					want.cached = n
				}
			}
		}
		if sc != want {
			t.Errorf("sseChunk(%s) = %+v, encoding/json says %+v", s, sc, want)
		}
		want = chunk{output: -1, prompt: -1, cached: -1}
		want.answer = nonEmpty("response", "content")
		want.token = want.answer || nonEmpty("thinking")
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
