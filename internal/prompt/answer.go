package prompt

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/openload/openload/internal/framing"
)

// AnswerText returns the model's answer in a response body of any grammar
// this package writes requests in: the text a conversation's next turn
// sends back as the assistant's message. contentType is the response's
// Content-Type; it chooses the framing (framing.FormatOf): server-sent
// events, NDJSON, or else one JSON answer (a body that does not begin
// with '{' is read as server-sent events, as the engine reads any body
// as a stream when told it is one).
//
// The text is, per event (or of the one answer), the first of these
// members that is there:
//
//	choices[0].delta.content      OpenAI chat, streamed (vLLM, SGLang, TGI, llama.cpp, Ollama /v1, the stub)
//	choices[0].message.content    OpenAI chat, whole
//	choices[0].text               OpenAI completions
//	content                       llama.cpp /completion
//	token.text                    TGI /generate_stream, unless token.special
//	generated_text                TGI /generate (a stream's last event repeats the text here, so token comes first)
//	message.content               Ollama /api/chat
//	response                      Ollama /api/generate
//
// Thinking that a server sends apart from the answer (delta.reasoning,
// reasoning_content, Ollama's thinking) is no part of it; thinking a
// server leaves in the content (no reasoning parser) is, as the server
// says it is. A TGI token whose special is true (an end-of-sequence
// token, "</s>") is not text: TGI's Python server marks a token special
// when its id is one of the tokenizer's all_special_ids, and decodes the
// last event's generated_text with skip_special_tokens=True
// (huggingface/text-generation-inference,
// server/text_generation_server/models/flash_causal_lm.py,
// generate_token, as stored in the search index; @895c5f15 marks tokens
// the same way), so the stream's texts but the special ones are its
// generated_text.
//
// "[DONE]" ends a stream; what follows is not read. An error event (an
// SSE "event: error" or "error:" line, or a payload whose top-level
// "error" member is not null, false, 0, "", {} or [], the engine's rule)
// is an error, returned with the text before it, and so are a payload
// that is not JSON and a body whose one answer holds none of the members
// above; the error is one line, and names the event by its index from 0.
// An empty body, or a stream with no text in it, is the empty answer ""
// without error: whether a body without an answer failed is for its
// status and record to say (the engine judges a cut or unfinished
// stream), and the conversation goes on with what the model said,
// nothing.
func AnswerText(contentType string, body []byte) (string, error) {
	f := framing.FormatOf(contentType)
	if f == nil {
		trimmed := bytes.TrimLeft(body, " \t\r\n")
		if len(trimmed) == 0 {
			return "", nil
		}
		if trimmed[0] == '{' {
			return wholeAnswer(trimmed)
		}
		f = framing.SSE
	}
	var out strings.Builder
	evs := framing.Events{Format: f}
	n := 0
	for p := body; len(p) > 0; {
		ev, rest, ok, err := evs.Next(p)
		if err != nil {
			return "", err
		}
		if !ok {
			break
		}
		p = rest
		end, err := eventText(&out, ev, n)
		if err != nil || end {
			return out.String(), err
		}
		n++
	}
	if ev, ok := evs.End(); ok {
		if _, err := eventText(&out, ev, n); err != nil {
			return out.String(), err
		}
	}
	return out.String(), nil
}

// answerPayload holds the members of every grammar's answer that
// AnswerText reads; encoding/json leaves the others.
type answerPayload struct {
	Choices []struct {
		Index   int            `json:"index"`
		Delta   *answerMessage `json:"delta"`
		Message *answerMessage `json:"message"`
		Text    *string        `json:"text"`
	} `json:"choices"`
	Content       *string   `json:"content"`
	Token         *tgiToken `json:"token"`
	GeneratedText *string   `json:"generated_text"`
	// Message is Ollama's chat message, an object, or the text of an
	// OpenAI-style error answer ({"object": "error", "message": …}, as
	// vLLM wrote its ErrorResponse before it wrapped it in "error").
	Message  json.RawMessage `json:"message"`
	Response *string         `json:"response"`
	Object   string          `json:"object"`
	Error    json.RawMessage `json:"error"`
}

type answerMessage struct {
	Content *string `json:"content"` // null in a chat answer of tool calls only
}

type tgiToken struct {
	Text    string `json:"text"`
	Special bool   `json:"special"`
}

// text returns the payload's answer text, and whether it has a member
// that holds one (an empty one included).
func (p *answerPayload) text() (string, bool) {
	switch {
	case p.Choices != nil:
		for _, c := range p.Choices {
			if c.Index != 0 {
				continue // another of n answers
			}
			switch {
			case c.Delta != nil:
				return deref(c.Delta.Content), true
			case c.Message != nil:
				return deref(c.Message.Content), true
			case c.Text != nil:
				return *c.Text, true
			}
		}
		return "", true // a usage chunk's choices: []
	case p.Content != nil:
		return *p.Content, true
	case p.Token != nil:
		if p.Token.Special {
			return "", true
		}
		return p.Token.Text, true
	case p.GeneratedText != nil:
		return *p.GeneratedText, true
	case len(p.Message) > 0 && p.Message[0] == '{':
		var m answerMessage
		_ = json.Unmarshal(p.Message, &m) // cannot fail: a member of a decoded object
		return deref(m.Content), true
	case p.Response != nil:
		return *p.Response, true
	}
	return "", false
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

var doneData = []byte("[DONE]")

// eventText appends the text of event n to out; end is true at
// "[DONE]".
func eventText(out *strings.Builder, ev framing.Event, n int) (end bool, err error) {
	if ev.Error {
		return false, fmt.Errorf("event %d: the server sent an error event", n)
	}
	data := bytes.TrimSpace(ev.Data)
	switch {
	case len(data) == 0:
		return false, nil // an empty data line: no payload
	case bytes.Equal(data, doneData):
		return true, nil
	}
	var p answerPayload
	if err := json.Unmarshal(data, &p); err != nil {
		return false, fmt.Errorf("event %d: %v", n, err)
	}
	if err := p.err(); err != nil {
		return false, fmt.Errorf("event %d: %w", n, err)
	}
	t, _ := p.text()
	out.WriteString(t)
	return false, nil
}

// wholeAnswer is the text of a body that is one JSON answer.
func wholeAnswer(body []byte) (string, error) {
	var p answerPayload
	if err := json.Unmarshal(body, &p); err != nil {
		return "", fmt.Errorf("the answer: %v", err)
	}
	if err := p.err(); err != nil {
		return "", err
	}
	t, ok := p.text()
	if !ok {
		return "", errors.New("the answer has none of choices, content, token, generated_text, message or response: no grammar this package speaks")
	}
	return t, nil
}

// err is the payload's error member as an error, nil when there is none
// or it is one a client takes for none: null, false, 0, "", {} or [] (as
// the engine's topLevelError judges an event).
func (p *answerPayload) err() error {
	if p.Object == "error" {
		var m string
		if json.Unmarshal(p.Message, &m) == nil {
			return fmt.Errorf("the server sent an error: %s", strconv.Quote(m))
		}
		return errors.New("the server sent an error")
	}
	if len(p.Error) == 0 {
		return nil
	}
	var v any
	if json.Unmarshal(p.Error, &v) != nil {
		return nil // cannot be: it was decoded as JSON
	}
	switch e := v.(type) {
	case nil:
		return nil
	case bool:
		if !e {
			return nil
		}
	case float64:
		if e == 0 {
			return nil
		}
	case string:
		if e == "" {
			return nil
		}
		return fmt.Errorf("the server sent an error: %s", strconv.Quote(e))
	case []any:
		if len(e) == 0 {
			return nil
		}
	case map[string]any:
		if len(e) == 0 {
			return nil
		}
		if m, ok := e["message"].(string); ok {
			return fmt.Errorf("the server sent an error: %s", strconv.Quote(m))
		}
	}
	return fmt.Errorf("the server sent an error: %s", compactJSON(p.Error))
}

// compactJSON is raw on one line.
func compactJSON(raw []byte) string {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return strconv.Quote(string(raw))
	}
	return b.String()
}
