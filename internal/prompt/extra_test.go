package prompt

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestExtraBodies: the extra members follow each grammar's own fields,
// in the order given, compacted, whatever else the body holds; the
// bodies stay JSON objects that decode to the members given.
func TestExtraBodies(t *testing.T) {
	extra, err := ParseExtra([]byte(`{ "temperature": 0, "chat_template_kwargs": {"enable_thinking": false}, "min_tokens": 5 }`))
	if err != nil {
		t.Fatal(err)
	}
	if k := strings.Join(extra.Keys(), " "); k != "temperature chat_template_kwargs min_tokens" {
		t.Errorf("keys %q", k)
	}
	const tail = `,"temperature":0,"chat_template_kwargs":{"enable_thinking":false},"min_tokens":5}`
	msgs := []Message{{Role: "user", Content: "a <b> & c"}}
	for _, a := range []API{Chat, Completions, OllamaGenerate, OllamaChat, TGI, LlamaCpp} {
		plain, err := a.body("m", msgs, 5, false, Extra{})
		if err != nil {
			t.Fatal(err)
		}
		got, err := a.body("m", msgs, 5, false, extra)
		if err != nil {
			t.Fatalf("%s: %v", a, err)
		}
		if want := string(plain[:len(plain)-1]) + tail; string(got) != want {
			t.Errorf("%s:\n got %s\nwant %s", a, got, want)
		}
		var v map[string]any
		if err := json.Unmarshal(got, &v); err != nil || v["min_tokens"] != 5.0 {
			t.Errorf("%s: %s decodes to %v, %v", a, got, v, err)
		}
	}
	got, _ := Chat.body("m", msgs, 5, true, extra)
	if want := `{"model":"m","messages":[{"role":"user","content":"a <b> & c"}],"max_tokens":5,"stream":true,"stream_options":{"include_usage":true},"ignore_eos":true` + tail; string(got) != want {
		t.Errorf("chat:\n got %s\nwant %s", got, want)
	}
	// Generate, ReadShareGPT and TurnBody all merge it.
	bodies, err := Generate(Spec{API: Completions, Prompt: Length{N: 3}, Count: 1, Extra: extra})
	if err != nil || !strings.HasSuffix(string(bodies[0].JSON), tail) {
		t.Errorf("Generate: %v %v", err, bodies)
	}
	sg := `[{"conversations":[{"from":"human","value":"one two three four five"},{"from":"gpt","value":"six seven eight nine ten"}]}]`
	bodies, _, err = ReadShareGPT(strings.NewReader(sg), Spec{API: Chat, Extra: extra}, FirstTurn)
	if err != nil || !strings.HasSuffix(string(bodies[0].JSON), tail) {
		t.Errorf("ReadShareGPT: %v %v", err, bodies)
	}
	turn, err := OllamaChat.TurnBody("m", msgs, 3, false, extra)
	if err != nil || !strings.HasSuffix(string(turn), tail) {
		t.Errorf("TurnBody: %v %s", err, turn)
	}
}

// TestExtraErrors: not an object, a key twice, and each grammar's own
// fields are refused, naming the field.
func TestExtraErrors(t *testing.T) {
	for js, want := range map[string]string{
		`[1]`:                  "want a JSON object",
		`{"a":1,"a":2}`:        `"a" is given twice`,
		`{"a":}`:               "invalid character",
		`{"a":1} {"b":2}`:      "more follows",
		`{"a":1`:               "EOF",
		`"temperature"`:        "want a JSON object",
		`{"top_p":0.9,"x":[]}`: "",
	} {
		_, err := ParseExtra([]byte(js))
		if want == "" && err != nil || want != "" && (err == nil || !strings.Contains(err.Error(), want)) {
			t.Errorf("%s: %v, want %q", js, err, want)
		}
	}
	for _, c := range []struct {
		api   API
		extra string
		field string
	}{
		{Chat, `{"temperature":0,"stream":false}`, "stream"},
		{Chat, `{"max_completion_tokens":9}`, "max_completion_tokens"},
		{Completions, `{"stream_options":{}}`, "stream_options"},
		{OllamaChat, `{"options":{"temperature":0,"num_predict":3}}`, "options.num_predict"},
		{OllamaGenerate, `{"options":3}`, "options"},
		{TGI, `{"parameters":{"details":false}}`, "parameters.details"},
		{TGI, `{"parameters":[]}`, "parameters"},
		{LlamaCpp, `{"n_predict":3}`, "n_predict"},
	} {
		e, err := ParseExtra([]byte(c.extra))
		if err != nil {
			t.Fatal(err)
		}
		if k, ok := c.api.Clash(e); !ok || k != c.field {
			t.Errorf("%s %s: clash %q %v, want %q", c.api, c.extra, k, ok, c.field)
		}
		_, err = Generate(Spec{API: c.api, Prompt: Length{N: 3}, Count: 1, Extra: e})
		if err == nil || !strings.Contains(err.Error(), `extra field "`+c.field+`"`) {
			t.Errorf("%s %s: Generate: %v", c.api, c.extra, err)
		}
	}
	if e, _ := ParseExtra([]byte(`{"model":"x"}`)); func() bool { _, ok := TGI.Clash(e); return ok }() {
		t.Error("TGI's body has no model: an extra one is the user's")
	}
}

// TestExtraNested: Ollama's options and TGI's parameters hold the
// sampling parameters next to openload's max tokens, so an extra member
// of that name is merged into the object openload writes, its members
// after openload's; other grammars send it as a field like any other.
func TestExtraNested(t *testing.T) {
	msgs := []Message{{Role: "user", Content: "hi"}}
	for _, c := range []struct {
		api   API
		max   int
		extra string
		want  string
	}{
		{OllamaChat, 5, `{"options":{"temperature":0,"seed":7},"keep_alive":"5m"}`,
			`{"model":"m","messages":[{"role":"user","content":"hi"}],"stream":true,"options":{"num_predict":5,"temperature":0,"seed":7},"keep_alive":"5m"}`},
		{OllamaGenerate, 0, `{"options":{"top_p":0.9}}`,
			`{"model":"m","prompt":"hi","stream":true,"options":{"top_p":0.9}}`},
		{OllamaGenerate, 0, `{"options":{}}`,
			`{"model":"m","prompt":"hi","stream":true,"options":{}}`},
		{TGI, 5, `{"parameters":{"temperature":0.5,"top_k":10},"x":1}`,
			`{"inputs":"hi","parameters":{"max_new_tokens":5,"details":true,"temperature":0.5,"top_k":10},"stream":true,"x":1}`},
		{Chat, 5, `{"options":{"a":1}}`,
			`{"model":"m","messages":[{"role":"user","content":"hi"}],"max_tokens":5,"stream":true,"stream_options":{"include_usage":true},"options":{"a":1}}`},
	} {
		e, err := ParseExtra([]byte(c.extra))
		if err != nil {
			t.Fatal(err)
		}
		got, err := c.api.body("m", msgs, c.max, false, e)
		if err != nil || string(got) != c.want {
			t.Errorf("%s %s:\n got %s %v\nwant %s", c.api, c.extra, got, err, c.want)
		}
	}
}
