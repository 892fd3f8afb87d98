package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openload/openload/servers/scripted"
)

// TestTokenizerServer: against servers whose tokenizer is not cl100k_base
// (scripted Options.Pieces 4: a word is ⌈bytes/4⌉ tokens, and a BOS
// begins every prompt), --prompt-tokens 256 by default gives prompts the
// server counts otherwise; with --tokenizer server every request's
// prompt is 256 of the server's tokens + the BOS, by the server's own
// count in its answers, in each server's tokenizer shape, and the note
// says who counted.
func TestTokenizerServer(t *testing.T) {
	for _, f := range []scripted.Format{scripted.VLLMChat, scripted.VLLMCompletions, scripted.TGIGenerateStream,
		scripted.TGIChat, scripted.LlamaCppCompletion, scripted.LlamaCppChat} {
		t.Run(f.String(), func(t *testing.T) {
			h := scripted.New(f, scripted.Options{Model: "m", Pieces: 4, ContextLen: 4096})
			srv := httptest.NewServer(h)
			defer srv.Close()
			dir := t.TempDir()
			run := func(name string, extra ...string) (min, max int64, note string) {
				out := filepath.Join(dir, name+".json")
				args := append([]string{"-rate", "20", "-d", "400ms", "-q", "-o", out, "--model", "m", "--seed", "1", "--prompt-tokens", "256", "--output-tokens", "2"}, extra...)
				runOK(t, append(args, srv.URL+f.Path())...)
				res := readResult(t, out)
				p := res.Stream.PromptTokens
				if res.Status["200"] != 8 || p == nil || p.Requests != 8 {
					t.Fatalf("%s: status %v, prompt tokens %+v", name, res.Status, p)
				}
				return p.Min, p.Max, res.Config.Request.Prompts
			}
			dmin, dmax, dnote := run("default")
			smin, smax, snote := run("server", "--tokenizer", "server")
			t.Logf("%s: --prompt-tokens 256, the server counts %d–%d by default, %d–%d with --tokenizer server", f, dmin, dmax, smin, smax)
			if dmin == 257 && dmax == 257 {
				t.Errorf("by default the server counts 257: the scripted tokenizer is cl100k_base's?")
			}
			if smin != 257 || smax != 257 {
				t.Errorf("with --tokenizer server the server counts %d–%d, want 256 + its BOS for every request", smin, smax)
			}
			if f == scripted.VLLMChat { // the endpoint named by its URL
				if umin, umax, unote := run("url", "--tokenizer", srv.URL+"/tokenize"); umin != 257 || umax != 257 || !strings.Contains(unote, "vLLM POST "+srv.URL+"/tokenize") {
					t.Errorf("--tokenizer URL: the server counts %d–%d; note %q", umin, umax, unote)
				}
			}
			if !strings.Contains(dnote, "(tokens counted with cl100k_base)") || !strings.Contains(snote, "tokens counted by the server's tokenizer") ||
				!strings.Contains(snote, "prompts counted N + 1, the tokens it adds to each") {
				t.Errorf("notes %q and %q", dnote, snote)
			}
		})
	}
}

// The built-in stub's /tokenize is cl100k_base's: --tokenizer server
// keeps every word and adds nothing.
func TestTokenizerBuiltinStub(t *testing.T) {
	out := filepath.Join(t.TempDir(), "r.json")
	runOK(t, "-rate", "20", "-d", "200ms", "-q", "-o", out, "--prompt-tokens", "32", "--model", "auto", "--tokenizer", "server")
	note := readResult(t, out).Config.Request.Prompts
	if !strings.Contains(note, "vLLM POST http://") || !strings.Contains(note, ": 748 of openload's 748 words") || !strings.Contains(note, "counted N + 0") {
		t.Errorf("note %q", note)
	}
}

func TestTokenizerFlagErrors(t *testing.T) {
	const u = "http://127.0.0.1:1/v1/chat/completions"
	ollama := httptest.NewServer(scripted.New(scripted.OllamaOpenAIChat, scripted.Options{Model: "m"}))
	defer ollama.Close()
	// A tokenizer that counts words, but one more past 100 of them: the
	// words pass, whole prompts do not.
	odd := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct{ Prompt string }
		_ = json.NewDecoder(r.Body).Decode(&req)
		n := len(strings.Fields(req.Prompt))
		if n > 100 {
			n++
		}
		fmt.Fprintf(w, `{"count":%d,"max_model_len":4096,"tokens":[%s]}`, n, strings.TrimSuffix(strings.Repeat("1,", n), ","))
	}))
	defer odd.Close()
	cases := []struct {
		args []string
		want string
		code int
	}{
		{[]string{"--tokenizer", odd.URL + "/tokenize", "--prompt-tokens", "256", "--model", "m", u}, "--tokenizer " + odd.URL + "/tokenize: prompt 1 of 256 words counts 257 tokens, not 256 (0 added to every text): the server's tokenizer does not count openload's prompts word by word", 0},
		{[]string{"--tokenizer", "server", u}, "--tokenizer applies to --prompt-tokens: it sizes generated prompts", exitUsage},
		{[]string{"--tokenizer", "o200k", "--prompt-tokens", "8", u}, `--tokenizer "o200k": want cl100k_base, server, or the http(s) URL`, exitUsage},
		{[]string{"--tokenizer", "server", "--dataset", "../../internal/prompt/testdata/sharegpt.json", u}, "a --dataset's prompts are the file's own", exitUsage},
		{[]string{"--tokenizer", "server", "--prompt-tokens", "8", "http://127.0.0.1:1/api/chat"}, "--tokenizer server: Ollama (the ollama-chat API) has no tokenizer endpoint", exitUsage},
		{[]string{"--tokenizer", "server", "--prompt-tokens", "8", "--model", "m", ollama.URL + "/v1/chat/completions"}, "--tokenizer server: POST " + ollama.URL + "/tokenize: status 404", 0},
	}
	for _, c := range cases {
		code, _, stderr := runCLI(append([]string{"-rate", "10", "-d", "1s"}, c.args...)...)
		first, _, _ := strings.Cut(stderr, "\n")
		if code == 0 || c.code != 0 && code != c.code || !strings.Contains(first, c.want) {
			t.Errorf("%v: exit %d, %q; want %q", c.args, code, first, c.want)
		}
	}
}
