package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// seen is what a scripted server read: each request's Content-Type and
// body.
type seen struct {
	mu     sync.Mutex
	types  []string
	bodies []string
	models int // GET /v1/models
}

// read returns what the server read so far, under its lock: the
// handler's goroutines wrote it.
func (s *seen) read() (types, bodies []string, models int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.types), slices.Clone(s.bodies), s.models
}

func (s *seen) server(t *testing.T, models string) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		defer s.mu.Unlock()
		if r.URL.Path == "/v1/models" {
			s.models++
			if models == "" {
				http.NotFound(w, r)
				return
			}
			io.WriteString(w, models)
			return
		}
		b, _ := io.ReadAll(r.Body)
		s.types = append(s.types, r.Header.Get("Content-Type"))
		s.bodies = append(s.bodies, string(b))
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestJSONBodiesSentAsJSON: a JSON --body or a .json/.jsonl --body-file
// goes with Content-Type: application/json unless -H names one; a body
// that is not JSON goes without.
func TestJSONBodiesSentAsJSON(t *testing.T) {
	dir := t.TempDir()
	lines := filepath.Join(dir, "p.jsonl")
	if err := os.WriteFile(lines, []byte("{\"a\":1}\n{\"a\":2}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	text := filepath.Join(dir, "p.txt")
	if err := os.WriteFile(text, []byte(`{"a":1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--body", `{"a":1}`}, "application/json"},
		{[]string{"--body-file", lines}, "application/json"},
		{[]string{"--body", `{"a":1}`, "-H", "Content-Type: text/plain"}, "text/plain"},
		{[]string{"--body", `a=1`}, ""},
		{[]string{"--body-file", text}, ""},
	}
	for _, c := range cases {
		var s seen
		srv := s.server(t, "")
		args := append([]string{"-rate", "20", "-d", "250ms", "-q"}, c.args...)
		if code, stdout, stderr := runCLI(append(args, srv.URL)...); code != exitOK {
			t.Fatalf("%v: exit %d\n%s%s", c.args, code, stdout, stderr)
		}
		types, _, _ := s.read()
		if len(types) != 5 {
			t.Fatalf("%v: the server read %d requests, want 5", c.args, len(types))
		}
		for _, ct := range types {
			if ct != c.want {
				t.Errorf("%v: Content-Type %q, want %q", c.args, ct, c.want)
			}
		}
	}
}

// TestModelFlag: --model NAME sets every JSON body's model; --model auto
// reads the target's /v1/models once, before the first request, and the
// result says where from; a failure is one line and nothing is sent.
func TestModelFlag(t *testing.T) {
	dir := t.TempDir()
	lines := filepath.Join(dir, "p.jsonl")
	if err := os.WriteFile(lines, []byte("{\"model\":\"x\",\"n\":1}\n{\"n\":2}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var s seen
	srv := s.server(t, `{"object":"list","data":[{"id":"served-7b","object":"model"},{"id":"other"}]}`)
	runOK(t, "-rate", "20", "-d", "200ms", "-q", "--model", "given", "--body-file", lines, srv.URL)
	want := []string{`{"model":"given","n":1}`, `{"model":"given","n":2}`, `{"model":"given","n":1}`, `{"model":"given","n":2}`}
	_, bodies, models := s.read()
	if strings.Join(bodies, "\n") != strings.Join(want, "\n") || models != 0 {
		t.Errorf("--model given: bodies\n%s\n/v1/models asked %d times", strings.Join(bodies, "\n"), models)
	}

	s = seen{}
	out := filepath.Join(dir, "auto.json")
	stdout, _ := runOK(t, "-rate", "20", "-d", "200ms", "--model", "auto", "--body", `{"messages":[]}`, "-o", out, srv.URL+"/v1/chat/completions")
	if _, bodies, models := s.read(); models != 1 || len(bodies) != 4 || bodies[0] != `{"model":"served-7b","messages":[]}` {
		t.Errorf("--model auto: /v1/models asked %d times, bodies %q", models, bodies)
	}
	wantLines(t, stdout, `request: Content-Type: application/json added (the body is JSON) · model "served-7b", the first of GET `+srv.URL+"/v1/models\n")
	if q := readResult(t, out).Config.Request; q == nil || q.Model != "served-7b" || q.ModelFrom != srv.URL+"/v1/models" || q.ContentType != "application/json" {
		t.Errorf("result's request: %+v", q)
	}

	var none seen
	bare := none.server(t, "")
	code, stdout, stderr := runCLI("-rate", "20", "-d", "200ms", "--model", "auto", "--body", `{}`, bare.URL+"/v1/completions")
	_, sent, _ := none.read()
	if code != exitRuntime || len(sent) != 0 || strings.Count(stderr, "\n") != 1 ||
		!strings.Contains(stderr, "openload: --model auto: GET "+bare.URL+"/v1/models: status 404 Not Found") {
		t.Errorf("--model auto without a list: exit %d, %d requests sent\n%s%s", code, len(sent), stdout, stderr)
	}
}

// TestModelPerGrammar: --model names the model of generated prompts as
// their grammar has it (prompt.Spec.Model): OpenAI's, Ollama's and
// llama.cpp's bodies carry a "model" member; TGI's native /generate body
// has no model field, so it gets none, whether the name is given or
// asked of the target (which is then not asked), and the result names
// no model the bodies do not carry.
func TestModelPerGrammar(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		path, model string
		carried     bool
	}{
		{"/v1/chat/completions", "m-7b", true},
		{"/v1/completions", "auto", true},
		{"/api/generate", "m-7b", true},
		{"/completion", "m-7b", true},
		{"/generate", "m-7b", false},
		{"/generate_stream", "auto", false},
	} {
		var s seen
		srv := s.server(t, `{"object":"list","data":[{"id":"served-7b"}]}`)
		out := filepath.Join(dir, strings.ReplaceAll(c.path, "/", "_")+".json")
		runCLI("-rate", "20", "-d", "200ms", "-q", "--prompt-tokens", "16", "--model", c.model, "-o", out, srv.URL+c.path)
		_, bodies, models := s.read()
		if len(bodies) != 4 {
			t.Fatalf("%s --model %s: the server read %d bodies, want 4", c.path, c.model, len(bodies))
		}
		name := c.model
		if name == "auto" {
			name = "served-7b"
		}
		for _, b := range bodies {
			var v map[string]any
			if err := json.Unmarshal([]byte(b), &v); err != nil {
				t.Fatalf("%s: body %s: %v", c.path, b, err)
			}
			if m, ok := v["model"]; ok != c.carried || ok && m != name {
				t.Errorf("%s --model %s: body's model %v (present %v), want present %v: %s", c.path, c.model, m, ok, c.carried, b)
			}
		}
		if asked := c.model == "auto" && c.carried; (models == 1) != asked || models > 1 {
			t.Errorf("%s --model %s: /v1/models asked %d times", c.path, c.model, models)
		}
		q := readResult(t, out).Config.Request
		if q == nil || (q.Model == name) != c.carried || !c.carried && q.Model != "" {
			t.Errorf("%s --model %s: result's request %+v", c.path, c.model, q)
		}
	}
}

func TestModelFlagErrors(t *testing.T) {
	cases := []struct{ args []string }{
		{[]string{"--model", "m", "--body", "a=1"}},
		{[]string{"--model", "m"}},
		{[]string{"--model", ""}},
		{[]string{"--model", "m", "--body", "[1,2]"}},
	}
	for _, c := range cases {
		code, _, stderr := runCLI(append([]string{"-rate", "10", "-d", "1s"}, append(c.args, "http://127.0.0.1:1/")...)...)
		if first, _, _ := strings.Cut(stderr, "\n"); code != exitUsage || !strings.Contains(first, "--model") {
			t.Errorf("%v: exit %d, %q", c.args, code, stderr)
		}
	}
}

// TestExtraBody: --extra-body's members follow openload's own fields in
// every body it makes, generated, a dataset's and a conversation's turns,
// in the order given; the result notes them.
func TestExtraBody(t *testing.T) {
	var got seen
	srv := got.server(t, "")
	dir := t.TempDir()
	const extra = `{"temperature": 0, "chat_template_kwargs": {"enable_thinking": false}, "min_tokens": 2}`
	const tail = `,"ignore_eos":true,"temperature":0,"chat_template_kwargs":{"enable_thinking":false},"min_tokens":2}`
	out := filepath.Join(dir, "r.json")
	runCLI("-rate", "10", "-d", "200ms", "-q", "-o", out, "--prompt-tokens", "3", "--output-tokens", "4", "--extra-body", extra, srv.URL+"/v1/completions")
	runCLI("-rate", "10", "-d", "200ms", "-q", "--dataset", "../../internal/prompt/testdata/sharegpt.json", "--output-tokens", "4", "--extra-body", extra, srv.URL+"/v1/chat/completions")
	file := writeFile(t, dir, "chat.yaml", `scenarios:
  - name: chat
    rate: 5
    url: `+srv.URL+`/v1/chat/completions
    extra-body: '{"temperature": 0, "chat_template_kwargs": {"enable_thinking": false}, "min_tokens": 2}'
    conversation:
      turns: 2
      user-tokens: 3
      output-tokens: 4
      ignore-eos: true
`)
	runCLI("--scenarios", file, "-d", "200ms", "-q")
	_, bodies, _ := got.read()
	// 2 generated, 2 of the dataset, then the conversation's turns (as
	// many as the scripted server's empty answers let through).
	if len(bodies) < 5 || !strings.Contains(bodies[4], `"messages":[{"role":"user"`) {
		t.Fatalf("%d bodies, want 2 generated, 2 of the dataset and a conversation's: %q", len(bodies), bodies)
	}
	for i, b := range bodies {
		if !strings.HasSuffix(b, `"max_tokens":4,"stream":true,"stream_options":{"include_usage":true}`+tail) {
			t.Errorf("body %d: %s, want it to end %s", i, b, tail)
		}
	}
	if q := readResult(t, out).Config.Request; q == nil || !strings.Contains(q.Prompts, "ignore_eos, extra fields temperature, chat_template_kwargs, min_tokens (tokens counted with cl100k_base), seed ") {
		t.Errorf("request note %+v", q)
	}
}

// TestExtraBodyErrors: a clash with openload's own fields is refused
// before the run, naming the field, and so are a user's whole body and
// no body made.
func TestExtraBodyErrors(t *testing.T) {
	const u = "http://127.0.0.1:1/v1/chat/completions"
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--prompt-tokens", "5", "--extra-body", `{"stream":false}`, u}, `--extra-body: "stream" is openload's own field: openload streams every body it makes`},
		{[]string{"--prompt-tokens", "5", "--extra-body", `{"temperature":0,"max_tokens":3}`, u}, `--extra-body: "max_tokens" is openload's own field: --output-tokens`},
		{[]string{"--prompt-tokens", "5", "--extra-body", `{"model":"x"}`, u}, `--extra-body: "model" is openload's own field: --model sets it`},
		{[]string{"--prompt-tokens", "5", "--api", "tgi", "--extra-body", `{"parameters":{"top_k":3,"max_new_tokens":3}}`, "http://127.0.0.1:1/generate"}, `--extra-body: "parameters.max_new_tokens" is openload's own field: --output-tokens sets the max tokens`},
		{[]string{"--prompt-tokens", "5", "--api", "ollama-chat", "--extra-body", `{"options":1}`, "http://127.0.0.1:1/api/chat"}, `--extra-body: "options" must be a JSON object: its members go into the options openload writes`},
		{[]string{"--prompt-tokens", "5", "--extra-body", `[1]`, u}, "--extra-body: want a JSON object"},
		{[]string{"--prompt-tokens", "5", "--extra-body", `{"a":1,"a":2}`, u}, `--extra-body: "a" is given twice`},
		{[]string{"--body", `{"a":1}`, "--extra-body", `{"b":2}`, u}, "--body and --body-file are your whole body"},
		{[]string{"--extra-body", `{"b":2}`, u}, "--extra-body applies to the bodies openload makes"},
		{[]string{"--prompt-tokens", "5", "--extra-body", "", u}, "--extra-body needs a JSON object"},
	} {
		code, _, stderr := runCLI(append([]string{"-rate", "10", "-d", "1s"}, c.args...)...)
		first, _, _ := strings.Cut(stderr, "\n")
		if code != exitUsage || !strings.Contains(first, c.want) {
			t.Errorf("%v: exit %d, %q; want exit 2 and %q", c.args, code, first, c.want)
		}
	}
}
