package scripted

import (
	"crypto/rand"
	"encoding/json"
	"net/http"
	"strings"
	"time"
)

// llama.cpp's server, read from github.com/ggml-org/llama.cpp (the
// repository is too large to fetch whole here; files as stored in the
// index):
//
//   - tools/server/server-task.cpp @00efb3e1: json is
//     nlohmann::ordered_json, so keys keep the order written.
//     server_task_result_cmpl_partial::to_json_non_oaicompat writes index,
//     content, tokens, stop:false, id_slot, tokens_predicted,
//     tokens_evaluated (timings only with timings_per_token);
//     server_task_result_cmpl_final::to_json_non_oaicompat writes index,
//     content, tokens, id_slot, stop:true, model, tokens_predicted,
//     tokens_evaluated, generation_settings, prompt, has_new_line,
//     truncated, stop_type ("limit" for a length stop), stopping_word,
//     tokens_cached, timings; result_timings::to_json writes cache_n,
//     prompt_n, prompt_ms, prompt_per_token_ms, prompt_per_second,
//     predicted_n, predicted_ms, predicted_per_token_ms,
//     predicted_per_second. to_json_oaicompat_chat (partial) sends, for
//     the first token, a delta {"role":"assistant","content":null} before
//     the token's own delta; each chunk is choices [finish_reason, index,
//     delta], created (std::time per chunk), id, model,
//     system_fingerprint, object. to_json_oaicompat_chat_stream (final)
//     sends a chunk with finish_reason "length" and delta {}, then with
//     include_usage a chunk with choices [] and usage (completion_tokens,
//     prompt_tokens, total_tokens); timings go on the last of them.
//     params_from_json_cmpl: n_predict, else max_completion_tokens, else
//     max_tokens, else the server's n_predict (−1: until the context is
//     full, Options.ContextLen standing for n_ctx).
//   - tools/server/server-task.h @006639c3: server_task_result.id_slot
//     defaults to -1 and result_timings.prompt_n to -1 (so partials carry
//     no timings).
//   - tools/server/server-context.cpp: send_partial_response does not set
//     id_slot (so -1) and sends the token id in
//     tokens; send_final_response in stream mode sends content "" and
//     tokens [] ("already in last partial chunk") and the slot id (0 for
//     the first slot); the completion handler ends OpenAI-style streams
//     with "data: [DONE]\n\n" and native /completion streams without it;
//     streams are set_chunked_content_provider("text/event-stream", …), so
//     the head goes out before the first token. Handlers parse the body
//     with json::parse(req.body) and never look at the Content-Type, so
//     any Content-Type (or none) is accepted. oaicompat_model is the
//     server's model name, whatever the request says: single-model
//     llama.cpp refuses no model name.
//   - tools/server/server-common.cpp: format_oai_sse writes
//     "data: " + dump(-1, ' ', false, replace) + "\n\n"; gen_chatcmplid is
//     "chatcmpl-" + random_string() (24 of [0-9a-zA-Z]).
//   - common/chat.cpp common_chat_msg_diff_to_json_oaicompat: a content
//     delta is {"content": …}, a thinking delta (Options.Thinking, chat
//     only: /completion streams the raw text) {"reasoning_content": …}.
//   - Older llama.cpp's failure during a stream (Options.LlamaCppErrorLine
//     with Cut CutError): server.cpp's handle_completions_impl, before
//     the server-context.cpp split, passed its error callback
//     server_sent_event(sink, "error", error_data), which writes the
//     event name, ": ", the JSON and "\n\n", so the SSE line is
//     "error: {…}", a field no SSE parser knows, then (OpenAI-style
//     endpoints only) "data: [DONE]\n\n"; error_data is
//     format_error_response's {"code", "message", "type"} (500,
//     "server_error" for a failure of no known kind).
//
// Not reproduced byte for byte: generation_settings (the server writes
// some fifty sampling fields from its defaults, which were not verified
// here; the script writes only max_tokens, n_predict and stream, in the
// source's order), the prompt as detokenized by the model (the script
// writes the prompt text as sent), tokens_cached (the script writes prompt
// + generated − 1: the last sampled token is never decoded), and the
// system fingerprint (b<LLAMA_BUILD_NUMBER>-<LLAMA_COMMIT>; the default
// "b0-unknown" is what a build without git information reports; set
// Options.Fingerprint to match a build). The /v1/models meta numbers are
// the model file's; the script writes zeros and ContextLen.

func llamaRandom() string {
	const alphabet = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	var b [24]byte
	_, _ = rand.Read(b[:])
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return string(b[:])
}

func (s *Server) llamaFingerprint() string {
	if s.o.Fingerprint != "" {
		return s.o.Fingerprint
	}
	return "b0-unknown"
}

func llamaTimings(t timing) string {
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	pm := ms(t.first.Sub(t.read))
	gm := ms(time.Since(t.first))
	p, n := float64(t.prompt), float64(t.n)
	return object(
		"cache_n", "0",
		"prompt_n", itoa(t.prompt),
		"prompt_ms", nlohmannDouble(pm),
		"prompt_per_token_ms", nlohmannDouble(pm/p),
		"prompt_per_second", nlohmannDouble(1e3/pm*p),
		"predicted_n", itoa(t.n),
		"predicted_ms", nlohmannDouble(gm),
		"predicted_per_token_ms", nlohmannDouble(gm/n),
		"predicted_per_second", nlohmannDouble(1e3/gm*n),
	)
}

// llamaErrorLine is older llama.cpp's stream error (see above) for a
// failure of no known kind.
const llamaErrorLine = `error: {"code":500,"message":"scripted failure during generation","type":"server_error"}` + "\n\n"

// llamaFailure is the failure Cut CutError writes, nil (501) unless
// Options.LlamaCppErrorLine; chat ends with [DONE] after it.
func (s *Server) llamaFailure(chat bool) []byte {
	switch {
	case !s.o.LlamaCppErrorLine:
		return nil
	case chat:
		return []byte(llamaErrorLine + "data: [DONE]\n\n")
	}
	return []byte(llamaErrorLine)
}

// llamaNPredict reads the output-token count as params_from_json_cmpl
// does; -1 stands for the server default.
func llamaNPredict(fields map[string]json.RawMessage) int {
	if n, ok := intField(fields, "n_predict", "max_completion_tokens", "max_tokens"); ok {
		return n
	}
	return -1
}

func (s *Server) llamaCompletion(w http.ResponseWriter, r *http.Request, body []byte) {
	fields, ok := decodeFields(body)
	if !ok {
		s.notScripted(w, r, "body is not a JSON object")
		return
	}
	if !boolField(fields, "stream") {
		s.notScripted(w, r, `only "stream": true is scripted`)
		return
	}
	if s.noEmptyText(w, r) {
		return
	}
	text := promptText(fields["prompt"])
	prompt := s.promptTokens(text)
	asked := llamaNPredict(fields)
	n, truncated := asked, false
	if asked < 0 {
		n, truncated = s.defaultTokens(prompt), true
	}
	model := q(s.o.Model)
	s.stream(w, r, prompt, plan{
		header: http.Header{"Content-Type": {"text/event-stream"}},
		early:  true,
		n:      n,
		token: func(i int) []byte {
			return []byte("data: " + object("index", "0", "content", q(tokenText(i)),
				"tokens", array(itoa(tokenID(i))), "stop", "false", "id_slot", "-1",
				"tokens_predicted", itoa(i+1), "tokens_evaluated", itoa(prompt)) + "\n\n")
		},
		final: func(t timing) []byte {
			settings := object("max_tokens", itoa(asked), "n_predict", itoa(asked), "stream", "true")
			return []byte("data: " + object("index", "0", "content", q(""), "tokens", "[]",
				"id_slot", "0", "stop", "true", "model", model,
				"tokens_predicted", itoa(t.n), "tokens_evaluated", itoa(t.prompt),
				"generation_settings", settings, "prompt", q(text), "has_new_line", "false",
				"truncated", boolean(truncated), "stop_type", q("limit"), "stopping_word", q(""),
				"tokens_cached", itoa(t.prompt+t.n-1), "timings", llamaTimings(t)) + "\n\n")
		},
		failure: s.llamaFailure(false),
	})
}

func (s *Server) llamaChat(w http.ResponseWriter, r *http.Request, body []byte) {
	fields, ok := decodeFields(body)
	if !ok {
		s.notScripted(w, r, "body is not a JSON object")
		return
	}
	if !boolField(fields, "stream") {
		s.notScripted(w, r, `only "stream": true is scripted`)
		return
	}
	if s.noEmptyText(w, r) {
		return
	}
	var msgs []chatMessage
	_ = json.Unmarshal(fields["messages"], &msgs)
	prompt := s.promptTokens(chatText(msgs))
	n := llamaNPredict(fields)
	if n < 0 {
		n = s.defaultTokens(prompt)
	}
	id := q("chatcmpl-" + llamaRandom())
	model := q(s.o.Model)
	fp := q(s.llamaFingerprint())
	chunk := func(choices string, extra ...string) string {
		kv := append([]string{"choices", choices, "created", itoa(int(time.Now().Unix())), "id", id,
			"model", model, "system_fingerprint", fp, "object", q("chat.completion.chunk")}, extra...)
		return "data: " + object(kv...) + "\n\n"
	}
	delta := func(finish, d string) string {
		return array(object("finish_reason", finish, "index", "0", "delta", d))
	}
	usage := includeUsage(fields)
	s.stream(w, r, prompt, plan{
		header: http.Header{"Content-Type": {"text/event-stream"}},
		early:  true,
		n:      n,
		token: func(i int) []byte {
			var b strings.Builder
			if i == 0 {
				b.WriteString(chunk(delta(null, object("role", q("assistant"), "content", null))))
			}
			field := "content"
			if i < s.o.Thinking {
				field = "reasoning_content"
			}
			b.WriteString(chunk(delta(null, object(field, q(tokenText(i))))))
			return []byte(b.String())
		},
		failure: s.llamaFailure(true),
		thinks:  true,
		final: func(t timing) []byte {
			timings := llamaTimings(t)
			var b strings.Builder
			if usage {
				b.WriteString(chunk(delta(q("length"), "{}")))
				b.WriteString(chunk("[]", "usage", object("completion_tokens", itoa(t.n),
					"prompt_tokens", itoa(t.prompt), "total_tokens", itoa(t.n+t.prompt)), "timings", timings))
			} else {
				b.WriteString(chunk(delta(q("length"), "{}"), "timings", timings))
			}
			b.WriteString("data: [DONE]\n\n")
			return []byte(b.String())
		},
	})
}

func (s *Server) llamaModels(w http.ResponseWriter, r *http.Request) {
	m := q(s.o.Model)
	details := object("parent_model", q(""), "format", q("gguf"), "family", q(""), "families", array(q("")),
		"parameter_size", q(""), "quantization_level", q(""))
	entry := object("name", m, "model", m, "modified_at", q(""), "size", q(""), "digest", q(""),
		"type", q("model"), "description", q(""), "tags", array(q("")), "capabilities", array(q("completion")),
		"parameters", q(""), "details", details)
	ctx := itoa(s.o.ContextLen)
	meta := object("vocab_type", "0", "n_vocab", "0", "n_ctx", ctx, "n_ctx_train", ctx, "n_embd", "0",
		"n_params", "0", "size", "0", "ftype", "0")
	card := object("id", m, "aliases", "[]", "tags", "[]", "object", q("model"),
		"created", itoa(int(time.Now().Unix())), "owned_by", q("llamacpp"), "meta", meta)
	s.reply(w, r, http.StatusOK, "application/json; charset=utf-8",
		[]byte(object("models", array(entry), "object", q("list"), "data", array(card))))
}
