package scripted

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Format is one model server's wire format for one endpoint.
type Format int

// The formats, one per server endpoint. Each one's doc names where its
// bytes come from; doc.go has the full list of sources.
const (
	// VLLMChat is vLLM's OpenAI-compatible POST /v1/chat/completions.
	VLLMChat Format = iota
	// VLLMCompletions is vLLM's OpenAI-compatible POST /v1/completions.
	VLLMCompletions
	// TGIGenerateStream is TGI's native POST /generate_stream.
	TGIGenerateStream
	// TGIChat is TGI's OpenAI-compatible POST /v1/chat/completions.
	TGIChat
	// LlamaCppCompletion is llama.cpp server's native POST /completion.
	LlamaCppCompletion
	// LlamaCppChat is llama.cpp server's OpenAI-compatible POST
	// /v1/chat/completions.
	LlamaCppChat
	// OllamaOpenAIChat is Ollama's OpenAI-compatible POST
	// /v1/chat/completions (its openai middleware in front of /api/chat).
	OllamaOpenAIChat
	// OllamaGenerate is Ollama's native POST /api/generate.
	OllamaGenerate
	// OllamaChat is Ollama's native POST /api/chat.
	OllamaChat

	numFormats
)

var formatInfo = [numFormats]struct{ name, server, path string }{
	VLLMChat:           {"vllm-chat", "vllm", "/v1/chat/completions"},
	VLLMCompletions:    {"vllm-completions", "vllm", "/v1/completions"},
	TGIGenerateStream:  {"tgi-generate-stream", "tgi", "/generate_stream"},
	TGIChat:            {"tgi-chat", "tgi", "/v1/chat/completions"},
	LlamaCppCompletion: {"llamacpp-completion", "llamacpp", "/completion"},
	LlamaCppChat:       {"llamacpp-chat", "llamacpp", "/v1/chat/completions"},
	OllamaOpenAIChat:   {"ollama-openai-chat", "ollama", "/v1/chat/completions"},
	OllamaGenerate:     {"ollama-generate", "ollama", "/api/generate"},
	OllamaChat:         {"ollama-chat", "ollama", "/api/chat"},
}

// Formats lists every format, in declaration order.
func Formats() []Format {
	fs := make([]Format, numFormats)
	for i := range fs {
		fs[i] = Format(i)
	}
	return fs
}

func (f Format) valid() bool { return f >= 0 && f < numFormats }

// String is the format's name, e.g. "vllm-chat".
func (f Format) String() string {
	if !f.valid() {
		return "Format(" + strconv.Itoa(int(f)) + ")"
	}
	return formatInfo[f].name
}

// Server names the model server the format belongs to: "vllm", "tgi",
// "llamacpp" or "ollama".
func (f Format) Server() string {
	if !f.valid() {
		return ""
	}
	return formatInfo[f].server
}

// Path is the URL path the format's streaming endpoint answers on.
func (f Format) Path() string {
	if !f.valid() {
		return ""
	}
	return formatInfo[f].path
}

// CutMode says how a stream is stopped early (see Options.Cut).
type CutMode int

const (
	// CutNone never cuts: every stream runs to its final event.
	CutNone CutMode = iota
	// CutClose drops the connection after Options.CutAfter tokens: the
	// chunked body is never terminated, so the client reads an unexpected
	// EOF, as when a server process dies mid-answer.
	CutClose
	// CutEnd ends the body cleanly (the terminating chunk is sent) after
	// Options.CutAfter tokens, without the final event (no [DONE], no
	// done/stop/usage line), as when a proxy closes a stream politely.
	CutEnd
	// CutError writes the server's own error event for a failure during
	// generation after Options.CutAfter tokens, and ends the body as that
	// server then does (doc.go, "Counting and cuts"). Formats whose
	// mid-stream error is not scripted answer 501, as does Ollama's for a
	// failure before its first line (Ollama then answers 500 instead).
	CutError
)

// Options is the known answer a scripted server gives. The zero value is
// usable: model "scripted-model", no delays, no cut.
type Options struct {
	// Model is the served model name. A request naming another model gets
	// the server's own refusal where that server refuses (vLLM, Ollama);
	// TGI and llama.cpp accept any name (see doc.go).
	Model string
	// Prefill is the time to first token, counted from when the request
	// body has been read and accepted.
	Prefill time.Duration
	// ITL is the gap between one token and the next.
	ITL time.Duration
	// ContextLen stands for the model's context window (vLLM
	// max_model_len, TGI max_total_tokens, llama.cpp n_ctx): where a
	// request gives no output-token count and the server's default is
	// "until the context is full", the answer has ContextLen − prompt
	// tokens (at least 1). Zero means 256.
	ContextLen int
	// Cut stops streams early; CutAfter is the number of token events
	// written before the cut (0 cuts right after the headers). A stream
	// with no more than CutAfter tokens is not cut.
	Cut      CutMode
	CutAfter int
	// Thinking makes the first Thinking tokens of every answer the
	// model's thinking, where the format streams it apart from the
	// content (Ollama's native endpoints: the "thinking" field, with
	// empty content; vLLM chat: delta.reasoning; llama.cpp chat:
	// delta.reasoning_content); the server's output-token count includes
	// them, as the model generated them. Formats that do not stream
	// thinking apart answer 501 when it is set.
	Thinking int
	// Fingerprint overrides the system fingerprint a format writes (TGI
	// "<version>-native", llama.cpp "b<build>-<commit>"). Empty keeps the
	// per-format default documented in doc.go.
	Fingerprint string
	// EmptyEvery makes every EmptyEvery-th answer token (the k-th, 2k-th,
	// … counted from 1, never the last) an event whose text is empty, as
	// vLLM writes a token whose text its detokenizer holds back (an
	// incomplete multi-byte character); the held text leaves with the
	// next token's event, and the usage count still counts the token.
	// vLLM's formats only; the others answer 501 when it is set.
	EmptyEvery int
	// LlamaCppErrorLine gives llama.cpp's formats a failure for Cut
	// CutError: older llama.cpp's "error: {…}" SSE line (then, on chat,
	// "data: [DONE]"). Without it CutError answers 501 there.
	LlamaCppErrorLine bool

	// The transport (transport.go, doc.go "Transport"): none of it is
	// on in the zero value.
	//
	// Plain, when > 0, makes PlainPath answer any method with Plain bytes
	// of text/plain (a known pattern), after reading and counting the
	// request body whatever its size (Stats.BodyBytes). Prefill does not
	// apply to it.
	Plain int
	// PlainChunks, when > 1, writes the plain answer in that many
	// flushed pieces, ITL apart, without a Content-Length (chunked on
	// HTTP/1.1).
	PlainChunks int
	// PlainSized sends the pieces of PlainChunks with a Content-Length
	// (not chunked): a body that arrives in parts a client must count.
	PlainSized bool
	// PlainStatus is the plain answer's status; 0 means 200.
	PlainStatus int
	// HeadDelay passes between reading a request and writing anything of
	// its answer (the head, a stream's Prefill included, comes after
	// it): a stall before the first byte.
	HeadDelay time.Duration
	// Informational, when a 1xx status, is written as soon as the
	// request is read, before HeadDelay and the answer's own head.
	Informational int
	// Pause is added before the token (or plain piece) that follows the
	// first PauseAfter (PauseAfter > 0): a pause mid-stream.
	Pause      time.Duration
	PauseAfter int
	// CloseAfter, when > 0, makes every CloseAfter-th answer on a
	// connection its last: "Connection: close" on HTTP/1.1, GOAWAY on
	// HTTP/2 (Stats.CloseAsked counts them).
	CloseAfter int

	// Pieces, when > 0, gives the server a tokenizer of its own, neither
	// cl100k_base nor a word count: a whitespace-separated word is
	// ⌈bytes/Pieces⌉ tokens, and every prompt begins with one BOS token,
	// as Llama-family tokenizers add. The answers' prompt-token counts
	// and the server's /tokenize (tokenize.go: vLLM's, TGI's and
	// llama.cpp's, each in its own shape, with the BOS where that server
	// adds special tokens) count so. Zero counts words, without a BOS.
	Pieces int
}

const defaultModel = "scripted-model"

// Route is a request's method, path and the status it was answered with.
type Route struct {
	Method string
	Path   string
	Status int
}

// Stats is what a server received and wrote, as the server saw it.
type Stats struct {
	// Requests counts requests whose body was read to the end, whatever
	// their answer.
	Requests int
	// Routes counts those requests by method, path and the status
	// answered (for a stream, 200 from when it is accepted, even if the
	// client leaves before a head that is sent with the first token).
	Routes map[Route]int
	// Tokens counts token events written and flushed to the client.
	Tokens int
	// Streams counts answers accepted for generation: streams, and
	// Ollama's aggregated "stream": false answers. Each ends as exactly
	// one of Completed, Cut or Gone.
	Streams int
	// Completed counts streams that wrote their final event.
	Completed int
	// Cut counts streams stopped by Options.Cut.
	Cut int
	// Gone counts streams that stopped because the client went away.
	Gone int
	// BodyBytes counts the request body bytes read, of every request.
	BodyBytes int64
	// CloseAsked counts answers that closed their connection
	// (Options.CloseAfter).
	CloseAsked int
}

// Server is an http.Handler that answers one Format's endpoint (plus the
// server's model listing) with scripted bytes. It is safe for concurrent
// use.
type Server struct {
	f Format
	o Options

	mu    sync.Mutex
	st    Stats
	conns map[string]int // answers per connection (remote address), for Options.CloseAfter
	log   []Exchange     // Log
}

// New returns a server for format f. It panics on a Format not in
// Formats(), which is a programming error.
func New(f Format, o Options) *Server {
	if !f.valid() {
		panic("scripted: unknown " + f.String())
	}
	if o.Model == "" {
		o.Model = defaultModel
	}
	if o.ContextLen <= 0 {
		o.ContextLen = 256
	}
	return &Server{f: f, o: o, st: Stats{Routes: map[Route]int{}}}
}

// Format is the format the server speaks.
func (s *Server) Format() Format { return s.f }

// Stats returns a copy of the counts so far.
func (s *Server) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.st
	st.Routes = maps.Clone(s.st.Routes)
	return st
}

func (s *Server) count(r *http.Request, status int) {
	s.mu.Lock()
	s.st.Requests++
	s.st.Routes[Route{r.Method, r.URL.Path, status}]++
	s.mu.Unlock()
}

func (s *Server) add(fn func(*Stats)) {
	s.mu.Lock()
	fn(&s.st)
	s.mu.Unlock()
}

// ServeHTTP answers the format's endpoint, GET /v1/models, and for Ollama
// GET /api/tags; anything else is a plain 404 that is still counted.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		// Not received whole, so not counted as read.
		return
	}
	lw := &logWriter{ResponseWriter: w, ex: Exchange{Header: r.Header.Clone(), Read: time.Now()}} // transport.go
	defer s.logged(lw)
	w = lw
	if s.transport(w, r, len(body)) {
		return
	}
	h := s.route(r)
	if h == nil {
		s.reply(w, r, http.StatusNotFound, "text/plain; charset=utf-8", []byte("404 page not found\n"))
		return
	}
	h(w, r, body)
}

type handler func(w http.ResponseWriter, r *http.Request, body []byte)

func (s *Server) route(r *http.Request) handler {
	switch {
	case r.Method == http.MethodPost && r.URL.Path == s.f.Path():
		return s.formatHandler()
	case r.Method == http.MethodGet && r.URL.Path == "/v1/models":
		return s.models
	case r.Method == http.MethodGet && r.URL.Path == "/api/tags" && s.f.Server() == "ollama":
		return s.ollamaTags
	case r.Method == http.MethodPost && r.URL.Path == "/tokenize":
		return s.tokenizeRoute() // tokenize.go; nil for Ollama's
	}
	return nil
}

func (s *Server) formatHandler() handler {
	switch s.f {
	case VLLMChat:
		return s.vllmChat
	case VLLMCompletions:
		return s.vllmCompletions
	case TGIGenerateStream:
		return s.tgiGenerateStream
	case TGIChat:
		return s.tgiChat
	case LlamaCppCompletion:
		return s.llamaCompletion
	case LlamaCppChat:
		return s.llamaChat
	case OllamaOpenAIChat:
		return s.ollamaOpenAIChat
	case OllamaGenerate:
		return s.ollamaGenerate
	default:
		return s.ollamaChat
	}
}

func (s *Server) models(w http.ResponseWriter, r *http.Request, _ []byte) {
	switch s.f.Server() {
	case "vllm":
		s.vllmModels(w, r)
	case "tgi":
		s.tgiModels(w, r)
	case "llamacpp":
		s.llamaModels(w, r)
	default:
		s.ollamaModels(w, r)
	}
}

// reply writes a whole (non-streamed) answer and counts it.
func (s *Server) reply(w http.ResponseWriter, r *http.Request, status int, contentType string, body []byte) {
	s.count(r, status)
	w.Header().Set("Content-Type", contentType)
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// notScripted answers requests the script does not cover (non-streaming
// requests to OpenAI-style endpoints, malformed JSON), so that a test that
// strays off the script fails loudly instead of reading invented bytes.
func (s *Server) notScripted(w http.ResponseWriter, r *http.Request, why string) {
	s.reply(w, r, http.StatusNotImplemented, "text/plain; charset=utf-8",
		[]byte("scripted "+s.f.String()+": not scripted: "+why+"\n"))
}

// timing is what a format's final event reports about one answer.
type timing struct {
	read   time.Time // request body read and accepted
	first  time.Time // first token written
	last   time.Time // last token written
	prompt int       // prompt tokens
	n      int       // output tokens
}

// plan is one streamed answer: the events to write around n tokens.
type plan struct {
	header http.Header
	// early sends the status and headers before Prefill, as servers whose
	// framework writes the head as soon as the handler returns a stream.
	early bool
	n     int
	// token returns the bytes for token i (0-based); they may carry a
	// leading event that is not a token (vLLM's role chunk).
	token func(i int) []byte
	// final returns the bytes after the last token, nil for none.
	final func(t timing) []byte
	// failure is the format's error event for a failure during
	// generation and what follows it (Options.Cut CutError); nil where
	// it is not scripted.
	failure []byte
	// thinks says the format streams Options.Thinking apart.
	thinks bool
}

// stream writes p, flushing each event so arrival times are real.
func (s *Server) stream(w http.ResponseWriter, r *http.Request, prompt int, p plan) {
	if p.n < 1 {
		s.notScripted(w, r, "fewer than 1 output token asked")
		return
	}
	cutAt := -1
	if s.o.Cut != CutNone && s.o.CutAfter < p.n {
		cutAt = max(s.o.CutAfter, 0)
	}
	if s.o.Cut == CutError && cutAt >= 0 && (p.failure == nil || cutAt == 0 && !p.early) {
		s.notScripted(w, r, "an error event here")
		return
	}
	if s.o.Thinking > 0 && !p.thinks {
		s.notScripted(w, r, "thinking streamed apart")
		return
	}
	read := time.Now()
	ctx := r.Context()
	fl, _ := w.(http.Flusher)
	maps.Copy(w.Header(), p.header)
	s.count(r, http.StatusOK)
	s.add(func(st *Stats) { st.Streams++ })
	started := false
	start := func() {
		if !started {
			started = true
			w.WriteHeader(http.StatusOK)
		}
	}
	send := func(b []byte) bool {
		start()
		if _, err := w.Write(b); err != nil {
			return false
		}
		if fl != nil {
			fl.Flush()
		}
		return ctx.Err() == nil
	}
	gone := func() { s.add(func(st *Stats) { st.Gone++ }) }
	if p.early {
		start()
		if fl != nil {
			fl.Flush()
		}
	}
	t := timing{read: read, prompt: prompt, n: p.n}
	for i := range p.n {
		if i == cutAt {
			s.cut(w, r, send, start, fl, p.failure)
			return
		}
		gap := s.o.ITL
		if i == 0 {
			gap = s.o.Prefill
		}
		gap += s.pauseBefore(i) // transport.go
		if !sleep(ctx, gap) {
			gone()
			return
		}
		if !send(p.token(i)) {
			gone()
			return
		}
		now := time.Now()
		tokenWritten(w) // transport.go
		if i == 0 {
			t.first = now
		}
		t.last = now
		s.add(func(st *Stats) { st.Tokens++ })
	}
	if cutAt == p.n {
		s.cut(w, r, send, start, fl, p.failure)
		return
	}
	if p.final != nil {
		if b := p.final(t); b != nil && !send(b) {
			gone()
			return
		}
	}
	start()
	s.add(func(st *Stats) { st.Completed++ })
}

func (s *Server) cut(w http.ResponseWriter, r *http.Request, send func([]byte) bool, start func(), fl http.Flusher, failure []byte) {
	if s.o.Cut == CutError {
		// A client gone by now changes nothing: the stream was cut.
		send(failure)
	}
	start()
	if fl != nil {
		fl.Flush()
	}
	s.add(func(st *Stats) { st.Cut++ })
	if s.o.Cut == CutClose {
		// net/http closes the connection without the last chunk and
		// does not log this panic.
		panic(http.ErrAbortHandler)
	}
	s.cutTransport(w, r) // CutReset, CutHang: transport.go
}

// sleep waits d unless ctx ends first; it reports whether d passed.
func sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-tm.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// tokenText is token i's text: " tok1", " tok2", … (a leading space, like
// most BPE vocabularies' word tokens).
func tokenText(i int) string { return " tok" + strconv.Itoa(i+1) }

// tokenID is token i's id in formats that report ids.
func tokenID(i int) int { return 1000 + i }

// allText is the concatenated text of the first n tokens.
func allText(n int) string { return tokensText(0, n) }

// tokensText is the concatenated text of tokens from to to, to excluded.
func tokensText(from, to int) string {
	var b strings.Builder
	for i := from; i < to; i++ {
		b.WriteString(tokenText(i))
	}
	return b.String()
}

// promptTokens is the scripted prompt-token count: the number of
// whitespace-separated words in the prompt text (all message contents for
// chat), at least 1; with Options.Pieces, the scripted tokenizer's tokens
// of those words and the BOS (pieces). Real servers count their
// tokenizer's tokens over the templated prompt; the rule only has to be
// known to the test.
func (s *Server) promptTokens(text string) int {
	ids, _ := s.pieces(text, true)
	return max(1, len(ids))
}

// defaultTokens is the answer length where the server's own default is
// "until the context is full".
func (s *Server) defaultTokens(prompt int) int { return max(1, s.o.ContextLen-prompt) }

// chatText joins the text of OpenAI-style messages: string contents, and
// the "text" of content parts.
func chatText(msgs []chatMessage) string {
	var parts []string
	for _, m := range msgs {
		var str string
		if json.Unmarshal(m.Content, &str) == nil {
			parts = append(parts, str)
			continue
		}
		var ps []struct {
			Text string `json:"text"`
		}
		if json.Unmarshal(m.Content, &ps) == nil {
			for _, p := range ps {
				parts = append(parts, p.Text)
			}
		}
	}
	return strings.Join(parts, " ")
}

type chatMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

// promptText is a completion prompt as text: a string, a list of strings,
// or token ids (each id counts as one word).
func promptText(raw json.RawMessage) string {
	var str string
	if json.Unmarshal(raw, &str) == nil {
		return str
	}
	var list []any
	if json.Unmarshal(raw, &list) != nil {
		return ""
	}
	var parts []string
	for _, v := range list {
		parts = append(parts, fmt.Sprint(v))
	}
	return strings.Join(parts, " ")
}

// intField returns the first of the fields present (and not null) as an
// int, and whether one was.
func intField(fields map[string]json.RawMessage, names ...string) (int, bool) {
	for _, n := range names {
		raw, ok := fields[n]
		if !ok || string(raw) == "null" {
			continue
		}
		var v int
		if json.Unmarshal(raw, &v) == nil {
			return v, true
		}
	}
	return 0, false
}

func boolField(fields map[string]json.RawMessage, name string) bool {
	var v bool
	_ = json.Unmarshal(fields[name], &v)
	return v
}

func stringField(fields map[string]json.RawMessage, name string) (string, bool) {
	raw, ok := fields[name]
	if !ok || string(raw) == "null" {
		return "", false
	}
	var v string
	if json.Unmarshal(raw, &v) != nil {
		return "", false
	}
	return v, true
}

// includeUsage reads stream_options.include_usage.
func includeUsage(fields map[string]json.RawMessage) bool {
	var so struct {
		IncludeUsage bool `json:"include_usage"`
	}
	_ = json.Unmarshal(fields["stream_options"], &so)
	return so.IncludeUsage
}

func decodeFields(body []byte) (map[string]json.RawMessage, bool) {
	var m map[string]json.RawMessage
	if json.Unmarshal(body, &m) != nil || m == nil {
		return nil, false
	}
	return m, true
}

// Request is a streaming request body that asks format f for n output
// tokens in answer to prompt, naming model where the format has a model
// field, and asking for every count the format can report
// (stream_options.include_usage, TGI's parameters.details), so that a
// test can read the answer's known counts: n output tokens, and prompt
// tokens the words of prompt.
func (f Format) Request(model, prompt string, n int) []byte {
	ns, p := itoa(n), q(prompt)
	msgs := array(object("role", q("user"), "content", p))
	usage := object("include_usage", "true")
	var b string
	switch f {
	case VLLMCompletions:
		b = object("model", q(model), "prompt", p, "max_tokens", ns, "stream", "true", "stream_options", usage)
	case TGIGenerateStream:
		b = object("inputs", p, "parameters", object("max_new_tokens", ns, "details", "true"))
	case LlamaCppCompletion:
		b = object("prompt", p, "n_predict", ns, "stream", "true")
	case OllamaGenerate:
		b = object("model", q(model), "prompt", p, "options", object("num_predict", ns))
	case OllamaChat:
		b = object("model", q(model), "messages", msgs, "options", object("num_predict", ns))
	default: // the OpenAI chat formats
		b = object("model", q(model), "messages", msgs, "max_tokens", ns, "stream", "true", "stream_options", usage)
	}
	return []byte(b)
}
