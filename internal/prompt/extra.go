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
	vals    [][]byte // each key's value, compact
	members []byte   // `"k":v,"k2":v2`, compact
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
		var val bytes.Buffer
		if err := json.Compact(&val, v); err != nil {
			return Extra{}, err
		}
		buf.Write(val.Bytes())
		e.keys, e.vals = append(e.keys, key), append(e.vals, val.Bytes())
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
// openload measures with.
var ownFields = map[API][]string{
	Chat:           {"model", "messages", "prompt", "max_tokens", "max_completion_tokens", "stream", "stream_options", "ignore_eos"},
	Completions:    {"model", "messages", "prompt", "max_tokens", "max_completion_tokens", "stream", "stream_options", "ignore_eos"},
	OllamaGenerate: {"model", "messages", "prompt", "stream"},
	OllamaChat:     {"model", "messages", "prompt", "stream"},
	TGI:            {"inputs", "stream"},
	LlamaCpp:       {"model", "prompt", "n_predict", "stream", "ignore_eos"},
}

// Nested is the object of a's body that holds its sampling parameters
// next to openload's max tokens, and the members openload writes in it:
// Ollama's options (Options in ollama's api/types.go: temperature, top_p,
// seed… beside num_predict) and TGI's parameters (GenerateParameters in
// text-generation-inference's router/src/lib.rs: temperature, top_p,
// seed… beside max_new_tokens and details, which openload reads the
// token counts from). An Extra's member of that name, an object, is
// merged into it rather than sent beside it; "" for grammars whose
// parameters are top-level fields.
func (a API) Nested() (key string, own []string) {
	switch a {
	case OllamaGenerate, OllamaChat:
		return "options", []string{"num_predict"}
	case TGI:
		return "parameters", []string{"max_new_tokens", "details"}
	}
	return "", nil
}

// Clash returns the first key of e that is one of a's own fields, and
// whether there is one. A member of a's nested object (API.Nested) that
// is openload's own is named by its path, "options.num_predict"; the
// nested object's key itself when its value is not an object.
func (a API) Clash(e Extra) (string, bool) {
	for _, k := range e.keys {
		if slices.Contains(ownFields[a], k) {
			return k, true
		}
	}
	key, own := a.Nested()
	inner, ok := e.inner(key)
	if !ok {
		return key, true
	}
	for _, k := range inner.keys {
		if slices.Contains(own, k) {
			return key + "." + k, true
		}
	}
	return "", false
}

// inner returns the members of e's member key, an object, and whether
// it is one; the zero Extra and true when e has no member key.
func (e Extra) inner(key string) (Extra, bool) {
	i := slices.Index(e.keys, key)
	if key == "" || i < 0 {
		return Extra{}, true
	}
	in, err := ParseExtra(e.vals[i])
	return in, err == nil
}

// without returns e less its member key.
func (e Extra) without(key string) Extra {
	i := slices.Index(e.keys, key)
	if i < 0 {
		return e
	}
	var out Extra
	for j, k := range e.keys {
		if j == i {
			continue
		}
		if len(out.members) > 0 {
			out.members = append(out.members, ',')
		}
		kq, _ := encode(k) // a string: cannot fail
		out.members = append(append(append(out.members, kq...), ':'), e.vals[j]...)
		out.keys, out.vals = append(out.keys, k), append(out.vals, e.vals[j])
	}
	return out
}

// object returns own, an object encoding/json wrote (nil: none), with
// e's members after its own: "{}" grows to e's members alone.
func (e Extra) object(own []byte) []byte {
	if len(own) == 0 {
		own = []byte("{}")
	}
	if len(e.members) == 0 {
		return own
	}
	if len(own) == 2 {
		return append(append([]byte{'{'}, e.members...), '}')
	}
	return e.merge(own)
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
