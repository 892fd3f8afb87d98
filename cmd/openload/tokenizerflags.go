package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/openload/openload/internal/engine"
	"github.com/openload/openload/internal/loadtest"
	"github.com/openload/openload/internal/prompt"
)

// --tokenizer sizes generated prompts by the model's own tokenizer, as
// vLLM's benchmark --tokenizer and GuideLLM's --processor do, but asked
// of the server rather than loaded here: its /tokenize says which of
// openload's words are one of its tokens (prompt.ServerVocabulary), the
// prompts are made of those, and a sample of whole prompts is counted
// before the run (prompt.CheckPrompts).
const (
	tokenizerDefault = "cl100k_base"
	tokenizerServer  = "server"
	// cl100kNote ends the prompts note of a run counted by cl100k_base;
	// a server's count replaces it (sizeByServer).
	cl100kNote = " (tokens counted with cl100k_base)"
	// tokenizerChecks is how many whole prompts are counted by the
	// server before the run, and tokenizerParallel how many of the
	// vocabulary's questions are asked at once.
	tokenizerChecks   = 8
	tokenizerParallel = 8
)

func (p *promptOptions) tokenizerFlag(fs *pflag.FlagSet) {
	fs.StringVar(&p.tokenizer, "tokenizer", tokenizerDefault, "with --prompt-tokens, the `NAME` of the tokenizer whose tokens N counts: cl100k_base; server, the target's own, asked of its POST /tokenize (vLLM, TGI, llama.cpp; Ollama has none), so that N is N of the model's tokens; or the URL of such an endpoint")
}

// validateTokenizer checks --tokenizer against the other prompt flags.
func (p *promptOptions) validateTokenizer(fs *pflag.FlagSet) error {
	if !fs.Changed("tokenizer") || p.tokenizer == tokenizerDefault {
		return nil
	}
	switch {
	case p.tokenizer != tokenizerServer && !isHTTPURL(p.tokenizer):
		return fmt.Errorf("--tokenizer %q: want cl100k_base, server, or the http(s) URL of a /tokenize endpoint", p.tokenizer)
	case p.dataset != "":
		return errors.New("--tokenizer applies to --prompt-tokens: a --dataset's prompts are the file's own, not sized (the server's counts of them are in its answers, reported after the run)")
	case p.promptTokens == "":
		return errors.New("--tokenizer applies to --prompt-tokens: it sizes generated prompts")
	}
	return nil
}

func isHTTPURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

// checkTokenizerAPI refuses a server tokenizer for an API whose server has
// none (prompt.TokenizerShapes).
func (p *promptOptions) checkTokenizerAPI(api prompt.API) error {
	if p.tokenizer == tokenizerDefault || prompt.TokenizerShapes(api) != nil {
		return nil
	}
	return fmt.Errorf("--tokenizer %s: Ollama (the %s API) has no tokenizer endpoint, and a calibration by its answers' prompt_eval_count would take a model request a word and is not exact in every version (cached tokens left out: ollama#5370, #16414); its answers' counts are reported after the run", p.tokenizer, api)
}

// sizeByServer remakes the generated bodies of words that are one token
// of the server's tokenizer, once the target is known (prepare), and
// checks a sample of whole prompts by the same endpoint. Every shard
// asks the same server, gets the same words and makes the same bodies.
func (p *promptOptions) sizeByServer(ctx context.Context, r *loadtest.Options) error {
	if p.tokenizer == tokenizerDefault || p.promptTokens == "" {
		return nil
	}
	where := p.tokenizer
	if where == tokenizerServer {
		u := url.URL{Scheme: r.URL.Scheme, User: r.URL.User, Host: r.URL.Host, Path: "/tokenize"}
		where = u.String()
	}
	fail := func(err error) error { return fmt.Errorf("--tokenizer %s: %v", p.tokenizer, err) }
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	h := http.Header{}
	for k, v := range r.Header {
		if !strings.EqualFold(k, "Content-Type") {
			h[k] = v
		}
	}
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: r.ClientTLS(), Proxy: nil, MaxIdleConnsPerHost: tokenizerParallel}}
	defer client.CloseIdleConnections()
	spec := p.generated
	tok, err := prompt.FindTokenizer(ctx, prompt.ServerTokenizer{URL: where, Model: spec.Model, Header: h, Client: client}, prompt.TokenizerShapes(spec.API))
	if err != nil {
		return fail(err)
	}
	v, err := prompt.ServerVocabulary(ctx, tok, tokenizerParallel)
	if err != nil {
		return fail(err)
	}
	spec.Words = v.Words
	bodies, err := prompt.Generate(spec)
	if err != nil {
		return fail(err)
	}
	checked, err := prompt.CheckPrompts(ctx, tok, spec, v.Added, tokenizerChecks)
	if err != nil {
		return fail(fmt.Errorf("%v: the server's tokenizer does not count openload's prompts word by word", err))
	}
	r.Bodies, r.BodyTokens = make([][]byte, len(bodies)), make([]engine.BodyTokens, len(bodies))
	for i, b := range bodies {
		r.Bodies[i], r.BodyTokens[i] = b.JSON, engine.BodyTokens{Prompt: b.PromptTokens, Asked: b.MaxTokens}
	}
	r.Body = r.Bodies[0]
	n := note(r)
	n.Prompts = strings.Replace(n.Prompts, cl100kNote, fmt.Sprintf(
		" (tokens counted by the server's tokenizer, %s POST %s: %d of openload's %d words are one token; %d prompts counted N + %d, the tokens it adds to each, e.g. a BOS)",
		tok.Shape, where, len(v.Words), prompt.Words(), checked, v.Added), 1)
	return nil
}
