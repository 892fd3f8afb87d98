// Package framing cuts streamed answers into events for every client,
// HTTP/1.1's and HTTP/2's, the event loops' and net/http's: one push
// parser per format (server-sent events, NDJSON), fed by whichever client
// read the bytes, so that no client reads a stream its own way.
package framing

import (
	"bytes"
	"errors"

	"github.com/openload/openload/internal/ascii"
)

// Streamed answers. A model server streams its answer as lines, each an
// event: text/event-stream's "data: {…}" lines (OpenAI, vLLM, TGI,
// llama.cpp), or one JSON object a line (Ollama's application/x-ndjson).
// Events cuts a body, fed in pieces as they arrive (de-chunked: Dechunk),
// into lines, and its Format reads each line as an event; what an event's
// JSON says (a token, a usage count, an error) is the caller's to read.
// The event loop and the goroutines that read bodies feed the same
// Events, so the two cannot drift. A format is chosen by the response's
// Content-Type (FormatOf); adding one is a Format and a case there.

// MaxEventLine bounds one line of a streamed body; a longer one fails
// (ErrEventLine) rather than growing memory without bound.
const MaxEventLine = 1 << 20

// ErrEventLine is a streamed body's line over MaxEventLine.
var ErrEventLine = errors.New("event stream: a line over 1 MiB")

// Event is one event of a streamed body.
type Event struct {
	// Data is the event's payload, a JSON value as the server wrote it
	// (SSE: a data line's value); valid until the Events that returned
	// it is fed again.
	Data []byte
	// Error is the format's own signal of an error, apart from any the
	// payload carries (SSE: an "event: error" line).
	Error bool
}

// Format reads one line of a streamed body as an event: the framing of
// one streaming format. ok is false for a line that is no event (a
// comment, another field, a blank line).
type Format interface {
	Event(line []byte) (ev Event, ok bool)
}

// SSE is text/event-stream (the WHATWG HTML standard, "Server-sent
// events"), read line by line: a data line is an event whose Data is the
// field's value, an "event: error" line an event with Error. Every line
// of the OpenAI-style streams is one event, so data lines are not joined
// into multi-line events.
//
// An "error:" line is an event with Error too, though the standard
// ignores a field it does not name: older llama.cpp servers wrote a
// failure during a stream so (server.cpp's server_sent_event(sink,
// "error", …): "error: {…}"), under the 200 they had sent, and reading
// it as no event would count the cut answer as a completed one.
var SSE Format = sse{}

type sse struct{}

var (
	dataField  = []byte("data:")
	eventField = []byte("event:")
	errorField = []byte("error:")
)

func (sse) Event(line []byte) (Event, bool) {
	if data, ok := bytes.CutPrefix(line, dataField); ok {
		return Event{Data: data}, true
	}
	if bytes.HasPrefix(line, errorField) {
		return Event{Error: true}, true
	}
	v, ok := bytes.CutPrefix(line, eventField)
	if !ok {
		return Event{}, false
	}
	// One leading space is the separator, as the standard says.
	v, _ = bytes.CutPrefix(v, []byte{' '})
	if string(v) != "error" {
		return Event{}, false
	}
	return Event{Error: true}, true
}

// NDJSON is newline-delimited JSON, one JSON value a line: Ollama's
// native /api/generate and /api/chat stream it as application/x-ndjson
// (ollama/ollama server/routes.go, streamResponse: json.Marshal and a
// "\n" per value). Every line that is not blank is one event whose Data
// is the line; the format has no error signal of its own (Ollama's error
// line is a JSON {"error": …}, the caller's to read).
var NDJSON Format = ndjson{}

type ndjson struct{}

func (ndjson) Event(line []byte) (Event, bool) {
	if len(bytes.Trim(line, " \t")) == 0 {
		return Event{}, false
	}
	return Event{Data: line}, true
}

// FormatOf returns the Format of a body whose Content-Type value is ct
// (parameters and case ignored), or nil when it is no streaming format
// this package reads.
func FormatOf[T ~string | ~[]byte](ct T) Format {
	if i := indexByte(ct, ';'); i >= 0 {
		ct = ct[:i]
	}
	switch {
	case foldEqualTrim(ct, "text/event-stream"):
		return SSE
	case foldEqualTrim(ct, "application/x-ndjson"):
		return NDJSON
	}
	return nil
}

// Events cuts a streamed body, fed in pieces, into its Format's events.
// It allocates only to hold a line split between two pieces; reuse it
// (Reset) from body to body.
type Events struct {
	Format Format
	line   []byte // a line not yet whole, or the last one handed out
	held   bool   // line is the one handed out: forget it at the next call
}

// Next returns the next event whose line ends in p, the body bytes that
// arrived, and the rest of p after that line; ok is false when p ended
// first, the line so far kept for the next call. Call it until !ok or
// rest is empty.
func (e *Events) Next(p []byte) (ev Event, rest []byte, ok bool, err error) {
	if e.held {
		e.line, e.held = e.line[:0], false
	}
	for {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			if len(e.line)+len(p) > MaxEventLine {
				return Event{}, nil, false, ErrEventLine
			}
			e.line = append(e.line, p...)
			return Event{}, nil, false, nil
		}
		line := p[:i]
		if len(e.line) > 0 {
			if len(e.line)+i > MaxEventLine {
				return Event{}, nil, false, ErrEventLine
			}
			e.line = append(e.line, line...)
			line, e.held = e.line, true
		}
		p = p[i+1:]
		if ev, ok := e.Format.Event(bytes.TrimSuffix(line, []byte{'\r'})); ok {
			return ev, p, true, nil
		}
		if e.held {
			e.line, e.held = e.line[:0], false
		}
	}
}

// End returns the event of the body's last line, when the body ended
// without a line end after it (ok false when there is none), and readies
// e for another body.
func (e *Events) End() (ev Event, ok bool) {
	line := e.line
	if e.held {
		line = nil
	}
	e.line, e.held = e.line[:0], true // line stays valid until the next call
	if len(line) == 0 {
		return Event{}, false
	}
	return e.Format.Event(bytes.TrimSuffix(line, []byte{'\r'}))
}

// Reset readies e for another body, keeping its buffer unless it grew
// large.
func (e *Events) Reset(f Format) {
	if cap(e.line) > 64<<10 {
		e.line = nil // do not keep a rare giant
	}
	e.Format, e.line, e.held = f, e.line[:0], false
}

func indexByte[T ~string | ~[]byte](s T, c byte) int {
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			return i
		}
	}
	return -1
}

// foldEqualTrim reports whether s, blanks around it trimmed, equals the
// lower-case ASCII want, ignoring case.
func foldEqualTrim[T ~string | ~[]byte](s T, want string) bool {
	for len(s) > 0 && (s[0] == ' ' || s[0] == '\t') {
		s = s[1:]
	}
	for len(s) > 0 && (s[len(s)-1] == ' ' || s[len(s)-1] == '\t') {
		s = s[:len(s)-1]
	}
	return ascii.EqualFold(s, want)
}
