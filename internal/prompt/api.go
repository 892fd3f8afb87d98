package prompt

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// API is the body grammar of a model server's generation endpoint.
type API int

// The APIs. Chat and Completions are OpenAI's, as vLLM, SGLang, TGI's
// Messages API, llama.cpp's server, Ollama's /v1 and the stub serve them;
// the others are the servers' own endpoints.
const (
	Chat           API = iota + 1 // POST /v1/chat/completions: messages, max_tokens
	Completions                   // POST /v1/completions: prompt, max_tokens
	OllamaGenerate                // POST /api/generate: prompt, options.num_predict
	OllamaChat                    // POST /api/chat: messages, options.num_predict
	TGI                           // POST /generate_stream (or /generate): inputs, parameters.max_new_tokens
	LlamaCpp                      // POST /completion: prompt, n_predict
)

// apiNames are the names ParseAPI reads, by API. "chat" and "completions"
// are short because OpenAI's grammar is the one most servers speak;
// the others are prefixed by the server whose own grammar they are.
var apiNames = [...]string{
	Chat:           "chat",
	Completions:    "completions",
	OllamaGenerate: "ollama-generate",
	OllamaChat:     "ollama-chat",
	TGI:            "tgi",
	LlamaCpp:       "llamacpp",
}

// APINames lists the names ParseAPI reads.
func APINames() []string {
	return append([]string(nil), apiNames[1:]...)
}

func (a API) String() string {
	if a <= 0 || int(a) >= len(apiNames) {
		return fmt.Sprintf("API(%d)", int(a))
	}
	return apiNames[a]
}

// ParseAPI returns the API named name (APINames).
func ParseAPI(name string) (API, error) {
	for a, n := range apiNames {
		if a > 0 && n == name {
			return API(a), nil
		}
	}
	return 0, fmt.Errorf("unknown API %q: want one of %s", name, strings.Join(APINames(), ", "))
}

// apiPaths are the paths APIOf knows, longest first where one ends
// another, so that /api/generate is not read as TGI's /generate.
var apiPaths = []struct {
	suffix string
	api    API
}{
	{"/chat/completions", Chat},
	{"/completions", Completions},
	{"/api/generate", OllamaGenerate},
	{"/api/chat", OllamaChat},
	{"/generate_stream", TGI},
	{"/generate", TGI},
	{"/completion", LlamaCpp},
}

// APIOf returns the API of a URL path by its end: /v1/chat/completions,
// /v1/completions, /api/generate, /api/chat, /generate_stream or
// /generate, /completion. Only the end is compared, so a server mounted
// under a prefix (/openai/v1/chat/completions) is still known.
func APIOf(urlPath string) (API, error) {
	p := strings.TrimRight(urlPath, "/")
	for _, ap := range apiPaths {
		if strings.HasSuffix(p, ap.suffix) {
			return ap.api, nil
		}
	}
	return 0, fmt.Errorf("cannot tell the body grammar of path %q: it ends in none of /v1/chat/completions, /v1/completions, /api/generate, /api/chat, /generate_stream, /generate, /completion; name the API", urlPath)
}

// chat reports whether a's prompt is a list of messages.
func (a API) chat() bool { return a == Chat || a == OllamaChat }

// CanIgnoreEOS reports whether a has a request field that keeps the
// model generating past its end-of-sequence token, so that an answer
// reaches its max tokens:
//
//   - Chat and Completions: "ignore_eos": true, a vLLM extension
//     (ChatCompletionRequest and CompletionRequest, "sampling params", in
//     vllm/entrypoints/openai/chat_completion/protocol.py and
//     completion/protocol.py); llama.cpp's server reads it on its OpenAI
//     paths too, and servers that do not know it ignore it (OpenAI's own
//     API rejects unknown fields: do not ask it there).
//   - LlamaCpp: "ignore_eos": true (server_task::params_from_json_cmpl in
//     llama.cpp's tools/server/server-task.cpp, which adds a -inf logit
//     bias to every end-of-generation token).
//   - OllamaGenerate, OllamaChat: none. Ollama's Options (api/types.go)
//     have num_predict and stop, nothing to suppress the end of sequence.
//   - TGI: none. GenerateParameters (router/src/lib.rs) have no such
//     field; the router sets the backend's ignore_eos_token to false for
//     every request (router/src/validation.rs), only its warm-up sets it.
func (a API) CanIgnoreEOS() bool {
	return a == Chat || a == Completions || a == LlamaCpp
}

// Message is one chat message: a role ("system", "user", "assistant")
// and its text, as the chat grammars send it in their messages list.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// The bodies, one type per grammar: encoding/json writes them, in field
// order. A zero max tokens (not asked) and an empty model are left out.
type (
	streamOptions struct {
		IncludeUsage bool `json:"include_usage"`
	}
	openAIBody struct {
		Model         string         `json:"model,omitempty"`
		Messages      []Message      `json:"messages,omitempty"` // Chat
		Prompt        *string        `json:"prompt,omitempty"`   // Completions
		MaxTokens     int            `json:"max_tokens,omitempty"`
		Stream        bool           `json:"stream"`
		StreamOptions *streamOptions `json:"stream_options,omitempty"`
		IgnoreEOS     bool           `json:"ignore_eos,omitempty"`
	}
	ollamaOptions struct {
		NumPredict int `json:"num_predict,omitempty"`
	}
	ollamaBody struct {
		Model    string          `json:"model,omitempty"`
		Messages []Message       `json:"messages,omitempty"` // OllamaChat
		Prompt   *string         `json:"prompt,omitempty"`   // OllamaGenerate
		Stream   bool            `json:"stream"`
		Options  json.RawMessage `json:"options,omitempty"` // ollamaOptions and the extra options (API.Nested)
	}
	tgiParameters struct {
		MaxNewTokens int  `json:"max_new_tokens,omitempty"`
		Details      bool `json:"details"`
	}
	tgiBody struct {
		Inputs     string          `json:"inputs"`
		Parameters json.RawMessage `json:"parameters"` // tgiParameters and the extra parameters (API.Nested)
		// Stream is read by TGI's compatibility route (POST /), whose
		// CompatGenerateRequest streams when it is true; /generate_stream
		// streams anyway and, like /generate, ignores the field.
		Stream bool `json:"stream"`
	}
	llamaCppBody struct {
		Model     string `json:"model,omitempty"` // routes a multi-model llama-server; ignored by a single one
		Prompt    string `json:"prompt"`
		NPredict  int    `json:"n_predict,omitempty"`
		Stream    bool   `json:"stream"`
		IgnoreEOS bool   `json:"ignore_eos,omitempty"`
	}
)

// body is the JSON of one request: msgs (the last one the user's turn)
// for the chat grammars, else msgs joined into one prompt (promptText;
// one message is its content as it is). It is the one writer of every
// grammar's bytes. TGI's grammar has no model field: a TGI server serves
// one model. extra's members follow the grammar's own (Extra); a clash
// with them is an error.
func (a API) body(model string, msgs []Message, maxTokens int, ignoreEOS bool, extra Extra) ([]byte, error) {
	if k, ok := a.Clash(extra); ok {
		return nil, fmt.Errorf("extra field %q is the %s body's own", k, a)
	}
	prompt := promptText(msgs)
	key, _ := a.Nested()
	inner, _ := extra.inner(key) // an object: Clash said so
	asked := key != "" && slices.Contains(extra.keys, key)
	extra = extra.without(key)
	var v any
	switch a {
	case Chat, Completions:
		b := openAIBody{Model: model, MaxTokens: maxTokens, Stream: true, StreamOptions: &streamOptions{IncludeUsage: true}, IgnoreEOS: ignoreEOS}
		if a == Chat {
			b.Messages = msgs
		} else {
			b.Prompt = &prompt
		}
		v = b
	case OllamaGenerate, OllamaChat:
		b := ollamaBody{Model: model, Stream: true}
		var own []byte
		if maxTokens > 0 {
			own, _ = encode(ollamaOptions{NumPredict: maxTokens}) // ints: cannot fail
		}
		if own != nil || asked {
			b.Options = inner.object(own)
		}
		if a == OllamaChat {
			b.Messages = msgs
		} else {
			b.Prompt = &prompt
		}
		v = b
	case TGI:
		own, _ := encode(tgiParameters{MaxNewTokens: maxTokens, Details: true}) // cannot fail
		v = tgiBody{Inputs: prompt, Parameters: inner.object(own), Stream: true}
	case LlamaCpp:
		v = llamaCppBody{Model: model, Prompt: prompt, NPredict: maxTokens, Stream: true, IgnoreEOS: ignoreEOS}
	default:
		return nil, fmt.Errorf("unknown API %d", int(a))
	}
	js, err := encode(v) // prompts are text, not HTML: keep <, >, & as they are
	if err != nil {
		return nil, err
	}
	return extra.merge(js), nil
}
