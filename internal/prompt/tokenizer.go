package prompt

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
)

// A Counter counts the tokens of a text as a model server's tokenizer
// does, with whatever it adds to every text (a begin-of-sequence token).
type Counter interface {
	CountTokens(ctx context.Context, text string) (int, error)
}

// TokenizerShape is the request and answer shape of a server's tokenizer
// endpoint.
type TokenizerShape int

const (
	// VLLMTokenize is vLLM's POST /tokenize (vllm/entrypoints/serve/
	// tokenize/protocol.py: TokenizeCompletionRequest {"model", "prompt",
	// "add_special_tokens" (default true)} → TokenizeResponse {"count",
	// "max_model_len", "tokens", "token_strs"}; serving.py create_tokenize
	// counts the renderer's prompt_token_ids). openload's stub answers it
	// too, with cl100k_base.
	VLLMTokenize TokenizerShape = iota + 1
	// TGITokenize is Text Generation Inference's POST /tokenize
	// (router/src/server.rs tokenize: a GenerateRequest {"inputs"}, whose
	// add_special_tokens is always true, → a list of SimpleToken {"id",
	// "text", "start", "stop"}, router/src/lib.rs).
	TGITokenize
	// LlamaCppTokenize is llama.cpp's server's POST /tokenize
	// (tools/server/server.cpp handle_tokenize: {"content", "add_special"
	// (default false), "with_pieces"} → {"tokens": [id…]}). openload asks
	// with add_special true, as the server tokenizes a completion's
	// prompt (tokenize_input_prompts with add_special), so that the count
	// is the one its answers report.
	LlamaCppTokenize
)

func (s TokenizerShape) String() string {
	switch s {
	case VLLMTokenize:
		return "vLLM"
	case TGITokenize:
		return "TGI"
	case LlamaCppTokenize:
		return "llama.cpp"
	}
	return fmt.Sprintf("TokenizerShape(%d)", int(s))
}

// TokenizerShapes returns the shapes a server speaking api may answer
// its tokenizer in, in the order to try them: one for TGI's and
// llama.cpp's own APIs, the three for the OpenAI APIs (which all of
// those servers serve), none for Ollama's: Ollama has no tokenizer
// endpoint (server/routes.go routes none), and a calibration by its
// answers' prompt_eval_count would take a model request a word and has
// not been exact in every version: it left out cached prompt tokens
// (ollama/ollama#2068, #5370, fixed by #5371; again with the llama-server
// runner, #16414, fixed by #16428).
func TokenizerShapes(api API) []TokenizerShape {
	switch api {
	case TGI:
		return []TokenizerShape{TGITokenize}
	case LlamaCpp:
		return []TokenizerShape{LlamaCppTokenize}
	case Chat, Completions:
		return []TokenizerShape{VLLMTokenize, LlamaCppTokenize, TGITokenize}
	}
	return nil
}

// ServerTokenizer counts tokens by a server's tokenizer endpoint. It is a
// Counter, safe for concurrent use.
type ServerTokenizer struct {
	URL   string // the endpoint, e.g. http://host:8000/tokenize
	Shape TokenizerShape
	// Model is vLLM's "model" field; empty leaves it out (the server's
	// default model). The other shapes have none.
	Model  string
	Header http.Header  // sent with every request (an API key); Content-Type is JSON's
	Client *http.Client // nil: http.DefaultClient
}

// request is the body asking for text's tokens in t's shape.
func (t *ServerTokenizer) request(text string) ([]byte, error) {
	switch t.Shape {
	case VLLMTokenize:
		m := map[string]any{"prompt": text}
		if t.Model != "" {
			m["model"] = t.Model
		}
		return json.Marshal(m)
	case TGITokenize:
		return json.Marshal(map[string]any{"inputs": text})
	case LlamaCppTokenize:
		return json.Marshal(map[string]any{"content": text, "add_special": true})
	}
	return nil, fmt.Errorf("unknown tokenizer shape %v", t.Shape)
}

// count reads the number of tokens from an answer in t's shape, or says
// why it is not that shape's answer.
func (t *ServerTokenizer) count(body []byte) (int, error) {
	switch t.Shape {
	case VLLMTokenize:
		var a struct {
			Count  *int  `json:"count"`
			Tokens []int `json:"tokens"`
		}
		if err := json.Unmarshal(body, &a); err != nil || a.Count == nil || a.Tokens == nil {
			return 0, errors.New(`not vLLM's {"count", "tokens", …}`)
		}
		return *a.Count, nil
	case TGITokenize:
		var a []struct {
			ID *int `json:"id"`
		}
		if err := json.Unmarshal(body, &a); err != nil {
			return 0, errors.New(`not TGI's [{"id", "text", "start", "stop"}, …]`)
		}
		for _, tok := range a {
			if tok.ID == nil {
				return 0, errors.New(`not TGI's [{"id", "text", "start", "stop"}, …]`)
			}
		}
		return len(a), nil
	case LlamaCppTokenize:
		var a struct {
			Tokens []json.RawMessage `json:"tokens"`
			Count  *int              `json:"count"` // vLLM's: not llama.cpp's answer
		}
		if err := json.Unmarshal(body, &a); err != nil || a.Tokens == nil || a.Count != nil {
			return 0, errors.New(`not llama.cpp's {"tokens": […]}`)
		}
		return len(a.Tokens), nil
	}
	return 0, fmt.Errorf("unknown tokenizer shape %v", t.Shape)
}

// CountTokens returns the number of tokens the server counts in text,
// with what it adds to every text.
func (t *ServerTokenizer) CountTokens(ctx context.Context, text string) (int, error) {
	body, err := t.request(text)
	if err != nil {
		return 0, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, t.URL, bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	for k, v := range t.Header {
		req.Header[k] = v
	}
	req.Header.Set("Content-Type", "application/json")
	c := t.Client
	if c == nil {
		c = http.DefaultClient
	}
	resp, err := c.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	ans, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return 0, err
	}
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("POST %s: status %s: %s", t.URL, resp.Status, firstLine(ans))
	}
	n, err := t.count(ans)
	if err != nil {
		return 0, fmt.Errorf("POST %s: the answer is %v: %s", t.URL, err, firstLine(ans))
	}
	return n, nil
}

// firstLine is the start of an answer, for an error's one line.
func firstLine(b []byte) string {
	s, _, _ := strings.Cut(strings.TrimSpace(string(b)), "\n")
	if len(s) > 120 {
		s = s[:120] + "…"
	}
	return s
}

// FindTokenizer returns t in the first of shapes its endpoint answers as
// that shape's server does (a probe of one word each), so that the
// OpenAI APIs, which vLLM, TGI and llama.cpp all serve, find their
// server's tokenizer. The error says what each shape got.
func FindTokenizer(ctx context.Context, t ServerTokenizer, shapes []TokenizerShape) (*ServerTokenizer, error) {
	if len(shapes) == 0 {
		return nil, errors.New("no tokenizer shape to ask in")
	}
	var why, as []string
	same := true
	for _, s := range shapes {
		t.Shape = s
		if _, err := t.CountTokens(ctx, "the"); err != nil {
			why, as = append(why, err.Error()), append(as, s.String())
			same = same && why[0] == err.Error()
			continue
		}
		return &t, nil
	}
	if same { // one answer to every shape (a 404): say it once
		if len(as) == 1 {
			return nil, errors.New(why[0])
		}
		return nil, fmt.Errorf("%s (asked as %s)", why[0], strings.Join(as, ", "))
	}
	for i := range why {
		why[i] = "as " + as[i] + ": " + why[i]
	}
	return nil, errors.New(strings.Join(why, "; "))
}

// Vocabulary is the words generated prompts are made of (Spec.Words),
// each one token of a tokenizer both alone and after a space, and the
// tokens that tokenizer adds to every text (a BOS), so that a prompt of
// n of them separated by single spaces counts n + Added.
type Vocabulary struct {
	Words []string
	Added int
}

// Words returns the number of built-in words (Text), the most a
// Vocabulary holds.
func Words() int { return len(words) }

// minWords is the fewest words a Vocabulary may hold: fewer would make
// prompts that repeat one another's 16-word blocks (a prefix cache's
// unit) too often by chance (1 in 64¹⁶ at the least).
const minWords = 64

// ServerVocabulary asks c which of the built-in words (cl100k_base's
// one-token words, Text) are one token of c's tokenizer too, both alone
// and after a space, with at most parallel questions at once (at least
// 1). One question a word, 748 in all: the count of "w w" is t(w) +
// t(" w") + a (no word-level tokenizer joins two words across a space; a
// is what the tokenizer adds to every text), and as each term is at
// least one token, it is 2 + a exactly when w is one token both ways.
// a is the least count less two, which holds while some word is one
// token both ways (with 748 common words, any subword vocabulary's); the
// sample CheckPrompts counts afterwards catches a tokenizer these rules
// do not fit. The words keep the built-in order, so every shard that
// asks the same tokenizer gets the same Vocabulary and makes the same
// prompts.
func ServerVocabulary(ctx context.Context, c Counter, parallel int) (Vocabulary, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	twice := make([]int, len(words))
	var (
		wg    sync.WaitGroup
		once  sync.Once
		first error
		next  = make(chan int)
	)
	for range max(parallel, 1) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				n, err := c.CountTokens(ctx, words[i]+" "+words[i])
				if err != nil {
					once.Do(func() { first = err; cancel() })
					continue
				}
				twice[i] = n
			}
		}()
	}
feed:
	for i := range words {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	if first != nil {
		return Vocabulary{}, first
	}
	if err := ctx.Err(); err != nil {
		return Vocabulary{}, err
	}
	least := slices.Min(twice)
	if least < 2 {
		return Vocabulary{}, fmt.Errorf("the tokenizer counts %d tokens in a word said twice", least)
	}
	v := Vocabulary{Added: least - 2}
	for i, w := range words {
		if twice[i] == least {
			v.Words = append(v.Words, w)
		}
	}
	if len(v.Words) < minWords {
		return Vocabulary{}, fmt.Errorf("only %d of openload's %d words are one token of this tokenizer, too few to make prompts of (at least %d)", len(v.Words), len(words), minWords)
	}
	return v, nil
}

// CheckPrompts counts the prompts of up to sample bodies of s (spread
// over s.Count) with c, and returns an error unless each counts its
// tokens (PrefixTokens + its drawn length) + added: what ServerVocabulary
// assumed, checked on whole prompts. It returns the bodies counted.
func CheckPrompts(ctx context.Context, c Counter, s Spec, added, sample int) (int, error) {
	n := min(max(sample, 1), s.Count)
	prefixes := map[int]string{}
	var b strings.Builder
	for k := range n {
		i := k * s.Count / n
		b.Reset()
		want := s.writePrompt(&b, i, prefixes) + added
		got, err := c.CountTokens(ctx, b.String())
		if err != nil {
			return k, err
		}
		if got != want {
			return k, fmt.Errorf("prompt %d of %d words counts %d tokens, not %d (%d added to every text)", i+1, want-added, got, want, added)
		}
	}
	return n, nil
}
