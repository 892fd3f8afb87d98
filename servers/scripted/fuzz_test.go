package scripted

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// cappedWriter ends the request (as a client leaving would) after max
// writes, so a body asking for a billion tokens still ends.
type cappedWriter struct {
	*httptest.ResponseRecorder
	writes, max int
	cancel      context.CancelFunc
}

func (w *cappedWriter) Write(b []byte) (int, error) {
	w.writes++
	if w.writes >= w.max {
		w.cancel()
	}
	return w.ResponseRecorder.Write(b)
}

// FuzzBody checks the accounting whatever a client sends: every request
// read is counted once, under one route, and every stream ends exactly one
// way (completed, cut or gone).
func FuzzBody(f *testing.F) {
	for _, g := range goldens {
		f.Add(uint8(g.f), g.body, "application/json")
	}
	f.Add(uint8(VLLMChat), `{"stream":true,"max_tokens":1000000000,"messages":[]}`, "text/plain")
	f.Add(uint8(OllamaChat), ``, "")
	f.Add(uint8(OllamaGenerate), `{"model":"m","prompt":"a","stream":false}`, "")
	f.Add(uint8(TGIGenerateStream), `{"inputs":"x","parameters":{"max_new_tokens":-3}}`, "application/vnd.x+json")
	f.Fuzz(func(t *testing.T, fb uint8, body, contentType string) {
		fm := Format(int(fb) % int(numFormats))
		h := New(fm, Options{Model: "m", ContextLen: 8})
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		req := httptest.NewRequestWithContext(ctx, http.MethodPost, fm.Path(), strings.NewReader(body))
		req.Header.Set("Content-Type", contentType)
		w := &cappedWriter{ResponseRecorder: httptest.NewRecorder(), max: 64, cancel: cancel}
		h.ServeHTTP(w, req)
		st := h.Stats()
		routes := 0
		for _, n := range st.Routes {
			routes += n
		}
		if st.Requests != 1 || routes != 1 {
			t.Fatalf("%s %q: %d requests under %d routes", fm, body, st.Requests, routes)
		}
		if st.Streams != st.Completed+st.Cut+st.Gone {
			t.Fatalf("%s %q: %d streams, %d completed, %d cut, %d gone", fm, body, st.Streams, st.Completed, st.Cut, st.Gone)
		}
		if st.Streams > 0 && w.Code != http.StatusOK {
			t.Fatalf("%s %q: stream answered %d", fm, body, w.Code)
		}
	})
}
