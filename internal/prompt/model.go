package prompt

import (
	"bytes"
	"encoding/json"
	"errors"
)

// HasModel reports whether a's grammar has a model field. TGI's has
// none: a TGI server serves one model, and its GenerateRequest
// (router/src/lib.rs) holds inputs and parameters only.
func (a API) HasModel() bool { return a != TGI }

// WithModel returns body, made in a's grammar without a model (Generate,
// ReadShareGPT), as it is made with Spec.Model = name: the model member
// first where the grammar has one (every body type puts it first), a
// body of a grammar without one as it is. It serves a model known only
// once the bodies are made (a model asked of the target).
func (a API) WithModel(body []byte, name string) ([]byte, error) {
	if !a.HasModel() {
		return body, nil
	}
	var val bytes.Buffer
	enc := json.NewEncoder(&val)
	enc.SetEscapeHTML(false) // as API.body writes it
	if err := enc.Encode(name); err != nil {
		return nil, err
	}
	return setModel(body, bytes.TrimSuffix(val.Bytes(), []byte("\n")))
}

// SetModel returns body, a JSON object of a grammar openload does not
// know (a user's), with its top-level "model" member set to name: the
// value replaced where the member is, else the member put first. The rest
// of the body is kept byte for byte, its members' order too, which a
// decode and re-encode would not keep.
func SetModel(body []byte, name string) ([]byte, error) {
	v, err := json.Marshal(name)
	if err != nil {
		return nil, err
	}
	return setModel(body, v)
}

// setModel is SetModel with the value v encoded.
func setModel(body, v []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, errors.New("not a JSON object")
	}
	open := dec.InputOffset()
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return nil, err
		}
		start := dec.InputOffset() // after the key: the colon, then the value
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return nil, err
		}
		if key != "model" {
			continue
		}
		end := dec.InputOffset()
		out := make([]byte, 0, len(body)+len(v))
		out = append(append(append(out, body[:start]...), ':'), v...)
		return append(out, body[end:]...), nil
	}
	if _, err := dec.Token(); err != nil { // the closing brace
		return nil, err
	}
	member := append([]byte(`"model":`), v...)
	if len(bytes.TrimSpace(body[open:])) > 1 { // members follow
		member = append(member, ',')
	}
	out := make([]byte, 0, len(body)+len(member))
	out = append(append(append(out, body[:open]...), member...), body[open:]...)
	return out, nil
}
