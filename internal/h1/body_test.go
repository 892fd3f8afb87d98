package h1

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
)

// Discard drops exactly n bytes, however they split between the
// reader's buffer and the connection, and fails on a body cut short.
func TestDiscard(t *testing.T) {
	const rest = "HTTP/1.1 200 OK\r\n"
	for _, n := range []int64{0, 1, 4095, 4096, 4097, 64 << 10, 64<<10 + 1, 300_000} {
		src := strings.Repeat("x", int(n)) + rest
		br := bufio.NewReaderSize(strings.NewReader(src), 4096)
		br.Peek(100) // part of the body is buffered, as after a head
		if err := Discard(br, n); err != nil {
			t.Fatalf("n=%d: %v", n, err)
		}
		if got, _ := io.ReadAll(br); string(got) != rest {
			t.Errorf("n=%d: left %q, want %q", n, got, rest)
		}
		br = bufio.NewReaderSize(strings.NewReader(src[:n/2]), 4096)
		if err := Discard(br, n); n > 0 && !errors.Is(err, io.EOF) {
			t.Errorf("n=%d, cut at half: %v, want EOF", n, err)
		}
	}
}

// FuzzDiscard: after a response QuickHead accepts, Discard of its length
// leaves the reader where http.ReadResponse and reading the body to its
// end leave it (the next response of a kept-alive connection starts at the
// same byte), and fails exactly when that body read fails (a body cut
// short). Small reader buffers send long bodies through DiscardBuf.
func FuzzDiscard(f *testing.F) {
	f.Add([]byte("HTTP/1.1 200 OK\r\nContent-Length: 40\r\n\r\n0123456789012345678901234567890123456789HTTP/1.1 204 No Content\r\n\r\n"), uint8(0))
	f.Add([]byte("HTTP/1.1 503 x\r\ncontent-length:3\r\n\r\nab"), uint8(3))
	f.Add([]byte("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\nHTTP/1.1 200 OK\r\n"), uint8(200))
	f.Fuzz(func(t *testing.T, raw []byte, size uint8) {
		_, length, _, n, ok := QuickHead(raw)
		if !ok {
			return
		}
		ref := bufio.NewReader(bytes.NewReader(raw))
		resp, err := http.ReadResponse(ref, &http.Request{Method: http.MethodGet})
		if err != nil {
			t.Fatalf("%q: ReadResponse: %v", raw, err)
		}
		_, berr := io.Copy(io.Discard, resp.Body)
		refRest, _ := io.ReadAll(ref)

		br := bufio.NewReaderSize(bytes.NewReader(raw), 16+int(size))
		br.Discard(n)
		derr := Discard(br, length)
		rest, _ := io.ReadAll(br)
		switch {
		case (derr == nil) != (berr == nil):
			t.Fatalf("%q: Discard %v, body read %v", raw, derr, berr)
		case derr == nil && !bytes.Equal(rest, refRest):
			t.Fatalf("%q: after Discard %q, after ReadResponse %q", raw, rest, refRest)
		case derr != nil && !errors.Is(derr, io.EOF):
			t.Fatalf("%q: a body cut short: %v, want EOF", raw, derr)
		}
	})
}
