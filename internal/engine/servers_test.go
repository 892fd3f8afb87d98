package engine

import (
	"fmt"
	"strings"

	"github.com/openload/openload/internal/h1"
)

// The bytes real model servers stream, built as their own source writes
// them (field order, separators, what is omitted), so that the stream
// readers are tested on what they will meet rather than on what we
// imagine. Where a value is long and says nothing to the reader (a
// timestamp, llama.cpp's generation_settings) it is shortened, and the
// comment says so.

// Ollama, ollama/ollama (read at fb30760, 2026-08-21): /api/generate and
// /api/chat answer application/x-ndjson, each value json.Marshal'd and
// followed by "\n" (server/routes.go, streamResponse and GenerateHandler);
// a value's fields in the order of api/types.go's GenerateResponse and
// ChatResponse (model, created_at, response or message, done, done_reason,
// context, then Metrics: total_duration, load_duration, prompt_eval_count,
// prompt_eval_duration, eval_count, eval_duration, all omitempty, so a
// token's line has none). An error once the stream began is written with
// json.NewEncoder(w).Encode(gin.H{"error": e}): {"error":"…"} and "\n".

func ollamaGenerateToken(text string) string {
	return `{"model":"llama3.2","created_at":"2026-08-21T10:00:00.123456789Z","response":` + quote(text) + `,"done":false}` + "\n"
}

func ollamaGenerateDone(prompt, eval int) string {
	return fmt.Sprintf(`{"model":"llama3.2","created_at":"2026-08-21T10:00:01.5Z","response":"","done":true,"done_reason":"stop",`+
		`"context":[128006,9125,128007],"total_duration":1507358041,"load_duration":18224583,"prompt_eval_count":%d,`+
		`"prompt_eval_duration":43180000,"eval_count":%d,"eval_duration":1444825000}`+"\n", prompt, eval)
}

func ollamaChatToken(text string) string {
	return `{"model":"llama3.2","created_at":"2026-08-21T10:00:00.123456789Z","message":{"role":"assistant","content":` + quote(text) + `},"done":false}` + "\n"
}

func ollamaChatDone(prompt, eval int) string {
	return fmt.Sprintf(`{"model":"llama3.2","created_at":"2026-08-21T10:00:01.5Z","message":{"role":"assistant","content":""},"done":true,`+
		`"done_reason":"stop","total_duration":1507358041,"load_duration":18224583,"prompt_eval_count":%d,`+
		`"prompt_eval_duration":43180000,"eval_count":%d,"eval_duration":1444825000}`+"\n", prompt, eval)
}

const ollamaError = `{"error":"an error was encountered while running the model: unexpected EOF"}` + "\n"

// llama.cpp, ggml-org/llama.cpp: /completion streams each result as
// "data: " + its JSON, compact, + "\n\n" (tools/server/server-common.cpp,
// format_oai_sse); a token's result is tools/server/server-task.cpp's
// server_task_result_cmpl_partial::to_json_non_oaicompat (index, content,
// tokens, stop, id_slot, tokens_predicted, tokens_evaluated: the running
// counts), the last one server_task_result_cmpl_final's (index, content,
// tokens, id_slot, stop, model, tokens_predicted, tokens_evaluated,
// generation_settings, prompt, has_new_line, truncated, stop_type,
// stopping_word, tokens_cached, timings). generation_settings (task_params::
// to_json, some forty fields) and timings are shortened here to a few of
// their fields, n_predict and max_tokens among them: counts openload must
// not read as output.

func llamacppToken(text string, predicted, evaluated int) string {
	return fmt.Sprintf(`data: {"index":0,"content":%s,"tokens":[],"stop":false,"id_slot":0,"tokens_predicted":%d,"tokens_evaluated":%d}`+"\n\n",
		quote(text), predicted, evaluated)
}

func llamacppFinal(predicted, evaluated int) string {
	return fmt.Sprintf(`data: {"index":0,"content":"","tokens":[],"id_slot":0,"stop":true,"model":"gpt-3.5-turbo","tokens_predicted":%d,`+
		`"tokens_evaluated":%d,"generation_settings":{"seed":4294967295,"temperature":0.800000011920929,"max_tokens":-1,"n_predict":-1,"n_keep":0,"stream":true},`+
		`"prompt":"<s> Hello","has_new_line":false,"truncated":false,"stop_type":"limit","stopping_word":"","tokens_cached":%d,`+
		`"timings":{"prompt_n":%d,"prompt_ms":12.5,"predicted_n":%d,"predicted_ms":310.2}}`+"\n\n",
		predicted, evaluated, predicted+evaluated-1, evaluated, predicted)
}

// TGI, huggingface/text-generation-inference (read at db931fc,
// 2026-01-08): /generate_stream writes each StreamResponse with axum's
// Event::json_data ("data: " + serde_json + "\n", and "\n" to end the
// event: axum 0.7.9 axum/src/response/sse.rs) in router/src/server.rs's
// generate_stream; fields in router/src/lib.rs's order: index, token (id,
// text, logprob, special), top_tokens (skipped when empty),
// generated_text, details, the last two null but on the last event, whose
// details (StreamDetails, when the request asked "details": true) are
// finish_reason, generated_tokens, seed, input_length.

func tgiToken(index int, text string) string {
	return fmt.Sprintf(`data: {"index":%d,"token":{"id":%d,"text":%s,"logprob":-0.25,"special":false},"generated_text":null,"details":null}`+"\n\n",
		index, 1000+index, quote(text))
}

func tgiFinal(index int, text, generated string, tokens, input int) string {
	return fmt.Sprintf(`data: {"index":%d,"token":{"id":%d,"text":%s,"logprob":-0.25,"special":false},"generated_text":%s,`+
		`"details":{"finish_reason":"length","generated_tokens":%d,"seed":null,"input_length":%d}}`+"\n\n",
		index, 1000+index, quote(text), quote(generated), tokens, input)
}

// tgiChatUsage is TGI's usage chunk of /v1/chat/completions with
// stream_options.include_usage (router/src/chat.rs, ChatState::push): a
// ChatCompletionChunk, tagged "object" first (CompletionType's
// #[serde(tag = "object")]), with no choices.
func tgiChatUsage(prompt, completion int) string {
	return fmt.Sprintf(`data: {"object":"chat.completion.chunk","id":"","created":1767880969,"model":"tgi","system_fingerprint":"3.3.6-native",`+
		`"choices":[],"usage":{"prompt_tokens":%d,"completion_tokens":%d,"total_tokens":%d}}`+"\n\n", prompt, completion, prompt+completion)
}

// quote is a JSON string of s, which the fixtures keep free of quotes and
// backslashes.
func quote(s string) string {
	if strings.ContainsAny(s, "\"\\") {
		panic("quote: " + s)
	}
	return `"` + s + `"`
}

// serverBodies are whole streamed answers of n tokens each, by server and
// endpoint, with their format.
func serverBodies(n int) []serverBody {
	var gen, chat, lcpp, tgi, vllm strings.Builder
	for i := range n {
		gen.WriteString(ollamaGenerateToken(" tok"))
		chat.WriteString(ollamaChatToken(" tok"))
		lcpp.WriteString(llamacppToken(" tok", i+1, 5))
		if i < n-1 {
			tgi.WriteString(tgiToken(i+1, " tok"))
		} else {
			tgi.WriteString(tgiFinal(i+1, " tok", "all of it", n, 5))
		}
		vllm.WriteString(vllmChunk(`{"content":" tok"}`))
	}
	gen.WriteString(ollamaGenerateDone(5, n))
	chat.WriteString(ollamaChatDone(5, n))
	lcpp.WriteString(llamacppFinal(n, 5))
	// vLLM's usage chunk: usage in UsageInfo's field order
	// (vllm-project/vllm vllm/entrypoints/openai/engine/protocol.py), its
	// null prompt_tokens_details left out; the envelope as vllmChunk's.
	vllm.WriteString(fmt.Sprintf(`data: {"id":"chatcmpl-7","object":"chat.completion.chunk","created":1735689600,"model":"m","choices":[],"usage":{"prompt_tokens":5,"total_tokens":%d,"completion_tokens":%d}}`+"\n\n", n+5, n))
	vllm.WriteString("data: [DONE]\n\n")
	return []serverBody{
		{"ollama generate", h1.NDJSON, gen.String()},
		{"ollama chat", h1.NDJSON, chat.String()},
		{"llama.cpp completion", h1.SSE, lcpp.String()},
		{"tgi generate_stream", h1.SSE, tgi.String()},
		{"vllm chat", h1.SSE, vllm.String()},
	}
}

type serverBody struct {
	name   string
	format h1.Format
	body   string
}
