package stub

import (
	"encoding/json"
	"io"
	"net/http"

	"github.com/openload/openload/internal/prompt"
)

// POST /tokenize answers as vLLM's does (vllm/entrypoints/serve/tokenize:
// TokenizeCompletionRequest {"model", "prompt"} or TokenizeChatRequest
// {"model", "messages"}, answered by TokenizeResponse {"count",
// "max_model_len", "tokens", "token_strs"}, token_strs null unless
// return_token_strs is asked, which the stub does not do). The tokens are
// cl100k_base's, as the completion endpoints count them: count is the
// usage.prompt_tokens a completion of the same prompt reports. vLLM
// renders messages through the model's chat template first; the stub has
// none, so a chat's tokens are its text contents' in order. Not a model
// request: no gate, not counted in Stats.
type tokenizeRequest struct {
	Model    *string     `json:"model"` // any name, or none: the stub tokenizes for every model alike
	Prompt   *string     `json:"prompt"`
	Messages []oaMessage `json:"messages"`
}

type tokenizeResponse struct {
	Count       int       `json:"count"`
	MaxModelLen int       `json:"max_model_len"`
	Tokens      []int     `json:"tokens"`
	TokenStrs   *[]string `json:"token_strs"`
}

func (s *Server) serveTokenize(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	switch {
	case err != nil:
		writeOAError(w, http.StatusBadRequest, badRequest("", "reading the request body: %v", err))
		return
	case len(body) > maxBody:
		writeOAError(w, http.StatusBadRequest, badRequest("", "the request body exceeds %d bytes", maxBody))
		return
	}
	var req tokenizeRequest
	if err := json.Unmarshal(body, &req); err != nil {
		writeOAError(w, http.StatusBadRequest, badRequest("", "the request body is not valid JSON for this endpoint: %v", err))
		return
	}
	var texts []string
	switch {
	case req.Prompt != nil && req.Messages != nil:
		writeOAError(w, http.StatusBadRequest, badRequest("", "give prompt or messages, not both"))
		return
	case req.Prompt != nil:
		texts = []string{*req.Prompt}
	default:
		var oerr *oaError
		if texts, oerr = chatTexts(req.Messages); oerr != nil {
			if req.Messages == nil {
				oerr = badRequest("", "you must provide a prompt or messages")
			}
			writeOAError(w, http.StatusBadRequest, oerr)
			return
		}
	}
	ans := tokenizeResponse{MaxModelLen: maxModelLen, Tokens: []int{}}
	for _, t := range texts {
		ans.Tokens = append(ans.Tokens, prompt.Tokens(t)...)
	}
	ans.Count = len(ans.Tokens)
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(ans)
}
