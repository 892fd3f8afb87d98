package h1

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"syscall"
	"testing"
)

func TestHeadComplete(t *testing.T) {
	for _, c := range []struct {
		raw  string
		want bool
	}{
		{"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", true},
		{"HTTP/1.1 200 OK\nContent-Length: 0\n\n", true},
		{"HTTP/1.1 200 OK\r\nContent-Length: 0\n\n", true},
		// A bare LF, then a CRLF blank line: ReadResponse reads it.
		{"HTTP/1.1 200 OK\nContent-Length: 0\n\r\n", true},
		{"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n", false},
		{"HTTP/1.1 200 OK\r\n\r", false},
		{"", false},
	} {
		if got := HeadComplete([]byte(c.raw)); got != c.want {
			t.Errorf("HeadComplete(%q) = %v, want %v", c.raw, got, c.want)
		}
		if _, err := http.ReadResponse(bufio.NewReader(strings.NewReader(c.raw)), nil); (err == nil) != c.want {
			t.Errorf("%q: ReadResponse error %v, want a head read %v", c.raw, err, c.want)
		}
	}
}

// ReadResponse skips 1xx answers but returns a 101, which ends the
// exchange.
func TestReadResponse(t *testing.T) {
	raw := "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok" +
		"HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\nConnection: upgrade\r\n\r\n"
	br := bufio.NewReader(strings.NewReader(raw))
	for _, want := range []int{200, 101} {
		resp, err := ReadResponse(br, &http.Request{Method: http.MethodGet})
		if err != nil || resp.StatusCode != want {
			t.Fatalf("ReadResponse: %v, %v; want %d", resp, err, want)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
}

// A parse error is a truncated head, a reset, when the connection's reads
// had ended with EOF or a reset; otherwise it stays what it is.
func TestTruncated(t *testing.T) {
	parse := errors.New("malformed MIME header line: Content-Le")
	for _, c := range []struct {
		rerr   error
		wrap   bool
		unwrap error
	}{
		{nil, false, nil},
		{io.EOF, true, io.ErrUnexpectedEOF},
		{fmt.Errorf("read: %w", syscall.ECONNRESET), true, syscall.ECONNRESET},
		{errors.New("i/o timeout"), false, nil},
	} {
		err := Truncated(parse, c.rerr)
		var te *TruncatedError
		if errors.As(err, &te) != c.wrap {
			t.Errorf("rerr %v: %v, want wrapped %v", c.rerr, err, c.wrap)
		}
		if c.wrap && (!errors.Is(err, c.unwrap) || te.Parse != parse) {
			t.Errorf("rerr %v: %v does not unwrap to %v", c.rerr, err, c.unwrap)
		}
	}
	if Truncated(nil, io.EOF) != nil {
		t.Error("Truncated(nil, EOF) is not nil")
	}
}

// NoteReader keeps the first error, whatever comes after.
func TestNoteReader(t *testing.T) {
	var first error
	r := NoteReader{R: io.MultiReader(strings.NewReader("ab"), errReader{io.ErrClosedPipe}), Err: &first}
	io.ReadAll(r)
	r.R = errReader{io.EOF}
	r.Read(make([]byte, 1))
	if first != io.ErrClosedPipe {
		t.Errorf("first error %v, want %v", first, io.ErrClosedPipe)
	}
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }
