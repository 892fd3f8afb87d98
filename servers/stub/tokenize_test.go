package stub

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/openload/openload/internal/prompt"
)

type tokenizeAnswer struct {
	Count       int       `json:"count"`
	MaxModelLen int       `json:"max_model_len"`
	Tokens      []int     `json:"tokens"`
	TokenStrs   *[]string `json:"token_strs"`
}

func tokenize(t *testing.T, c *http.Client, s *Server, body string) (int, tokenizeAnswer, string) {
	t.Helper()
	r := post(context.Background(), t, c, s.URL+pathTokenize, body)
	if r.err != nil {
		t.Fatal(r.err)
	}
	var a tokenizeAnswer
	if r.status == http.StatusOK {
		if err := json.Unmarshal(r.body, &a); err != nil {
			t.Fatalf("%s: %v", r.body, err)
		}
	}
	return r.status, a, string(r.body)
}

// POST /tokenize answers in vLLM's shape with cl100k_base's tokens, and
// its count is the usage.prompt_tokens a completion of the same prompt
// reports.
func TestTokenize(t *testing.T) {
	s := startServer(t, tokenConfig(nil), nil)
	c := newClient(t)
	status, a, raw := tokenize(t, c, s, `{"model":"m","prompt":"tiktoken is great!"}`)
	want := []int{83, 1609, 5963, 374, 2294, 0} // OpenAI cookbook, "How to count tokens with tiktoken"
	if status != http.StatusOK || a.Count != 6 || !slices.Equal(a.Tokens, want) || a.MaxModelLen != maxModelLen || a.TokenStrs != nil ||
		!strings.Contains(raw, `"token_strs":null`) {
		t.Errorf("prompt: %d %s", status, raw)
	}
	status, a, raw = tokenize(t, c, s, `{"messages":[{"role":"system","content":"tiktoken"},{"role":"user","content":[{"type":"text","text":" is great!"}]}]}`)
	if status != http.StatusOK || a.Count != 6 || !slices.Equal(a.Tokens, want) {
		t.Errorf("messages: %d %s, want the contents' tokens in order", status, raw)
	}
	if status, a, raw = tokenize(t, c, s, `{"prompt":""}`); status != http.StatusOK || a.Count != 0 || !strings.Contains(raw, `"tokens":[]`) {
		t.Errorf("empty prompt: %d %s", status, raw)
	}

	for _, tc := range []struct{ path, body string }{
		{pathCompletions, `{"model":"m","max_tokens":1,"prompt":"The quick brown fox, in 2026."}`},
		{pathChat, `{"model":"m","max_tokens":1,"messages":[{"role":"user","content":"héllo wörld"},{"role":"assistant","content":"ok"}]}`},
	} {
		r := post(context.Background(), t, c, s.URL+tc.path, tc.body)
		ch := decodeChunk(t, string(r.body))
		_, a, raw := tokenize(t, c, s, tc.body) // /tokenize ignores max_tokens, as vLLM's ignores extra fields
		if r.status != http.StatusOK || ch.Usage == nil || ch.Usage.PromptTokens != a.Count || a.Count == 0 {
			t.Errorf("%s: usage %+v, /tokenize %s", tc.path, ch.Usage, raw)
		}
	}

	for _, tc := range []struct{ body, err string }{
		{`{`, "not valid JSON"},
		{`{"model":"m"}`, "a prompt or messages"},
		{`{"prompt":"a","messages":[{"role":"user","content":"b"}]}`, "not both"},
		{`{"messages":[]}`, "non-empty"},
		{`{"prompt":[1,2]}`, "not valid JSON"},
	} {
		if status, _, raw := tokenize(t, c, s, tc.body); status != http.StatusBadRequest || !strings.Contains(raw, tc.err) || !strings.Contains(raw, "invalid_request_error") {
			t.Errorf("%s: %d %s, want 400 saying %q", tc.body, status, raw, tc.err)
		}
	}
	resp, err := c.Get(s.URL + pathTokenize)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Allow") != http.MethodPost {
		t.Errorf("GET /tokenize: %d, Allow %q", resp.StatusCode, resp.Header.Get("Allow"))
	}
	if st := s.Stats(); st.Sources.Model != 2 {
		t.Errorf("%d model answers, want the 2 completions: /tokenize is not a model request", st.Sources.Model)
	}
}

// Generated chat prompts count, by the stub's /tokenize, exactly the
// tokens they were drawn with; the log gives the figures asked and
// counted per length.
func TestTokenizeGeneratedPrompts(t *testing.T) {
	s := startServer(t, tokenConfig(nil), nil)
	c := newClient(t)
	n := 1000
	if testing.Short() {
		n = 200
	}
	for _, l := range []prompt.Length{{N: 128}, {N: 1024}, {N: 1024, Spread: 0.1}} {
		bodies, err := prompt.Generate(prompt.Spec{API: prompt.Chat, Model: "m", Prompt: l, Output: prompt.Length{N: 16}, Seed: 1, Count: n})
		if err != nil {
			t.Fatal(err)
		}
		asked, counted := make([]int, n), make([]int, n)
		for i, b := range bodies {
			var v struct {
				Model    string            `json:"model"`
				Messages []json.RawMessage `json:"messages"`
			}
			if err := json.Unmarshal(b.JSON, &v); err != nil {
				t.Fatal(err)
			}
			req, _ := json.Marshal(v)
			status, a, raw := tokenize(t, c, s, string(req))
			if status != http.StatusOK {
				t.Fatalf("body %d: %d %s", i, status, raw)
			}
			asked[i], counted[i] = b.PromptTokens, a.Count
			if a.Count != b.PromptTokens {
				t.Errorf("%v body %d: drawn %d tokens, /tokenize counts %d", l, i, b.PromptTokens, a.Count)
			}
		}
		lo, hi := l.Bounds()
		t.Logf("N %-9v (bounds [%d, %d]) over %d chat bodies: asked p50 %d min %d max %d; /tokenize p50 %d min %d max %d",
			l, lo, hi, n, p50(asked), slices.Min(asked), slices.Max(asked), p50(counted), slices.Min(counted), slices.Max(counted))
	}
}

func p50(v []int) int {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[(len(s)-1)/2]
}
