package h1

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"syscall"
)

// ReadResponse reads the response to req from br with http.ReadResponse,
// skipping informational answers (103 Early Hints, 100 Continue) as
// net/http does; a 101 would switch protocols and is returned, ending the
// exchange.
func ReadResponse(br *bufio.Reader, req *http.Request) (*http.Response, error) {
	for {
		resp, err := http.ReadResponse(br, req)
		if err != nil {
			return nil, err
		}
		if resp.StatusCode < 100 || resp.StatusCode > 199 || resp.StatusCode == http.StatusSwitchingProtocols {
			return resp, nil
		}
	}
}

// HeadComplete reports whether buf holds the end of a response head as
// http.ReadResponse reads one: a blank line, its line ends CRLF or bare LF.
// A head without one is not whole yet, and ReadResponse would fail on it.
func HeadComplete(buf []byte) bool {
	return bytes.Contains(buf, lf2) || bytes.Contains(buf, lfcrlf)
}

var (
	lf2    = []byte("\n\n")
	lfcrlf = []byte("\n\r\n")
)

// TruncatedError is a response head cut short: the connection ended
// (Cause: io.EOF or a reset) before the head was whole, so what the parser
// saw is not what the server meant to send. It is a reset, not a malformed
// response: it unwraps to Cause, or to io.ErrUnexpectedEOF for io.EOF.
type TruncatedError struct {
	Cause, Parse error
}

func (e *TruncatedError) Error() string {
	return fmt.Sprintf("response cut short (%v): %v", e.Cause, e.Parse)
}

func (e *TruncatedError) Unwrap() error {
	if errors.Is(e.Cause, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return e.Cause
}

// Truncated returns the parse error err as a *TruncatedError when the
// connection's reads had ended (rerr: their first error, io.EOF or a
// reset), and err itself otherwise. The caller tells a parse error from a
// read error (a timeout, a reset) first: only a parse error is wrapped.
func Truncated(err, rerr error) error {
	if err == nil || rerr == nil {
		return err
	}
	if !errors.Is(rerr, io.EOF) && !errors.Is(rerr, syscall.ECONNRESET) {
		return err
	}
	return &TruncatedError{Cause: rerr, Parse: err}
}

// NoteReader is an io.Reader that keeps the first error R returned in
// *Err: what Truncated needs to know of a connection.
type NoteReader struct {
	R   io.Reader
	Err *error
}

func (n NoteReader) Read(p []byte) (int, error) {
	m, err := n.R.Read(p)
	if err != nil && *n.Err == nil {
		*n.Err = err
	}
	return m, err
}
