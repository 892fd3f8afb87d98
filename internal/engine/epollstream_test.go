package engine

import (
	"bufio"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openload/openload/schedule"
	"github.com/openload/openload/servers/scripted"
)

// Chunked event streams written in awkward pieces: every client, the
// event loop reading them itself among them, must find the same events,
// tokens and outcomes, and keep the connection when the framing allows.
func TestStreamFramingInPieces(t *testing.T) {
	const head = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
	ev := func(s string) string { return "data: {\"choices\":[{\"delta\":{\"content\":\"" + s + "\"}}]}\n\n" }
	chunk := func(s string) string { return hex(len(s)) + "\r\n" + s + "\r\n" }
	// Ollama's stream (the scripted server's, servers_test.go), as
	// net/http chunks it: chat's thinking line, 2 content lines and the
	// done line saying eval_count 3 (3 token events: thinking is a
	// token); 2 content lines alone; and 1 before the error line.
	const ndHead = "HTTP/1.1 200 OK\r\nContent-Type: application/x-ndjson\r\nTransfer-Encoding: chunked\r\n\r\n"
	nd := answerLines(t, scripted.OllamaChat, scripted.Options{Thinking: 1}, 3)
	gen, _ := scriptedAnswer(t, scripted.OllamaGenerate, scripted.Options{Thinking: 1}, 3)
	two := answerLines(t, scripted.OllamaChat, scripted.Options{}, 2)
	failed := answerLines(t, scripted.OllamaChat, scripted.Options{Cut: scripted.CutError, CutAfter: 1}, 2)
	g1, g2 := 20, len(gen)/2+7 // inside a line each
	for _, c := range []struct {
		name          string
		pieces        []string // written one at a time, a little apart
		events, toks  int
		completed     bool
		kind          string
		keepConnected bool
	}{
		{"one event a chunk", []string{head, chunk(ev("a")), chunk(ev("b")), chunk(ev("c")), "0\r\n\r\n"}, 3, 3, true, "", true},
		{"byte by byte", splitBytes(head + chunk(ev("a")+ev("b")) + chunk("data: {\"usage\":{\"completion_tokens\":7}}\n\n") + "0\r\n\r\n"), 2, 7, true, "", true},
		{"a line across chunks, extensions, a trailer", []string{head + chunk("data: {\"choices\":[{\"delta\":{\"con"), "5;ext=1\r\ntent\"\r\n" + chunk(":\"x\"}}]}\n\n") + "0\r\nX-Trailer: 1\r\n\r\n"}, 1, 1, true, "", true},
		{"no final newline", []string{head + chunk(ev("a")+"data: {\"choices\":[{\"text\":\"z\"}]}") + "0\r\n\r\n"}, 2, 2, true, "", true},
		{"cut mid-stream", []string{head, chunk(ev("a")), chunk(ev("b"))}, 2, 2, false, "reset", false},
		{"malformed chunk size", []string{head, chunk(ev("a")), "zz\r\n"}, 1, 1, false, "other", false},
		// A stream's error event ends it, failed, with the tokens before it.
		{"vLLM's error chunk", []string{head, chunk(ev("a")), chunk(ev("b")), chunk(vllmErrorChunk + "\n\n"), chunk("data: [DONE]\n\n"), "0\r\n\r\n"}, 2, 2, false, "stream", false},
		{"error chunk and more in one piece", []string{head + chunk(ev("a")+vllmErrorChunk+"\n\n"+ev("late")) + chunk("data: [DONE]\n\n") + "0\r\n\r\n"}, 1, 1, false, "stream", false},
		{"event: error byte by byte, no final newline", splitBytes(head + chunk(ev("a")+ev("b")) + chunk("event: err") + chunk("or") + "0\r\n\r\n"), 2, 2, false, "stream", false},
		// Older llama.cpp's error line, then its [DONE].
		{"llama.cpp's error: line", []string{head, chunk(ev("a")), chunk(`error: {"code":500,"message":"x","type":"server_error"}` + "\n\n"), chunk("data: [DONE]\n\n"), "0\r\n\r\n"}, 1, 1, false, "stream", false},
		// NDJSON: its counts from the done line, which it must end with.
		{"ndjson one line a chunk", []string{ndHead, chunk(nd[0]), chunk(nd[1]), chunk(nd[2]), chunk(nd[3]), "0\r\n\r\n"}, 3, 3, true, "", true},
		{"ndjson byte by byte, done without a final newline", splitBytes(ndHead + chunk(nd[0]+nd[1]+nd[2]) + chunk(strings.TrimSuffix(nd[3], "\n")) + "0\r\n\r\n"), 3, 3, true, "", true},
		{"ndjson a line across chunks", []string{ndHead + chunk(string(gen[:g1])), chunk(string(gen[g1:g2])), chunk(string(gen[g2:])) + "0\r\n\r\n"}, 3, 3, true, "", true},
		{"ndjson cut mid-stream", []string{ndHead, chunk(two[0]), chunk(two[1])}, 2, 2, false, "reset", false},
		{"ndjson ends without its done line", []string{ndHead, chunk(two[0]), chunk(two[1]), "0\r\n\r\n"}, 2, 2, false, "stream", false},
		{"ndjson error line", []string{ndHead, chunk(failed[0]), chunk(failed[1]), chunk(two[2]), "0\r\n\r\n"}, 1, 1, false, "stream", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			forClients(t, openClients, func(t *testing.T, cl clientCase) {
				var mu sync.Mutex
				conns := map[string]bool{}
				u := rawAnswers(t, func(nc net.Conn, _ *bufio.Reader, _ <-chan struct{}) bool {
					mu.Lock()
					conns[nc.RemoteAddr().String()] = true
					mu.Unlock()
					for _, p := range c.pieces {
						if _, err := io.WriteString(nc, p); err != nil {
							return false
						}
						if len(c.pieces) < 20 { // byte by byte: no pause, or it takes seconds under -race
							time.Sleep(200 * time.Microsecond)
						}
					}
					return c.completed // the cut ones close the connection
				})
				rec, _ := runAgainst(t, u, Config{Lean: cl.lean, Epoll: cl.epoll, Connections: 1, Timeout: 5 * time.Second, Drain: 10 * time.Second},
					schedule.NewConstant(50, 100*time.Millisecond))
				n := checkIdentity(t, rec, 5)
				st := rec.Stream()
				if st == nil {
					t.Fatal("no stream figures")
				}
				if c.completed && n.Completed != 5 || !c.completed && rec.ErrorKinds()[c.kind] != 5 {
					t.Errorf("counts %+v kinds %v: want 5 %s", n, rec.ErrorKinds(), map[bool]string{true: "completed", false: c.kind}[c.completed])
				}
				if st.Events != int64(5*c.events) || st.OutputTokens != int64(5*c.toks) {
					t.Errorf("%d events, %d tokens; want %d and %d", st.Events, st.OutputTokens, 5*c.events, 5*c.toks)
				}
				mu.Lock()
				defer mu.Unlock()
				if c.keepConnected && len(conns) != 1 {
					t.Errorf("%d connections for 5 streams one after another: the connection was not kept", len(conns))
				}
			})
		})
	}
}

func hex(n int) string {
	const digits = "0123456789abcdef"
	if n < 16 {
		return digits[n : n+1]
	}
	return hex(n/16) + digits[n%16:n%16+1]
}

func splitBytes(s string) []string {
	out := make([]string, len(s))
	for i := range s {
		out[i] = s[i : i+1]
	}
	return out
}
