package scripted

import (
	"encoding/json"
	"hash/fnv"
	"net/http"
	"strings"
)

// The servers' tokenizer endpoints, each in its server's shape, counting
// with the server's own rule (promptTokens), so that a client that sizes
// prompts by the server's count can be judged against the answers' usage:
//
//   - vLLM, vllm/entrypoints/serve/tokenize (protocol.py @030ea52e,
//     serving.py @cf34c18c, api_router.py @045d7575): POST /tokenize takes
//     TokenizeCompletionRequest {"model", "prompt", "add_special_tokens"
//     (default true)} or TokenizeChatRequest {"model", "messages",
//     "add_special_tokens" (default false: the chat template adds its own)}
//     and answers TokenizeResponse {"count", "max_model_len", "tokens",
//     "token_strs"} (token_strs null unless return_token_strs, which is
//     not scripted). A model other than Options.Model is vLLM's 404.
//   - TGI, router/src/server.rs @db931fcf, tokenize: POST /tokenize takes a
//     GenerateRequest {"inputs", "parameters"} whose add_special_tokens is
//     always true (serde skip, default_true, router/src/lib.rs) and answers
//     a bare list of SimpleToken {"id", "text", "start", "stop"}, offsets
//     in characters (encoding_to_tokens); a special token's text is empty.
//   - llama.cpp, tools/server/server.cpp handle_tokenize (as stored in the
//     index): POST /tokenize takes {"content", "add_special" (default
//     false), "with_pieces" (default false)} and answers {"tokens": [id…]},
//     or with pieces {"tokens": [{"id", "piece"}…]}; no content is an
//     empty list.
//
// Ollama has no tokenizer endpoint: its formats answer 404 as for any
// other path.

// tokenizeRoute reports the format's tokenizer handler, nil for none.
func (s *Server) tokenizeRoute() handler {
	switch s.f.Server() {
	case "vllm":
		return s.vllmTokenize
	case "tgi":
		return s.tgiTokenize
	case "llamacpp":
		return s.llamaTokenize
	}
	return nil
}

// bos is the id of the begin-of-sequence token Options.Pieces adds.
const bos = 1

// pieces returns the scripted tokenizer's tokens of text, with the
// begin-of-sequence token first when special is set and the tokenizer
// has one (Options.Pieces): their ids and texts (the BOS's text empty).
// Their number, with special, is promptTokens(text) for any text that
// holds a word.
func (s *Server) pieces(text string, special bool) (ids []int, texts []string) {
	if special && s.o.Pieces > 0 {
		ids, texts = append(ids, bos), append(texts, "")
	}
	for _, w := range strings.Fields(text) {
		size := len(w)
		if s.o.Pieces > 0 {
			size = s.o.Pieces
		}
		for len(w) > 0 {
			p := w[:min(size, len(w))]
			w = w[len(p):]
			h := fnv.New32a()
			_, _ = h.Write([]byte(p))
			ids, texts = append(ids, 100+int(h.Sum32()%30000)), append(texts, p)
		}
	}
	return ids, texts
}

func (s *Server) vllmTokenize(w http.ResponseWriter, r *http.Request, body []byte) {
	fields, _ := decodeFields(body)
	ct := strings.ToLower(r.Header.Get("Content-Type"))
	if mt, _, _ := strings.Cut(ct, ";"); mt != "application/json" || fields == nil {
		s.notScripted(w, r, "a /tokenize body that is not a JSON object")
		return
	}
	if m, ok := stringField(fields, "model"); ok && m != "" && m != s.o.Model {
		s.reply(w, r, http.StatusNotFound, "application/json", []byte(vllmError(
			"The model `"+m+"` does not exist.", "NotFoundError", q("model"), http.StatusNotFound)))
		return
	}
	var ids []int
	if raw, ok := fields["messages"]; ok {
		var msgs []chatMessage
		_ = json.Unmarshal(raw, &msgs)
		// The template begins with the BOS whatever add_special_tokens
		// says (its default, false, adds none on top).
		ids, _ = s.pieces(chatText(msgs), true)
	} else {
		p, ok := stringField(fields, "prompt")
		if !ok {
			s.notScripted(w, r, "a /tokenize body without prompt or messages")
			return
		}
		special := true
		if raw, ok := fields["add_special_tokens"]; ok {
			_ = json.Unmarshal(raw, &special)
		}
		ids, _ = s.pieces(p, special)
	}
	if ids == nil {
		ids = []int{}
	}
	js, _ := json.Marshal(map[string]any{"count": len(ids), "max_model_len": s.o.ContextLen, "tokens": ids, "token_strs": nil})
	s.reply(w, r, http.StatusOK, "application/json", js)
}

func (s *Server) tgiTokenize(w http.ResponseWriter, r *http.Request, body []byte) {
	if !s.tgiAccept(w, r) {
		return
	}
	var req struct {
		Inputs *string `json:"inputs"`
	}
	if json.Unmarshal(body, &req) != nil || req.Inputs == nil {
		s.notScripted(w, r, "a /tokenize body without inputs")
		return
	}
	ids, texts := s.pieces(*req.Inputs, true)
	type simpleToken struct {
		ID    int    `json:"id"`
		Text  string `json:"text"`
		Start int    `json:"start"`
		Stop  int    `json:"stop"`
	}
	out := []simpleToken{}
	at := 0 // byte offset of the search; the words are ASCII in tests, so bytes are characters
	for i, id := range ids {
		if texts[i] == "" {
			out = append(out, simpleToken{ID: id})
			continue
		}
		k := strings.Index((*req.Inputs)[at:], texts[i]) + at
		out = append(out, simpleToken{ID: id, Text: texts[i], Start: k, Stop: k + len(texts[i])})
		at = k + len(texts[i])
	}
	js, _ := json.Marshal(out)
	s.reply(w, r, http.StatusOK, "application/json", js)
}

func (s *Server) llamaTokenize(w http.ResponseWriter, r *http.Request, body []byte) {
	var req struct {
		Content    *string `json:"content"`
		AddSpecial bool    `json:"add_special"`
		WithPieces bool    `json:"with_pieces"`
	}
	if json.Unmarshal(body, &req) != nil {
		s.notScripted(w, r, "a /tokenize body that is not JSON")
		return
	}
	var tokens []any
	if req.Content != nil {
		ids, texts := s.pieces(*req.Content, req.AddSpecial)
		for i, id := range ids {
			if req.WithPieces {
				tokens = append(tokens, map[string]any{"id": id, "piece": texts[i]})
			} else {
				tokens = append(tokens, id)
			}
		}
	}
	if tokens == nil {
		tokens = []any{}
	}
	js, _ := json.Marshal(map[string]any{"tokens": tokens})
	s.reply(w, r, http.StatusOK, "application/json; charset=utf-8", js)
}
