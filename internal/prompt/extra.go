package prompt

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
)

// Extra is a JSON object whose members go into every body openload makes
// (Generate, ReadShareGPT, TurnBody): the request's own parameters,
// sampling (temperature, top_p, seed), min_tokens, chat_template_kwargs,
// anything the server takes, as vLLM's bench --extra-body and GuideLLM's
// request extras send them. The members follow the grammar's own fields,
// in the order the object gives them, each value compacted; the zero
// Extra adds nothing.
type Extra struct {
	keys    []string
	members []byte // `"k":v,"k2":v2`, compact
}

// ParseExtra reads a JSON object for Extra. Its members' order is kept;
// a key given twice is refused (which one would the server read?).
func ParseExtra(js []byte) (Extra, error) {
	dec := json.NewDecoder(bytes.NewReader(js))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return Extra{}, errors.New("want a JSON object, e.g. {\"temperature\":0}")
	}
	var e Extra
	var buf bytes.Buffer
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return Extra{}, err
		}
		key := tok.(string) // an object's member begins with its key
		if slices.Contains(e.keys, key) {
			return Extra{}, fmt.Errorf("%q is given twice", key)
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return Extra{}, err
		}
		if buf.Len() > 0 {
			buf.WriteByte(',')
		}
		k, err := encode(key)
		if err != nil {
			return Extra{}, err
		}
		buf.Write(k)
		buf.WriteByte(':')
		if err := json.Compact(&buf, v); err != nil {
			return Extra{}, err
		}
		e.keys = append(e.keys, key)
	}
	if _, err := dec.Token(); err != nil { // the closing brace
		return Extra{}, err
	}
	if _, err := dec.Token(); err == nil {
		return Extra{}, errors.New("more follows the object")
	}
	e.members = buf.Bytes()
	return e, nil
}

// encode writes v as API.body does: <, >, & as they are.
func encode(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// Keys returns e's keys in their order.
func (e Extra) Keys() []string { return slices.Clone(e.keys) }

// ownFields are the top-level fields each grammar's body has (API.body),
// and OpenAI's other name for the max tokens: an Extra may not set them,
// as the prompt, the max tokens, the stream and its usage are what
// openload measures with. Ollama's options and TGI's parameters hold
// openload's max tokens, so they are its own too.
var ownFields = map[API][]string{
	Chat:           {"model", "messages", "prompt", "max_tokens", "max_completion_tokens", "stream", "stream_options", "ignore_eos"},
	Completions:    {"model", "messages", "prompt", "max_tokens", "max_completion_tokens", "stream", "stream_options", "ignore_eos"},
	OllamaGenerate: {"model", "messages", "prompt", "stream", "options"},
	OllamaChat:     {"model", "messages", "prompt", "stream", "options"},
	TGI:            {"inputs", "parameters", "stream"},
	LlamaCpp:       {"model", "prompt", "n_predict", "stream", "ignore_eos"},
}

// Clash returns the first key of e that is one of a's own fields, and
// whether there is one.
func (a API) Clash(e Extra) (string, bool) {
	for _, k := range e.keys {
		if slices.Contains(ownFields[a], k) {
			return k, true
		}
	}
	return "", false
}

// merge returns body, a JSON object API.body wrote, with e's members
// after its own.
func (e Extra) merge(body []byte) []byte {
	if len(e.members) == 0 {
		return body
	}
	out := make([]byte, 0, len(body)+1+len(e.members))
	out = append(out, body[:len(body)-1]...) // up to the closing brace
	out = append(append(append(out, ','), e.members...), '}')
	return out
}
