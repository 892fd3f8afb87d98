package prompt_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/openload/openload/internal/prompt"
	"github.com/openload/openload/servers/scripted"
	"github.com/openload/openload/servers/stub"
)

// post sends body to url and returns the answer's status, Content-Type
// and body.
func post(t *testing.T, url string, body []byte) (int, string, []byte) {
	t.Helper()
	resp, err := http.Post(url, "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	got, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header.Get("Content-Type"), got
}

// scriptedText is the text of scripted tokens from to to, to excluded:
// token i is " tok<i+1>" (servers/scripted, doc.go "The known answer").
func scriptedText(from, to int) string {
	var b strings.Builder
	for i := from; i < to; i++ {
		b.WriteString(" tok" + strconv.Itoa(i+1))
	}
	return b.String()
}

// Every scripted server (vLLM, TGI, llama.cpp, Ollama, each endpoint)
// answers a turn body made by TurnBody, and AnswerText finds the answer
// it wrote: all of it; without the thinking where the format streams it
// apart; the tokens before an error event, with an error.
func TestAnswerTextScripted(t *testing.T) {
	const n = 5
	history := []prompt.Message{
		{Role: "system", Content: "Be brief."},
		{Role: "user", Content: "one two three"},
		{Role: "assistant", Content: " tok1 tok2"},
		{Role: "user", Content: "four five"},
	}
	ran := map[string]int{}
	for _, f := range scripted.Formats() {
		api, err := prompt.APIOf(f.Path())
		if err != nil {
			t.Fatal(err)
		}
		body, err := api.TurnBody("m", history, n, false, prompt.Extra{})
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			name string
			o    scripted.Options
			want string // "" with wantErr: only a prefix of the answer
			err  bool
		}{
			{"answer", scripted.Options{}, scriptedText(0, n), false},
			{"thinking", scripted.Options{Thinking: 2}, scriptedText(2, n), false},
			{"empty tokens", scripted.Options{EmptyEvery: 2}, scriptedText(0, n), false},
			{"error", scripted.Options{Cut: scripted.CutError, CutAfter: 2, LlamaCppErrorLine: true}, scriptedText(0, 2), true},
		} {
			c.o.Model = "m"
			srv := httptest.NewServer(scripted.New(f, c.o))
			status, ct, got := post(t, srv.URL+f.Path(), body)
			srv.Close()
			if status == http.StatusNotImplemented {
				continue // the format has no such answer (scripted, doc.go)
			}
			if status != http.StatusOK {
				t.Fatalf("%v %s: status %d: %s", f, c.name, status, got)
			}
			ran[c.name]++
			text, err := prompt.AnswerText(ct, got)
			if (err != nil) != c.err || text != c.want {
				t.Errorf("%v %s: %q, %v; want %q (an error: %v)\n%s", f, c.name, text, err, c.want, c.err, got)
			}
		}
	}
	// What servers/scripted scripts (doc.go): every format answers;
	// Ollama's native endpoints, vLLM chat and llama.cpp chat stream
	// thinking apart; vLLM's formats write empty tokens; vLLM chat,
	// Ollama's native endpoints and llama.cpp's (its older error line)
	// write an error event.
	want := map[string]int{"answer": 9, "thinking": 4, "empty tokens": 2, "error": 5}
	for name, n := range want {
		if ran[name] != n {
			t.Errorf("%s: %d formats answered, want %d", name, ran[name], n)
		}
	}
}

// The stub's answers, streamed and whole, in both OpenAI grammars: its
// tokens cycle " lorem", " ipsum", … (servers/stub tokens.go).
func TestAnswerTextStub(t *testing.T) {
	srv := newStub(t, 0)
	const want = " lorem ipsum dolor sit amet consectetur adipiscing elit lorem"
	msgs := []prompt.Message{{Role: "user", Content: "say something"}}
	for _, api := range []prompt.API{prompt.Chat, prompt.Completions} {
		path := "/v1/chat/completions"
		whole := `{"model":"m","messages":[{"role":"user","content":"say something"}],"max_tokens":9}`
		if api == prompt.Completions {
			path = "/v1/completions"
			whole = `{"model":"m","prompt":"say something","max_tokens":9}`
		}
		streamed, err := api.TurnBody("m", msgs, 9, false, prompt.Extra{})
		if err != nil {
			t.Fatal(err)
		}
		for _, body := range []string{string(streamed), whole} {
			status, ct, got := post(t, srv.URL+path, []byte(body))
			if status != http.StatusOK {
				t.Fatalf("%s: status %d: %s", api, status, got)
			}
			if text, err := prompt.AnswerText(ct, got); err != nil || text != want {
				t.Errorf("%s %s: %q, %v; want %q", api, ct, text, err, want)
			}
		}
	}
}

// newStub starts a stub that answers at once, with a prefix cache of
// cacheTokens (0: none), and closes it when the test ends.
func newStub(t *testing.T, cacheTokens int) *stub.Server {
	cfg := stub.DefaultConfig()
	cfg.Policy = stub.PolicyNone
	cfg.Prefill, cfg.ITL = 0, 0
	cfg.PrefixCacheTokens = cacheTokens
	srv, err := stub.NewServer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	return srv
}

// A conversation run against the stub's prefix cache, as the engine will
// run it: each turn's body is the conversation so far with the model's
// answers as AnswerText read them. Turn k+1 then begins with exactly the
// tokens of turn k's prompt and answer, in the chat grammar and in the
// completions one (promptText's join), so the stub finds all of their
// whole blocks cached but the last token, and its prompt count is the sum
// of the messages' tokens. Another conversation's first turn finds the
// shared system prompt's blocks.
func TestConversationPrefixCache(t *testing.T) {
	const block = 16 // stub.DefaultConfig's PrefixCacheBlock
	spec := prompt.ConversationSpec{
		Model: "m", Turns: 3, User: prompt.Length{N: 40, Spread: 0.5}, Output: prompt.Length{N: 20, Spread: 0.5},
		System: 37, SharedSystem: true, Seed: 7, IgnoreEOS: true,
	}
	for _, api := range []prompt.API{prompt.Chat, prompt.Completions} {
		spec.API = api
		if err := spec.Validate(); err != nil {
			t.Fatal(err)
		}
		srv := newStub(t, 1<<20)
		path := "/v1/chat/completions"
		if api == prompt.Completions {
			path = "/v1/completions"
		}
		for i := range uint64(2) {
			c := spec.Synthetic(i)
			history := []prompt.Message{{Role: "system", Content: c.System}}
			prev := 0 // tokens of the last turn's prompt and answer
			sum := prompt.Count(c.System)
			for k, user := range c.Users {
				history = append(history, prompt.Message{Role: "user", Content: user})
				sum += c.UserTokens[k]
				body, err := api.TurnBody(spec.Model, history, c.MaxTokens[k], spec.IgnoreEOS, spec.Extra)
				if err != nil {
					t.Fatal(err)
				}
				status, ct, got := post(t, srv.URL+path, body)
				if status != http.StatusOK {
					t.Fatalf("%s: status %d: %s", api, status, got)
				}
				answer, err := prompt.AnswerText(ct, got)
				if err != nil {
					t.Fatal(err)
				}
				u := stubUsage(t, got)
				wantCached := (prev - 1) / block * block
				if k == 0 && i > 0 {
					wantCached = prompt.Count(c.System) / block * block // the shared system prompt
				}
				if u.PromptTokens != sum || u.Cached != max(wantCached, 0) || u.CompletionTokens != c.MaxTokens[k] {
					t.Errorf("%s conversation %d turn %d: usage %+v; want %d prompt tokens, %d cached, %d completion",
						api, i, k, u, sum, wantCached, c.MaxTokens[k])
				}
				history = append(history, prompt.Message{Role: "assistant", Content: answer})
				sum += prompt.Count(answer)
				prev = sum
			}
		}
	}
}

type usage struct {
	PromptTokens, CompletionTokens, Cached int
}

// stubUsage is the usage chunk of a stub's stream.
func stubUsage(t *testing.T, body []byte) usage {
	t.Helper()
	for _, line := range strings.Split(string(body), "\n") {
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok || data == "[DONE]" {
			continue
		}
		var ev struct {
			Usage *struct {
				PromptTokens        int `json:"prompt_tokens"`
				CompletionTokens    int `json:"completion_tokens"`
				PromptTokensDetails *struct {
					CachedTokens int `json:"cached_tokens"`
				} `json:"prompt_tokens_details"`
			} `json:"usage"`
		}
		if err := json.Unmarshal([]byte(data), &ev); err != nil {
			t.Fatal(err)
		}
		if ev.Usage != nil {
			u := usage{PromptTokens: ev.Usage.PromptTokens, CompletionTokens: ev.Usage.CompletionTokens}
			if d := ev.Usage.PromptTokensDetails; d != nil {
				u.Cached = d.CachedTokens
			}
			return u
		}
	}
	t.Fatalf("no usage in %s", body)
	return usage{}
}
