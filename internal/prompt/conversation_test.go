package prompt

import (
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func TestConversationSpecValidate(t *testing.T) {
	ok := ConversationSpec{API: Chat, Turns: 3, User: Length{N: 10}}
	if err := ok.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		change func(*ConversationSpec)
		err    string
	}{
		{func(s *ConversationSpec) { s.API = 0 }, "API: unknown API"},
		{func(s *ConversationSpec) { s.Turns = 0 }, "turns must be in 1..65536, got 0"},
		{func(s *ConversationSpec) { s.Turns = maxTurns + 1 }, "turns must be in 1..65536, got 65537"},
		{func(s *ConversationSpec) { s.User = Length{} }, "user length: the token count must be at least 1, got 0"},
		{func(s *ConversationSpec) { s.User = Length{N: 1, Spread: 0.5} }, "user length 1,0.5: the shortest user message would be 0 tokens"},
		{func(s *ConversationSpec) { s.Output = Length{N: 5, Spread: 1} }, "output length: the spread must be in [0, 1), got 1"},
		{func(s *ConversationSpec) { s.System = -1 }, "system prompt length must not be negative, got -1"},
		{func(s *ConversationSpec) { s.SharedSystem = true }, "a shared system prompt needs a system prompt length"},
		{func(s *ConversationSpec) { s.IgnoreEOS = true }, "ignoring the end of sequence needs an output length"},
		{func(s *ConversationSpec) { s.API, s.IgnoreEOS, s.Output = TGI, true, Length{N: 5} }, "the tgi API has no field to ignore the end of sequence"},
	} {
		s := ok
		c.change(&s)
		err := s.Validate()
		if err == nil || !strings.HasPrefix(err.Error(), c.err) {
			t.Errorf("%+v: %v, want %q", s, err, c.err)
		}
	}
}

func TestSynthetic(t *testing.T) {
	s := ConversationSpec{API: Chat, Turns: 4, User: Length{N: 30, Spread: 0.5}, Output: Length{N: 20, Spread: 0.5}, System: 12, Seed: 3}
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	ulo, uhi := s.User.Bounds()
	olo, ohi := s.Output.outputBounds()
	seen := map[string]bool{}
	for i := range uint64(50) {
		c := s.Synthetic(i)
		if !reflect.DeepEqual(c, s.Synthetic(i)) {
			t.Fatalf("conversation %d differs between two calls", i)
		}
		if len(c.Users) != s.Turns || len(c.MaxTokens) != s.Turns || len(c.UserTokens) != s.Turns {
			t.Fatalf("conversation %d: %d users, %d max tokens, %d counts; want %d each", i, len(c.Users), len(c.MaxTokens), len(c.UserTokens), s.Turns)
		}
		if Count(c.System) != s.System || seen[c.System] {
			t.Errorf("conversation %d: system prompt %q: %d tokens, or another conversation's", i, c.System, Count(c.System))
		}
		seen[c.System] = true
		for k, u := range c.Users {
			n := c.UserTokens[k]
			if Count(u) != n || n < ulo || n > uhi || c.MaxTokens[k] < olo || c.MaxTokens[k] > ohi {
				t.Errorf("conversation %d turn %d: %d tokens (%d counted), %d max; want [%d, %d] and [%d, %d]", i, k, n, Count(u), c.MaxTokens[k], ulo, uhi, olo, ohi)
			}
			if seen[u] {
				t.Errorf("conversation %d turn %d: %q again", i, k, u)
			}
			seen[u] = true
			if u == Text(s.Seed, i, n) {
				t.Errorf("conversation %d turn %d: Generate's text for its index", i, k)
			}
		}
	}

	// More turns keep the first ones; another seed changes everything.
	more := s
	more.Turns = 6
	if c, m := s.Synthetic(7), more.Synthetic(7); !slices.Equal(c.Users, m.Users[:4]) || !slices.Equal(c.MaxTokens, m.MaxTokens[:4]) || c.System != m.System {
		t.Errorf("six turns do not begin with the four: %+v, %+v", c, m)
	}
	other := s
	other.Seed++
	if c, o := s.Synthetic(7), other.Synthetic(7); c.System == o.System || c.Users[0] == o.Users[0] {
		t.Errorf("seed %d and %d make the same conversation 7", s.Seed, other.Seed)
	}

	// The shared system prompt: the same for every conversation, of Seed
	// only.
	s.SharedSystem = true
	sys := s.Synthetic(0).System
	if Count(sys) != s.System || s.Synthetic(99).System != sys || other.Synthetic(0).System == sys {
		t.Errorf("shared system prompt %q, conversation 99's %q", sys, s.Synthetic(99).System)
	}

	// No output length, no system prompt: nothing asked, none written.
	s.Output, s.System, s.SharedSystem = Length{}, 0, false
	if c := s.Synthetic(1); c.System != "" || slices.ContainsFunc(c.MaxTokens, func(m int) bool { return m != 0 }) {
		t.Errorf("%+v, want no system prompt and no max tokens", c)
	}
}

// Conversation 0 of seed 1, pinned: a change to how conversations are
// drawn shows here (a split run's shards must agree, and a rerun must
// make what the last run made).
func TestSyntheticKnown(t *testing.T) {
	s := ConversationSpec{API: Chat, Turns: 2, User: Length{N: 4, Spread: 0.5}, Output: Length{N: 10, Spread: 0.5}, System: 3, Seed: 1}
	want := Conversation{
		System:     "final about apply",
		Users:      []string{"plane inside serve able region show", "plane area rain after song shore"},
		MaxTokens:  []int{9, 15},
		UserTokens: []int{6, 6},
	}
	if got := s.Synthetic(0); !reflect.DeepEqual(got, want) {
		t.Errorf("%#v\nwant %#v", got, want)
	}
	s.SharedSystem = true
	if got := s.Synthetic(5).System; got != "suggest often snow" {
		t.Errorf("shared system prompt %q", got)
	}
}

func readConvs(t *testing.T, s ConversationSpec) ([]Conversation, int) {
	t.Helper()
	f, err := os.Open("testdata/sharegpt.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	convs, skipped, err := ReadConversations(f, "sharegpt.json", s)
	if err != nil {
		t.Fatal(err)
	}
	return convs, skipped
}

func TestReadConversations(t *testing.T) {
	conv := sampleTurns(t)
	convs, skipped := readConvs(t, ConversationSpec{API: Chat})
	// Every entry has a human turn; entries 0 and 3 have two.
	if len(convs) != len(conv) || skipped != 0 {
		t.Fatalf("%d conversations, %d skipped; want %d, 0", len(convs), skipped, len(conv))
	}
	answer := func(e, k int) int { return max(1, Count(conv[e][k].Content)) }
	want := []Conversation{
		{Users: []string{conv[0][0].Content, conv[0][2].Content}, MaxTokens: []int{answer(0, 1), answer(0, 3)}},
		{System: conv[1][0].Content, Users: []string{conv[1][1].Content}, MaxTokens: []int{answer(1, 2)}},
		{Users: []string{"hi"}, MaxTokens: []int{answer(2, 1)}},
		{Users: []string{conv[3][0].Content, "Thanks."}, MaxTokens: []int{answer(3, 1), answer(3, 3)}},
		{Users: []string{conv[4][0].Content}, MaxTokens: []int{0}}, // no answer: not asked
	}
	for e := range want {
		for _, u := range want[e].Users {
			want[e].UserTokens = append(want[e].UserTokens, Count(u))
		}
		if !reflect.DeepEqual(convs[e], want[e]) {
			t.Errorf("entry %d: %+v\nwant %+v", e, convs[e], want[e])
		}
	}

	// Output given: drawn per (Seed, entry, turn), the file's the same.
	s := ConversationSpec{API: Completions, Output: Length{N: 50, Spread: 0.5}, Seed: 9, IgnoreEOS: true}
	drawn, _ := readConvs(t, s)
	again, _ := readConvs(t, s)
	lo, hi := s.Output.outputBounds()
	for e, c := range drawn {
		if !slices.Equal(c.Users, convs[e].Users) || !reflect.DeepEqual(c, again[e]) {
			t.Errorf("entry %d: %+v, then %+v", e, c, again[e])
		}
		for _, m := range c.MaxTokens {
			if m < lo || m > hi {
				t.Errorf("entry %d: max tokens %d, want [%d, %d]", e, m, lo, hi)
			}
		}
	}
	if slices.Equal(drawn[0].MaxTokens, drawn[3].MaxTokens) {
		t.Errorf("entries 0 and 3 drew the same max tokens %v", drawn[0].MaxTokens)
	}
}

func TestReadConversationsErrors(t *testing.T) {
	for _, c := range []struct {
		file    string
		s       ConversationSpec
		err     string
		skipped int
	}{
		{`[{"conversations":[{"from":"human","value":"a"},{"from":"gpt","value":"b"}]},{"conversations":[{"from":"gpt","value":"c"}]}]`, ConversationSpec{API: Chat},
			"f.json: no multi-turn conversation in it (2 entries, none with two human turns)", 1},
		{`[]`, ConversationSpec{API: Chat}, "f.json: no multi-turn conversation in it (0 entries, none with two human turns)", 0},
		{`{"conversations":[]}`, ConversationSpec{API: Chat}, "f.json: the file is not a JSON list of conversations", 0},
		{`[{"conversations":[{"from":"human","value":1}]}]`, ConversationSpec{API: Chat}, "f.json: entry 0: conversations.value is a JSON number, want a string", 0},
		{`[{"id":"x","conversations":[{"from":"robot","value":"a"}]}]`, ConversationSpec{API: Chat}, `f.json: entry 0 (id "x"): conversations[0] is from "robot": want human, gpt or system`, 0},
		{`[{"conversations":[{"from":"human","value":"a"},{"from":"human","value":"b"}]}`, ConversationSpec{API: Chat}, "f.json: after 1 entries: EOF", 0},
		{`[]`, ConversationSpec{API: Chat, Turns: 2}, "a ShareGPT file gives its own turns", 0},
		{`[]`, ConversationSpec{API: Chat, System: 5}, "a ShareGPT file gives its own turns", 0},
		{`[]`, ConversationSpec{API: OllamaChat, IgnoreEOS: true, Output: Length{N: 4}}, "the ollama-chat API has no field to ignore the end of sequence", 0},
	} {
		convs, skipped, err := ReadConversations(strings.NewReader(c.file), "f.json", c.s)
		if err == nil || !strings.HasPrefix(err.Error(), c.err) || convs != nil || skipped != c.skipped {
			t.Errorf("%s: %d conversations, %d skipped, %v; want the error %q, %d skipped", c.file, len(convs), skipped, err, c.err, c.skipped)
		}
	}
	// An entry without a human turn is skipped, not an error.
	convs, skipped, err := ReadConversations(strings.NewReader(`[{"conversations":[{"from":"system","value":"s"}]},{"conversations":[{"from":"human","value":"a"},{"from":"human","value":"b"}]}]`), "", ConversationSpec{API: Chat})
	if err != nil || len(convs) != 1 || skipped != 1 || !slices.Equal(convs[0].MaxTokens, []int{0, 0}) {
		t.Errorf("%+v, %d skipped, %v", convs, skipped, err)
	}
}

func TestTurnBody(t *testing.T) {
	history := []Message{{"system", "S"}, {"user", "U1"}, {"assistant", " A1"}, {"user", "U2"}}
	for api, want := range map[API]string{
		Chat:           `{"model":"m","messages":[{"role":"system","content":"S"},{"role":"user","content":"U1"},{"role":"assistant","content":" A1"},{"role":"user","content":"U2"}],"max_tokens":3,"stream":true,"stream_options":{"include_usage":true},"ignore_eos":true}`,
		OllamaChat:     `{"model":"m","messages":[{"role":"system","content":"S"},{"role":"user","content":"U1"},{"role":"assistant","content":" A1"},{"role":"user","content":"U2"}],"stream":true,"options":{"num_predict":3}}`,
		Completions:    `{"model":"m","prompt":"S U1 A1 U2","max_tokens":3,"stream":true,"stream_options":{"include_usage":true},"ignore_eos":true}`,
		OllamaGenerate: `{"model":"m","prompt":"S U1 A1 U2","stream":true,"options":{"num_predict":3}}`,
		TGI:            `{"inputs":"S U1 A1 U2","parameters":{"max_new_tokens":3,"details":true},"stream":true}`,
		LlamaCpp:       `{"model":"m","prompt":"S U1 A1 U2","n_predict":3,"stream":true,"ignore_eos":true}`,
	} {
		got, err := api.TurnBody("m", history, 3, api.CanIgnoreEOS(), Extra{})
		if err != nil || string(got) != want {
			t.Errorf("%s: %s, %v\nwant %s", api, got, err, want)
		}
	}
	// The answer is the model's continuation, so it is joined as it came:
	// no space is added before it, even when it has none.
	if got := promptText([]Message{{"user", "a b"}, {"assistant", "c"}, {"user", "d"}}); got != "a bc d" {
		t.Errorf("%q", got)
	}

	// A turn of one message is the body Generate makes.
	spec := Spec{Model: "m", Prompt: Length{N: 20}, Output: Length{N: 7}, Seed: 4, Count: 1}
	for _, api := range []API{Chat, Completions, OllamaGenerate, OllamaChat, TGI, LlamaCpp} {
		spec.API = api
		spec.IgnoreEOS = api.CanIgnoreEOS()
		bodies, err := Generate(spec)
		if err != nil {
			t.Fatal(err)
		}
		got, err := api.TurnBody("m", []Message{{"user", Text(4, 0, 20)}}, 7, spec.IgnoreEOS, spec.Extra)
		if err != nil || string(got) != string(bodies[0].JSON) {
			t.Errorf("%s: %s, %v; Generate made %s", api, got, err, bodies[0].JSON)
		}
	}

	for _, c := range []struct {
		api       API
		history   []Message
		max       int
		ignoreEOS bool
		err       string
	}{
		{Chat, nil, 3, false, "a turn needs at least one message"},
		{Chat, history, -1, false, "max tokens must not be negative, got -1"},
		{TGI, history, 3, true, "the tgi API has no field to ignore the end of sequence"},
		{Chat, history, 0, true, "ignoring the end of sequence needs max tokens"},
		{API(0), history, 3, false, "unknown API 0"},
	} {
		if _, err := c.api.TurnBody("m", c.history, c.max, c.ignoreEOS, Extra{}); err == nil || !strings.HasPrefix(err.Error(), c.err) {
			t.Errorf("%s %d %v: %v, want %q", c.api, c.max, c.ignoreEOS, err, c.err)
		}
	}
}
