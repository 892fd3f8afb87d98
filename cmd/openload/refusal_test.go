package main

import (
	"net/http/httptest"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/openload/openload/servers/scripted"
	"github.com/openload/openload/servers/stub"
)

// TestRefusalQuoted: generated prompts without --model, which the stub
// refuses with 400 "you must provide a model parameter": the verdict
// quotes the first answer's body on its line, the report under status,
// and the result keeps it; on every client the CLI picks (the event
// loop, the lean client, net/http, HTTP/2's loop and x/net's).
func TestRefusalQuoted(t *testing.T) {
	cfg := stub.DefaultConfig()
	cfg.H2C = true
	s, err := stub.NewServer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	const said = `{"error":{"message":"you must provide a model parameter","type":"invalid_request_error","param":"model","code":null}}`
	for _, tc := range []struct {
		flags  []string
		client string // the result's, on Linux
	}{{nil, "epoll"}, {[]string{"--no-epoll"}, "lean"}, {[]string{"--net-http"}, "net/http"}, {[]string{"--h2c"}, "epoll"}, {[]string{"--h2c", "--net-http"}, "net/http"}} {
		client := tc.flags
		t.Run(strings.Join(append([]string{"default"}, client...), " "), func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "r.json")
			args := append(append([]string{}, client...), "-rate", "20", "-d", "500ms", "--prompt-tokens", "128", "-o", out, s.URL+"/v1/chat/completions")
			code, stdout, stderr := runCLI(args...)
			if code != exitTargetFailed {
				t.Fatalf("exit %d, want %d\n%s\n%s", code, exitTargetFailed, stdout, stderr)
			}
			wantLines(t, stdout,
				"\nstatus   400 ×10\n         the first 400 said: "+said+"\n",
				"\nresult: target refused the requests: 10 of 10 answered 400 Bad Request (the server refused the request as malformed: check the body, and that a JSON body is sent with Content-Type: application/json); the first said: "+said+" (exit 5)\n")
			res := readResult(t, out)
			if runtime.GOOS == "linux" && res.Config.Client != tc.client {
				t.Errorf("sent by %q, want %q", res.Config.Client, tc.client)
			}
			r := res.Refusal
			if r == nil || r.Seq != 0 || r.Status != 400 || r.Body != said+"\n" || r.Cut {
				t.Errorf("result's refusal %+v, want seq 0, 400, %q", r, said+"\n")
			}
		})
	}
}

// TestRefusalQuotedOllama: Ollama's refusal of a chat without a model,
// {"error":"model is required"}, is on the verdict's line too.
func TestRefusalQuotedOllama(t *testing.T) {
	srv := httptest.NewServer(scripted.New(scripted.OllamaChat, scripted.Options{Model: "llama3.2"}))
	defer srv.Close()
	code, stdout, stderr := runCLI("-rate", "20", "-d", "500ms", "--prompt-tokens", "16", srv.URL+scripted.OllamaChat.Path())
	if code != exitTargetFailed {
		t.Fatalf("exit %d, want %d\n%s\n%s", code, exitTargetFailed, stdout, stderr)
	}
	wantLines(t, stdout, `; the first said: {"error":"model is required"} (exit 5)`+"\n")
}
