package scripted

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"math/rand/v2"
	"net/http"
	"strings"
	"time"
)

// Ollama, read from github.com/ollama/ollama at fb307609 (2026-08-21).
// Ollama is Go, so the script marshals structs laid out as Ollama's with
// encoding/json, which gives the same bytes:
//
//   - api/types.go: GenerateResponse field order model, (remote_model,
//     remote_host,) created_at, response, (thinking,) done, done_reason,
//     context, then Metrics inline (total_duration, load_duration,
//     prompt_eval_count, prompt_eval_duration, eval_count, eval_duration,
//     all omitempty, durations in nanoseconds); ChatResponse model,
//     created_at, message {role, content}, done, done_reason, Metrics;
//     ListResponse/ListModelResponse/ModelDetails for /api/tags;
//     DefaultOptions NumPredict −1 (no limit: the script stops at
//     Options.ContextLen − prompt, where real Ollama would shift its
//     context and go on).
//   - server/routes.go: GenerateHandler and ChatHandler decode with
//     ShouldBindJSON (the Content-Type is never looked at); an empty body
//     is 400 {"error":"missing request body"}; a missing model is, for
//     /api/generate, parseAndValidateModelRef's ErrModelRequired mapped by
//     writeModelRefParseError to the unknown-model 404 with an empty name,
//     for /api/chat 400 {"error":"model is required"}; an unknown model
//     is 404 {"error":"model 'X' not found"} on both; errors are gin
//     c.JSON (application/json; charset=utf-8, no newline). Each runner
//     response becomes one line, Model being the name as the request gave
//     it and CreatedAt time.Now().UTC(); the last, Done, carries
//     done_reason, total_duration, load_duration and, for generate, the
//     context (prompt + answer token ids). streamResponse sets
//     application/x-ndjson and writes json.Marshal + "\n" per value (gin
//     sends the head with the first line). Unless "stream" is false; then
//     one c.JSON object with the whole response.
//     An error once lines were written (Options.Cut CutError) is
//     streamResponse's json.NewEncoder(c.Writer).Encode(gin.H{"error":
//     e}), after which the stream ends (the handler's goroutine sends
//     the runner's error, server/routes.go GenerateHandler and
//     ChatHandler); before the first line it would be a c.JSON 500, not
//     scripted. The error is llm/llama_server.go's "an error was
//     encountered while running the model: unexpected EOF", what
//     Completion returns when the runner's stream breaks off.
//   - Thinking (Options.Thinking): a model with the thinking capability
//     thinks unless the request says otherwise (routes.go sets Think to
//     true); its thinking goes in GenerateResponse.thinking (after
//     response, omitempty) and Message.thinking (after content), the
//     content left empty, and eval_count counts those tokens too.
//   - llm/llama_server.go: content arrives in responses without Done; the
//     final one (Done, empty content when streaming) carries the counts
//     and durations, done_reason "length" when llama-server stopped at the
//     limit (llm/server.go DoneReason.String).
//   - openai/openai.go and middleware/openai.go: ChatMiddleware refuses an
//     empty messages list (400 "[] is too short - 'messages'") and maps
//     max_tokens to options.num_predict; ChatWriter writes, per
//     response, "data: <chunk>\n\n" with id "chatcmpl-<rand.Intn(999)>",
//     object chat.completion.chunk, created pinned to the first response,
//     system_fingerprint "fp_ollama", the role only on the first chunk;
//     skips the empty Done trailer; then FinishChunk (delta {},
//     finish_reason the done reason), with include_usage the same chunk
//     with choices [] and usage, and "data: [DONE]\n\n". Errors from
//     ChatHandler go through writeError: openai.NewError (type
//     invalid_request_error for 400, not_found_error for 404; param and
//     code null) json-encoded with a trailing newline, Content-Type
//     application/json. /v1/models is ToListCompletion (owned_by is the
//     name's namespace, "library").
//
// Names compare as Ollama's model.ParseName fills them in: case-folded,
// default registry and "library/" namespace dropped, ":latest" added when
// no tag is given.

type ollamaMetrics struct {
	TotalDuration      time.Duration `json:"total_duration,omitempty"`
	LoadDuration       time.Duration `json:"load_duration,omitempty"`
	PromptEvalCount    int           `json:"prompt_eval_count,omitempty"`
	PromptEvalDuration time.Duration `json:"prompt_eval_duration,omitempty"`
	EvalCount          int           `json:"eval_count,omitempty"`
	EvalDuration       time.Duration `json:"eval_duration,omitempty"`
}

type ollamaGenerateResponse struct {
	Model      string    `json:"model"`
	CreatedAt  time.Time `json:"created_at"`
	Response   string    `json:"response"`
	Thinking   string    `json:"thinking,omitempty"`
	Done       bool      `json:"done"`
	DoneReason string    `json:"done_reason,omitempty"`
	Context    []int     `json:"context,omitempty"`
	ollamaMetrics
}

type ollamaMessage struct {
	Role     string `json:"role"`
	Content  string `json:"content"`
	Thinking string `json:"thinking,omitempty"`
}

type ollamaChatResponse struct {
	Model      string        `json:"model"`
	CreatedAt  time.Time     `json:"created_at"`
	Message    ollamaMessage `json:"message"`
	Done       bool          `json:"done"`
	DoneReason string        `json:"done_reason,omitempty"`
	ollamaMetrics
}

type ollamaRequest struct {
	Model    string        `json:"model"`
	Prompt   string        `json:"prompt"`
	Messages []chatMessage `json:"messages"`
	Stream   *bool         `json:"stream"`
	Options  struct {
		NumPredict *int `json:"num_predict"`
	} `json:"options"`
}

// ollamaName normalizes a model name as model.ParseName fills it in.
func ollamaName(n string) string {
	n = strings.ToLower(strings.TrimSpace(n))
	n = strings.TrimPrefix(n, "registry.ollama.ai/")
	n = strings.TrimPrefix(n, "library/")
	if i := strings.LastIndexByte(n, '/'); !strings.Contains(n[i+1:], ":") {
		n += ":latest"
	}
	return n
}

func ollamaJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic("scripted: " + err.Error()) // the script's own types always marshal
	}
	return b
}

func ollamaError(msg string) []byte { return ollamaJSON(map[string]string{"error": msg}) }

// ollamaFailure is streamResponse's line for an error once the stream
// has begun, json.NewEncoder(c.Writer).Encode(gin.H{"error": e}), after
// which it writes nothing more; e is what llm/llama_server.go's
// Completion returns when the runner's stream breaks off without a last
// error message of its own.
var ollamaFailure = append(ollamaError("an error was encountered while running the model: unexpected EOF"), '\n')

// ollamaSplit is the text of n tokens whose first thinking are the
// model's thinking: the content and the thinking.
func ollamaSplit(n, thinking int) (content, thought string) {
	k := min(n, thinking)
	return tokensText(k, n), tokensText(0, k)
}

const ginJSON = "application/json; charset=utf-8"

// ollamaAccept decodes the request and applies the handler's refusals; it
// returns the request and the answer length, or ok false once answered.
func (s *Server) ollamaAccept(w http.ResponseWriter, r *http.Request, body []byte, chat bool) (req ollamaRequest, prompt, n int, ok bool) {
	if s.noEmptyText(w, r) {
		return req, 0, 0, false
	}
	if len(body) == 0 {
		s.reply(w, r, http.StatusBadRequest, ginJSON, ollamaError("missing request body"))
		return req, 0, 0, false
	}
	if json.Unmarshal(body, &req) != nil {
		s.notScripted(w, r, "body does not decode")
		return req, 0, 0, false
	}
	switch {
	case strings.TrimSpace(req.Model) == "" && chat:
		s.reply(w, r, http.StatusBadRequest, ginJSON, ollamaError("model is required"))
		return req, 0, 0, false
	case ollamaName(req.Model) != ollamaName(s.o.Model):
		s.reply(w, r, http.StatusNotFound, ginJSON, ollamaError("model '"+req.Model+"' not found"))
		return req, 0, 0, false
	}
	text := req.Prompt
	if chat {
		text = chatText(req.Messages)
	}
	prompt = s.promptTokens(text)
	n = s.defaultTokens(prompt)
	if p := req.Options.NumPredict; p != nil && *p >= 0 {
		n = *p
	}
	return req, prompt, n, true
}

func (s *Server) ollamaMetrics(t timing, begin time.Time) ollamaMetrics {
	return ollamaMetrics{
		TotalDuration: time.Since(begin),
		// At least 1 ns: the scripted load is only the time to accept the
		// request, and omitempty would drop a zero.
		LoadDuration:       max(t.read.Sub(begin), 1),
		PromptEvalCount:    t.prompt,
		PromptEvalDuration: t.first.Sub(t.read),
		EvalCount:          t.n,
		EvalDuration:       t.last.Sub(t.first),
	}
}

func ollamaContext(prompt, n int) []int {
	ids := make([]int, 0, prompt+n)
	for i := range prompt {
		ids = append(ids, i+1)
	}
	for i := range n {
		ids = append(ids, tokenID(i))
	}
	return ids
}

func (s *Server) ollamaGenerate(w http.ResponseWriter, r *http.Request, body []byte) {
	begin := time.Now()
	req, prompt, n, ok := s.ollamaAccept(w, r, body, false)
	if !ok {
		return
	}
	final := func(t timing, response string) ollamaGenerateResponse {
		return ollamaGenerateResponse{Model: req.Model, CreatedAt: time.Now().UTC(), Response: response,
			Done: true, DoneReason: "length", Context: ollamaContext(prompt, n), ollamaMetrics: s.ollamaMetrics(t, begin)}
	}
	if req.Stream != nil && !*req.Stream {
		s.ollamaWhole(w, r, prompt, n, func(t timing) []byte {
			v := final(t, "")
			v.Response, v.Thinking = ollamaSplit(n, s.o.Thinking)
			return ollamaJSON(v)
		})
		return
	}
	s.stream(w, r, prompt, plan{
		header: http.Header{"Content-Type": {"application/x-ndjson"}},
		n:      n,
		token: func(i int) []byte {
			v := ollamaGenerateResponse{Model: req.Model, CreatedAt: time.Now().UTC()}
			if i < s.o.Thinking {
				v.Thinking = tokenText(i)
			} else {
				v.Response = tokenText(i)
			}
			return append(ollamaJSON(v), '\n')
		},
		final:   func(t timing) []byte { return append(ollamaJSON(final(t, "")), '\n') },
		failure: ollamaFailure,
		thinks:  true,
	})
}

func (s *Server) ollamaChat(w http.ResponseWriter, r *http.Request, body []byte) {
	begin := time.Now()
	req, prompt, n, ok := s.ollamaAccept(w, r, body, true)
	if !ok {
		return
	}
	final := func(t timing, content string) ollamaChatResponse {
		return ollamaChatResponse{Model: req.Model, CreatedAt: time.Now().UTC(),
			Message: ollamaMessage{Role: "assistant", Content: content}, Done: true, DoneReason: "length",
			ollamaMetrics: s.ollamaMetrics(t, begin)}
	}
	if req.Stream != nil && !*req.Stream {
		s.ollamaWhole(w, r, prompt, n, func(t timing) []byte {
			v := final(t, "")
			v.Message.Content, v.Message.Thinking = ollamaSplit(n, s.o.Thinking)
			return ollamaJSON(v)
		})
		return
	}
	s.stream(w, r, prompt, plan{
		header: http.Header{"Content-Type": {"application/x-ndjson"}},
		n:      n,
		token: func(i int) []byte {
			m := ollamaMessage{Role: "assistant"}
			if i < s.o.Thinking {
				m.Thinking = tokenText(i)
			} else {
				m.Content = tokenText(i)
			}
			return append(ollamaJSON(ollamaChatResponse{Model: req.Model, CreatedAt: time.Now().UTC(), Message: m}), '\n')
		},
		final:   func(t timing) []byte { return append(ollamaJSON(final(t, "")), '\n') },
		failure: ollamaFailure,
		thinks:  true,
	})
}

// ollamaWhole answers "stream": false: the tokens are generated at the
// scripted pace but only the aggregate is written, at the end.
func (s *Server) ollamaWhole(w http.ResponseWriter, r *http.Request, prompt, n int, body func(timing) []byte) {
	t := timing{read: time.Now(), prompt: prompt, n: n}
	s.add(func(st *Stats) { st.Streams++ })
	for i := range n {
		gap := s.o.ITL
		if i == 0 {
			gap = s.o.Prefill
		}
		if !sleep(r.Context(), gap) {
			s.count(r, http.StatusOK)
			s.add(func(st *Stats) { st.Gone++ })
			return
		}
		if i == 0 {
			t.first = time.Now()
		}
		t.last = time.Now()
	}
	s.reply(w, r, http.StatusOK, ginJSON, body(t))
	s.add(func(st *Stats) { st.Tokens += n; st.Completed++ })
}

type oaiDelta struct {
	Role    string `json:"role,omitempty"`
	Content any    `json:"content,omitempty"`
}

type oaiChoice struct {
	Index        int      `json:"index"`
	Delta        oaiDelta `json:"delta"`
	FinishReason *string  `json:"finish_reason"`
}

type oaiUsage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

type oaiChunk struct {
	ID                string      `json:"id"`
	Object            string      `json:"object"`
	Created           int64       `json:"created"`
	Model             string      `json:"model"`
	SystemFingerprint string      `json:"system_fingerprint"`
	Choices           []oaiChoice `json:"choices"`
	Usage             *oaiUsage   `json:"usage,omitempty"`
}

type oaiError struct {
	Error struct {
		Message string  `json:"message"`
		Type    string  `json:"type"`
		Param   any     `json:"param"`
		Code    *string `json:"code"`
	} `json:"error"`
}

// ollamaOpenAIError is openai.NewError as writeError encodes it.
func ollamaOpenAIError(status int, msg string, newline bool) []byte {
	var e oaiError
	e.Error.Message = msg
	switch status {
	case http.StatusBadRequest:
		e.Error.Type = "invalid_request_error"
	case http.StatusNotFound:
		e.Error.Type = "not_found_error"
	default:
		e.Error.Type = "api_error"
	}
	b := ollamaJSON(e)
	if newline {
		b = append(b, '\n')
	}
	return b
}

func (s *Server) ollamaOpenAIChat(w http.ResponseWriter, r *http.Request, body []byte) {
	var req struct {
		Model         string        `json:"model"`
		Messages      []chatMessage `json:"messages"`
		Stream        bool          `json:"stream"`
		MaxTokens     *int          `json:"max_tokens"`
		StreamOptions *struct {
			IncludeUsage bool `json:"include_usage"`
		} `json:"stream_options"`
	}
	if len(body) == 0 {
		// gin's decoder reports io.EOF; AbortWithStatusJSON answers
		// before the ChatWriter, so without a newline.
		s.reply(w, r, http.StatusBadRequest, ginJSON, ollamaOpenAIError(http.StatusBadRequest, "EOF", false))
		return
	}
	if json.Unmarshal(body, &req) != nil {
		s.notScripted(w, r, "body does not decode")
		return
	}
	if s.noEmptyText(w, r) {
		return
	}
	if len(req.Messages) == 0 {
		s.reply(w, r, http.StatusBadRequest, ginJSON,
			ollamaOpenAIError(http.StatusBadRequest, "[] is too short - 'messages'", false))
		return
	}
	switch {
	case strings.TrimSpace(req.Model) == "":
		s.reply(w, r, http.StatusBadRequest, "application/json",
			ollamaOpenAIError(http.StatusBadRequest, "model is required", true))
		return
	case ollamaName(req.Model) != ollamaName(s.o.Model):
		s.reply(w, r, http.StatusNotFound, "application/json",
			ollamaOpenAIError(http.StatusNotFound, "model '"+req.Model+"' not found", true))
		return
	}
	if !req.Stream {
		s.notScripted(w, r, `only "stream": true is scripted`)
		return
	}
	prompt := s.promptTokens(chatText(req.Messages))
	n := s.defaultTokens(prompt)
	if req.MaxTokens != nil && *req.MaxTokens >= 0 {
		n = *req.MaxTokens
	}
	id := "chatcmpl-" + itoa(rand.IntN(999))
	var created int64
	chunk := func(c oaiChunk) string { return "data: " + string(ollamaJSON(c)) + "\n\n" }
	base := func() oaiChunk {
		return oaiChunk{ID: id, Object: "chat.completion.chunk", Created: created, Model: req.Model,
			SystemFingerprint: "fp_ollama"}
	}
	s.stream(w, r, prompt, plan{
		header: http.Header{"Content-Type": {"text/event-stream"}},
		n:      n,
		token: func(i int) []byte {
			if i == 0 {
				created = time.Now().UTC().Unix()
			}
			c := base()
			c.Choices = []oaiChoice{{Delta: oaiDelta{Content: tokenText(i)}}}
			if i == 0 {
				c.Choices[0].Delta.Role = "assistant"
			}
			return []byte(chunk(c))
		},
		final: func(t timing) []byte {
			reason := "length"
			c := base()
			c.Choices = []oaiChoice{{FinishReason: &reason}}
			out := chunk(c)
			if req.StreamOptions != nil && req.StreamOptions.IncludeUsage {
				c.Usage = &oaiUsage{t.prompt, t.n, t.prompt + t.n}
				c.Choices = []oaiChoice{}
				out += chunk(c)
			}
			return []byte(out + "data: [DONE]\n\n")
		},
	})
}

func (s *Server) ollamaServed() (name string, modified time.Time, digest string) {
	sum := sha256.Sum256([]byte(s.o.Model))
	// A fixed time: the script has no model file to date.
	return ollamaName(s.o.Model), time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), hex.EncodeToString(sum[:])
}

func (s *Server) ollamaTags(w http.ResponseWriter, r *http.Request, _ []byte) {
	type details struct {
		ParentModel       string   `json:"parent_model"`
		Format            string   `json:"format"`
		Family            string   `json:"family"`
		Families          []string `json:"families"`
		ParameterSize     string   `json:"parameter_size"`
		QuantizationLevel string   `json:"quantization_level"`
	}
	type model struct {
		Name       string    `json:"name"`
		Model      string    `json:"model"`
		ModifiedAt time.Time `json:"modified_at"`
		Size       int64     `json:"size"`
		Digest     string    `json:"digest"`
		Details    details   `json:"details,omitempty"`
	}
	name, mod, digest := s.ollamaServed()
	body := ollamaJSON(struct {
		Models []model `json:"models"`
	}{[]model{{Name: name, Model: name, ModifiedAt: mod, Digest: digest, Details: details{Format: "gguf"}}}})
	s.reply(w, r, http.StatusOK, ginJSON, body)
}

func (s *Server) ollamaModels(w http.ResponseWriter, r *http.Request) {
	type model struct {
		ID      string `json:"id"`
		Object  string `json:"object"`
		Created int64  `json:"created"`
		OwnedBy string `json:"owned_by"`
	}
	name, mod, _ := s.ollamaServed()
	body := append(ollamaJSON(struct {
		Object string  `json:"object"`
		Data   []model `json:"data"`
	}{"list", []model{{name, "model", mod.Unix(), "library"}}}), '\n')
	s.reply(w, r, http.StatusOK, "application/json", body)
}
