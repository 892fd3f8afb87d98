package prompt

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func TestWords(t *testing.T) {
	seen := map[string]bool{}
	for _, w := range words {
		if seen[w] {
			t.Errorf("%q is listed twice", w)
		}
		seen[w] = true
		if n, ns := Count(w), Count(" "+w); n != 1 || ns != 1 {
			t.Errorf("%q is %d tokens alone and %d after a space, want 1 and 1", w, n, ns)
		}
	}
}

func TestLengthBounds(t *testing.T) {
	for _, tc := range []struct {
		l              Length
		lo, hi         int
		outLo, outHi   int
		differsFromInt bool
	}{
		{Length{N: 1024}, 1024, 1024, 1024, 1024, false},
		{Length{N: 1024, Spread: 0.1}, 921, 1127, 921, 1127, false}, // 921.6, 1126.4
		{Length{N: 128, Spread: 0.5}, 64, 192, 64, 192, false},
		{Length{N: 100, Spread: 0.1}, 90, 111, 90, 111, true}, // 100*(1+0.1) is 110.00000000000001, in Python too
		{Length{N: 1, Spread: 0.5}, 0, 2, 1, 2, false},        // an output never asks 0 tokens
		{Length{N: 3, Spread: 0.9}, 0, 6, 1, 6, false},
	} {
		lo, hi := tc.l.Bounds()
		olo, ohi := tc.l.outputBounds()
		if lo != tc.lo || hi != tc.hi || olo != tc.outLo || ohi != tc.outHi {
			t.Errorf("%v: bounds [%d, %d], output [%d, %d]; want [%d, %d], [%d, %d]", tc.l, lo, hi, olo, ohi, tc.lo, tc.hi, tc.outLo, tc.outHi)
		}
	}
}

func TestParseLength(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Length
		err  string
	}{
		{"1024", Length{N: 1024}, ""},
		{"1024,0.1", Length{N: 1024, Spread: 0.1}, ""},
		{" 256 , 0 ", Length{N: 256}, ""},
		{"0", Length{}, "at least 1"},
		{"-5", Length{}, "at least 1"},
		{"1.5", Length{}, "must be an integer"},
		{"", Length{}, "must be an integer"},
		{"1024,1", Length{}, "[0, 1)"},
		{"1024,-0.1", Length{}, "[0, 1)"},
		{"1024,NaN", Length{}, "[0, 1)"},
		{"1024,x", Length{}, "must be a number"},
		{"1024,0.1,3", Length{}, "must be a number"},
	} {
		got, err := ParseLength(tc.in)
		switch {
		case tc.err == "" && (err != nil || got != tc.want):
			t.Errorf("ParseLength(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("ParseLength(%q) error = %v, want one saying %q", tc.in, err, tc.err)
		}
	}
}

func FuzzParseLength(f *testing.F) {
	for _, s := range []string{"1024", "1024,0.1", "1,0.999", "7,", ",", "1e3", "5,1e-300"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		l, err := ParseLength(s)
		if err != nil {
			return
		}
		if l.Validate() != nil {
			t.Fatalf("ParseLength(%q) = %v, which does not validate", s, l)
		}
		back, err := ParseLength(l.String())
		if err != nil || back != l {
			t.Fatalf("ParseLength(%q) = %v; its String %q parses to %v, %v", s, l, l.String(), back, err)
		}
	})
}

// promptOf returns the prompt text of a body in any grammar.
func promptOf(t *testing.T, a API, js []byte) string {
	t.Helper()
	var v struct {
		Messages []Message `json:"messages"`
		Prompt   *string   `json:"prompt"`
		Inputs   *string   `json:"inputs"`
	}
	if err := json.Unmarshal(js, &v); err != nil {
		t.Fatalf("%s body %s: %v", a, js, err)
	}
	switch {
	case a.chat():
		return v.Messages[len(v.Messages)-1].Content
	case a == TGI:
		return *v.Inputs
	default:
		return *v.Prompt
	}
}

// maxOf returns the max tokens a body asks, in any grammar.
func maxOf(t *testing.T, js []byte) int {
	t.Helper()
	var v struct {
		MaxTokens int `json:"max_tokens"`
		NPredict  int `json:"n_predict"`
		Options   struct {
			NumPredict int `json:"num_predict"`
		}
		Parameters struct {
			MaxNewTokens int `json:"max_new_tokens"`
		}
	}
	if err := json.Unmarshal(js, &v); err != nil {
		t.Fatal(err)
	}
	return v.MaxTokens + v.NPredict + v.Options.NumPredict + v.Parameters.MaxNewTokens
}

// TestGenerateCounts checks that every generated prompt counts exactly its
// drawn length, that lengths stay in their bounds and that the spread
// reaches both ends.
func TestGenerateCounts(t *testing.T) {
	for _, tc := range []struct {
		api            API
		prompt, output Length
		count          int
	}{
		{Chat, Length{N: 1}, Length{N: 1}, 50},
		{Completions, Length{N: 10, Spread: 0.5}, Length{N: 4, Spread: 0.5}, 400},
		{OllamaGenerate, Length{N: 128}, Length{N: 128, Spread: 0.1}, 100},
		{OllamaChat, Length{N: 64, Spread: 0.25}, Length{}, 100},
		{TGI, Length{N: 33, Spread: 0.3}, Length{N: 8}, 100},
		{LlamaCpp, Length{N: 1024, Spread: 0.1}, Length{N: 128}, 20},
	} {
		bodies, err := Generate(Spec{API: tc.api, Model: "m", Prompt: tc.prompt, Output: tc.output, Seed: 3, Count: tc.count})
		if err != nil {
			t.Fatalf("%s %v: %v", tc.api, tc.prompt, err)
		}
		if len(bodies) != tc.count {
			t.Fatalf("%s: %d bodies, want %d", tc.api, len(bodies), tc.count)
		}
		lo, hi := tc.prompt.Bounds()
		olo, ohi := tc.output.outputBounds()
		if tc.output == (Length{}) {
			olo, ohi = 0, 0
		}
		seenLo, seenHi := false, false
		for i, b := range bodies {
			text := promptOf(t, tc.api, b.JSON)
			if got := Count(text); got != b.PromptTokens {
				t.Errorf("%s body %d: prompt counts %d tokens, body says %d", tc.api, i, got, b.PromptTokens)
			}
			if b.PromptTokens < lo || b.PromptTokens > hi {
				t.Errorf("%s body %d: %d prompt tokens, outside [%d, %d]", tc.api, i, b.PromptTokens, lo, hi)
			}
			if got := maxOf(t, b.JSON); got != b.MaxTokens || got < olo || got > ohi {
				t.Errorf("%s body %d: asks %d tokens, body says %d, bounds [%d, %d]", tc.api, i, got, b.MaxTokens, olo, ohi)
			}
			if want := Text(3, uint64(i), b.PromptTokens); text != want {
				t.Errorf("%s body %d: prompt is not Text(seed, %d, %d)", tc.api, i, i, b.PromptTokens)
			}
			seenLo = seenLo || b.PromptTokens == lo
			seenHi = seenHi || b.PromptTokens == hi
		}
		// Both ends of 10,0.5 ([5, 15], 11 values) are each missed by 400
		// draws with probability (10/11)^400 < 1e-16.
		if tc.count >= 400 && (!seenLo || !seenHi) {
			t.Errorf("%s %v: over %d draws, the shortest %d seen: %v, the longest %d: %v", tc.api, tc.prompt, tc.count, lo, seenLo, hi, seenHi)
		}
	}
}

func TestGenerateDeterministic(t *testing.T) {
	spec := Spec{API: Chat, Prompt: Length{N: 64, Spread: 0.5}, Output: Length{N: 16, Spread: 0.5}, Seed: 42, Count: 200}
	a, errA := Generate(spec)
	b, errB := Generate(spec)
	short := spec
	short.Count = 10
	c, errC := Generate(short)
	other := spec
	other.Seed = 43
	d, errD := Generate(other)
	if err := errorsJoin(errA, errB, errC, errD); err != nil {
		t.Fatal(err)
	}
	texts := map[string]int{}
	for i := range a {
		if !bytes.Equal(a[i].JSON, b[i].JSON) || a[i].PromptTokens != b[i].PromptTokens || a[i].MaxTokens != b[i].MaxTokens {
			t.Errorf("body %d differs between two runs of one spec", i)
		}
		if i < len(c) && !bytes.Equal(a[i].JSON, c[i].JSON) {
			t.Errorf("body %d differs between Count 200 and Count 10: it must depend on (seed, index) only", i)
		}
		if bytes.Equal(a[i].JSON, d[i].JSON) {
			t.Errorf("body %d is the same under seeds 42 and 43", i)
		}
		p := promptOf(t, Chat, a[i].JSON)
		if j, ok := texts[p]; ok {
			t.Errorf("bodies %d and %d have the same prompt", j, i)
		}
		texts[p] = i
		// 16 words from 748 repeat by chance with probability 748^-16.
		first := strings.Join(strings.Fields(p)[:16], " ")
		if j, ok := texts[first]; ok {
			t.Errorf("bodies %d and %d share their first 16 words", j, i)
		}
		texts[first] = i
	}
}

func errorsJoin(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

func TestGenerateErrors(t *testing.T) {
	ok := Spec{API: Chat, Prompt: Length{N: 8}, Output: Length{N: 8}, Count: 1}
	for _, tc := range []struct {
		change func(*Spec)
		err    string
	}{
		{func(s *Spec) { s.API = 0 }, "unknown API"},
		{func(s *Spec) { s.Prompt = Length{} }, "prompt length"},
		{func(s *Spec) { s.Prompt = Length{N: 1, Spread: 0.5} }, "shortest prompt would be 0"},
		{func(s *Spec) { s.Output = Length{N: 8, Spread: 1} }, "output length"},
		{func(s *Spec) { s.Count = 0 }, "count must be at least 1"},
		{func(s *Spec) { s.API, s.IgnoreEOS = OllamaChat, true }, "ollama-chat API has no field"},
		{func(s *Spec) { s.API, s.IgnoreEOS = TGI, true }, "tgi API has no field"},
		{func(s *Spec) { s.Output, s.IgnoreEOS = Length{}, true }, "needs an output length"},
		{func(s *Spec) { s.PrefixTokens = 10 }, "their number must be at least 1, got 0"},
		{func(s *Spec) { s.Prefixes = 3 }, "3 shared prefixes need a prefix length"},
		{func(s *Spec) { s.PrefixTokens, s.Prefixes = -1, 2 }, "neither may be negative"},
	} {
		s := ok
		tc.change(&s)
		if _, err := Generate(s); err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%+v: error %v, want one saying %q", s, err, tc.err)
		}
	}
	if _, err := Generate(ok); err != nil {
		t.Errorf("%+v: %v", ok, err)
	}
}

// TestBodies pins each grammar's body, byte for byte.
func TestBodies(t *testing.T) {
	msgs := []Message{{Role: "user", Content: `a <b> & "c"`}}
	for _, tc := range []struct {
		api       API
		model     string
		max       int
		ignoreEOS bool
		want      string
	}{
		{Chat, "m", 8, true, `{"model":"m","messages":[{"role":"user","content":"a <b> & \"c\""}],"max_tokens":8,"stream":true,"stream_options":{"include_usage":true},"ignore_eos":true}`},
		{Chat, "", 0, false, `{"messages":[{"role":"user","content":"a <b> & \"c\""}],"stream":true,"stream_options":{"include_usage":true}}`},
		{Completions, "m", 8, true, `{"model":"m","prompt":"a <b> & \"c\"","max_tokens":8,"stream":true,"stream_options":{"include_usage":true},"ignore_eos":true}`},
		{OllamaGenerate, "m", 8, false, `{"model":"m","prompt":"a <b> & \"c\"","stream":true,"options":{"num_predict":8}}`},
		{OllamaGenerate, "", 0, false, `{"prompt":"a <b> & \"c\"","stream":true}`},
		{OllamaChat, "m", 8, false, `{"model":"m","messages":[{"role":"user","content":"a <b> & \"c\""}],"stream":true,"options":{"num_predict":8}}`},
		{TGI, "m", 8, false, `{"inputs":"a <b> & \"c\"","parameters":{"max_new_tokens":8,"details":true},"stream":true}`},
		{LlamaCpp, "m", 8, true, `{"model":"m","prompt":"a <b> & \"c\"","n_predict":8,"stream":true,"ignore_eos":true}`},
	} {
		got, err := tc.api.body(tc.model, msgs, tc.max, tc.ignoreEOS, Extra{})
		if err != nil || string(got) != tc.want {
			t.Errorf("%s body:\n got %s, %v\nwant %s", tc.api, got, err, tc.want)
		}
	}
}

func TestAPIOf(t *testing.T) {
	for path, want := range map[string]API{
		"/v1/chat/completions":        Chat,
		"/openai/v1/chat/completions": Chat,
		"/v1/chat/completions/":       Chat,
		"/v1/completions":             Completions,
		"/api/generate":               OllamaGenerate,
		"/api/chat":                   OllamaChat,
		"/generate_stream":            TGI,
		"/generate":                   TGI,
		"/completion":                 LlamaCpp,
	} {
		if got, err := APIOf(path); got != want || err != nil {
			t.Errorf("APIOf(%q) = %v, %v; want %v", path, got, err, want)
		}
	}
	for _, path := range []string{"", "/", "/v1/models", "/chat", "/v1/embeddings"} {
		if got, err := APIOf(path); err == nil {
			t.Errorf("APIOf(%q) = %v, want an error", path, got)
		}
	}
}

func TestParseAPI(t *testing.T) {
	for _, name := range APINames() {
		a, err := ParseAPI(name)
		if err != nil || a.String() != name {
			t.Errorf("ParseAPI(%q) = %v, %v", name, a, err)
		}
	}
	if len(APINames()) != 6 {
		t.Errorf("APINames() = %v, want 6 names", APINames())
	}
	if _, err := ParseAPI("openai"); err == nil || !strings.Contains(err.Error(), "chat, completions, ollama-generate") {
		t.Errorf(`ParseAPI("openai") error = %v, want one listing the names`, err)
	}
}

func BenchmarkGenerate(b *testing.B) {
	spec := Spec{API: Chat, Model: "m", Prompt: Length{N: 1024}, Output: Length{N: 128}, Seed: 1, Count: 10000}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Generate(spec); err != nil {
			b.Fatal(err)
		}
	}
}

// TestGeneratePrefixes: with shared prefixes, every prompt is one of K
// prefixes of P tokens (the same text wherever it is drawn) and a suffix
// of the drawn length, P + that length tokens exactly; the prefix drawn
// depends on (seed, i) alone (a shard making body i alone makes the
// same), every prefix is drawn, and the suffixes are the prompts Text
// makes without prefixes.
func TestGeneratePrefixes(t *testing.T) {
	spec := Spec{API: Completions, Prompt: Length{N: 20, Spread: 0.5}, Seed: 9, Count: 64, PrefixTokens: 50, Prefixes: 4}
	bodies, err := Generate(spec)
	if err != nil {
		t.Fatal(err)
	}
	plain := spec
	plain.PrefixTokens, plain.Prefixes = 0, 0
	suffixes, err := Generate(plain)
	if err != nil {
		t.Fatal(err)
	}
	texts := map[int]string{}
	for i, b := range bodies {
		p := promptOf(t, Completions, b.JSON)
		if n := Count(p); n != b.PromptTokens || n != 50+suffixes[i].PromptTokens {
			t.Errorf("body %d: %d tokens, says %d, want 50 + %d", i, n, b.PromptTokens, suffixes[i].PromptTokens)
		}
		k := spec.PrefixOf(i)
		words := strings.Fields(p)
		prefix, suffix := strings.Join(words[:50], " "), strings.Join(words[50:], " ")
		if prev, ok := texts[k]; ok && prev != prefix {
			t.Errorf("body %d: prefix %d differs from its earlier use", i, k)
		}
		texts[k] = prefix
		if want := promptOf(t, Completions, suffixes[i].JSON); suffix != want {
			t.Errorf("body %d: suffix %q, want %q", i, suffix, want)
		}
		one := spec
		one.Count, one.Seed = 1, spec.Seed
		if k != one.PrefixOf(i) {
			t.Errorf("body %d: prefix %d, alone %d", i, k, one.PrefixOf(i))
		}
	}
	if len(texts) != 4 {
		t.Errorf("%d prefixes drawn of 4 in 64 bodies", len(texts))
	}
	seen := map[string]bool{}
	for _, p := range texts {
		seen[p] = true
	}
	if len(seen) != 4 {
		t.Errorf("%d distinct prefix texts, want 4", len(seen))
	}
}
