package framing

import (
	"bufio"
	"bytes"
	"errors"
	"slices"
	"strings"
	"testing"
)

// events feeds pieces to an Events of format f as reads bring them and
// returns its events, copied, then the event of a last line without a
// line end.
func events(f Format, pieces [][]byte) ([]string, error) {
	e := &Events{Format: f}
	var out []string
	for _, p := range pieces {
		for len(p) > 0 {
			ev, rest, ok, err := e.Next(p)
			if err != nil {
				return out, err
			}
			if !ok {
				break
			}
			out, p = append(out, show(ev)), rest
		}
	}
	if ev, ok := e.End(); ok {
		out = append(out, show(ev))
	}
	return out, nil
}

// cut cuts b into pieces of n bytes (the last may be shorter), as reads
// of n bytes would bring it: every line boundary falls at each place in
// a piece for some n.
func cut(b []byte, n int) [][]byte {
	n = max(n, 1)
	var out [][]byte
	for len(b) > n {
		out, b = append(out, b[:n]), b[n:]
	}
	return append(out, b)
}

func show(ev Event) string {
	if ev.Error {
		return "error"
	}
	return "data " + string(ev.Data)
}

func TestEvents(t *testing.T) {
	// "error:" is older llama.cpp's error line; "errors:" and "error" are
	// not it.
	body := "data: {\"a\":1}\n\n: comment\r\nevent: error\r\ndata:{\"b\":2}\r\nevent:  error\nid: 3\nevent: message\n" +
		"error: {\"code\":500}\nerrors: 1\nerror\ndata: last"
	want := []string{`data  {"a":1}`, "error", `data {"b":2}`, "error", "data  last"}
	for seed := range uint64(5) {
		pieces := [][]byte{[]byte(body)}
		if seed > 0 {
			pieces = cut([]byte(body), int(seed))
		}
		if got, err := events(SSE, pieces); err != nil || !slices.Equal(got, want) {
			t.Errorf("seed %d: %q, %v; want %q", seed, got, err, want)
		}
	}
	long := []byte("data: " + strings.Repeat("x", MaxEventLine))
	if _, err := events(SSE, cut(long, 7)[:1]); err != nil {
		t.Errorf("a short piece of a long line: %v", err)
	}
	if _, err := events(SSE, [][]byte{long[:MaxEventLine/2], long[MaxEventLine/2:]}); !errors.Is(err, ErrEventLine) {
		t.Errorf("a line over MaxEventLine: %v, want ErrEventLine", err)
	}
}

// Ollama's stream: every line that is not blank is an event, whatever it
// holds; a blank line (CR and blanks only) is none.
func TestEventsNDJSON(t *testing.T) {
	body := "{\"response\":\"a\",\"done\":false}\n\n \t\r\n{\"error\":\"x\"}\r\ndata: 1\n[1,2]\n{\"done\":true}"
	want := []string{`data {"response":"a","done":false}`, `data {"error":"x"}`, "data data: 1", "data [1,2]", `data {"done":true}`}
	for seed := range uint64(5) {
		pieces := [][]byte{[]byte(body)}
		if seed > 0 {
			pieces = cut([]byte(body), int(seed))
		}
		if got, err := events(NDJSON, pieces); err != nil || !slices.Equal(got, want) {
			t.Errorf("seed %d: %q, %v; want %q", seed, got, err, want)
		}
	}
}

func TestFormatOf(t *testing.T) {
	for _, c := range []struct {
		ct   string
		want Format
	}{
		{"text/event-stream", SSE}, {"Text/Event-Stream; charset=utf-8", SSE}, {" text/event-stream ;x", SSE},
		{"application/x-ndjson", NDJSON}, {"Application/X-NDJSON; charset=utf-8", NDJSON},
		{"text/event-streams", nil}, {"application/json", nil}, {"application/x-ndjsonx", nil}, {"", nil},
	} {
		if got := FormatOf(c.ct); got != c.want {
			t.Errorf("FormatOf(%q) = %v, want %v", c.ct, got, c.want)
		}
		if got := FormatOf([]byte(c.ct)); got != c.want {
			t.Errorf("FormatOf([]byte(%q)) = %v, want %v", c.ct, got, c.want)
		}
	}
}

func TestEventsAllocateNothing(t *testing.T) {
	body := []byte(strings.Repeat("data: {\"choices\":[{\"delta\":{\"content\":\" tok\"}}]}\n\n", 20))
	pieces := cut(body, 3)
	e := &Events{Format: SSE}
	if n := testing.AllocsPerRun(100, func() {
		for _, p := range pieces {
			for len(p) > 0 {
				_, rest, ok, _ := e.Next(p)
				if !ok {
					break
				}
				p = rest
			}
		}
		e.End()
	}); n != 0 {
		t.Errorf("%v allocations per body", n)
	}
}

// FuzzEvents: in each format (SSE, NDJSON), however a body is split into
// pieces, Events finds the events it finds in the body fed at once, and
// those are the events of the body's lines as bufio.Scanner cuts them (a
// CR before the LF dropped, a last line without its LF kept), read by the
// format.
func FuzzEvents(f *testing.F) {
	f.Add([]byte("data: {\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\n\nevent: error\r\ndata: [DONE]\n\n"), uint64(1))
	f.Add([]byte("data:x\r\r\n\revent:error\ndata"), uint64(2))
	f.Add([]byte("\n\n\r\ndata: last"), uint64(3))
	f.Add([]byte("{\"response\":\"a\",\"done\":false}\n \t\r\n{\"error\":\"x\"}\n{\"done\":true}"), uint64(4))
	f.Fuzz(func(t *testing.T, body []byte, seed uint64) {
		for _, format := range []Format{SSE, NDJSON} {
			whole, err := events(format, [][]byte{body})
			if err != nil {
				t.Fatal(err)
			}
			pieces, err := events(format, cut(body, int(seed%16)+1))
			if err != nil || !slices.Equal(whole, pieces) {
				t.Fatalf("%T %q: at once %q, in pieces %q (%v)", format, body, whole, pieces, err)
			}
			var want []string
			sc := bufio.NewScanner(bytes.NewReader(body))
			sc.Buffer(nil, MaxEventLine+1)
			for sc.Scan() {
				if ev, ok := format.Event(sc.Bytes()); ok {
					want = append(want, show(ev))
				}
			}
			if !slices.Equal(whole, want) {
				t.Fatalf("%T %q: Events %q, lines %q", format, body, whole, want)
			}
		}
	})
}
