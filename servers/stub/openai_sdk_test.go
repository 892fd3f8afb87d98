package stub

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

// The official OpenAI SDK for JavaScript (npm openai, pinned by
// testdata/openai-sdk/package-lock.json) reads the stub's answers, as an
// application would. .ci/run installs it (npm ci) and sets
// OPENLOAD_INTEROP, so that a missing SDK fails there instead of skipping.
const sdkDir = "testdata/openai-sdk"

func TestOpenAISDK(t *testing.T) {
	missing := ""
	if _, err := exec.LookPath("node"); err != nil {
		missing = "node is not installed"
	} else if _, err := os.Stat(filepath.Join(sdkDir, "node_modules", "openai")); err != nil {
		missing = "the openai SDK is not installed (npm ci --prefix servers/stub/" + sdkDir + ")"
	}
	if missing != "" {
		if os.Getenv("OPENLOAD_INTEROP") != "" {
			t.Fatalf("OPENLOAD_INTEROP is set, but %s", missing)
		}
		t.Skip(missing)
	}
	s := startServer(t, tokenConfig(nil), nil)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", filepath.Join(sdkDir, "sdk.mjs"), s.URL+"/v1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node sdk.mjs: %v\n%s%s", err, out, stderr.Bytes())
	}
	t.Logf("the SDK's output:\n%s", out)

	got := map[string]map[string]any{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		got[m["check"].(string)] = m
		delete(m, "check")
	}
	usage := func(prompt, completion int) map[string]any {
		return map[string]any{"prompt_tokens": float64(prompt), "completion_tokens": float64(completion), "total_tokens": float64(prompt + completion)}
	}
	want := map[string]map[string]any{
		// role chunk + 5 tokens + finish + usage; "Say hello to the stub,
		// please!" is 8 cl100k_base tokens, "abcd", "hi" and "abcdefgh" one each.
		"chat-stream": {"chunks": 8.0, "text": " lorem ipsum dolor sit amet", "finish_reason": "length",
			"usage": usage(8, 5), "usage_chunks_without_choices": 1.0},
		"chat-stream-helper": {"content": " lorem ipsum dolor", "finish_reason": "length", "usage": usage(1, 3)},
		"chat":               {"content": " lorem ipsum dolor sit", "finish_reason": "length", "usage": usage(1, 4)},
		"completion":         {"text": " lorem ipsum", "finish_reason": "length", "usage": usage(1, 2)},
		"completion-stream":  {"text": " lorem ipsum dolor"},
		"models":             {"ids": []any{stubModelID}},
		"bad-request": {"thrown": true, "class": "BadRequestError", "status": 400.0,
			"param": "max_tokens", "type": "invalid_request_error"},
	}
	for check, w := range want {
		if !reflect.DeepEqual(got[check], w) {
			t.Errorf("%s: the SDK read %v, want %v", check, got[check], w)
		}
	}
	if len(got) != len(want) {
		t.Errorf("the SDK printed %d checks, want %d", len(got), len(want))
	}
	st := waitFor(t, s, "the model to empty", func(st Stats) bool { return st.InModel == 0 })
	checkAccounting(t, st)
	if st.Tokens.Streams != 3 || st.Tokens.StreamsCompleted != 3 {
		t.Errorf("streams %d, completed %d; want 3 and 3", st.Tokens.Streams, st.Tokens.StreamsCompleted)
	}
}
