package prompt

import (
	"strings"
	"testing"
)

// The fixtures are written after each server's source, as read for
// servers/scripted (whose files name the commits: vllm.go, tgi.go,
// llamacpp.go, ollama.go); answer_server_test.go holds AnswerText to the
// bytes the scripted servers and the stub write. Those that the scripted
// servers do not write (a special token, n > 1, the whole answers) are
// here:
//
//   - TGI: StreamResponse {index, token {id, text, logprob, special},
//     generated_text, details} and GenerateResponse {generated_text,
//     details} in router/src/lib.rs (huggingface/text-generation-inference
//     @014d3fd4); the end-of-sequence token is special, its text "</s>",
//     and generated_text leaves it out
//     (server/text_generation_server/models/flash_causal_lm.py,
//     generate_token; see AnswerText). axum writes "data:" with no space.
//   - llama.cpp /completion: partial {index, content, tokens, stop:false,
//     id_slot, tokens_predicted, tokens_evaluated}; the final event of a
//     stream has content "" ("already in last partial chunk") and the
//     prompt text under "prompt", which is no answer; the whole answer
//     has the text in content (tools/server/server-task.cpp @00efb3e1,
//     server-context.cpp). Chat: a first delta {"role":"assistant",
//     "content":null}, thinking in reasoning_content
//     (common/chat.cpp, common_chat_msg_diff_to_json_oaicompat).
//   - Ollama: one JSON object a line, message.content (chat) or response
//     (generate), thinking apart in message.thinking / thinking, a last
//     line done: true with empty text and the counts; with "stream":
//     false one such object with the whole text; an error during the
//     stream is a line {"error": "…"} (api/types.go, server/routes.go
//     streamResponse, ollama/ollama @fb307609).
//   - vLLM: a role chunk with content "", thinking in delta.reasoning, a
//     usage chunk with choices [], a mid-stream error as data:
//     {"error": {…}} then [DONE] (chat_completion/serving.py @006c49d4);
//     before it wrapped errors, an ErrorResponse {"object": "error",
//     "message": …} answered whole.
func TestAnswerText(t *testing.T) {
	const (
		sse    = "text/event-stream; charset=utf-8"
		ndjson = "application/x-ndjson"
		js     = "application/json"
	)
	for _, c := range []struct {
		name, ct, body string
		want           string
		err            string // a part of the error; "" for none
	}{
		{"vllm chat", sse, `data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}],"prompt_token_ids":null}

data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"reasoning":"Let me think."},"logprobs":null,"finish_reason":null,"token_ids":[7]}]}

data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"Hello"},"logprobs":null,"finish_reason":null,"token_ids":[8]}]}

data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":""},"logprobs":null,"finish_reason":null,"token_ids":[9]}]}

data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":", wörld"},"logprobs":null,"finish_reason":"length","stop_reason":null,"token_ids":[10]}]}

data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":5,"total_tokens":9,"completion_tokens":4}}

data: [DONE]

`, "Hello, wörld", ""},
		{"vllm completions", sse, "data: {\"id\":\"cmpl-1\",\"object\":\"text_completion\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"text\":\" a\",\"logprobs\":null,\"finish_reason\":null}]}\r\n\r\n" +
			"data: {\"id\":\"cmpl-1\",\"object\":\"text_completion\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"text\":\" b\",\"logprobs\":null,\"finish_reason\":\"length\"}]}\r\n\r\ndata: [DONE]\r\n\r\n", " a b", ""},
		{"two answers (n=2): the first", sse, `data: {"choices":[{"index":1,"delta":{"content":"X"}}]}
data: {"choices":[{"index":0,"delta":{"content":"a"}}]}
data: {"choices":[{"index":1,"delta":{"content":"Y"}},{"index":0,"delta":{"content":"b"}}]}
`, "ab", ""},
		{"vllm error mid-stream", sse, `data: {"choices":[{"index":0,"delta":{"content":"a"}}]}

data: {"error": {"object": "error", "message": "boom", "type": "BadRequestError", "param": null, "code": 400}}

data: [DONE]

`, "a", `event 1: the server sent an error: "boom"`},
		{"an error member that is none", sse, "data: {\"error\":null,\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\ndata: {\"error\":{},\"choices\":[{\"delta\":{\"content\":\"b\"}}]}\ndata: {\"error\":0,\"content\":\"c\"}\ndata: {\"error\":\"\",\"content\":\"d\"}\ndata: {\"error\":false,\"content\":\"e\"}\ndata: {\"error\":[],\"content\":\"f\"}", "abcdef", ""},
		{"an error member of another shape", sse, `data: {"error":[1]}`, "", `event 0: the server sent an error: [1]`},
		{"event: error", sse, "data: {\"content\":\"a\"}\n\nevent: error\ndata: {\"message\":\"x\"}\n\n", "a", "event 1: the server sent an error event"},
		{"older llama.cpp error line", sse, "data: {\"content\":\"a\"}\n\nerror: {\"code\":500,\"message\":\"x\",\"type\":\"server_error\"}\n\ndata: [DONE]\n\n", "a", "event 1: the server sent an error event"},
		{"tgi generate_stream", sse, `data:{"index":1,"token":{"id":22557,"text":"Hello","logprob":-0.25,"special":false},"generated_text":null,"details":null}

data:{"index":2,"token":{"id":1526,"text":" world","logprob":-0.5,"special":false},"generated_text":null,"details":null}

data:{"index":3,"token":{"id":2,"text":"</s>","logprob":-0.1,"special":true},"generated_text":"Hello world","details":{"finish_reason":"eos_token","generated_tokens":3,"seed":null,"input_length":4}}

`, "Hello world", ""},
		{"tgi chat", sse, "data:{\"object\":\"chat.completion.chunk\",\"id\":\"\",\"created\":1,\"model\":\"m\",\"system_fingerprint\":\"3.3.6-dev0-native\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\" tok1\"},\"logprobs\":null,\"finish_reason\":null}],\"usage\":null}\n\ndata:[DONE]\n\n", " tok1", ""},
		{"llama.cpp completion", sse, `data: {"index":0,"content":" The","tokens":[578],"stop":false,"id_slot":-1,"tokens_predicted":1,"tokens_evaluated":4}

data: {"index":0,"content":" end","tokens":[842],"stop":false,"id_slot":-1,"tokens_predicted":2,"tokens_evaluated":4}

data: {"index":0,"content":"","tokens":[],"id_slot":0,"stop":true,"model":"m","tokens_predicted":2,"tokens_evaluated":4,"generation_settings":{"n_predict":2},"prompt":"the prompt, no answer","has_new_line":false,"truncated":false,"stop_type":"limit","stopping_word":"","tokens_cached":5,"timings":{"predicted_n":2}}

`, " The end", ""},
		{"llama.cpp chat", sse, `data: {"choices":[{"finish_reason":null,"index":0,"delta":{"role":"assistant","content":null}}],"created":1,"id":"chatcmpl-x","model":"m","system_fingerprint":"b0-unknown","object":"chat.completion.chunk"}

data: {"choices":[{"finish_reason":null,"index":0,"delta":{"reasoning_content":"Hmm"}}],"created":1,"id":"chatcmpl-x","model":"m","system_fingerprint":"b0-unknown","object":"chat.completion.chunk"}

data: {"choices":[{"finish_reason":null,"index":0,"delta":{"content":"Hi"}}],"created":1,"id":"chatcmpl-x","model":"m","system_fingerprint":"b0-unknown","object":"chat.completion.chunk"}

data: {"choices":[{"finish_reason":"length","index":0,"delta":{}}],"created":1,"id":"chatcmpl-x","model":"m","system_fingerprint":"b0-unknown","object":"chat.completion.chunk"}

data: [DONE]

`, "Hi", ""},
		{"ollama chat", ndjson, `{"model":"m","created_at":"2025-01-01T00:00:00Z","message":{"role":"assistant","content":"","thinking":"Hmm"},"done":false}
{"model":"m","created_at":"2025-01-01T00:00:00Z","message":{"role":"assistant","content":"Hi"},"done":false}
{"model":"m","created_at":"2025-01-01T00:00:00Z","message":{"role":"assistant","content":" there"},"done":false}
{"model":"m","created_at":"2025-01-01T00:00:00Z","message":{"role":"assistant","content":""},"done":true,"done_reason":"length","total_duration":1,"prompt_eval_count":4,"eval_count":3}
`, "Hi there", ""},
		{"ollama generate", ndjson, `{"model":"m","created_at":"2025-01-01T00:00:00Z","response":"","thinking":"Hmm","done":false}
{"model":"m","created_at":"2025-01-01T00:00:00Z","response":" tok2","done":false}
{"model":"m","created_at":"2025-01-01T00:00:00Z","response":"","done":true,"done_reason":"length","context":[1,2,3],"eval_count":2}`, " tok2", ""},
		{"ollama error line", ndjson, "{\"model\":\"m\",\"created_at\":\"2025-01-01T00:00:00Z\",\"response\":\" a\",\"done\":false}\n{\"error\":\"an error was encountered while running the model: unexpected EOF\"}\n",
			" a", `event 1: the server sent an error: "an error was encountered while running the model: unexpected EOF"`},

		// Whole answers.
		{"openai chat whole", js, `{"id":"chatcmpl-stub-1","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":" lorem ipsum"},"logprobs":null,"finish_reason":"length"}],"usage":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5}}
`, " lorem ipsum", ""},
		{"openai chat whole, tool calls only", js, `{"choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[]}}]}`, "", ""},
		{"openai completions whole", "application/json", `{"object":"text_completion","choices":[{"index":0,"text":" lorem","finish_reason":"length"}]}`, " lorem", ""},
		{"ollama chat whole", "application/json; charset=utf-8", `{"model":"m","created_at":"2025-01-01T00:00:00Z","message":{"role":"assistant","content":"Hi there","thinking":"Hmm"},"done":true,"done_reason":"stop"}`, "Hi there", ""},
		{"ollama generate whole", js, `{"model":"m","created_at":"2025-01-01T00:00:00Z","response":"Hi","done":true,"context":[1]}`, "Hi", ""},
		{"tgi generate whole", js, `{"generated_text":"Hello world","details":{"finish_reason":"eos_token","generated_tokens":3,"seed":null,"prefill":[],"tokens":[]}}`, "Hello world", ""},
		{"llama.cpp completion whole", js, `{"index":0,"content":"Hello world","tokens":[],"id_slot":0,"stop":true,"model":"m","prompt":"p"}`, "Hello world", ""},
		{"ollama error whole", js, `{"error":"model 'x' not found"}`, "", `the server sent an error: "model 'x' not found"`},
		{"vllm error whole", js, "{\"error\":{\"message\":\"The model `x` does not exist.\",\"type\":\"NotFoundError\",\"param\":\"model\",\"code\":404}}", "", "the server sent an error: \"The model `x` does not exist.\""},
		{"older vllm error whole", js, "{\"object\":\"error\",\"message\":\"The model `x` does not exist.\",\"type\":\"NotFoundError\",\"param\":null,\"code\":404}", "", "the server sent an error: \"The model `x` does not exist.\""},
		{"an answer of no known grammar", js, `{"output":"x"}`, "", "the answer has none of"},
		{"not JSON", js, `{"choices":`, "", "the answer: unexpected end of JSON input"},

		// The body's framing.
		{"empty", js, "", "", ""},
		{"empty stream", sse, "", "", ""},
		{"blanks", "", " \r\n", "", ""},
		{"comments and [DONE] only", sse, ": ping\n\ndata: [DONE]\n\n", "", ""},
		{"[DONE] ends", sse, "data: {\"content\":\"a\"}\ndata:[DONE]\ndata: {\"content\":\"b\"}\nnot json\n", "a", ""},
		{"an empty data line", sse, "data:\ndata: \ndata: {\"content\":\"a\"}\n", "a", ""},
		{"a last line without its end", sse, "data: {\"content\":\"a\"}\ndata: {\"content\":\"b\"}", "ab", ""},
		{"no Content-Type, a stream", "", "data: {\"content\":\"a\"}\n\n", "a", ""},
		{"no Content-Type, an answer", "", " {\"content\":\"a\"}", "a", ""},
		{"text/plain stream", "text/plain", "data: {\"content\":\"a\"}\n\n", "a", ""},
		{"a payload that is not JSON", sse, "data: {\"content\":\"a\"}\ndata: nope\n", "a", "event 1: invalid character"},
		{"a member of the wrong type", sse, "data: {\"content\":1}\n", "", "event 0: json: cannot unmarshal number"},
	} {
		got, err := AnswerText(c.ct, []byte(c.body))
		switch {
		case c.err == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%s: error %v, want one with %q", c.name, err, c.err)
		case err != nil && strings.Contains(err.Error(), "\n"):
			t.Errorf("%s: error of more than one line: %q", c.name, err)
		}
		if got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

// FuzzAnswerText: AnswerText never panics, its errors are one line, and a
// stream read in SSE gives the same text whether its lines end in LF or
// CRLF.
func FuzzAnswerText(f *testing.F) {
	f.Add("text/event-stream", []byte("data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"}}]}\n\ndata: [DONE]\n\n"))
	f.Add("text/event-stream", []byte("data:{\"index\":1,\"token\":{\"id\":1,\"text\":\"a\",\"special\":false},\"generated_text\":null}\n\n"))
	f.Add("application/x-ndjson", []byte("{\"message\":{\"content\":\"a\"},\"done\":false}\n{\"error\":\"x\"}\n"))
	f.Add("application/json", []byte(`{"choices":[{"message":{"content":"a"}}]}`))
	f.Add("application/json", []byte(`{"object":"error","message":{"a":1}}`))
	f.Add("", []byte("event: error\n"))
	f.Fuzz(func(t *testing.T, ct string, body []byte) {
		got, err := AnswerText(ct, body)
		if err != nil && strings.ContainsAny(err.Error(), "\r\n") {
			t.Fatalf("error of more than one line: %q", err)
		}
		if ct != "text/event-stream" || strings.Contains(string(body), "\r") {
			return
		}
		crlf := []byte(strings.ReplaceAll(string(body), "\n", "\r\n"))
		got2, err2 := AnswerText(ct, crlf)
		if got != got2 || (err == nil) != (err2 == nil) {
			t.Fatalf("LF %q, %v; CRLF %q, %v", got, err, got2, err2)
		}
	})
}
