package prompt_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/openload/openload/internal/prompt"
	"github.com/openload/openload/servers/scripted"
)

// The scripted servers' own tokenizer (Options.Pieces 4: a word is
// ⌈bytes/4⌉ tokens, and a BOS begins every prompt) is not cl100k_base:
// prompts of the built-in words count more than asked, by each server's
// /tokenize and by its answers. ServerVocabulary finds, in each server's
// shape (probed for the OpenAI endpoints), the words of at most 4 bytes
// and the one token added; prompts of those words count as asked + 1, by
// CheckPrompts and by the usage the server answers a body with.
func TestServerVocabularyScripted(t *testing.T) {
	ctx := context.Background()
	for _, f := range []scripted.Format{scripted.VLLMChat, scripted.VLLMCompletions, scripted.TGIGenerateStream,
		scripted.TGIChat, scripted.LlamaCppCompletion, scripted.LlamaCppChat} {
		t.Run(f.String(), func(t *testing.T) {
			srv := httptest.NewServer(scripted.New(f, scripted.Options{Model: "m", Pieces: 4, ContextLen: 4096}))
			defer srv.Close()
			api, err := prompt.APIOf(f.Path())
			if err != nil {
				t.Fatal(err)
			}
			tok, err := prompt.FindTokenizer(ctx, prompt.ServerTokenizer{URL: srv.URL + "/tokenize", Model: "m"}, prompt.TokenizerShapes(api))
			if err != nil {
				t.Fatal(err)
			}
			if want := map[string]prompt.TokenizerShape{"vllm": prompt.VLLMTokenize, "tgi": prompt.TGITokenize, "llamacpp": prompt.LlamaCppTokenize}[f.Server()]; tok.Shape != want {
				t.Fatalf("found %v, want %v", tok.Shape, want)
			}
			v, err := prompt.ServerVocabulary(ctx, tok, 4)
			if err != nil {
				t.Fatal(err)
			}
			if v.Added != 1 || len(v.Words) < 300 {
				t.Fatalf("added %d, %d words; want 1 and the ~390 words of ≤ 4 bytes", v.Added, len(v.Words))
			}
			for _, w := range v.Words {
				if len(w) > 4 {
					t.Fatalf("word %q is 2 tokens", w)
				}
			}
			spec := prompt.Spec{API: api, Model: "m", Prompt: prompt.Length{N: 256}, Output: prompt.Length{N: 1}, Seed: 3, Count: 5}
			def, err := prompt.CheckPrompts(ctx, tok, spec, v.Added, 8)
			if err == nil || def != 0 {
				t.Fatalf("cl100k_base's words: %d counted as asked, err %v; want a refusal of the first", def, err)
			}
			spec.Words = v.Words
			if n, err := prompt.CheckPrompts(ctx, tok, spec, v.Added, 8); err != nil || n != 5 {
				t.Fatalf("checked %d, err %v", n, err)
			}
			bodies, err := prompt.Generate(spec)
			if err != nil {
				t.Fatal(err)
			}
			for _, b := range bodies {
				if got := usagePrompt(t, srv.URL+f.Path(), b.JSON); got != 256+v.Added || b.PromptTokens != 256 {
					t.Fatalf("the server counts %d prompt tokens, the body %d; want 256 + %d", got, b.PromptTokens, v.Added)
				}
			}
		})
	}
}

// The stub's /tokenize is cl100k_base's, vLLM-shaped: every built-in word
// is one token, none added.
func TestServerVocabularyStub(t *testing.T) {
	srv := newStub(t, 0)
	tok := &prompt.ServerTokenizer{URL: srv.URL + "/tokenize", Shape: prompt.VLLMTokenize}
	v, err := prompt.ServerVocabulary(context.Background(), tok, 2)
	if err != nil {
		t.Fatal(err)
	}
	if v.Added != 0 || len(v.Words) != 748 {
		t.Fatalf("added %d, %d words; want 0 and all 748", v.Added, len(v.Words))
	}
}

// Ollama has no tokenizer endpoint: no shape to ask in.
func TestTokenizerShapesOllama(t *testing.T) {
	for _, api := range []prompt.API{prompt.OllamaChat, prompt.OllamaGenerate} {
		if s := prompt.TokenizerShapes(api); s != nil {
			t.Errorf("%v: %v", api, s)
		}
	}
}

// usagePrompt sends body to url and returns the prompt tokens the answer
// reports, in whichever field its server reports them.
func usagePrompt(t *testing.T, url string, body []byte) int {
	t.Helper()
	status, _, got := post(t, url, body)
	if status != 200 {
		t.Fatalf("status %d: %s", status, got)
	}
	n := -1
	for _, line := range strings.Split(string(got), "\n") {
		line = strings.TrimSpace(strings.TrimPrefix(line, "data:"))
		var ev struct {
			Usage *struct {
				Prompt int `json:"prompt_tokens"`
			} `json:"usage"`
			Evaluated *int `json:"tokens_evaluated"`
			Details   *struct {
				Input *int `json:"input_length"`
			} `json:"details"`
		}
		if json.Unmarshal([]byte(line), &ev) != nil {
			continue
		}
		switch {
		case ev.Usage != nil:
			n = ev.Usage.Prompt
		case ev.Evaluated != nil:
			n = *ev.Evaluated
		case ev.Details != nil && ev.Details.Input != nil:
			n = *ev.Details.Input
		}
	}
	if n < 0 {
		t.Fatalf("no prompt count in %.300s", got)
	}
	return n
}

// counterFunc is a Counter of a function.
type counterFunc func(string) (int, error)

func (f counterFunc) CountTokens(_ context.Context, text string) (int, error) { return f(text) }

// ServerVocabulary's known answers on counters of known rules: a
// constant added to every text is measured; a tokenizer that splits
// most words leaves too few; an error of one question is the answer,
// and no question is left hanging.
func TestServerVocabularyRules(t *testing.T) {
	ctx := context.Background()
	v, err := prompt.ServerVocabulary(ctx, counterFunc(func(s string) (int, error) { return len(strings.Fields(s)) + 3, nil }), 3)
	if err != nil || v.Added != 3 || len(v.Words) != prompt.Words() {
		t.Errorf("words + 3: added %d, %d words, %v", v.Added, len(v.Words), err)
	}
	// A word of 2 bytes or fewer is one token, others two: 19 words.
	short := counterFunc(func(s string) (int, error) {
		n := 0
		for _, w := range strings.Fields(s) {
			n += min(len(w)-1, 2)
		}
		return n, nil
	})
	if _, err := prompt.ServerVocabulary(ctx, short, 3); err == nil || !strings.Contains(err.Error(), "only 19 of openload's 748 words") {
		t.Errorf("19 one-token words: %v", err)
	}
	fail := counterFunc(func(s string) (int, error) {
		if strings.HasPrefix(s, "bank ") {
			return 0, errors.New("status 500")
		}
		return 2, nil
	})
	if _, err := prompt.ServerVocabulary(ctx, fail, 4); err == nil || err.Error() != "status 500" {
		t.Errorf("a failed question: %v", err)
	}
}
