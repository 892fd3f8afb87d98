package scripted

import (
	"encoding/json"
	"math/rand/v2"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Text Generation Inference, read from
// github.com/huggingface/text-generation-inference at db931fcf (2026-01-08):
//
//   - router/src/server.rs: generate_stream_internal yields one
//     StreamResponse per token (InferStreamResponse::Intermediate) and, for
//     the last token (End), one with generated_text set and details only
//     when parameters.details; index counts every response from the
//     backend, and the only other kind, Prefill, is sent only for
//     prefill logprobs, which streams refuse (decoder_input_details), so
//     the first token has index 1. Headers x-compute-type,
//     x-compute-characters (characters of inputs) and X-Accel-Buffering:
//     no. chat_completions streams ChatState events and ends with
//     Event::default().data("[DONE]"); the reported model is the
//     request's, unless it is absent or "tgi" (then the served model id):
//     TGI refuses no model name. system_fingerprint is
//     "<CARGO_PKG_VERSION>-<docker label or native>"; Cargo.toml has
//     version 3.3.6-dev0.
//   - router/src/lib.rs: StreamResponse (index, token, top_tokens skipped
//     when empty, generated_text, details), Token (id, text, logprob,
//     special), StreamDetails (finish_reason, generated_tokens, seed,
//     input_length), FinishReason "length"; CompletionType is
//     #[serde(tag = "object")], so "object" comes first, then
//     ChatCompletionChunk's id (always ""), created, model,
//     system_fingerprint, choices, usage; ChatCompletionChoice index,
//     delta, logprobs, finish_reason; TextMessage role, content;
//     Usage prompt_tokens, completion_tokens, total_tokens; ModelsInfo
//     object "list", ModelInfo id, object, created (0), owned_by (the
//     model id). ChatRequest.max_tokens has alias max_completion_tokens;
//     chat requests always ask for details (try_into_generate).
//   - router/src/chat.rs: create_event_from_stream_token stamps created
//     per chunk and puts finish_reason (format(true)) on the last;
//     ChatState.push adds, with include_usage, a chunk with choices [] and
//     usage right after the last token.
//   - router/src/validation.rs: without max_new_tokens the answer may run
//     to max_total_tokens − input length (Options.ContextLen stands for
//     max_total_tokens); a missing seed is replaced by a random one, and
//     the Python server reports it only when sampling
//     (server/text_generation_server/models/flash_causal_lm.py, "seed if
//     do_sample else None").
//   - Content type: the handlers take axum::Json (axum 0.7.9 in
//     Cargo.lock). Its extractor (axum/src/json.rs) wants a Content-Type
//     that parses as application/json or application/*+json, else
//     MissingJsonContentType: 415 with body "Expected request with
//     `Content-Type: application/json`"
//     (axum/src/extract/rejection.rs), written by axum-core's
//     define_rejection as text/plain; charset=utf-8. Streams are axum
//     Sse (axum/src/response/sse.rs): Event::json_data writes "data:"
//     with no space, the JSON and "\n", and finalize adds "\n";
//     Event::data("[DONE]") is "data:[DONE]\n\n" (a space is added only
//     before a value that starts with one; TGI's own docs show
//     "data:{"index":16,…}"); Content-Type text/event-stream,
//     Cache-Control no-cache; a keep-alive
//     comment every 15 s is not scripted (tests are faster). Floats are
//     serde_json's (ryu): the scripted logprob −0.25 prints as -0.25.

const tgiVersion = "3.3.6-dev0"

func (s *Server) tgiFingerprint() string {
	if s.o.Fingerprint != "" {
		return s.o.Fingerprint
	}
	return tgiVersion + "-native"
}

// tgiAccept is axum's Json extractor check on the Content-Type.
func (s *Server) tgiAccept(w http.ResponseWriter, r *http.Request) bool {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	typ, sub, _ := strings.Cut(mt, "/")
	if err != nil || typ != "application" || (sub != "json" && !strings.HasSuffix(sub, "+json")) {
		s.reply(w, r, http.StatusUnsupportedMediaType, "text/plain; charset=utf-8",
			[]byte("Expected request with `Content-Type: application/json`"))
		return false
	}
	return true
}

func (s *Server) tgiHeader(inputs string) http.Header {
	return http.Header{
		"Content-Type":  {"text/event-stream"},
		"Cache-Control": {"no-cache"},
		// Deployment-specific in TGI (the launcher's compute type).
		"X-Compute-Type":       {"scripted"},
		"X-Compute-Characters": {strconv.Itoa(utf8.RuneCountInString(inputs))},
		"X-Accel-Buffering":    {"no"},
	}
}

func tgiToken(i int) string {
	return object("id", itoa(tokenID(i)), "text", q(tokenText(i)), "logprob", "-0.25", "special", "false")
}

func (s *Server) tgiGenerateStream(w http.ResponseWriter, r *http.Request, body []byte) {
	if !s.tgiAccept(w, r) {
		return
	}
	var req struct {
		Inputs     *string `json:"inputs"`
		Parameters struct {
			MaxNewTokens   *int  `json:"max_new_tokens"`
			Details        bool  `json:"details"`
			DoSample       bool  `json:"do_sample"`
			Seed           *uint `json:"seed"`
			ReturnFullText bool  `json:"return_full_text"`
		} `json:"parameters"`
	}
	if json.Unmarshal(body, &req) != nil || req.Inputs == nil {
		s.notScripted(w, r, "body is not a GenerateRequest")
		return
	}
	if s.noEmptyText(w, r) {
		return
	}
	inputs := *req.Inputs
	prompt := s.promptTokens(inputs)
	p := req.Parameters
	n := s.defaultTokens(prompt)
	if p.MaxNewTokens != nil {
		n = *p.MaxNewTokens
	}
	seed := null
	if p.DoSample {
		if p.Seed != nil {
			seed = strconv.FormatUint(uint64(*p.Seed), 10)
		} else {
			seed = strconv.FormatUint(rand.Uint64(), 10)
		}
	}
	s.stream(w, r, prompt, plan{
		header: s.tgiHeader(inputs),
		early:  true,
		n:      n,
		token: func(i int) []byte {
			text, details := null, null
			if i == n-1 {
				out := allText(n)
				if p.ReturnFullText {
					out = inputs + out
				}
				text = q(out)
				if p.Details {
					details = object("finish_reason", q("length"), "generated_tokens", itoa(n),
						"seed", seed, "input_length", itoa(prompt))
				}
			}
			return []byte("data:" + object("index", itoa(i+1), "token", tgiToken(i),
				"generated_text", text, "details", details) + "\n\n")
		},
	})
}

func (s *Server) tgiChat(w http.ResponseWriter, r *http.Request, body []byte) {
	if !s.tgiAccept(w, r) {
		return
	}
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
	text := chatText(msgs)
	prompt := s.promptTokens(text)
	n, ok := intField(fields, "max_tokens", "max_completion_tokens")
	if !ok {
		n = s.defaultTokens(prompt)
	}
	model := s.o.Model
	if m, ok := stringField(fields, "model"); ok && m != "tgi" {
		model = m
	}
	fp := q(s.tgiFingerprint())
	head := func(choices, usage string) string {
		return object("object", q("chat.completion.chunk"), "id", q(""),
			"created", itoa(int(time.Now().Unix())), "model", q(model),
			"system_fingerprint", fp, "choices", choices, "usage", usage)
	}
	usage := includeUsage(fields)
	s.stream(w, r, prompt, plan{
		header: s.tgiHeader(text),
		early:  true,
		n:      n,
		token: func(i int) []byte {
			finish := null
			if i == n-1 {
				finish = q("length")
			}
			choice := object("index", "0", "delta", object("role", q("assistant"), "content", q(tokenText(i))),
				"logprobs", null, "finish_reason", finish)
			out := "data:" + head(array(choice), null) + "\n\n"
			if i == n-1 && usage {
				out += "data:" + head("[]", object("prompt_tokens", itoa(prompt),
					"completion_tokens", itoa(n), "total_tokens", itoa(prompt+n))) + "\n\n"
			}
			return []byte(out)
		},
		final: func(timing) []byte { return []byte("data:[DONE]\n\n") },
	})
}

func (s *Server) tgiModels(w http.ResponseWriter, r *http.Request) {
	card := object("id", q(s.o.Model), "object", q("model"), "created", "0", "owned_by", q(s.o.Model))
	s.reply(w, r, http.StatusOK, "application/json", []byte(object("object", q("list"), "data", array(card))))
}
