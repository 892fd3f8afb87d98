package engine

import (
	"bytes"
	"errors"
	"io"
	"sync"
	"time"

	"github.com/openload/openload/internal/h1"
	"github.com/openload/openload/recorder"
)

// Streamed answers: a text/event-stream body (or any body with
// Config.Stream) is read event by event as it arrives, and each content
// event's arrival stamped (recorder/stream.go says what is derived).
//
// Where: every client already ends in generator.response, which reads a
// body that is not plain — net/http's and HTTP/2's bodies, and those the
// epoll loop lends to a goroutine — so the stream is read there, in the
// goroutine that already reads the body. The lean client reads a chunked
// stream itself (lean.go), and the epoll loop too, one read(2) per token
// (epollstream_linux.go). All of them feed the same parsers as bytes
// arrive: internal/h1's Dechunk (chunked framing, where net/http does not
// undo it) and Events (the lines of the stream's format, h1.FormatOf),
// through one eventReader. A streamed answer with a Content-Length that
// the epoll loop or the lean client would read whole themselves goes
// through response too when Config.Stream is set.
//
// How: each event's payload, as the format cuts it ("data: {…}" in SSE),
// is one OpenAI chunk (OpenAI, vLLM, TGI, llama.cpp and Ollama's
// OpenAI-compatible endpoints write each chunk as one data line). It is a
// content event when
// choices[0].delta.content (chat) or choices[0].text (completions) is a
// non-empty string, found by its key rather than by decoding the JSON: a
// key "content" or "text" in raw JSON can only be a key (a string value is
// never followed by a colon, and quotes inside strings are escaped), and
// decoding every chunk with encoding/json costs allocations per token on
// the hot path. A "completion_tokens" count (the usage chunk of
// stream_options.include_usage, or vLLM's continuous usage) is the output
// token count when present; else the content events are counted.
//
// Every content event's arrival time and the gap since the stream's
// previous one go to the recorder in batches of tokenBatch
// (recorder.TokenEvent) through the worker's shard, so ITL is never held
// per token in memory and the shard's lock is taken once per batch.
//
// A stream cut before its end fails as any body does (a reset, a
// timeout): the record keeps the tokens it got, and is counted once.
//
// A stream's error event is an error of its own kind (recorder.KindStream),
// as the OpenAI SDKs raise APIError on it: an SSE line "event: error", or a
// data line whose JSON object has a top-level "error" member other than
// null, false, 0, "", {} or [] (vLLM, on a mid-stream exception, writes
// data: {"error": {"object": "error", "message": …, "code": 400}} and then
// data: [DONE], all under its 200). The request ends when the event is
// read, when an SDK's caller sees it: done is stamped then, and the record
// keeps the tokens before it (the error line's own content and usage are
// not counted). The rest of the body is left unread, which costs an
// HTTP/1.1 connection (closed, as a client closes a response it abandons;
// the next request dials anew) or an HTTP/2 stream (reset), never a kept
// connection with bytes unread; reading on to [DONE] instead would hold
// the request for as long as a server keeps writing after its error, and
// stamp done later than the caller saw the error.
//
// The member is found by scanning, as content is: a line without the bytes
// rror" (every token chunk) costs one bytes.Index; a line with them is
// walked, strings skipped whole, to tell a key of the outer object from
// one nested deeper ({"choices":[{"error":…}]}) or a string value
// ("object":"error").

// tokenBatch is how many content events a stream reader hands over at once.
const tokenBatch = 64

// errStreamEvent ends a stream whose server sent an error event (Kind:
// recorder.KindStream).
var errStreamEvent = errors.New("event stream: the server sent an error event")

// streamFormat is the h1.Format a body of Content-Type ct is read with:
// its own, or SSE for any body when every body is a stream
// (Config.Stream); nil when the body is not read as a stream.
func streamFormat[T ~string | ~[]byte](stream bool, ct T) h1.Format {
	f := h1.FormatOf(ct)
	if f == nil && stream {
		f = h1.SSE
	}
	return f
}

// eventReader reads a streamed body's events into its record: the one
// reader of every client's streams. A goroutine feeds it what it reads
// (readStream), the event loop what it de-chunks (epollstream_linux.go).
type eventReader struct {
	ev    h1.Events
	usage int // the last completion_tokens count, or -1
}

func (er *eventReader) reset(f h1.Format) {
	er.ev.Reset(f)
	er.usage = -1
}

// feed reads p, body bytes that arrived at now: content events are noted
// in r and handed to ts. It fails with errStreamEvent at an error event,
// which ends the stream, and with h1.ErrEventLine at a line over the
// bound.
func (er *eventReader) feed(p []byte, now time.Duration, r *recorder.Record, ts *tokenSink) error {
	for len(p) > 0 {
		ev, rest, ok, err := er.ev.Next(p)
		if err != nil || !ok {
			return err
		}
		p = rest
		if er.event(ev, now, r, ts) {
			return errStreamEvent
		}
	}
	return nil
}

// end reads the body's last line when it had no line end (it still
// counts), and puts the stream's token count in r.
func (er *eventReader) end(now time.Duration, r *recorder.Record, ts *tokenSink) error {
	defer er.count(r)
	if ev, ok := er.ev.End(); ok && er.event(ev, now, r, ts) {
		return errStreamEvent
	}
	return nil
}

// count puts the stream's output token count in r: the usage count when
// the server sent one, else the content events.
func (er *eventReader) count(r *recorder.Record) { r.Tokens = tokensOf(r.Events, er.usage) }

// event reads one event that arrived at now; it reports an error event.
func (er *eventReader) event(ev h1.Event, now time.Duration, r *recorder.Record, ts *tokenSink) (failed bool) {
	content, usage, failed := chunkEvent(ev)
	if usage >= 0 {
		er.usage = usage
	}
	if content {
		ts.add(tokenAt(r, now))
	}
	return failed
}

// tokenSink batches content events on their way to a shard.
type tokenSink struct {
	evs []recorder.TokenEvent
	sh  *shard
}

func (ts *tokenSink) add(ev recorder.TokenEvent) {
	ts.evs = append(ts.evs, ev)
	if len(ts.evs) == tokenBatch {
		ts.flush()
	}
}

// flush hands the batch to the shard.
func (ts *tokenSink) flush() {
	ts.sh.putTokens(ts.evs)
	ts.evs = ts.evs[:0]
}

type streamReader struct {
	buf []byte
	er  eventReader
	ts  tokenSink
}

var streamReaders = sync.Pool{New: func() any {
	return &streamReader{buf: make([]byte, 2<<10), ts: tokenSink{evs: make([]recorder.TokenEvent, 0, tokenBatch)}}
}}

// readStream reads body, a stream of format f, into r (see above), handing
// its content events to sh.
func (g *generator) readStream(body io.Reader, f h1.Format, r *recorder.Record, sh *shard) error {
	sr := streamReaders.Get().(*streamReader)
	sr.er.reset(f)
	sr.ts.sh = sh
	defer func() {
		sr.ts.flush()
		sr.ts.sh = nil
		streamReaders.Put(sr)
	}()
	// The head is in hand: its arrival is the stream's first byte (on
	// the epoll client, when the goroutine it was lent to took it up).
	r.Streamed, r.GotFirstByte, r.FirstByte = true, true, g.since()
	var total int64
	for {
		m, rerr := body.Read(sr.buf)
		// Past the cap nothing is read, whether it came in this read or
		// a later one: only the lines within the cap count.
		over := false
		if limit := g.cfg.MaxBody; limit > 0 && total+int64(m) > limit {
			m, over = int(limit-total), true
		}
		if m > 0 {
			total += int64(m)
			if err := sr.er.feed(sr.buf[:m], g.since(), r, &sr.ts); err != nil {
				sr.er.count(r)
				return err
			}
		}
		if over {
			r.BodyOverCap = true // the rest is not read: a line cut here is not counted
			sr.er.count(r)
			return nil
		}
		if rerr == io.EOF {
			return sr.er.end(g.since(), r, &sr.ts)
		}
		if rerr != nil {
			sr.er.count(r)
			return rerr
		}
	}
}

// tokenAt notes in r a content event that arrived at now, and returns it
// for the recorder (its gap since the stream's previous one, or −1 for
// the first): every client reads a stream's events through it.
func tokenAt(r *recorder.Record, now time.Duration) recorder.TokenEvent {
	gap := time.Duration(-1)
	if r.Events == 0 {
		r.FirstToken = now
	} else {
		gap = now - r.LastToken
	}
	r.LastToken = now
	r.Events++
	return recorder.TokenEvent{At: now, Gap: gap}
}

func tokensOf(events, usage int) int {
	if usage >= 0 {
		return usage
	}
	return events
}

var (
	keyContent = []byte(`"content"`)
	keyText    = []byte(`"text"`)
	keyUsage   = []byte(`"completion_tokens"`)
	keyError   = []byte(`"error"`)
	// errorTail is the end of keyError, searched for first: rr is rare in
	// a chunk, so bytes.Index skips ahead faster than on a leading quote.
	errorTail = keyError[2:]
)

// chunkEvent reads one event of a stream as an OpenAI chunk: content
// reports a non-empty content or text string; usage is its
// completion_tokens count, or -1; failed reports an error event (see the
// top of the file), which counts no content and no usage.
func chunkEvent(ev h1.Event) (content bool, usage int, failed bool) {
	if ev.Error || topLevelError(ev.Data) {
		return false, -1, true
	}
	content = nonEmptyString(ev.Data, keyContent) || nonEmptyString(ev.Data, keyText)
	return content, intAfter(ev.Data, keyUsage), false
}

// topLevelError reports whether data, a data line's value, is a JSON
// object with a top-level "error" member that a client takes for an error:
// any value but null, false, 0, "", {} and []. A line without the bytes
// rror" is answered by one search; one with them is walked byte by byte,
// strings skipped whole, to find the keys at depth 1 of the outer object.
// Malformed JSON is no error event.
func topLevelError(data []byte) bool {
	if !bytes.Contains(data, errorTail) {
		return false // every token chunk
	}
	data = bytes.TrimLeft(data, " \t")
	if len(data) == 0 || data[0] != '{' {
		return false
	}
	depth := 0
	for i := 0; i < len(data); i++ {
		switch data[i] {
		case '{', '[':
			depth++
		case '}', ']':
			if depth--; depth == 0 {
				return false // the outer object ended
			}
		case '"':
			end := stringEnd(data, i+1)
			if end < 0 {
				return false
			}
			if depth == 1 && bytes.Equal(data[i:end+1], keyError) {
				// A key is followed by a colon; a string value never is.
				rest := bytes.TrimLeft(data[end+1:], " \t")
				if len(rest) > 0 && rest[0] == ':' && truthy(bytes.TrimLeft(rest[1:], " \t")) {
					return true
				}
			}
			i = end
		}
	}
	return false
}

// stringEnd returns the index of the quote that closes the JSON string
// whose content begins at data[from], or -1 when it is not closed.
func stringEnd(data []byte, from int) int {
	for i := from; i < len(data); i++ {
		switch data[i] {
		case '\\':
			i++ // the escaped byte, a quote among them
		case '"':
			return i
		}
	}
	return -1
}

// truthy reports whether v, the start of a JSON value, is one a JavaScript
// or Python client takes for true: not null, false, a zero number, "", {}
// or [].
func truthy(v []byte) bool {
	if len(v) == 0 {
		return false
	}
	switch v[0] {
	case 'n', 'f':
		return false
	case '"':
		return len(v) > 1 && v[1] != '"'
	case '{', '[':
		rest := bytes.TrimLeft(v[1:], " \t")
		return len(rest) > 0 && rest[0] != '}' && rest[0] != ']'
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		for _, c := range v {
			switch {
			case c >= '1' && c <= '9':
				return true
			case c == '-' || c == '0' || c == '.':
			default:
				return false // the exponent or the end: every digit was 0
			}
		}
		return false
	}
	return true
}

// afterKey returns what follows the first occurrence of key and a colon in
// data, blanks skipped, or nil.
func afterKey(data, key []byte) []byte {
	for {
		i := bytes.Index(data, key)
		if i < 0 {
			return nil
		}
		data = data[i+len(key):]
		rest := bytes.TrimLeft(data, " \t")
		if len(rest) > 0 && rest[0] == ':' {
			return bytes.TrimLeft(rest[1:], " \t")
		}
	}
}

// nonEmptyString reports whether key's value in data is a non-empty string.
func nonEmptyString(data, key []byte) bool {
	for {
		v := afterKey(data, key)
		if v == nil {
			return false
		}
		if len(v) >= 2 && v[0] == '"' && v[1] != '"' {
			return true
		}
		data = v
	}
}

// intAfter returns key's value in data as a non-negative integer, or -1.
func intAfter(data, key []byte) int {
	v := afterKey(data, key)
	n, digits := 0, 0
	for _, c := range v {
		if c < '0' || c > '9' || n > 1<<30 {
			break
		}
		n = n*10 + int(c-'0')
		digits++
	}
	if digits == 0 {
		return -1
	}
	return n
}
