package engine

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/openload/openload/internal/framing"
	"github.com/openload/openload/servers/scripted"
)

// The bytes real model servers stream come from one home,
// servers/scripted, which scripts vLLM, TGI, llama.cpp and Ollama from
// their own source (servers/scripted/doc.go), so that the stream readers
// are tested on what they will meet rather than on what we imagine. Its
// answers are known: token i is " tok<i+1>", one token an event; the
// output count the server reports is the n asked; the prompt count is
// the words of the prompt, answerWords for answerPrompt.

const (
	answerPrompt = "one two three four five"
	answerWords  = 5
)

// serveScripted is the body format f's scripted server, with options o
// (model "m"), writes for the request body req, and its stream format.
func serveScripted(tb testing.TB, f scripted.Format, o scripted.Options, req []byte) ([]byte, framing.Format) {
	tb.Helper()
	o.Model = "m"
	r := httptest.NewRequest(http.MethodPost, f.Path(), bytes.NewReader(req))
	r.Header.Set("Content-Type", "application/json")
	w := httptest.NewRecorder() // an http.Flusher: the stream is written as on a connection
	scripted.New(f, o).ServeHTTP(w, r)
	format := framing.FormatOf(w.Header().Get("Content-Type"))
	if w.Code != http.StatusOK || format == nil {
		tb.Fatalf("scripted %s: %d %q: %s", f, w.Code, w.Header().Get("Content-Type"), w.Body)
	}
	return w.Body.Bytes(), format
}

// scriptedAnswer is format f's answer of n tokens to answerPrompt.
func scriptedAnswer(tb testing.TB, f scripted.Format, o scripted.Options, n int) ([]byte, framing.Format) {
	tb.Helper()
	return serveScripted(tb, f, o, f.Request("m", answerPrompt, n))
}

// lines are the lines of body that are not blank, each with its "\n".
func lines(body []byte) []string {
	var out []string
	for l := range strings.Lines(string(body)) {
		if strings.TrimSpace(l) != "" {
			out = append(out, l)
		}
	}
	return out
}

// answerLines is lines of scriptedAnswer.
func answerLines(tb testing.TB, f scripted.Format, o scripted.Options, n int) []string {
	tb.Helper()
	b, _ := scriptedAnswer(tb, f, o, n)
	return lines(b)
}

// at is l[i], i counted from the end when negative.
func at(l []string, i int) string {
	if i < 0 {
		i += len(l)
	}
	return l[i]
}
