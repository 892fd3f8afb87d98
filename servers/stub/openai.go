package stub

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/openload/openload/internal/prompt"
)

// The OpenAI-compatible endpoints, as model servers (vLLM, TGI, llama.cpp's
// server, Ollama) serve them. See the package documentation, "Streamed
// answers", for the contract.
const (
	pathChat        = "/v1/chat/completions"
	pathCompletions = "/v1/completions"
	pathModels      = "/v1/models"
	pathTokenize    = "/tokenize" // vLLM's, outside /v1

	// maxModelLen is the max_model_len POST /tokenize reports. The stub
	// has no context window and checks no prompt against it: it is a
	// plausible value (128 Ki tokens) for clients that read one.
	maxModelLen = 1 << 17

	// stubModelID is the one model GET /v1/models lists. Requests may name
	// any model: answers echo the name asked for.
	stubModelID = "openload-stub"
)

// serveOpenAI serves the OpenAI-compatible paths and reports whether r was
// one of them.
func (s *Server) serveOpenAI(w http.ResponseWriter, r *http.Request) bool {
	switch r.URL.Path {
	case pathModels:
		if r.Method != http.MethodGet {
			w.Header().Set("Allow", http.MethodGet)
			writeOAError(w, http.StatusMethodNotAllowed, &oaError{Message: "use GET for " + pathModels, Type: "invalid_request_error"})
			return true
		}
		s.serveModels(w)
		return true
	case pathTokenize:
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", http.MethodPost)
			writeOAError(w, http.StatusMethodNotAllowed, &oaError{Message: "use POST for " + pathTokenize, Type: "invalid_request_error"})
			return true
		}
		s.serveTokenize(w, r)
		return true
	case pathChat, pathCompletions:
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", http.MethodPost)
			writeOAError(w, http.StatusMethodNotAllowed, &oaError{Message: "use POST for " + r.URL.Path, Type: "invalid_request_error"})
			return true
		}
		s.serveTokens(w, r, r.URL.Path == pathChat)
		return true
	}
	return false
}

func (s *Server) serveModels(w http.ResponseWriter) {
	type model struct {
		ID      string `json:"id"`
		Object  string `json:"object"`
		Created int64  `json:"created"`
		OwnedBy string `json:"owned_by"`
	}
	body := struct {
		Object string  `json:"object"`
		Data   []model `json:"data"`
	}{"list", []model{{stubModelID, "model", time.Now().Unix(), "openload"}}}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(body)
}

// oaError is the body of an OpenAI error answer, {"error": {...}}.
type oaError struct {
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Param   *string `json:"param"`
	Code    *string `json:"code"`
}

func badRequest(param, format string, args ...any) *oaError {
	e := &oaError{Message: fmt.Sprintf(format, args...), Type: "invalid_request_error"}
	if param != "" {
		e.Param = &param
	}
	return e
}

func writeOAError(w http.ResponseWriter, status int, e *oaError) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(struct {
		Error *oaError `json:"error"`
	}{e})
}

// oaRequest is the part of a completion request the stub reads; other
// fields (temperature, top_p, stop, …) are accepted and ignored.
type oaRequest struct {
	Model               *string         `json:"model"`
	Messages            []oaMessage     `json:"messages"` // chat
	Prompt              json.RawMessage `json:"prompt"`   // completions
	MaxTokens           *int            `json:"max_tokens"`
	MaxCompletionTokens *int            `json:"max_completion_tokens"` // chat: newer name of max_tokens
	N                   *int            `json:"n"`
	Stream              *bool           `json:"stream"`
	StreamOptions       *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
}

type oaMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"` // a string, or an array of parts
}

// tokenCall is one validated completion request and how its answer went.
type tokenCall struct {
	chat         bool
	model        string
	id           string
	created      int64
	stream       bool
	includeUsage bool
	prompt       int // prompt tokens
	output       int // output tokens to generate
	finish       string
	ids          []uint64 // with the prefix cache on: the prompt's tokens (promptIDs)
	cached       int      // prompt tokens found in the prefix cache

	completed    bool // the model answer was written to its end
	stallCounted bool // counted in Stats.StalledRequests
	cut          bool // the stream stopped before its end
}

// countStalled counts c in StalledRequests, once.
func (s *Server) countStalled(c *tokenCall) {
	if c.stallCounted {
		return
	}
	c.stallCounted = true
	s.statsMu.Lock()
	s.counts.stalled++
	s.statsMu.Unlock()
}

// parseTokenRequest reads and validates the body of a completion request.
func parseTokenRequest(r *http.Request, chat bool, cfg Config) (*tokenCall, *oaError) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	if err != nil {
		return nil, badRequest("", "reading the request body: %v", err)
	}
	if len(body) > maxBody {
		return nil, badRequest("", "the request body exceeds %d bytes", maxBody)
	}
	var req oaRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, badRequest("", "the request body is not valid JSON for this endpoint: %v", err)
	}
	if req.Model == nil || *req.Model == "" {
		return nil, badRequest("model", "you must provide a model parameter")
	}
	c := &tokenCall{chat: chat, model: *req.Model, output: cfg.OutputTokens, finish: "stop"}
	maxTok, param := req.MaxTokens, "max_tokens"
	if chat && req.MaxCompletionTokens != nil {
		maxTok, param = req.MaxCompletionTokens, "max_completion_tokens"
	}
	if maxTok != nil {
		if *maxTok <= 0 || *maxTok > maxOutputTokens {
			return nil, badRequest(param, "%s must be in 1..%d, got %d", param, maxOutputTokens, *maxTok)
		}
		c.output, c.finish = *maxTok, "length"
	}
	if req.N != nil && *req.N != 1 {
		return nil, badRequest("n", "the stub answers n=1 only, got %d", *req.N)
	}
	c.stream = req.Stream != nil && *req.Stream
	if req.StreamOptions != nil {
		if !c.stream {
			return nil, badRequest("stream_options", "stream_options is only allowed when stream is true")
		}
		c.includeUsage = req.StreamOptions.IncludeUsage
	}
	var perr *oaError
	switch {
	case cfg.PrefixCacheTokens > 0:
		// The ids are needed only to hash the prompt's blocks; counting
		// them gives the same prompt_tokens as counting alone does.
		c.ids, perr = promptIDs(req, chat)
		c.prompt = len(c.ids)
	case chat:
		c.prompt, perr = chatPromptTokens(req.Messages)
	default:
		c.prompt, perr = completionPromptTokens(req.Prompt)
	}
	if perr != nil {
		return nil, perr
	}
	return c, nil
}

// promptIDs returns the tokens of a prompt as the prefix cache sees them:
// cl100k_base ids, each tagged (above bit 32) with the role of the chat
// message it comes from (roleTag), the messages in order. The stub has no
// chat template: the tag stands for the role markers a template would
// write, so that the same text from the user and from the assistant does
// not share blocks, while the count stays the prompt_tokens reported. A
// chat's turn k+1 then begins with exactly turn k's prompt and answer
// (answerIDs), as a template's rendering does. A completions prompt is
// untagged: a string's ids, the strings' ids in turn, or the token ids
// given (an array of arrays concatenated).
func promptIDs(req oaRequest, chat bool) ([]uint64, *oaError) {
	var ids []uint64
	addText := func(tag uint64, text string) {
		for _, id := range prompt.Tokens(text) {
			ids = append(ids, tag|uint64(uint32(id)))
		}
	}
	if chat {
		parts, err := chatParts(req.Messages)
		if err != nil {
			return nil, err
		}
		for _, p := range parts {
			addText(roleTag(p.role), p.text)
		}
		return ids, nil
	}
	raw := req.Prompt
	if len(raw) == 0 || string(raw) == "null" {
		return nil, badRequest("prompt", "you must provide a prompt")
	}
	var text string
	if json.Unmarshal(raw, &text) == nil {
		addText(0, text)
		return ids, nil
	}
	var texts []string
	if json.Unmarshal(raw, &texts) == nil {
		for _, t := range texts {
			addText(0, t)
		}
		return ids, nil
	}
	var given []int64
	if json.Unmarshal(raw, &given) == nil {
		for _, id := range given {
			ids = append(ids, uint64(uint32(id)))
		}
		return ids, nil
	}
	var batches [][]int64
	if json.Unmarshal(raw, &batches) == nil {
		for _, b := range batches {
			for _, id := range b {
				ids = append(ids, uint64(uint32(id)))
			}
		}
		return ids, nil
	}
	_, err := completionPromptTokens(raw) // the one wording of the error
	return nil, err
}

// roleTag is the tag of a chat role's tokens in promptIDs: a hash of the
// role's name in the upper 32 bits (0 is left to completions).
func roleTag(role string) uint64 {
	h := fnv.New32a()
	h.Write([]byte(role))
	return uint64(h.Sum32()|1) << 32
}

// answerIDs returns the tokens of c's answer as the next turn's prompt
// will hold them: its text tokenized as a prompt is, tagged as an
// assistant message (chat) or untagged (completions).
func answerIDs(c *tokenCall) []uint64 {
	var text strings.Builder
	for k := range c.output {
		text.WriteString(tokenText(k))
	}
	var tag uint64
	if c.chat {
		tag = roleTag("assistant")
	}
	toks := prompt.Tokens(text.String())
	ids := make([]uint64, len(toks))
	for i, id := range toks {
		ids[i] = tag | uint64(uint32(id))
	}
	return ids
}

// cacheAnswer caches the blocks of c's prompt and answer once its last
// token is made, as vLLM caches the blocks decoding fills: all but the
// last token, which is sampled and never fed back (see prefixCache).
func (s *Server) cacheAnswer(c *tokenCall) {
	if s.pc == nil || c.ids == nil {
		return
	}
	all := append(c.ids[:len(c.ids):len(c.ids)], answerIDs(c)...)
	s.pc.touch(blockHashes(all, s.pc.block, len(all)-1))
}

// chatPromptTokens counts the prompt tokens of chat messages: the tokens
// of their text contents (chatTexts), with no chat template around them.
func chatPromptTokens(msgs []oaMessage) (int, *oaError) {
	texts, err := chatTexts(msgs)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, t := range texts {
		n += promptTokens(t)
	}
	return n, nil
}

// chatTexts returns the text contents of chat messages: a string, or the
// "text" of each part.
func chatTexts(msgs []oaMessage) ([]string, *oaError) {
	parts, err := chatParts(msgs)
	if err != nil {
		return nil, err
	}
	texts := make([]string, len(parts))
	for i, p := range parts {
		texts[i] = p.text
	}
	return texts, nil
}

// chatPart is one text content of a chat message, with the message's role.
type chatPart struct{ role, text string }

// chatParts returns the text contents of chat messages (as chatTexts
// does) with the role of each.
func chatParts(msgs []oaMessage) ([]chatPart, *oaError) {
	if len(msgs) == 0 {
		return nil, badRequest("messages", "messages must be a non-empty array")
	}
	var texts []chatPart
	for i, m := range msgs {
		if len(m.Content) == 0 || string(m.Content) == "null" {
			continue // e.g. an assistant message with tool calls only
		}
		var text string
		if err := json.Unmarshal(m.Content, &text); err == nil {
			texts = append(texts, chatPart{m.Role, text})
			continue
		}
		var parts []struct {
			Text string `json:"text"`
		}
		if err := json.Unmarshal(m.Content, &parts); err != nil {
			return nil, badRequest(fmt.Sprintf("messages[%d].content", i), "content must be a string or an array of parts")
		}
		for _, p := range parts {
			texts = append(texts, chatPart{m.Role, p.Text})
		}
	}
	return texts, nil
}

// completionPromptTokens counts the tokens of a completions prompt: a
// string (promptTokens), an array of strings (summed), an array of token
// ids (one each) or an array of such arrays.
func completionPromptTokens(raw json.RawMessage) (int, *oaError) {
	if len(raw) == 0 || string(raw) == "null" {
		return 0, badRequest("prompt", "you must provide a prompt")
	}
	var text string
	if json.Unmarshal(raw, &text) == nil {
		return promptTokens(text), nil
	}
	var texts []string
	if json.Unmarshal(raw, &texts) == nil {
		n := 0
		for _, t := range texts {
			n += promptTokens(t)
		}
		return n, nil
	}
	var ids []int64
	if json.Unmarshal(raw, &ids) == nil {
		return len(ids), nil
	}
	var batches [][]int64
	if json.Unmarshal(raw, &batches) == nil {
		n := 0
		for _, b := range batches {
			n += len(b)
		}
		return n, nil
	}
	return 0, badRequest("prompt", "prompt must be a string, an array of strings, an array of token ids or an array of such arrays")
}

// contentType is the Content-Type of an answer from source (nil c: not a
// completion request).
func (c *tokenCall) contentType(source Source) string {
	if c == nil || !c.stream || source == SourceLimiter {
		return "application/json"
	}
	return "text/event-stream"
}

// serveTokens serves one completion request: through the limiter, the gate
// and the queue as serveModel does; with a model slot, the prefill, then
// the tokens (streamed from respond, or generated before it), holding the
// slot until the last one.
func (s *Server) serveTokens(w http.ResponseWriter, r *http.Request, chat bool) {
	a := answer{arrived: time.Now()}
	if s.dl.on() {
		a.stamp = s.dl.arrival(r, a.arrived) // read at receipt
	}
	call, oerr := parseTokenRequest(r, chat, s.Config)
	if oerr != nil {
		// Not a model request: it is not counted in Stats.
		writeOAError(w, http.StatusBadRequest, oerr)
		return
	}
	call.created = a.arrived.Unix()
	call.id = "cmpl-stub-" + strconv.FormatUint(s.tok.ids.Add(1), 10)
	if chat {
		call.id = "chat" + call.id
	}
	a.tok = call
	if !s.enter() {
		http.Error(w, "stub: server closed", http.StatusServiceUnavailable)
		return
	}
	defer s.active.Done()
	ctx := r.Context()

	if s.limited(w, r, &a) || !s.gate(ctx, w, r, &a) {
		return
	}
	// granted: the sequence holds a model slot until its last token.
	s.tok.active.Add(1)
	start := time.Now()
	p := s.newPacer(ctx, start)
	defer p.stop()
	var hashes []uint64
	if s.pc != nil {
		hashes = blockHashes(call.ids, s.pc.block, len(call.ids))
		call.cached = s.pc.lookup(hashes, call.prompt)
	}
	prefill := s.Config.prefill(call.prompt - call.cached)
	if s.prefillHook != nil {
		s.prefillHook(call.prompt, call.cached, prefill)
	}
	ok := p.sleepUntil(start.Add(prefill))
	if ok && s.pc != nil {
		s.pc.touch(hashes) // the prompt's blocks, computed now
	}
	if ok && !call.stream {
		p.next = time.Now() // the first token
		for k := 1; k < call.output && ok; k++ {
			ok = p.nextToken()
		}
	}
	a.modelDur = time.Since(start)
	if ok {
		s.checkEarly(&a)
		// A prefill (or an answer) that ends inside a stall waits for its
		// end, as a model call does.
		var held time.Duration
		held, ok = s.holdStall(ctx)
		a.stallDur = held
		call.stallCounted = held > 0 // holdStall counted it
	}
	if ok {
		if p.stalled {
			s.countStalled(call)
		}
		a.source, a.reason = SourceModel, ReasonServed
		s.respond(w, r, &a)
	} else {
		s.abandon(w)
	}
	s.tok.active.Add(-1)
	s.release(ok && (call.completed || !call.stream))
	if call.cut {
		// The stream stopped early (Close, or the client went away): end
		// the connection without the chunked terminator, so that a client
		// still reading sees a cut, not an answer that merely lacks [DONE].
		panic(http.ErrAbortHandler)
	}
}

// writeTokens writes the body of a completion answer whose head respond
// has written: a stream paced token by token, or one JSON answer; a
// canned short answer for a fallback; an OpenAI error for the limiter.
func (s *Server) writeTokens(w http.ResponseWriter, r *http.Request, a *answer) {
	c := a.tok
	switch a.source {
	case SourceLimiter:
		_ = json.NewEncoder(w).Encode(struct {
			Error *oaError `json:"error"`
		}{&oaError{Message: "stub: rate limit reached (X-Stub-Source: limiter)", Type: "requests", Code: ptr("rate_limit_exceeded")}})
		return
	case SourceFallback:
		// The gate answers in the model's place at once: three tokens,
		// unpaced, marked by X-Stub-Source as every fallback is.
		fb := *c
		fb.output, fb.finish = 3, "stop"
		if fb.stream {
			e := newEventWriter(w, &fb)
			for k := range fb.output {
				e.token(k)
			}
			e.end()
			_ = e.flush()
			return
		}
		writeWhole(w, &fb)
		return
	}
	if !c.stream {
		s.cacheAnswer(c)
		writeWhole(w, c)
		s.tok.tokens.Add(int64(c.output))
		c.completed = true
		return
	}
	s.tok.streams.Add(1)
	e := newEventWriter(w, c)
	e.token(0)
	if e.flush() != nil {
		return
	}
	s.tok.tokens.Add(1)
	p := s.newPacer(r.Context(), time.Now())
	defer p.stop()
	var late time.Duration // the largest delay of a token past its due time
	for k := 1; k < c.output; k++ {
		if !p.nextToken() {
			c.cut = true
			return
		}
		e.token(k)
		if e.flush() != nil {
			return
		}
		late = max(late, time.Since(p.next))
		s.tok.tokens.Add(1)
	}
	if p.stalled {
		s.countStalled(c)
	}
	s.cacheAnswer(c)
	e.end()
	if e.flush() == nil {
		c.completed = true
		s.tok.completed.Add(1)
		s.tok.recordLate(late)
	}
}

func ptr[T any](v T) *T { return &v }

// The answer objects, as OpenAI's API reference gives them: a stream of
// chat.completion.chunk (chat) or text_completion (completions) objects,
// and a chat.completion or text_completion object unstreamed.
type (
	oaUsage struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
		TotalTokens      int `json:"total_tokens"`
		// PromptTokensDetails is written as vLLM writes it (vllm-project/vllm,
		// vllm/entrypoints/openai/chat_completion/serving.py and
		// completion/serving.py: "if self.enable_prompt_tokens_details and
		// num_cached_tokens: usage.prompt_tokens_details =
		// PromptTokenUsageInfo(cached_tokens=num_cached_tokens)"; the
		// protocol's UsageInfo.prompt_tokens_details: PromptTokenUsageInfo |
		// None = None): only when some prompt tokens were cached. vLLM's
		// stream chunks omit it otherwise (exclude_unset); its unstreamed
		// answer writes it null; the stub omits it in both, so that with
		// the cache off its bytes are what they were.
		PromptTokensDetails *oaPromptDetails `json:"prompt_tokens_details,omitempty"`
	}
	oaPromptDetails struct {
		CachedTokens int `json:"cached_tokens"`
	}
	oaDelta struct {
		Role    string  `json:"role,omitempty"`
		Content *string `json:"content,omitempty"`
	}
	oaMessageOut struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	}
	oaChoice struct {
		Index        int           `json:"index"`
		Delta        *oaDelta      `json:"delta,omitempty"`   // chat chunks
		Message      *oaMessageOut `json:"message,omitempty"` // chat answers
		Text         *string       `json:"text,omitempty"`    // completions
		Logprobs     *struct{}     `json:"logprobs"`
		FinishReason *string       `json:"finish_reason"`
	}
	oaAnswer struct {
		ID      string     `json:"id"`
		Object  string     `json:"object"`
		Created int64      `json:"created"`
		Model   string     `json:"model"`
		Choices []oaChoice `json:"choices"`
		Usage   *oaUsage   `json:"usage"`
	}
)

func (c *tokenCall) usage() *oaUsage {
	u := &oaUsage{PromptTokens: c.prompt, CompletionTokens: c.output, TotalTokens: c.prompt + c.output}
	if c.cached > 0 {
		u.PromptTokensDetails = &oaPromptDetails{CachedTokens: c.cached}
	}
	return u
}

// writeWhole writes an unstreamed answer with its usage.
func writeWhole(w http.ResponseWriter, c *tokenCall) {
	var text strings.Builder
	for k := range c.output {
		text.WriteString(tokenText(k))
	}
	ans := oaAnswer{ID: c.id, Created: c.created, Model: c.model, Usage: c.usage()}
	choice := oaChoice{FinishReason: &c.finish}
	if c.chat {
		ans.Object = "chat.completion"
		choice.Message = &oaMessageOut{Role: "assistant", Content: text.String()}
	} else {
		ans.Object = "text_completion"
		t := text.String()
		choice.Text = &t
	}
	ans.Choices = []oaChoice{choice}
	_ = json.NewEncoder(w).Encode(ans)
}

// eventWriter writes the server-sent events of one stream: events are
// encoded into buf and written by flush, which also flushes the
// connection, so each token leaves when it is made.
type eventWriter struct {
	w   http.ResponseWriter
	rc  *http.ResponseController
	c   *tokenCall
	buf bytes.Buffer
	enc *json.Encoder
	ans oaAnswer
}

func newEventWriter(w http.ResponseWriter, c *tokenCall) *eventWriter {
	e := &eventWriter{w: w, rc: http.NewResponseController(w), c: c}
	e.enc = json.NewEncoder(&e.buf)
	e.ans = oaAnswer{ID: c.id, Object: "text_completion", Created: c.created, Model: c.model}
	if c.chat {
		e.ans.Object = "chat.completion.chunk"
	}
	return e
}

// event appends one "data: {…}" event.
func (e *eventWriter) event(choices []oaChoice, u *oaUsage) {
	e.ans.Choices, e.ans.Usage = choices, u
	e.buf.WriteString("data: ")
	_ = e.enc.Encode(&e.ans) // cannot fail: plain structs
	e.buf.WriteByte('\n')
}

// token appends the event of output token k; the first token of a chat
// answer is preceded by the role event, as OpenAI sends it.
func (e *eventWriter) token(k int) {
	t := tokenText(k)
	if e.c.chat {
		if k == 0 {
			empty := ""
			e.event([]oaChoice{{Delta: &oaDelta{Role: "assistant", Content: &empty}}}, nil)
		}
		e.event([]oaChoice{{Delta: &oaDelta{Content: &t}}}, nil)
		return
	}
	e.event([]oaChoice{{Text: &t}}, nil)
}

// end appends the finish event, the usage event when asked and [DONE].
func (e *eventWriter) end() {
	if e.c.chat {
		e.event([]oaChoice{{Delta: &oaDelta{}, FinishReason: &e.c.finish}}, nil)
	} else {
		empty := ""
		e.event([]oaChoice{{Text: &empty, FinishReason: &e.c.finish}}, nil)
	}
	if e.c.includeUsage {
		e.event([]oaChoice{}, e.c.usage())
	}
	e.buf.WriteString("data: [DONE]\n\n")
}

// flush writes the events appended so far and flushes the connection.
func (e *eventWriter) flush() error {
	_, err := e.w.Write(e.buf.Bytes())
	e.buf.Reset()
	if err != nil {
		return err
	}
	if err := e.rc.Flush(); err != nil && !errors.Is(err, http.ErrNotSupported) {
		return err
	}
	return nil
}
