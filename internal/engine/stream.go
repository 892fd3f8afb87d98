package engine

import (
	"bytes"
	"errors"
	"io"
	"sync"
	"time"

	"github.com/openload/openload/internal/framing"
	"github.com/openload/openload/internal/recorder"
)

// Streamed answers: a text/event-stream or application/x-ndjson body (or
// any body with Config.Stream, as SSE unless its Content-Type names
// NDJSON) is read event by event as it arrives, and each token event's
// arrival stamped (recorder/stream.go says what is derived).
//
// Where: every client already ends in generator.response, which reads a
// body that is not plain — net/http's and HTTP/2's bodies, and those the
// epoll loop lends to a goroutine — so the stream is read there, in the
// goroutine that already reads the body. The lean client reads a chunked
// stream itself (lean.go), and the epoll loop too, one read(2) per token
// (epollstream_linux.go). All of them feed the same parsers as bytes
// arrive: internal/h1's Dechunk (chunked framing, where net/http does not
// undo it) and Events (the lines of the stream's format, framing.FormatOf),
// through one eventReader. A streamed answer with a Content-Length that
// the epoll loop or the lean client would read whole themselves goes
// through response too when Config.Stream is set.
//
// How: what an event's payload says depends on the format, and is found
// by key rather than by decoding the JSON: a quoted key such as "content"
// in raw JSON, after { or a comma and before a colon, can only be a key (a
// string value is never followed by a colon, and quotes inside strings
// are escaped; FuzzChunkKeys checks it against encoding/json), and
// decoding every event
// with encoding/json costs allocations per token on the hot path. The
// quotes are part of the key searched, so "eval_count" is not found in
// "prompt_eval_count", nor "completion_tokens" in
// "completion_tokens_details".
//
// Token events: an event that carries generated tokens of any kind is a
// token event, as vLLM's benchmark and GuideLLM count them
// (docs/REFERENCE.md, "Token figures"): TTFT is to the first, and TPOT
// and ITL run over all of them. Of those, an answer event carries text of
// the answer itself; the first one's arrival is the record's FirstAnswer,
// the time to the first answer token. Thinking (a reasoning model's
// chain of thought, streamed apart from the answer) is generated but no
// answer.
//
// SSE (text/event-stream): each data line is one OpenAI-style chunk
// (OpenAI, vLLM, TGI, llama.cpp and Ollama's OpenAI-compatible endpoints
// write each chunk as one data line), or the event of a server's own API
// (llama.cpp's /completion, TGI's /generate_stream). It is an answer event
// when a "content" (chat's choices[0].delta.content, llama.cpp's
// /completion) or "text" (completions' choices[0].text, TGI's token.text)
// is a non-empty string. It is a token event when it is an answer event,
// or when it carries thinking ("reasoning", vLLM's delta field at
// 022e555d; "reasoning_content", vLLM's older name and llama.cpp's,
// common_chat_msg_diff_to_json_oaicompat) or tool-call "arguments" as a
// non-empty string, or when its "content" or "text" is the empty string
// "" and the event is neither a role chunk (a "role" key: vLLM's first
// chunk, DeltaMessage(role, content="")) nor a last event ("stop": true,
// llama.cpp /completion's final event; a "finish_reason" string, the
// OpenAI completions API's and the stub's closing {"text":"",
// "finish_reason":"length"}). That empty text stands for a
// token: vLLM's chat_completion_stream_generator (chat_completion/
// serving.py @006c49d4; the completions generator likewise) writes a
// chunk for every engine output with a token, delta_text = output.text,
// which is "" while the detokenizer holds back an incomplete multi-byte
// character, and skips a chunk only when text, token ids and every
// earlier token are all empty (chunked prefill). TGI's /generate_stream
// writes one event per token, so an empty token.text is a token too.
// Counting such an event keeps ITL at the server's pace (skipped, the
// gap around it is counted as one gap of twice the pace) and the token
// count right when no usage count comes. A token whose own chunk is the
// last (vLLM's chunk for an end-of-sequence token, whose text is empty,
// carries the finish_reason) is not told from a closing marker and goes
// uncounted: one token short without a usage count, never one too many.
// A null "content" (llama.cpp
// chat's first delta) is no token. A TGI chat chunk whose content is ""
// carries its role too and is taken for a role chunk: an undercount of
// that rare token, never a count of a chunk that holds none.
//
// The output token count, when the server sends
// one, is the last of "completion_tokens" (the usage chunk of
// stream_options.include_usage, vLLM's continuous usage), llama.cpp
// /completion's "tokens_predicted" (a running count on every event) and
// TGI /generate_stream's details "generated_tokens"; the prompt token
// count the last of "prompt_tokens", "tokens_evaluated" and TGI's
// details "input_length"; the cached prompt tokens the last of
// "cached_tokens" (vLLM's usage.prompt_tokens_details, Record.CachedTokens).
// Each of those events has the bytes "tokens" (TGI's
// input_length sits next to generated_tokens), so one search for them
// spares a token chunk every count's search.
//
// NDJSON (application/x-ndjson, Ollama's /api/generate and /api/chat):
// each line is one JSON object, an answer event when its "response"
// (generate) or "content" (chat's message.content) is a non-empty string,
// a token event when it is one or its "thinking" (Ollama's thinking,
// GenerateResponse.thinking and Message.thinking) is a non-empty string.
// Ollama's last line says "done": true and carries its counts: output
// tokens in "eval_count" (thinking included), prompt tokens in
// "prompt_eval_count"; they are read on that line only.
//
// Without an output count the token events are counted. A prompt count
// the server sent is the record's PromptTokens (else the body's count,
// Config.BodyTokens, body.go).
//
// Every token event's arrival time and the gap since the stream's
// previous one go to the recorder in batches of tokenBatch
// (recorder.TokenEvent) through the worker's shard, so ITL is never held
// per token in memory and the shard's lock is taken once per batch.
//
// A stream cut before its end fails as any body does (a reset, a
// timeout): the record keeps the tokens it got, and is counted once.
//
// An NDJSON stream whose body ends, its framing intact (a chunked body's
// last chunk, a Content-Length read whole), without a line saying "done":
// true is cut too, but no transport error says so: Ollama writes that
// line, with its counts, last in every answer it finishes, so a body that
// stops before it is an answer the server left unfinished. It fails with errStreamUnfinished,
// of kind stream (recorder.KindStream, as an error event is) rather than
// reset: the connection did what HTTP asks of it, and what failed is the
// stream the server wrote, which is what the stream kind counts (a reset
// says the transport broke, and an operator looks at the network). SSE
// has no such rule: OpenAI's "data: [DONE]" is not sent by every server
// (TGI's /generate_stream, llama.cpp's /completion), so its absence is no
// failure.
//
// A stream's error event is an error of its own kind (recorder.KindStream),
// as the OpenAI SDKs raise APIError on it: an SSE line "event: error",
// older llama.cpp's "error: {…}" line (framing.SSE), or a
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

// tokenBatch is how many token events a stream reader hands over at once.
const tokenBatch = 64

// errStreamEvent ends a stream whose server sent an error event (Kind:
// recorder.KindStream).
var errStreamEvent = errors.New("event stream: the server sent an error event")

// errStreamUnfinished ends an NDJSON stream whose body ended without its
// "done": true line (Kind: recorder.KindStream; see above).
var errStreamUnfinished = errors.New(`event stream: the NDJSON body ended without a "done": true line`)

// streamFormat is the framing.Format a body of Content-Type ct is read with:
// its own, or SSE for any body when every body is a stream
// (Config.Stream); nil when the body is not read as a stream.
func streamFormat[T ~string | ~[]byte](stream bool, ct T) framing.Format {
	f := framing.FormatOf(ct)
	if f == nil && stream {
		f = framing.SSE
	}
	return f
}

// eventReader reads a streamed body's events into its record: the one
// reader of every client's streams. A goroutine feeds it what it reads
// (readStream), the event loop what it de-chunks (epollstream_linux.go).
type eventReader struct {
	ev     framing.Events
	ndjson bool // the payloads are Ollama's, and the last line must say done
	usage  int  // the last output token count, or -1
	prompt int  // the last prompt token count, or -1
	cached int  // the last cached prompt token count, or -1
	done   bool // NDJSON: a line said "done": true
}

func (er *eventReader) reset(f framing.Format) {
	er.ev.Reset(f)
	er.ndjson = f == framing.NDJSON
	er.usage, er.prompt, er.cached, er.done = -1, -1, -1, false
}

// feed reads p, body bytes that arrived at now: token events are noted
// in r and handed to ts. It fails with errStreamEvent at an error event,
// which ends the stream, and with framing.ErrEventLine at a line over the
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
// counts), and puts the stream's token counts in r. It fails with
// errStreamUnfinished when an NDJSON body never said it was done.
func (er *eventReader) end(now time.Duration, r *recorder.Record, ts *tokenSink) error {
	defer er.count(r)
	if ev, ok := er.ev.End(); ok && er.event(ev, now, r, ts) {
		return errStreamEvent
	}
	if er.ndjson && !er.done {
		return errStreamUnfinished
	}
	return nil
}

// count puts the stream's token counts in r: output tokens from the
// server's count when it sent one, else the token events; prompt
// tokens only when the server sent a count (else Config.BodyTokens
// fills them, body.go).
func (er *eventReader) count(r *recorder.Record) {
	r.Tokens = tokensOf(r.Events, er.usage)
	if er.prompt >= 0 {
		r.PromptTokens = er.prompt
	}
	if er.cached >= 0 {
		r.CachedTokens = er.cached
	}
}

// event reads one event that arrived at now; it reports an error event.
func (er *eventReader) event(ev framing.Event, now time.Duration, r *recorder.Record, ts *tokenSink) (failed bool) {
	var c chunk
	if er.ndjson {
		c = ndjsonChunk(ev)
	} else {
		c = sseChunk(ev)
	}
	if c.failed {
		return true
	}
	if c.output >= 0 {
		er.usage = c.output
	}
	if c.prompt >= 0 {
		er.prompt = c.prompt
	}
	if c.cached >= 0 {
		er.cached = c.cached
	}
	er.done = er.done || c.done
	if c.token {
		ts.add(tokenAt(r, now, c.answer))
	}
	return false
}

// tokenSink batches token events on their way to a shard.
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
// its token events to sh.
func (g *generator) readStream(body io.Reader, f framing.Format, r *recorder.Record, sh *shard) error {
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

// tokenAt notes in r a token event that arrived at now, an answer event
// when answer, and returns it for the recorder (its gap since the
// stream's previous one, or −1 for the first): every client reads a
// stream's events through it. A stream's tokens arrive after its send,
// never at the run's start, so FirstAnswer 0 is "none yet".
func tokenAt(r *recorder.Record, now time.Duration, answer bool) recorder.TokenEvent {
	gap := time.Duration(-1)
	if r.Events == 0 {
		r.FirstToken = now
	} else {
		gap = now - r.LastToken
	}
	if answer && r.FirstAnswer == 0 {
		r.FirstAnswer = now
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
	keyError   = []byte(`"error"`)

	// What else makes an SSE event a token event (see the top of the
	// file): thinking under either of its names, tool-call arguments,
	// and, for an empty text, the keys that say it is none.
	keyReasoning        = []byte(`"reasoning"`)
	keyReasoningContent = []byte(`"reasoning_content"`)
	keyArguments        = []byte(`"arguments"`)
	keyRole             = []byte(`"role"`)
	keyStop             = []byte(`"stop"`)
	keyFinishReason     = []byte(`"finish_reason"`)
	// errorTail is the end of keyError, searched for first: rr is rare in
	// a chunk, so bytes.Index skips ahead faster than on a leading quote.
	errorTail = keyError[2:]

	// SSE's counts (see the top of the file): every key of one has the
	// word tokens, found once per occurrence and told apart by the bytes
	// around it (countKeys); TGI's input_length is read where its
	// generated_tokens is.
	wordTokens     = []byte("tokens")
	keyInputLength = []byte(`"input_length"`)

	// Ollama's NDJSON.
	keyResponse        = []byte(`"response"`)
	keyDone            = []byte(`"done"`)
	keyEvalCount       = []byte(`"eval_count"`)
	keyThinking        = []byte(`"thinking"`)
	keyPromptEvalCount = []byte(`"prompt_eval_count"`)
	jsonTrue           = []byte("true")
)

// chunk is what one event's payload says.
type chunk struct {
	token          bool // a token event: generated tokens of any kind arrived
	answer         bool // an answer event (a token event): text of the answer itself
	output, prompt int  // the output and prompt token counts it carries, or -1
	cached         int  // the prompt tokens read from the server's prefix cache, or -1
	done           bool // NDJSON: "done": true, Ollama's last line
	failed         bool // an error event (see the top of the file); nothing else is read
}

// sseChunk reads one SSE event as an OpenAI-style chunk, or as llama.cpp's
// or TGI's own event (see the top of the file).
func sseChunk(ev framing.Event) chunk {
	c := chunk{output: -1, prompt: -1, cached: -1}
	if ev.Error || topLevelError(ev.Data) {
		c.failed = true
		return c
	}
	c.answer = nonEmptyString(ev.Data, keyContent) || nonEmptyString(ev.Data, keyText)
	c.token = c.answer || generated(ev.Data)
	c.output, c.prompt, c.cached = sseCounts(ev.Data)
	return c
}

// generated reports whether data, an SSE event with no answer text, still
// stands for generated tokens (see the top of the file): thinking or
// tool-call arguments, or an empty text that is not a role chunk's nor a
// last event's. Only events without answer text pay for it.
func generated(data []byte) bool {
	if nonEmptyString(data, keyReasoning) || nonEmptyString(data, keyReasoningContent) || nonEmptyString(data, keyArguments) {
		return true
	}
	if !emptyString(data, keyContent) && !emptyString(data, keyText) {
		return false
	}
	if afterKey(data, keyRole) != nil || bytes.HasPrefix(afterKey(data, keyStop), jsonTrue) {
		return false
	}
	finish := afterKey(data, keyFinishReason)
	return len(finish) == 0 || finish[0] != '"'
}

// countKeys are SSE's count keys, each as the bytes before and after the
// word tokens in it (quotes included), in the order they are told apart.
var countKeys = [...]struct {
	before, after []byte
	count         countKind
	tgi           bool // TGI's details: input_length is next to it
}{
	{[]byte(`"completion_`), []byte(`"`), outputCount, false},
	{[]byte(`"prompt_`), []byte(`"`), promptCount, false},
	{[]byte(`"cached_`), []byte(`"`), cachedCount, false},
	{[]byte(`"generated_`), []byte(`"`), outputCount, true},
	{[]byte(`"`), []byte(`_predicted"`), outputCount, false},
	{[]byte(`"`), []byte(`_evaluated"`), promptCount, false},
}

// countKind says which count a count key holds. The cached count is
// vLLM's usage.prompt_tokens_details.cached_tokens, the prompt tokens its
// prefix cache held (the stub writes it as vLLM does, servers/stub/openai.go).
type countKind uint8

const (
	outputCount countKind = iota
	promptCount
	cachedCount
)

// sseCounts returns the output and prompt counts of an SSE event's data,
// each the first of its keys found (see the top of the file), or -1: one
// search for the word tokens per occurrence, rather than one per key,
// because llama.cpp's /completion has it in every event.
func sseCounts(data []byte) (output, prompt, cached int) {
	output, prompt, cached = -1, -1, -1
	for off := 0; ; {
		i := bytes.Index(data[off:], wordTokens)
		if i < 0 {
			return output, prompt, cached
		}
		i += off
		off = i + len(wordTokens)
		for _, k := range countKeys {
			if !bytes.HasSuffix(data[:i], k.before) || !bytes.HasPrefix(data[off:], k.after) || !keyStarts(data[:i-len(k.before)]) {
				continue
			}
			n := intValue(data[off+len(k.after):])
			switch {
			case k.count == outputCount && output < 0:
				output = n
			case k.count == promptCount && prompt < 0:
				prompt = n
			case k.count == cachedCount && cached < 0:
				cached = n
			}
			if k.tgi && n >= 0 && prompt < 0 {
				prompt = intAfter(data, keyInputLength)
			}
			break
		}
	}
}

// ndjsonChunk reads one line of Ollama's NDJSON stream (see the top of
// the file): {"error": …} is an error event as in SSE, as Ollama's Go
// client (api/client.go, stream) returns an error at a line whose "error"
// is not empty.
func ndjsonChunk(ev framing.Event) chunk {
	c := chunk{output: -1, prompt: -1, cached: -1}
	if topLevelError(ev.Data) {
		c.failed = true
		return c
	}
	c.answer = nonEmptyString(ev.Data, keyResponse) || nonEmptyString(ev.Data, keyContent)
	c.token = c.answer || nonEmptyString(ev.Data, keyThinking)
	if bytes.HasPrefix(afterKey(ev.Data, keyDone), jsonTrue) {
		c.done = true
		c.output = intAfter(ev.Data, keyEvalCount)
		c.prompt = intAfter(ev.Data, keyPromptEvalCount)
	}
	return c
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

// afterKey returns what follows the first occurrence of key as a key in
// data and its colon, blanks skipped, or nil.
func afterKey(data, key []byte) []byte {
	for off := 0; ; {
		i := bytes.Index(data[off:], key)
		if i < 0 {
			return nil
		}
		i += off
		off = i + len(key)
		if !keyStarts(data[:i]) {
			continue
		}
		rest := bytes.TrimLeft(data[off:], " \t")
		if len(rest) > 0 && rest[0] == ':' {
			return bytes.TrimLeft(rest[1:], " \t")
		}
	}
}

// keyStarts reports whether a quote after before can open a key: in JSON
// one follows { or a comma (blanks between), never an escaping backslash,
// so a key that ends in \"content is not "content".
func keyStarts(before []byte) bool {
	before = bytes.TrimRight(before, " \t")
	return len(before) > 0 && (before[len(before)-1] == '{' || before[len(before)-1] == ',')
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

// emptyString reports whether key's value in data is the empty string "".
func emptyString(data, key []byte) bool {
	for {
		v := afterKey(data, key)
		if v == nil {
			return false
		}
		if len(v) >= 2 && v[0] == '"' && v[1] == '"' {
			return true
		}
		data = v
	}
}

// intAfter returns key's value in data as a non-negative integer, or -1.
func intAfter(data, key []byte) int {
	v := afterKey(data, key)
	if v == nil {
		return -1
	}
	return digitsOf(v)
}

// intValue reads what follows a key's closing quote: a colon and a
// non-negative integer, blanks around the colon skipped; -1 when that is
// not what follows (the quoted word was a string value, not a key).
func intValue(rest []byte) int {
	rest = bytes.TrimLeft(rest, " \t")
	if len(rest) == 0 || rest[0] != ':' {
		return -1
	}
	return digitsOf(bytes.TrimLeft(rest[1:], " \t"))
}

// digitsOf reads the non-negative integer v begins with, or -1.
func digitsOf(v []byte) int {
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
