package scripted_test

import (
	"bufio"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/openload/openload/servers/scripted"
)

// A streamed Ollama chat answer of three tokens, read line by line, and
// the server's own count of what it read and wrote.
func Example() {
	h := scripted.New(scripted.OllamaChat, scripted.Options{Model: "llama3"})
	srv := httptest.NewServer(h)
	defer srv.Close()

	body := `{"model":"llama3","messages":[{"role":"user","content":"hi"}],"options":{"num_predict":3}}`
	resp, err := http.Post(srv.URL+scripted.OllamaChat.Path(), "application/json", strings.NewReader(body))
	if err != nil {
		panic(err)
	}
	defer resp.Body.Close()
	fmt.Println(resp.StatusCode, resp.Header.Get("Content-Type"))
	sc := bufio.NewScanner(resp.Body)
	lines := 0
	for sc.Scan() {
		lines++
	}
	st := h.Stats()
	fmt.Println("lines:", lines, "tokens:", st.Tokens, "completed:", st.Completed)
	// Output:
	// 200 application/x-ndjson
	// lines: 4 tokens: 3 completed: 1
}
