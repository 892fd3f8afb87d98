package stub

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// Any request body either is refused with an OpenAI error naming no
// impossible value, or gives a call within the token model's bounds whose
// unstreamed answer decodes and reports in usage what the call was.
func FuzzTokenRequest(f *testing.F) {
	for _, seed := range []string{
		`{"model":"m","messages":[{"role":"user","content":"hello"}]}`,
		`{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"a"},{"type":"image_url"}]}],"max_completion_tokens":3}`,
		`{"model":"m","prompt":["ab","cdefg"],"max_tokens":7,"stream":true,"stream_options":{"include_usage":true}}`,
		`{"model":"m","prompt":[[1,2],[3]],"n":1}`,
		`{"model":"","prompt":"x"}`,
		`{"model":"m","prompt":{"x":1}}`,
		`{"model":"m","max_tokens":0,"prompt":"x"}`,
		`{"model":"m","prompt":"x","stream":false,"stream_options":null}`,
		`[`,
		``,
	} {
		f.Add(seed, true)
		f.Add(seed, false)
	}
	cfg := DefaultConfig()
	f.Fuzz(func(t *testing.T, body string, chat bool) {
		r := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(body))
		c, oerr := parseTokenRequest(r, chat, cfg)
		if oerr != nil {
			if c != nil || oerr.Message == "" || oerr.Type != "invalid_request_error" {
				t.Fatalf("refusal %+v with call %+v", oerr, c)
			}
			return
		}
		if c.output < 1 || c.output > maxOutputTokens || c.prompt < 0 || c.model == "" ||
			(c.includeUsage && !c.stream) || (c.finish != "stop" && c.finish != "length") {
			t.Fatalf("call out of bounds: %+v", c)
		}
		c.output = min(c.output, 50) // the answer's text is built in memory
		w := httptest.NewRecorder()
		writeWhole(w, c)
		var ans oaAnswer
		if err := json.Unmarshal(w.Body.Bytes(), &ans); err != nil {
			t.Fatalf("answer %q: %v", w.Body.Bytes(), err)
		}
		if ans.Model != c.model || ans.Usage == nil || *ans.Usage != *c.usage() || len(ans.Choices) != 1 {
			t.Fatalf("answer %s for call %+v", w.Body.Bytes(), c)
		}
	})
}
