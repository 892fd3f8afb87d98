package prompt

import (
	"bytes"
	"testing"
)

func TestSetModel(t *testing.T) {
	cases := []struct{ body, want string }{
		{`{"model":"old","messages":[]}`, `{"model":"m1","messages":[]}`},
		{`{"messages":[],"model" : "old" ,"stream":true}`, `{"messages":[],"model":"m1" ,"stream":true}`},
		{`{"messages":[{"model":"inner"}]}`, `{"model":"m1","messages":[{"model":"inner"}]}`},
		{`{}`, `{"model":"m1"}`},
		{` { } `, ` {"model":"m1" } `},
		{`{"prompt":"a \"model\": b"}`, `{"model":"m1","prompt":"a \"model\": b"}`},
	}
	for _, c := range cases {
		got, err := SetModel([]byte(c.body), "m1")
		if err != nil || string(got) != c.want {
			t.Errorf("SetModel(%s) = %s, %v; want %s", c.body, got, err, c.want)
		}
	}
	for _, bad := range []string{`[1]`, `"x"`, `{"a":`, ``} {
		if got, err := SetModel([]byte(bad), "m1"); err == nil {
			t.Errorf("SetModel(%q) = %s, want an error", bad, got)
		}
	}
}

// TestWithModel: a model set in bodies already made is the model the
// grammar would have made them with (Spec.Model), byte for byte; TGI's
// grammar has no model field, and its bodies get none either way.
func TestWithModel(t *testing.T) {
	const name = "org/m<1>&b" // characters an HTML-escaping encoder would change
	for _, api := range []API{Chat, Completions, OllamaGenerate, OllamaChat, TGI, LlamaCpp} {
		spec := Spec{API: api, Prompt: Length{N: 32}, Output: Length{N: 8}, Seed: 2, Count: 3}
		bare, err := Generate(spec)
		if err != nil {
			t.Fatal(err)
		}
		spec.Model = name
		named, err := Generate(spec)
		if err != nil {
			t.Fatal(err)
		}
		for i := range bare {
			got, err := api.WithModel(bare[i].JSON, name)
			if err != nil || !bytes.Equal(got, named[i].JSON) {
				t.Errorf("%s: WithModel = %s, %v; Generate with the model made %s", api, got, err, named[i].JSON)
			}
			if has := bytes.Contains(named[i].JSON, []byte(`"model"`)); has != api.HasModel() {
				t.Errorf("%s: a body with a model field %v, its grammar has one %v: %s", api, has, api.HasModel(), named[i].JSON)
			}
		}
	}
}
