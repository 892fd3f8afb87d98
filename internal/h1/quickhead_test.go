package h1

import (
	"bufio"
	"bytes"
	"io"
	"net/http"
	"testing"
)

// agreeWithReadResponse checks QuickHead on raw against http.ReadResponse:
// whenever QuickHead accepts a head, ReadResponse must read the same
// response from it: status, body length, Connection: close, and the body
// starting right after the n bytes QuickHead counted.
//
// HeadComplete is held to ReadResponse the other way: a head it says is
// not whole yet must be one ReadResponse cannot read.
func agreeWithReadResponse(t *testing.T, raw []byte) bool {
	t.Helper()
	status, length, keep, n, ok := QuickHead(raw)
	if !HeadComplete(raw) {
		if ok {
			t.Fatalf("QuickHead accepted %q, HeadComplete says the head is not whole", raw)
		}
		if resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(raw)), &http.Request{Method: http.MethodGet}); err == nil {
			t.Fatalf("HeadComplete(%q) is false, ReadResponse read status %d", raw, resp.StatusCode)
		}
	}
	if !ok {
		return false
	}
	br := bufio.NewReader(bytes.NewReader(raw))
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodGet})
	if err != nil {
		t.Fatalf("QuickHead accepted %q, ReadResponse: %v", raw, err)
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil && int64(len(raw)-n) >= length {
		t.Fatalf("%q: body: %v", raw, err)
	}
	switch {
	case resp.StatusCode != status:
		t.Fatalf("%q: status %d, ReadResponse %d", raw, status, resp.StatusCode)
	case resp.ContentLength != length:
		t.Fatalf("%q: length %d, ReadResponse %d", raw, length, resp.ContentLength)
	case resp.Close == keep:
		t.Fatalf("%q: keep %v, ReadResponse Close %v", raw, keep, resp.Close)
	case int64(len(raw)-n) >= length && !bytes.Equal(body, raw[n:n+int(length)]):
		t.Fatalf("%q: body %q, want %q after the head of %d bytes", raw, body, raw[n:n+int(length)], n)
	}
	return true
}

func TestQuickHead(t *testing.T) {
	for _, c := range []struct {
		raw  string
		want bool // QuickHead reads it (otherwise ReadResponse does)
	}{
		{"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Type: text/plain\r\n\r\nok", true},
		{"HTTP/1.1 503 Service Unavailable\r\ncontent-length: 0\r\n\r\n", true},
		{"HTTP/1.1 200\r\nContent-Length:5\r\n\r\nhello", true},
		{"HTTP/1.1 429 Too Many\r\nContent-Length: 2\r\nConnection: keep-alive, Close\r\n\r\nno", true},
		{"HTTP/1.1 200 OK\r\nX-A: b\tc\r\nContent-Length: 2\r\n\r\nok", true},
		{"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n", false},
		{"HTTP/1.1 200 OK\r\n\r\nclose-delimited", false},
		{"HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok", false},
		{"HTTP/1.1 204 No Content\r\n\r\n", false},
		{"HTTP/1.1 304 Not Modified\r\nContent-Length: 10\r\n\r\n", false},
		{"HTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", false},
		{"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\nok", false},
		{"HTTP/1.1 200 OK\r\nContent-Length: 1e3\r\n\r\n", false},
		{"HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", false},
		{"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n folded\r\n\r\nok", false},
		{"HTTP/1.1 200 OK\r\nBad Name: x\r\nContent-Length: 2\r\n\r\nok", false},
		{"HTTP/1.1 200 OK\r\nX: a\x01b\r\nContent-Length: 2\r\n\r\nok", false},
		{"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n", false}, // head not whole yet
		{"HTTP/1.1 2000 OK\r\nContent-Length: 2\r\n\r\nok", false},
		{"HTTP/1.1 099 X\r\nContent-Length: 2\r\n\r\nok", false},
		{"garbage\r\n\r\n", false},
	} {
		if got := agreeWithReadResponse(t, []byte(c.raw)); got != c.want {
			t.Errorf("QuickHead(%q) ok = %v, want %v", c.raw, got, c.want)
		}
	}
}

// FuzzQuickHead: whatever the bytes, a head QuickHead accepts is read the
// same way by http.ReadResponse, and one HeadComplete calls unfinished is
// not read by it at all.
func FuzzQuickHead(f *testing.F) {
	f.Add([]byte("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok"))
	f.Add([]byte("HTTP/1.1 404 Not Found\r\ncontent-length:0\r\nX: y\r\n\r\n"))
	f.Add([]byte("HTTP/1.1 200 OK\nContent-Length: 0\n\r\n"))
	f.Fuzz(func(t *testing.T, raw []byte) {
		agreeWithReadResponse(t, raw)
	})
}

// BenchmarkQuickHead is the lean client's cost of reading a plain
// response head: no allocation.
func BenchmarkQuickHead(b *testing.B) {
	raw := []byte("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Type: text/plain; charset=utf-8\r\nDate: Mon, 30 Nov 2026 06:00:00 GMT\r\n\r\nok")
	b.ReportAllocs()
	for b.Loop() {
		if _, _, _, _, ok := QuickHead(raw); !ok {
			b.Fatal("not read")
		}
	}
}
