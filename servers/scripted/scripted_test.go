package scripted

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// Fast enough for a unit test, slow enough that every duration a final
// event reports is positive.
var fast = Options{Model: "m", Prefill: time.Millisecond, ITL: time.Millisecond}

type call struct {
	status int
	header http.Header
	body   string
	err    error // reading the body
}

func post(t *testing.T, srv *httptest.Server, path, contentType, body string) call {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, srv.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	return do(t, srv, req)
}

func get(t *testing.T, srv *httptest.Server, path string) call {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, srv.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	return do(t, srv, req)
}

func do(t *testing.T, srv *httptest.Server, req *http.Request) call {
	t.Helper()
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return call{resp.StatusCode, resp.Header, string(b), err}
}

// The values a server chooses itself (ids, clocks, measured durations)
// are replaced by placeholders before comparing with the goldens.
var volatile = []struct {
	re  *regexp.Regexp
	new string
}{
	{regexp.MustCompile(`chatcmpl-[0-9A-Za-z]+`), "chatcmpl-ID"},
	{regexp.MustCompile(`"cmpl-[0-9a-f]{32}"`), `"cmpl-ID"`},
	{regexp.MustCompile(`modelperm-[0-9a-f]{32}`), "modelperm-ID"},
	{regexp.MustCompile(`"created":\d+`), `"created":T`},
	{regexp.MustCompile(`"created_at":"[^"]+"`), `"created_at":"T"`},
	{regexp.MustCompile(`"(prompt_ms|prompt_per_token_ms|prompt_per_second|predicted_ms|predicted_per_token_ms|predicted_per_second)":[0-9.e+-]+`), `"$1":F`},
	{regexp.MustCompile(`"(total_duration|load_duration|prompt_eval_duration|eval_duration)":\d+`), `"$1":D`},
}

func normalize(s string) string {
	for _, v := range volatile {
		s = v.re.ReplaceAllString(s, v.new)
	}
	return s
}

// goldens: one streamed answer of 2 tokens to a 3-word prompt, as each
// server writes it (see the format's source file for where each byte
// comes from). first is the first event, which is compared before
// normalizing anything but ids and clocks.
var goldens = []struct {
	f           Format
	body        string
	contentType string // of the answer
	want        string
}{
	{VLLMChat,
		`{"model":"m","stream":true,"max_tokens":2,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"say two words"}]}`,
		"text/event-stream; charset=utf-8",
		`data: {"id":"chatcmpl-ID","object":"chat.completion.chunk","created":T,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}],"prompt_token_ids":null,"prompt_text":null}` + "\n\n" +
			`data: {"id":"chatcmpl-ID","object":"chat.completion.chunk","created":T,"model":"m","choices":[{"index":0,"delta":{"content":" tok1"},"logprobs":null,"finish_reason":null,"token_ids":null}]}` + "\n\n" +
			`data: {"id":"chatcmpl-ID","object":"chat.completion.chunk","created":T,"model":"m","choices":[{"index":0,"delta":{"content":" tok2"},"logprobs":null,"finish_reason":"length","stop_reason":null,"token_ids":null}]}` + "\n\n" +
			`data: {"id":"chatcmpl-ID","object":"chat.completion.chunk","created":T,"model":"m","choices":[],"usage":{"prompt_tokens":3,"total_tokens":5,"completion_tokens":2}}` + "\n\n" +
			"data: [DONE]\n\n"},
	{VLLMCompletions,
		`{"model":"m","stream":true,"max_tokens":2,"prompt":"say two words"}`,
		"text/event-stream; charset=utf-8",
		`data: {"id":"cmpl-ID","object":"text_completion","created":T,"model":"m","choices":[{"index":0,"text":" tok1","logprobs":null,"finish_reason":null,"stop_reason":null,"prompt_token_ids":null,"token_ids":null}]}` + "\n\n" +
			`data: {"id":"cmpl-ID","object":"text_completion","created":T,"model":"m","choices":[{"index":0,"text":" tok2","logprobs":null,"finish_reason":"length","stop_reason":null,"prompt_token_ids":null,"token_ids":null}]}` + "\n\n" +
			"data: [DONE]\n\n"},
	{TGIGenerateStream,
		`{"inputs":"say two words","parameters":{"max_new_tokens":2,"details":true}}`,
		"text/event-stream",
		`data:{"index":1,"token":{"id":1000,"text":" tok1","logprob":-0.25,"special":false},"generated_text":null,"details":null}` + "\n\n" +
			`data:{"index":2,"token":{"id":1001,"text":" tok2","logprob":-0.25,"special":false},"generated_text":" tok1 tok2","details":{"finish_reason":"length","generated_tokens":2,"seed":null,"input_length":3}}` + "\n\n"},
	{TGIChat,
		`{"model":"tgi","stream":true,"max_tokens":2,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"say two words"}]}`,
		"text/event-stream",
		`data:{"object":"chat.completion.chunk","id":"","created":T,"model":"m","system_fingerprint":"3.3.6-dev0-native","choices":[{"index":0,"delta":{"role":"assistant","content":" tok1"},"logprobs":null,"finish_reason":null}],"usage":null}` + "\n\n" +
			`data:{"object":"chat.completion.chunk","id":"","created":T,"model":"m","system_fingerprint":"3.3.6-dev0-native","choices":[{"index":0,"delta":{"role":"assistant","content":" tok2"},"logprobs":null,"finish_reason":"length"}],"usage":null}` + "\n\n" +
			`data:{"object":"chat.completion.chunk","id":"","created":T,"model":"m","system_fingerprint":"3.3.6-dev0-native","choices":[],"usage":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5}}` + "\n\n" +
			"data:[DONE]\n\n"},
	{LlamaCppCompletion,
		`{"prompt":"say two words","n_predict":2,"stream":true}`,
		"text/event-stream",
		`data: {"index":0,"content":" tok1","tokens":[1000],"stop":false,"id_slot":-1,"tokens_predicted":1,"tokens_evaluated":3}` + "\n\n" +
			`data: {"index":0,"content":" tok2","tokens":[1001],"stop":false,"id_slot":-1,"tokens_predicted":2,"tokens_evaluated":3}` + "\n\n" +
			`data: {"index":0,"content":"","tokens":[],"id_slot":0,"stop":true,"model":"m","tokens_predicted":2,"tokens_evaluated":3,"generation_settings":{"max_tokens":2,"n_predict":2,"stream":true},"prompt":"say two words","has_new_line":false,"truncated":false,"stop_type":"limit","stopping_word":"","tokens_cached":4,"timings":{"cache_n":0,"prompt_n":3,"prompt_ms":F,"prompt_per_token_ms":F,"prompt_per_second":F,"predicted_n":2,"predicted_ms":F,"predicted_per_token_ms":F,"predicted_per_second":F}}` + "\n\n"},
	{LlamaCppChat,
		`{"model":"anything","stream":true,"max_tokens":2,"messages":[{"role":"user","content":"say two words"}]}`,
		"text/event-stream",
		`data: {"choices":[{"finish_reason":null,"index":0,"delta":{"role":"assistant","content":null}}],"created":T,"id":"chatcmpl-ID","model":"m","system_fingerprint":"b0-unknown","object":"chat.completion.chunk"}` + "\n\n" +
			`data: {"choices":[{"finish_reason":null,"index":0,"delta":{"content":" tok1"}}],"created":T,"id":"chatcmpl-ID","model":"m","system_fingerprint":"b0-unknown","object":"chat.completion.chunk"}` + "\n\n" +
			`data: {"choices":[{"finish_reason":null,"index":0,"delta":{"content":" tok2"}}],"created":T,"id":"chatcmpl-ID","model":"m","system_fingerprint":"b0-unknown","object":"chat.completion.chunk"}` + "\n\n" +
			`data: {"choices":[{"finish_reason":"length","index":0,"delta":{}}],"created":T,"id":"chatcmpl-ID","model":"m","system_fingerprint":"b0-unknown","object":"chat.completion.chunk","timings":{"cache_n":0,"prompt_n":3,"prompt_ms":F,"prompt_per_token_ms":F,"prompt_per_second":F,"predicted_n":2,"predicted_ms":F,"predicted_per_token_ms":F,"predicted_per_second":F}}` + "\n\n" +
			"data: [DONE]\n\n"},
	{OllamaOpenAIChat,
		`{"model":"m","stream":true,"max_tokens":2,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"say two words"}]}`,
		"text/event-stream",
		`data: {"id":"chatcmpl-ID","object":"chat.completion.chunk","created":T,"model":"m","system_fingerprint":"fp_ollama","choices":[{"index":0,"delta":{"role":"assistant","content":" tok1"},"finish_reason":null}]}` + "\n\n" +
			`data: {"id":"chatcmpl-ID","object":"chat.completion.chunk","created":T,"model":"m","system_fingerprint":"fp_ollama","choices":[{"index":0,"delta":{"content":" tok2"},"finish_reason":null}]}` + "\n\n" +
			`data: {"id":"chatcmpl-ID","object":"chat.completion.chunk","created":T,"model":"m","system_fingerprint":"fp_ollama","choices":[{"index":0,"delta":{},"finish_reason":"length"}]}` + "\n\n" +
			`data: {"id":"chatcmpl-ID","object":"chat.completion.chunk","created":T,"model":"m","system_fingerprint":"fp_ollama","choices":[],"usage":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5}}` + "\n\n" +
			"data: [DONE]\n\n"},
	{OllamaGenerate,
		`{"model":"m","prompt":"say two words","options":{"num_predict":2}}`,
		"application/x-ndjson",
		`{"model":"m","created_at":"T","response":" tok1","done":false}` + "\n" +
			`{"model":"m","created_at":"T","response":" tok2","done":false}` + "\n" +
			`{"model":"m","created_at":"T","response":"","done":true,"done_reason":"length","context":[1,2,3,1000,1001],"total_duration":D,"load_duration":D,"prompt_eval_count":3,"prompt_eval_duration":D,"eval_count":2,"eval_duration":D}` + "\n"},
	{OllamaChat,
		`{"model":"m","messages":[{"role":"user","content":"say two words"}],"options":{"num_predict":2}}`,
		"application/x-ndjson",
		`{"model":"m","created_at":"T","message":{"role":"assistant","content":" tok1"},"done":false}` + "\n" +
			`{"model":"m","created_at":"T","message":{"role":"assistant","content":" tok2"},"done":false}` + "\n" +
			`{"model":"m","created_at":"T","message":{"role":"assistant","content":""},"done":true,"done_reason":"length","total_duration":D,"load_duration":D,"prompt_eval_count":3,"prompt_eval_duration":D,"eval_count":2,"eval_duration":D}` + "\n"},
}

func TestGoldens(t *testing.T) {
	if len(goldens) != len(Formats()) {
		t.Fatalf("%d goldens for %d formats", len(goldens), len(Formats()))
	}
	for _, g := range goldens {
		t.Run(g.f.String(), func(t *testing.T) {
			h := New(g.f, fast)
			srv := httptest.NewServer(h)
			defer srv.Close()
			c := post(t, srv, g.f.Path(), "application/json", g.body)
			if c.status != http.StatusOK || c.err != nil {
				t.Fatalf("status %d, read error %v, body %q", c.status, c.err, c.body)
			}
			if ct := c.header.Get("Content-Type"); ct != g.contentType {
				t.Errorf("Content-Type %q, want %q", ct, g.contentType)
			}
			got := normalize(c.body)
			// The first event on its own, so a mismatch there is named
			// as such, then the whole stream.
			sep := "\n\n"
			if strings.HasPrefix(g.f.String(), "ollama-") && g.f != OllamaOpenAIChat {
				sep = "\n"
			}
			firstWant, _, _ := strings.Cut(g.want, sep)
			firstGot, _, _ := strings.Cut(got, sep)
			if firstGot != firstWant {
				t.Errorf("first event\n got %s\nwant %s", firstGot, firstWant)
			}
			if got != g.want {
				t.Errorf("stream\n got %s\nwant %s", got, g.want)
			}
			st := h.Stats()
			if st.Tokens != 2 || st.Streams != 1 || st.Completed != 1 || st.Requests != 1 {
				t.Errorf("stats %+v, want 2 tokens in 1 completed stream of 1 request", st)
			}
			if n := st.Routes[Route{http.MethodPost, g.f.Path(), http.StatusOK}]; n != 1 {
				t.Errorf("routes %v", st.Routes)
			}
		})
	}
}

var generatedText = regexp.MustCompile(`"generated_text":"[^"]*"`)

// tokenEvents counts the token-carrying events of a stream by their text
// (TGI's generated_text repeats the whole answer, so it is left out).
func tokenEvents(body string) int {
	return strings.Count(generatedText.ReplaceAllString(body, ""), `" tok`)
}

func TestTokenCounts(t *testing.T) {
	chat := func(extra string) string {
		return `{"model":"m","stream":true,` + extra + `"messages":[{"role":"user","content":"one two three four"}]}`
	}
	o := Options{Model: "m", ContextLen: 20}
	cases := []struct {
		f    Format
		body string
		want int
	}{
		{VLLMChat, chat(`"max_tokens":7,`), 7},
		{VLLMChat, chat(`"max_tokens":7,"max_completion_tokens":5,`), 5},
		{VLLMChat, chat(``), 16}, // max_model_len 20 − 4 prompt words
		{VLLMCompletions, `{"stream":true,"prompt":"a b","max_tokens":3}`, 3},
		{VLLMCompletions, `{"stream":true,"prompt":"a b"}`, 16}, // CompletionRequest default
		{TGIGenerateStream, `{"inputs":"a b c","parameters":{"max_new_tokens":4}}`, 4},
		{TGIGenerateStream, `{"inputs":"a b c"}`, 17},
		{TGIChat, chat(`"max_completion_tokens":6,`), 6},
		{TGIChat, chat(``), 16},
		{LlamaCppCompletion, `{"prompt":"a","n_predict":9,"stream":true}`, 9},
		{LlamaCppCompletion, `{"prompt":"a","max_tokens":8,"stream":true}`, 8},
		{LlamaCppCompletion, `{"prompt":"a","stream":true}`, 19},
		{LlamaCppChat, chat(`"max_tokens":3,`), 3},
		{OllamaOpenAIChat, chat(`"max_tokens":5,`), 5},
		{OllamaOpenAIChat, chat(``), 16},
		{OllamaGenerate, `{"model":"m","prompt":"a b","options":{"num_predict":6}}`, 6},
		{OllamaGenerate, `{"model":"m","prompt":"a b","options":{"num_predict":-1}}`, 18},
		{OllamaChat, `{"model":"m","messages":[{"role":"user","content":"a"}],"options":{"num_predict":4}}`, 4},
		{OllamaChat, `{"model":"m","messages":[{"role":"user","content":"a"}]}`, 19},
	}
	for _, c := range cases {
		t.Run(c.f.String(), func(t *testing.T) {
			h := New(c.f, o)
			srv := httptest.NewServer(h)
			defer srv.Close()
			r := post(t, srv, c.f.Path(), "application/json", c.body)
			if r.status != http.StatusOK {
				t.Fatalf("status %d: %s", r.status, r.body)
			}
			if n := tokenEvents(r.body); n != c.want {
				t.Errorf("%s: %d token events, want %d", c.body, n, c.want)
			}
			if st := h.Stats(); st.Tokens != c.want {
				t.Errorf("server wrote %d tokens, want %d", st.Tokens, c.want)
			}
		})
	}
}

func TestRefusals(t *testing.T) {
	vllmChat := `{"model":"m","stream":true,"max_tokens":1,"messages":[{"role":"user","content":"x"}]}`
	cases := []struct {
		name        string
		f           Format
		contentType string
		body        string
		status      int
		ctype       string
		want        string
	}{
		{"vllm text/plain", VLLMChat, "text/plain", vllmChat, 400, "application/json",
			`{"error":{"message":"1 validation error:\n  Unsupported Media Type: Only 'application/json' is allowed","type":"Bad Request","param":null,"code":400}}`},
		{"vllm no type", VLLMCompletions, "", `{"prompt":"x","stream":true}`, 400, "application/json",
			`{"error":{"message":"1 validation error:\n  Unsupported Media Type: Only 'application/json' is allowed","type":"Bad Request","param":null,"code":400}}`},
		{"vllm model", VLLMChat, "application/json", strings.Replace(vllmChat, `"m"`, `"other"`, 1), 404, "application/json",
			"{\"error\":{\"message\":\"The model `other` does not exist.\",\"type\":\"NotFoundError\",\"param\":\"model\",\"code\":404}}"},
		{"tgi text/plain", TGIGenerateStream, "text/plain", `{"inputs":"x"}`, 415, "text/plain; charset=utf-8",
			"Expected request with `Content-Type: application/json`"},
		{"tgi chat no type", TGIChat, "", vllmChat, 415, "text/plain; charset=utf-8",
			"Expected request with `Content-Type: application/json`"},
		{"ollama generate model", OllamaGenerate, "application/json", `{"model":"x","prompt":"p"}`, 404, "application/json; charset=utf-8",
			`{"error":"model 'x' not found"}`},
		{"ollama generate no model", OllamaGenerate, "application/json", `{"prompt":"p"}`, 404, "application/json; charset=utf-8",
			`{"error":"model '' not found"}`},
		{"ollama chat no model", OllamaChat, "application/json", `{"messages":[{"role":"user","content":"x"}]}`, 400, "application/json; charset=utf-8",
			`{"error":"model is required"}`},
		{"ollama chat model", OllamaChat, "application/json", `{"model":"x","messages":[]}`, 404, "application/json; charset=utf-8",
			`{"error":"model 'x' not found"}`},
		{"ollama empty body", OllamaChat, "application/json", ``, 400, "application/json; charset=utf-8",
			`{"error":"missing request body"}`},
		{"ollama openai model", OllamaOpenAIChat, "application/json", strings.Replace(vllmChat, `"m"`, `"x"`, 1), 404, "application/json",
			`{"error":{"message":"model 'x' not found","type":"not_found_error","param":null,"code":null}}` + "\n"},
		{"ollama openai no model", OllamaOpenAIChat, "application/json", `{"stream":true,"messages":[{"role":"user","content":"x"}]}`, 400, "application/json",
			`{"error":{"message":"model is required","type":"invalid_request_error","param":null,"code":null}}` + "\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := New(c.f, fast)
			srv := httptest.NewServer(h)
			defer srv.Close()
			r := post(t, srv, c.f.Path(), c.contentType, c.body)
			if r.status != c.status || r.body != c.want {
				t.Errorf("got %d %q\nwant %d %q", r.status, r.body, c.status, c.want)
			}
			if ct := r.header.Get("Content-Type"); ct != c.ctype {
				t.Errorf("Content-Type %q, want %q", ct, c.ctype)
			}
			st := h.Stats()
			if st.Requests != 1 || st.Routes[Route{http.MethodPost, c.f.Path(), c.status}] != 1 || st.Streams != 0 || st.Tokens != 0 {
				t.Errorf("stats %+v", st)
			}
		})
	}
}

// Servers that do not look at the Content-Type stream whatever it says.
func TestContentTypeIgnored(t *testing.T) {
	cases := []struct {
		f    Format
		body string
	}{
		{LlamaCppCompletion, `{"prompt":"a","n_predict":1,"stream":true}`},
		{LlamaCppChat, `{"stream":true,"max_tokens":1,"messages":[{"role":"user","content":"a"}]}`},
		{OllamaGenerate, `{"model":"m","prompt":"a","options":{"num_predict":1}}`},
		{OllamaOpenAIChat, `{"model":"m:latest","stream":true,"max_tokens":1,"messages":[{"role":"user","content":"a"}]}`},
	}
	for _, c := range cases {
		for _, ct := range []string{"", "text/plain"} {
			srv := httptest.NewServer(New(c.f, fast))
			r := post(t, srv, c.f.Path(), ct, c.body)
			srv.Close()
			if r.status != http.StatusOK || tokenEvents(r.body) != 1 {
				t.Errorf("%s with Content-Type %q: %d %q", c.f, ct, r.status, r.body)
			}
		}
	}
}

func TestModels(t *testing.T) {
	for _, f := range Formats() {
		srv := httptest.NewServer(New(f, Options{Model: "served"}))
		paths := []string{"/v1/models"}
		if f.Server() == "ollama" {
			paths = append(paths, "/api/tags")
		}
		for _, p := range paths {
			r := get(t, srv, p)
			var v any
			if r.status != http.StatusOK || json.Unmarshal([]byte(r.body), &v) != nil || !strings.Contains(r.body, `"served`) {
				t.Errorf("%s GET %s: %d %q", f, p, r.status, r.body)
			}
		}
		if r := get(t, srv, "/nowhere"); r.status != http.StatusNotFound {
			t.Errorf("%s GET /nowhere: %d", f, r.status)
		}
		srv.Close()
	}
}

func TestOllamaNotStreamed(t *testing.T) {
	h := New(OllamaGenerate, fast)
	srv := httptest.NewServer(h)
	defer srv.Close()
	r := post(t, srv, "/api/generate", "application/json", `{"model":"m","prompt":"a b","stream":false,"options":{"num_predict":3}}`)
	want := `{"model":"m","created_at":"T","response":" tok1 tok2 tok3","done":true,"done_reason":"length","context":[1,2,1000,1001,1002],"total_duration":D,"load_duration":D,"prompt_eval_count":2,"prompt_eval_duration":D,"eval_count":3,"eval_duration":D}`
	if got := normalize(r.body); r.status != 200 || got != want {
		t.Errorf("got %d %s\nwant %s", r.status, got, want)
	}
	if ct := r.header.Get("Content-Type"); ct != "application/json; charset=utf-8" {
		t.Errorf("Content-Type %q", ct)
	}
}

func TestNotScripted(t *testing.T) {
	for _, f := range []Format{VLLMChat, TGIChat, LlamaCppCompletion, OllamaOpenAIChat} {
		h := New(f, fast)
		srv := httptest.NewServer(h)
		r := post(t, srv, f.Path(), "application/json", `{"model":"m","prompt":"a","messages":[{"role":"user","content":"a"}]}`)
		srv.Close()
		if r.status != http.StatusNotImplemented || h.Stats().Streams != 0 {
			t.Errorf("%s without stream: %d %q", f, r.status, r.body)
		}
	}
}

// streamBody is a request body asking each format for n tokens.
func streamBody(f Format, n int) string { return string(f.Request("m", "a", n)) }

// finalMarker is a byte string only a format's final event carries.
func finalMarker(f Format) string {
	switch f {
	case TGIGenerateStream:
		return `"generated_text":"`
	case LlamaCppCompletion:
		return `"stop":true`
	case OllamaGenerate, OllamaChat:
		return `"done":true`
	default:
		return "[DONE]"
	}
}

func TestCut(t *testing.T) {
	for _, f := range Formats() {
		for _, mode := range []CutMode{CutClose, CutEnd} {
			o := fast
			o.Cut, o.CutAfter = mode, 2
			h := New(f, o)
			srv := httptest.NewServer(h)
			r := post(t, srv, f.Path(), "application/json", streamBody(f, 5))
			srv.Close()
			if r.status != http.StatusOK || tokenEvents(r.body) != 2 || strings.Contains(r.body, finalMarker(f)) {
				t.Errorf("%s cut %d: %d %q", f, mode, r.status, r.body)
			}
			switch mode {
			case CutClose:
				if !errors.Is(r.err, io.ErrUnexpectedEOF) {
					t.Errorf("%s CutClose: read error %v, want unexpected EOF", f, r.err)
				}
			case CutEnd:
				if r.err != nil {
					t.Errorf("%s CutEnd: read error %v", f, r.err)
				}
			}
			if st := h.Stats(); st.Cut != 1 || st.Completed != 0 || st.Tokens != 2 {
				t.Errorf("%s cut %d: stats %+v", f, mode, st)
			}
		}
	}
}

// A stream no longer than CutAfter is not cut.
func TestCutShortStream(t *testing.T) {
	o := fast
	o.Cut, o.CutAfter = CutClose, 3
	h := New(OllamaChat, o)
	srv := httptest.NewServer(h)
	r := post(t, srv, "/api/chat", "application/json", streamBody(OllamaChat, 3))
	srv.Close()
	if r.err != nil || !strings.Contains(r.body, `"done":true`) || h.Stats().Completed != 1 {
		t.Errorf("%v %q %+v", r.err, r.body, h.Stats())
	}
}

// A client that leaves during Prefill frees the handler at once; Close
// waits for handlers, so the count is final after it.
func TestClientGone(t *testing.T) {
	h := New(VLLMChat, Options{Model: "m", Prefill: time.Hour})
	srv := httptest.NewServer(h)
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+VLLMChat.Path(), strings.NewReader(streamBody(VLLMChat, 3)))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	// vLLM sends its head before prefill, so the response is here while
	// the handler still waits for its first token.
	cancel()
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	srv.Close()
	if st := h.Stats(); st.Gone != 1 || st.Tokens != 0 || st.Streams != 1 {
		t.Errorf("stats %+v", st)
	}
}

// Ollama sends its head with the first line: with a prefill that never
// ends, no response head arrives before the client gives up.
func TestOllamaHeadWithFirstLine(t *testing.T) {
	h := New(OllamaChat, Options{Model: "m", Prefill: time.Hour})
	srv := httptest.NewServer(h)
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/api/chat", strings.NewReader(streamBody(OllamaChat, 1)))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		resp, err := srv.Client().Do(req)
		if err == nil {
			resp.Body.Close()
		}
		done <- err
	}()
	// Cancel once the server has the request (it is counted when read).
	for h.Stats().Requests == 0 {
		time.Sleep(time.Millisecond)
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("Do returned %v, want the cancel: no head may come before the first token", err)
	}
}

// The counts hold under concurrent streams (run with -race).
func TestConcurrentStats(t *testing.T) {
	const clients, tokens = 8, 4
	for _, f := range []Format{VLLMCompletions, TGIGenerateStream, LlamaCppChat, OllamaGenerate} {
		h := New(f, fast)
		srv := httptest.NewServer(h)
		var wg sync.WaitGroup
		for range clients {
			wg.Go(func() {
				r := post(t, srv, f.Path(), "application/json", streamBody(f, tokens))
				if tokenEvents(r.body) != tokens {
					t.Errorf("%s: %q", f, r.body)
				}
			})
		}
		wg.Wait()
		srv.Close()
		st := h.Stats()
		if st.Requests != clients || st.Tokens != clients*tokens || st.Completed != clients ||
			st.Routes[Route{http.MethodPost, f.Path(), 200}] != clients {
			t.Errorf("%s: stats %+v", f, st)
		}
	}
}

// Every event of every SSE stream is a "data: " line followed by a blank
// line, and each payload but [DONE] is JSON; NDJSON lines are JSON.
func TestFraming(t *testing.T) {
	for _, f := range Formats() {
		srv := httptest.NewServer(New(f, fast))
		r := post(t, srv, f.Path(), "application/json", streamBody(f, 3))
		srv.Close()
		sc := bufio.NewScanner(strings.NewReader(r.body))
		ndjson := r.header.Get("Content-Type") == "application/x-ndjson"
		blank := true
		for sc.Scan() {
			line := sc.Bytes()
			if !ndjson {
				if len(line) == 0 {
					if blank {
						t.Errorf("%s: two blank lines in a row", f)
					}
					blank = true
					continue
				}
				if !blank {
					t.Errorf("%s: event not ended by a blank line", f)
				}
				blank = false
				// One optional space after the colon, as the SSE
				// spec reads it (TGI's axum writes none).
				var ok bool
				line, ok = bytes.CutPrefix(line, []byte("data:"))
				if !ok {
					t.Errorf("%s: %q is not a data line", f, line)
					continue
				}
				line = bytes.TrimPrefix(line, []byte(" "))
				if string(line) == "[DONE]" {
					continue
				}
			}
			if !json.Valid(line) {
				t.Errorf("%s: invalid JSON %q", f, line)
			}
		}
		if !ndjson && !blank {
			t.Errorf("%s: stream does not end with a blank line", f)
		}
	}
}

func TestNlohmannDouble(t *testing.T) {
	for _, c := range []struct {
		f    float64
		want string
	}{
		{0, "0.0"}, {1, "1.0"}, {0.5, "0.5"}, {12.345, "12.345"}, {1000, "1000.0"},
		{0.0001, "0.0001"}, {0.00001, "1e-05"}, {1e15, "1e+15"}, {123456789012345, "123456789012345.0"},
		{-2.5, "-2.5"}, {1.0 / 3, "0.3333333333333333"},
	} {
		if got := nlohmannDouble(c.f); got != c.want {
			t.Errorf("nlohmannDouble(%v) = %s, want %s", c.f, got, c.want)
		}
	}
}

func TestQuote(t *testing.T) {
	if got, want := q("a\"b\\c\n\t\x01é<"), `"a\"b\\c\n\t\u0001é<"`; got != want {
		t.Errorf("q = %s, want %s", got, want)
	}
}

func TestFormats(t *testing.T) {
	seen := map[string]bool{}
	for _, f := range Formats() {
		if f.String() == "" || f.Path() == "" || f.Server() == "" || seen[f.String()] {
			t.Errorf("format %d: %q %q %q", int(f), f, f.Path(), f.Server())
		}
		seen[f.String()] = true
	}
	if Format(99).String() != "Format(99)" || Format(99).Path() != "" {
		t.Error("an unknown format names itself")
	}
}

// CutError: after CutAfter tokens, the server's own error event and the
// end it writes after it, a body that ends cleanly; formats whose error
// event is not scripted, and Ollama before its first line, answer 501.
func TestCutError(t *testing.T) {
	want := map[Format]string{
		VLLMChat:       `data: {"error": {"message": "scripted failure during generation", "type": "InternalServerError", "param": null, "code": 500}}` + "\n\ndata: [DONE]\n\n",
		OllamaGenerate: `{"error":"an error was encountered while running the model: unexpected EOF"}` + "\n",
		OllamaChat:     `{"error":"an error was encountered while running the model: unexpected EOF"}` + "\n",
	}
	for _, f := range Formats() {
		o := fast
		o.Cut, o.CutAfter = CutError, 2
		h := New(f, o)
		srv := httptest.NewServer(h)
		r := post(t, srv, f.Path(), "application/json", streamBody(f, 5))
		srv.Close()
		end, ok := want[f]
		if !ok {
			if r.status != http.StatusNotImplemented || h.Stats().Streams != 0 {
				t.Errorf("%s: %d %q, want 501", f, r.status, r.body)
			}
			continue
		}
		if r.status != http.StatusOK || r.err != nil || tokenEvents(r.body) != 2 || !strings.HasSuffix(r.body, end) ||
			strings.Contains(r.body, finalMarker(f)) && f != VLLMChat {
			t.Errorf("%s: %d, %v, %q", f, r.status, r.err, r.body)
		}
		if st := h.Stats(); st.Cut != 1 || st.Completed != 0 || st.Tokens != 2 {
			t.Errorf("%s: stats %+v", f, st)
		}
	}
	o := fast
	o.Cut = CutError
	h := New(OllamaChat, o)
	srv := httptest.NewServer(h)
	defer srv.Close()
	if r := post(t, srv, OllamaChat.Path(), "application/json", streamBody(OllamaChat, 3)); r.status != http.StatusNotImplemented {
		t.Errorf("Ollama's error before its first line: %d %q, want 501", r.status, r.body)
	}
}

// Thinking: Ollama's native endpoints, vLLM chat and llama.cpp chat
// stream the first tokens as thinking, each under its own key, and count
// them in their output count; the other formats answer 501.
func TestThinking(t *testing.T) {
	o := fast
	o.Thinking = 2
	thinkKey := map[Format]string{OllamaGenerate: "thinking", OllamaChat: "thinking", VLLMChat: "reasoning", LlamaCppChat: "reasoning_content"}
	for _, f := range Formats() {
		h := New(f, o)
		srv := httptest.NewServer(h)
		r := post(t, srv, f.Path(), "application/json", streamBody(f, 5))
		srv.Close()
		key, ok := thinkKey[f]
		if !ok {
			if r.status != http.StatusNotImplemented {
				t.Errorf("%s: %d %q, want 501", f, r.status, r.body)
			}
			continue
		}
		thinking, content := strings.Count(r.body, `"`+key+`":" tok`), strings.Count(r.body, `"response":" tok`)+strings.Count(r.body, `"content":" tok`)
		count := regexp.MustCompile(`"(eval_count|completion_tokens)":5\b`)
		if r.status != http.StatusOK || thinking != 2 || content != 3 || !count.MatchString(r.body) {
			t.Errorf("%s: %d thinking, %d content events in %q; want 2, 3 and an output count of 5", f, thinking, content, r.body)
		}
		if st := h.Stats(); st.Tokens != 5 || st.Completed != 1 {
			t.Errorf("%s: stats %+v", f, st)
		}
	}
	srv := httptest.NewServer(New(OllamaChat, o))
	defer srv.Close()
	r := post(t, srv, "/api/chat", "application/json", `{"model":"m","stream":false,"messages":[{"role":"user","content":"a"}],"options":{"num_predict":3}}`)
	if !strings.Contains(r.body, `"message":{"role":"assistant","content":" tok3","thinking":" tok1 tok2"}`) {
		t.Errorf("not streamed: %s", r.body)
	}
}

// Request asks every format for the answer its doc promises: n tokens,
// prompt tokens the prompt's words, each count the format can report.
func TestRequest(t *testing.T) {
	for _, f := range Formats() {
		srv := httptest.NewServer(New(f, fast))
		r := post(t, srv, f.Path(), "application/json", string(f.Request("m", "one two three", 4)))
		srv.Close()
		if r.status != http.StatusOK || tokenEvents(r.body) != 4 {
			t.Errorf("%s: %d %q", f, r.status, r.body)
		}
		for _, count := range []string{"4", "3"} { // output, prompt
			if !regexp.MustCompile(`(completion_tokens|tokens_predicted|generated_tokens|eval_count)":` + count + `\b|(prompt_tokens|tokens_evaluated|input_length|prompt_eval_count)":` + count + `\b`).MatchString(r.body) {
				t.Errorf("%s: no count %s in %q", f, count, r.body)
			}
		}
	}
}

// EmptyEvery: vLLM writes every k-th answer token but the last with empty
// text, its text leaving with the next token, and counts it in its usage;
// the other formats answer 501.
func TestEmptyEvery(t *testing.T) {
	o := fast
	o.EmptyEvery = 3
	for _, f := range Formats() {
		h := New(f, o)
		srv := httptest.NewServer(h)
		r := post(t, srv, f.Path(), "application/json", streamBody(f, 7))
		srv.Close()
		if f != VLLMChat && f != VLLMCompletions {
			if r.status != http.StatusNotImplemented {
				t.Errorf("%s: %d %q, want 501", f, r.status, r.body)
			}
			continue
		}
		key := map[Format]string{VLLMChat: "content", VLLMCompletions: "text"}[f]
		// Tokens 3 and 6 (from 1) are empty; 4 and 7 carry them. The role
		// chunk's content "" is vLLM chat's own, not a token's.
		empty := strings.Count(r.body, `"`+key+`":""`)
		if f == VLLMChat {
			empty-- // the role chunk
		}
		if r.status != http.StatusOK || empty != 2 || !strings.Contains(r.body, `"`+key+`":" tok3 tok4"`) ||
			!strings.Contains(r.body, `"`+key+`":" tok6 tok7"`) || !strings.Contains(r.body, `"completion_tokens":7}`) {
			t.Errorf("%s: %d empty events in %q; want 2, tok3 with tok4, tok6 with tok7, usage 7", f, empty, r.body)
		}
		if st := h.Stats(); st.Tokens != 7 || st.Completed != 1 {
			t.Errorf("%s: stats %+v", f, st)
		}
	}
}

// LlamaCppErrorLine: CutError on llama.cpp's formats writes older
// llama.cpp's "error: {…}" line after the tokens so far, then [DONE] on
// chat only; without the option it is not scripted.
func TestLlamaCppErrorLine(t *testing.T) {
	for _, line := range []bool{false, true} {
		o := fast
		o.Cut, o.CutAfter, o.LlamaCppErrorLine = CutError, 2, line
		for _, f := range []Format{LlamaCppCompletion, LlamaCppChat} {
			h := New(f, o)
			srv := httptest.NewServer(h)
			r := post(t, srv, f.Path(), "application/json", streamBody(f, 4))
			srv.Close()
			if !line {
				if r.status != http.StatusNotImplemented {
					t.Errorf("%s without the option: %d %q, want 501", f, r.status, r.body)
				}
				continue
			}
			tail := llamaErrorLine
			if f == LlamaCppChat {
				tail += "data: [DONE]\n\n"
			}
			if r.status != http.StatusOK || tokenEvents(r.body) != 2 || !strings.HasSuffix(r.body, "\n\n"+tail) {
				t.Errorf("%s: %d, %d tokens, body %q; want 200, 2 tokens, ending %q", f, r.status, tokenEvents(r.body), r.body, tail)
			}
			if st := h.Stats(); st.Cut != 1 || st.Tokens != 2 {
				t.Errorf("%s: stats %+v", f, st)
			}
		}
	}
}
