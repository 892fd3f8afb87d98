package h1

import (
	"bufio"
	"bytes"
	"io"
	"net/http"
	"slices"
	"strings"
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
	agreeParseHead(t, raw)
	watched := agreeWatch(t, raw, ok)
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
	if watched {
		for i, name := range testWatch {
			if got, want := string(w.Values[i]), resp.Header.Get(name); got != want {
				t.Fatalf("%q: %s %q, Header.Get %q", raw, name, got, want)
			}
		}
		var got []string
		for _, v := range w.Timing[:w.NTiming] {
			got = append(got, string(v))
		}
		if want := resp.Header.Values("Server-Timing"); !slices.Equal(got, want) {
			t.Fatalf("%q: Server-Timing %q, Header.Values %q", raw, got, want)
		}
	}
	return true
}

// agreeParseHead checks ParseHead on raw against http.ReadResponse: it
// waits for more (HeadPartial) exactly when the head is not whole; a
// simple head is read as ReadResponse reads it (status, framing,
// Connection: close, Content-Type), and QuickHead reads it too when it
// has a Content-Length; a chunked body after a simple head is read by
// ChunkedReader as net/http reads it, whenever net/http reads it whole.
func agreeParseHead(t *testing.T, raw []byte) {
	t.Helper()
	h, st := ParseHead(raw, nil)
	if (st == HeadPartial) != !HeadComplete(raw) {
		t.Fatalf("%q: ParseHead %v, HeadComplete %v", raw, st, HeadComplete(raw))
	}
	if st != HeadSimple {
		return
	}
	br := bufio.NewReader(bytes.NewReader(raw))
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodGet})
	if err != nil {
		t.Fatalf("ParseHead read %q, ReadResponse: %v", raw, err)
	}
	chunked := slices.Equal(resp.TransferEncoding, []string{"chunked"})
	switch {
	case resp.StatusCode != h.Status, resp.Close == h.Keep, chunked != h.Chunked, resp.ContentLength != h.Length:
		t.Fatalf("%q: ParseHead %+v; ReadResponse status %d, close %v, chunked %v, length %d", raw, h, resp.StatusCode, resp.Close, chunked, resp.ContentLength)
	case string(h.ContentType) != resp.Header.Get("Content-Type"):
		t.Fatalf("%q: Content-Type %q, Header.Get %q", raw, h.ContentType, resp.Header.Get("Content-Type"))
	}
	if _, _, _, _, ok := QuickHead(raw); ok == h.Chunked {
		t.Fatalf("%q: QuickHead %v for a head ParseHead read, chunked %v", raw, ok, h.Chunked)
	}
	if !h.Chunked {
		return
	}
	want, werr := io.ReadAll(resp.Body)
	cr := &ChunkedReader{R: bufio.NewReader(bytes.NewReader(raw[h.N:]))}
	got, err := io.ReadAll(cr)
	if werr == nil && (err != nil || !bytes.Equal(got, want)) {
		t.Fatalf("%q: ChunkedReader %q, %v; net/http %q", raw, got, err, want)
	}
}

// testWatch are the headers agreeWatch watches: the stub's class
// header, Server-Timing as a class header too, and one the seeds repeat.
var testWatch = []string{"x-stub-source", "server-timing", "x-a"}

// w is agreeWatch's Watch, reused as the clients reuse theirs.
var w = &Watch{Names: testWatch, ServerTiming: true}

// agreeWatch reads raw with QuickHeadWatch into w and checks it accepts
// what QuickHead accepted (ok), unless raw has too many Server-Timing
// lines. It reports whether w holds raw's values.
func agreeWatch(t *testing.T, raw []byte, ok bool) bool {
	t.Helper()
	status, length, keep, n, wok := QuickHead(raw)
	ws, wl, wk, wn, watched := QuickHeadWatch(raw, w)
	switch {
	case watched && (ws != status || wl != length || wk != keep || wn != n):
		t.Fatalf("%q: QuickHeadWatch read %d %d %v %d, QuickHead %d %d %v %d", raw, ws, wl, wk, wn, status, length, keep, n)
	case watched && !ok:
		t.Fatalf("%q: QuickHeadWatch accepted it, QuickHead did not", raw)
	case !watched && wok && w.NTiming < MaxTimingLines:
		t.Fatalf("%q: QuickHead accepted it, QuickHeadWatch did not (%d Server-Timing lines)", raw, w.NTiming)
	}
	return watched
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
		{"HTTP/1.1 200 OK\r\nx-stub-source:  fallback \r\nX-Stub-Source: model\r\nContent-Length: 0\r\n\r\n", true},
		{"HTTP/1.1 200 OK\r\nX-A:\r\nX-A: second\r\nContent-Length: 0\r\n\r\n", true},
		{"HTTP/1.1 200 OK\r\nServer-Timing: a;dur=1, b;desc=\"x, y\"\r\nSERVER-TIMING:c;dur=2\r\nContent-Length: 0\r\n\r\n", true},
		{"HTTP/1.1 200 OK\r\n" + strings.Repeat("Server-Timing: a;dur=1\r\n", MaxTimingLines+1) + "Content-Length: 0\r\n\r\n", true},
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
		// Chunked: ParseHead reads them (agreeParseHead), QuickHead not.
		{"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: Chunked\r\n\r\n5\r\ndata:\r\n0\r\n\r\n", false},
		{"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: 2\r\n\r\n", false},
		{"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", false},
	} {
		if got := agreeWithReadResponse(t, []byte(c.raw)); got != c.want {
			t.Errorf("QuickHead(%q) ok = %v, want %v", c.raw, got, c.want)
		}
	}
}

// FuzzQuickHead: whatever the bytes, a head QuickHead or ParseHead
// accepts is read the same way by http.ReadResponse (a chunked body too),
// and one HeadComplete calls unfinished is not read by it at all.
func FuzzQuickHead(f *testing.F) {
	f.Add([]byte("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok"))
	f.Add([]byte("HTTP/1.1 404 Not Found\r\ncontent-length:0\r\nX: y\r\n\r\n"))
	f.Add([]byte("HTTP/1.1 200 OK\nContent-Length: 0\n\r\n"))
	f.Add([]byte("HTTP/1.1 200 OK\r\nServer-Timing: queue;dur=0.036, model;dur=50.329\r\nX-Stub-Source: model\r\nserver-timing: total;dur=50.369\r\nContent-Length: 0\r\n\r\n"))
	f.Add([]byte("HTTP/1.1 200 OK\r\nX-A: \r\nx-a: b\r\nContent-Length: 1\r\n\r\nx"))
	f.Add([]byte("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream; charset=utf-8\r\nTransfer-Encoding: chunked\r\n\r\n6\r\ndata:1\r\n0\r\nT: 1\r\n\r\n"))
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

// BenchmarkQuickHeadWatch is QuickHead of a head as the stub sends it,
// its class header and Server-Timing watched: no allocation either.
func BenchmarkQuickHeadWatch(b *testing.B) {
	raw := []byte("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n" +
		"Server-Timing: queue;dur=0.036, model;dur=50.329, total;dur=50.369\r\n" +
		"X-Stub-Reason: served\r\nX-Stub-Source: model\r\n" +
		"Date: Tue, 01 Dec 2026 13:07:11 GMT\r\nContent-Length: 2\r\n\r\nok")
	w := &Watch{Names: []string{"x-stub-source"}, ServerTiming: true}
	b.ReportAllocs()
	for b.Loop() {
		if _, _, _, _, ok := QuickHeadWatch(raw, w); !ok || w.NTiming != 1 {
			b.Fatal("not read")
		}
	}
}
