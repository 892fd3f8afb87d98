package scripted

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strings"
	"time"
)

// vLLM, read from github.com/vllm-project/vllm (files as stored at the
// commits named; the tree moves often):
//
//   - vllm/entrypoints/openai/chat_completion/serving.py @006c49d4,
//     chat_completion_stream_generator: the first iteration yields one
//     chunk with DeltaMessage(role=role, content="") and
//     prompt_token_ids/prompt_text passed explicitly (so present, as null,
//     under exclude_unset); each token then yields a chunk whose choice
//     passes logprobs, finish_reason and token_ids (and stop_reason on the
//     last); every chunk is model_dump_json(exclude_unset=True) written as
//     "data: …\n\n"; with include_usage a chunk with choices [] and usage
//     (exclude_unset and exclude_none) follows; "data: [DONE]\n\n" ends.
//     The role chunk and the first token leave together: both come from
//     the engine's first output. system_fingerprint is stamped only when
//     the server has one (none by default).
//   - vllm/entrypoints/openai/chat_completion/protocol.py @002032ee:
//     ChatCompletionStreamResponse field order id, object, created, model,
//     choices, usage, system_fingerprint, prompt_token_ids, prompt_text,
//     metrics; ChatCompletionResponseStreamChoice index, delta, logprobs,
//     finish_reason, stop_reason, token_ids. DeltaMessage (role, content,
//     reasoning, tool_calls; an empty tool_calls is dropped) is in
//     vllm/entrypoints/generate/base/protocol.py @022e555d, with
//     StreamOptions.include_usage defaulting to False.
//   - vllm/entrypoints/openai/completion/serving.py @030ea52e and
//     completion/protocol.py @002032ee: each token chunk passes index,
//     text, logprobs, finish_reason, stop_reason, prompt_token_ids and
//     token_ids; CompletionRequest.max_tokens defaults to 16; the usage
//     chunk is dumped with exclude_unset=False, exclude_none=True.
//   - Ids: "chatcmpl-"/"cmpl-" + random_uuid() (uuid4 hex); created is
//     int(time.time()) taken once per stream.
//   - UsageInfo field order prompt_tokens, total_tokens, completion_tokens
//     (vllm/entrypoints/openai/engine/protocol.py @040a2cc2).
//   - Chat max tokens: get_max_tokens (vllm/entrypoints/utils.py @00fc8809)
//     takes max_completion_tokens, else max_tokens, else max_model_len −
//     prompt length (Options.ContextLen stands for max_model_len).
//   - Content type: validate_json_request
//     (vllm/entrypoints/serve/utils/api_utils.py @00a5fdd2, earlier in
//     vllm/entrypoints/openai/utils.py) lower-cases the header, takes what precedes the first ';' and raises
//     RequestValidationError(errors=["Unsupported Media Type: Only
//     'application/json' is allowed"]) unless it is exactly
//     application/json; validation_exception_handler
//     (vllm/entrypoints/serve/utils/server_utils.py @0753ceeb) answers 400
//     with ErrorResponse(ErrorInfo(message="1 validation error:\n  <err>",
//     type="Bad Request", code=400, param=None)).
//   - Model: OpenAIModelRegistry.check_model
//     (vllm/entrypoints/openai/models/serving.py @00153c8b) lets a missing
//     model through and answers any other unknown name 404 with message
//     "The model `X` does not exist.", type "NotFoundError", param "model".
//     ErrorInfo's field order is message, type, param, code; the model
//     list is ModelList/ModelCard/ModelPermission of engine/protocol.py.
//   - Errors and the model list are Starlette JSONResponse bodies
//     (json.dumps with ensure_ascii=False, separators (",", ":")),
//     Content-Type application/json. Streams are StreamingResponse(
//     media_type="text/event-stream"), which Starlette sends as
//     "text/event-stream; charset=utf-8", head first, before the body
//     iterator yields (starlette/responses.py).
//   - A failure during generation (Options.Cut CutError, chat only):
//     chat_completion_stream_generator (chat_completion/serving.py
//     @006c49d4) catches the exception, yields
//     "data: " + create_streaming_error_response(e) + "\n\n", then its
//     usual "data: [DONE]\n\n"; create_streaming_error_response and
//     create_error_response (vllm/entrypoints/openai/engine/serving.py
//     @00bd1493) json.dumps ErrorResponse(error=ErrorInfo(message=str(e),
//     type="InternalServerError", code=500, param=None)).model_dump() for
//     an exception of no known kind. The completions endpoint's is not
//     scripted.
//   - Thinking (Options.Thinking, chat): with a reasoning parser,
//     chat_completion_stream_generator passes each output to
//     parser.parse_delta, whose DeltaMessage carries the thinking in
//     "reasoning" (DeltaMessage, generate/base/protocol.py @022e555d;
//     older releases named it reasoning_content), the content unset and
//     so absent under exclude_unset.
//   - Empty text (Options.EmptyEvery): the generator takes delta_text =
//     output.text and drops a chunk only when the text, the token ids and
//     every earlier token are all empty ("Chunked prefill case",
//     chat_completion/serving.py @006c49d4; completion/serving.py
//     likewise); a token whose text the incremental detokenizer holds
//     back (an incomplete UTF-8 character) is written as a chunk with
//     content "" (chat) or text "" (completions), and the held text
//     leaves with a later token.

const vllmStreamType = "text/event-stream; charset=utf-8"

func vllmID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func vllmError(message, typ, param string, code int) string {
	return object("error", object("message", q(message), "type", q(typ), "param", param, "code", itoa(code)))
}

// vllmAccept applies vLLM's refusals in its order: the content type (a
// route dependency), then the model. It reports whether to go on.
func (s *Server) vllmAccept(w http.ResponseWriter, r *http.Request, fields map[string]json.RawMessage) bool {
	ct := strings.ToLower(r.Header.Get("Content-Type"))
	if mt, _, _ := strings.Cut(ct, ";"); mt != "application/json" {
		s.reply(w, r, http.StatusBadRequest, "application/json", []byte(vllmError(
			"1 validation error:\n  Unsupported Media Type: Only 'application/json' is allowed",
			"Bad Request", null, http.StatusBadRequest)))
		return false
	}
	if fields == nil {
		s.notScripted(w, r, "body is not a JSON object")
		return false
	}
	if m, ok := stringField(fields, "model"); ok && m != "" && m != s.o.Model {
		s.reply(w, r, http.StatusNotFound, "application/json", []byte(vllmError(
			"The model `"+m+"` does not exist.", "NotFoundError", q("model"), http.StatusNotFound)))
		return false
	}
	if !boolField(fields, "stream") {
		s.notScripted(w, r, `only "stream": true is scripted`)
		return false
	}
	return true
}

// vllmFailure is create_streaming_error_response's chunk for an
// exception during generation: json.dumps (Python's default separators,
// ", " and ": ", unlike the other bodies) of ErrorResponse.model_dump(),
// whose ErrorInfo create_error_response fills, for an exception of no
// known kind, with type InternalServerError, code 500, param None and
// the exception's text.
const vllmFailure = `{"error": {"message": "scripted failure during generation", "type": "InternalServerError", "param": null, "code": 500}}`

// vllmText is the text of token event i of n: empty for every
// Options.EmptyEvery-th answer token but the last (its text held back),
// and the held texts prefixed to the next token's.
func (s *Server) vllmText(i, n int) string {
	empty := func(i int) bool {
		k := s.o.EmptyEvery
		return k > 0 && i >= s.o.Thinking && i < n-1 && (i+1-s.o.Thinking)%k == 0
	}
	if empty(i) {
		return ""
	}
	from := i
	for from > 0 && empty(from-1) {
		from--
	}
	return tokensText(from, i+1)
}

// noEmptyText answers 501 when Options.EmptyEvery asks a format other
// than vLLM's for empty-text events, and reports whether it did: the
// others are not scripted with them (llama.cpp holds an incomplete
// character back and writes nothing until it is whole, server-context.cpp
// process_token's validate_utf8; TGI and Ollama were not read for it).
func (s *Server) noEmptyText(w http.ResponseWriter, r *http.Request) bool {
	if s.o.EmptyEvery <= 0 {
		return false
	}
	s.notScripted(w, r, "empty-text events")
	return true
}

func vllmUsage(prompt, n int) string {
	return object("prompt_tokens", itoa(prompt), "total_tokens", itoa(prompt+n), "completion_tokens", itoa(n))
}

func (s *Server) vllmChat(w http.ResponseWriter, r *http.Request, body []byte) {
	fields, _ := decodeFields(body)
	if !s.vllmAccept(w, r, fields) {
		return
	}
	var msgs []chatMessage
	_ = json.Unmarshal(fields["messages"], &msgs)
	prompt := s.promptTokens(chatText(msgs))
	n, ok := intField(fields, "max_completion_tokens", "max_tokens")
	if !ok {
		n = s.defaultTokens(prompt)
	}
	id := q("chatcmpl-" + vllmID())
	created := itoa(int(time.Now().Unix()))
	model := q(s.o.Model)
	head := func(choices string) string {
		return object("id", id, "object", q("chat.completion.chunk"), "created", created, "model", model, "choices", choices)
	}
	usage := includeUsage(fields)
	s.stream(w, r, prompt, plan{
		header: http.Header{"Content-Type": {vllmStreamType}},
		early:  true,
		n:      n,
		token: func(i int) []byte {
			var b strings.Builder
			if i == 0 {
				role := object("index", "0",
					"delta", object("role", q("assistant"), "content", q("")),
					"logprobs", null, "finish_reason", null)
				first := strings.TrimSuffix(head(array(role)), "}") +
					`,"prompt_token_ids":null,"prompt_text":null}`
				b.WriteString("data: " + first + "\n\n")
			}
			delta := object("content", q(s.vllmText(i, n)))
			if i < s.o.Thinking {
				delta = object("reasoning", q(tokenText(i)))
			}
			var choice string
			if i < n-1 {
				choice = object("index", "0", "delta", delta, "logprobs", null, "finish_reason", null, "token_ids", null)
			} else {
				choice = object("index", "0", "delta", delta, "logprobs", null, "finish_reason", q("length"),
					"stop_reason", null, "token_ids", null)
			}
			b.WriteString("data: " + head(array(choice)) + "\n\n")
			return []byte(b.String())
		},
		failure: []byte("data: " + vllmFailure + "\n\ndata: [DONE]\n\n"),
		thinks:  true,
		final: func(t timing) []byte {
			var b strings.Builder
			if usage {
				b.WriteString("data: " + object("id", id, "object", q("chat.completion.chunk"), "created", created,
					"model", model, "choices", "[]", "usage", vllmUsage(t.prompt, t.n)) + "\n\n")
			}
			b.WriteString("data: [DONE]\n\n")
			return []byte(b.String())
		},
	})
}

func (s *Server) vllmCompletions(w http.ResponseWriter, r *http.Request, body []byte) {
	fields, _ := decodeFields(body)
	if !s.vllmAccept(w, r, fields) {
		return
	}
	prompt := s.promptTokens(promptText(fields["prompt"]))
	n, ok := intField(fields, "max_tokens")
	if !ok {
		n = 16
	}
	id := q("cmpl-" + vllmID())
	created := itoa(int(time.Now().Unix()))
	model := q(s.o.Model)
	usage := includeUsage(fields)
	s.stream(w, r, prompt, plan{
		header: http.Header{"Content-Type": {vllmStreamType}},
		early:  true,
		n:      n,
		token: func(i int) []byte {
			finish := null
			if i == n-1 {
				finish = q("length")
			}
			choice := object("index", "0", "text", q(s.vllmText(i, n)), "logprobs", null, "finish_reason", finish,
				"stop_reason", null, "prompt_token_ids", null, "token_ids", null)
			return []byte("data: " + object("id", id, "object", q("text_completion"), "created", created,
				"model", model, "choices", array(choice)) + "\n\n")
		},
		final: func(t timing) []byte {
			var b strings.Builder
			if usage {
				b.WriteString("data: " + object("id", id, "object", q("text_completion"), "created", created,
					"model", model, "choices", "[]", "usage", vllmUsage(t.prompt, t.n)) + "\n\n")
			}
			b.WriteString("data: [DONE]\n\n")
			return []byte(b.String())
		},
	})
}

func (s *Server) vllmModels(w http.ResponseWriter, r *http.Request) {
	now := itoa(int(time.Now().Unix()))
	perm := object("id", q("modelperm-"+vllmID()), "object", q("model_permission"), "created", now,
		"allow_create_engine", "false", "allow_sampling", "true", "allow_logprobs", "true",
		"allow_search_indices", "false", "allow_view", "true", "allow_fine_tuning", "false",
		"organization", q("*"), "group", null, "is_blocking", "false")
	card := object("id", q(s.o.Model), "object", q("model"), "created", now, "owned_by", q("vllm"),
		"root", q(s.o.Model), "parent", null, "max_model_len", itoa(s.o.ContextLen), "permission", array(perm))
	s.reply(w, r, http.StatusOK, "application/json", []byte(object("object", q("list"), "data", array(card))))
}
