package prompt

import (
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"
)

func readSample(t *testing.T, s Spec, turns Turns) ([]Body, int) {
	t.Helper()
	f, err := os.Open("testdata/sharegpt.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	bodies, skipped, err := ReadShareGPT(f, s, turns)
	if err != nil {
		t.Fatal(err)
	}
	return bodies, skipped
}

// sampleTurns are the turns of testdata/sharegpt.json, by entry.
func sampleTurns(t *testing.T) [][]Message {
	t.Helper()
	data, err := os.ReadFile("testdata/sharegpt.json")
	if err != nil {
		t.Fatal(err)
	}
	var entries []struct {
		Conversations []struct{ From, Value string }
	}
	if err := json.Unmarshal(data, &entries); err != nil {
		t.Fatal(err)
	}
	out := make([][]Message, len(entries))
	for i, e := range entries {
		for _, c := range e.Conversations {
			out[i] = append(out[i], Message{Role: roles[c.From], Content: c.Value})
		}
	}
	return out
}

func TestShareGPTFirstTurn(t *testing.T) {
	conv := sampleTurns(t)
	bodies, skipped := readSample(t, Spec{API: Chat, Model: "m"}, FirstTurn)
	// Entry 2's prompt "hi" is under 4 tokens and entry 4 has one turn:
	// vLLM skips both. Entry 1 starts with its system turn, which vLLM
	// takes as the prompt, as it takes turn 0 whatever its "from".
	want := []int{0, 1, 3}
	if len(bodies) != len(want) || skipped != 2 {
		t.Fatalf("%d bodies, %d skipped; want %d, 2", len(bodies), skipped, len(want))
	}
	for k, e := range want {
		b := bodies[k]
		var v openAIBody
		if err := json.Unmarshal(b.JSON, &v); err != nil {
			t.Fatal(err)
		}
		if len(v.Messages) != 1 || v.Messages[0] != (Message{"user", conv[e][0].Content}) {
			t.Errorf("body %d: messages %+v, want entry %d's turn 0 as the user's", k, v.Messages, e)
		}
		if b.PromptTokens != Count(conv[e][0].Content) || b.MaxTokens != Count(conv[e][1].Content) || v.MaxTokens != b.MaxTokens {
			t.Errorf("body %d: %d prompt tokens, %d max (%d in the body); want %d and %d", k, b.PromptTokens, b.MaxTokens, v.MaxTokens, Count(conv[e][0].Content), Count(conv[e][1].Content))
		}
		if !v.Stream || v.StreamOptions == nil || !v.StreamOptions.IncludeUsage || v.Model != "m" {
			t.Errorf("body %d: %s", k, b.JSON)
		}
	}
}

func TestShareGPTEveryTurn(t *testing.T) {
	conv := sampleTurns(t)
	// (entry, turn) of each body: entry 2's "hi" and entry 3's "Thanks."
	// are under 4 tokens; entry 4's turn has no answer.
	want := [][2]int{{0, 0}, {0, 2}, {1, 1}, {3, 0}}
	for _, api := range []API{Chat, OllamaChat, Completions, TGI} {
		bodies, skipped := readSample(t, Spec{API: api}, EveryTurn)
		if len(bodies) != len(want) || skipped != 2 {
			t.Fatalf("%s: %d bodies, %d skipped; want %d, 2", api, len(bodies), skipped, len(want))
		}
		for k, w := range want {
			e, turn := w[0], w[1]
			b := bodies[k]
			history := conv[e][:turn+1]
			if !api.chat() {
				history = history[turn:]
			}
			tokens := 0
			for _, m := range history {
				tokens += Count(m.Content)
			}
			if b.PromptTokens != tokens || b.MaxTokens != Count(conv[e][turn+1].Content) || maxOf(t, b.JSON) != b.MaxTokens {
				t.Errorf("%s body %d: %d prompt tokens, %d max; want %d, %d", api, k, b.PromptTokens, b.MaxTokens, tokens, Count(conv[e][turn+1].Content))
			}
			if got := promptOf(t, api, b.JSON); got != conv[e][turn].Content {
				t.Errorf("%s body %d: prompt %q, want entry %d turn %d", api, k, got, e, turn)
			}
			if api.chat() {
				var v struct{ Messages []Message }
				_ = json.Unmarshal(b.JSON, &v)
				if len(v.Messages) != len(history) {
					t.Errorf("%s body %d: %d messages, want the %d so far", api, k, len(v.Messages), len(history))
				}
				for j := range min(len(v.Messages), len(history)) {
					if v.Messages[j] != history[j] {
						t.Errorf("%s body %d: message %d is %+v, want %+v", api, k, j, v.Messages[j], history[j])
					}
				}
			}
		}
	}
}

func TestShareGPTOptions(t *testing.T) {
	// Count caps the bodies; Output replaces the answers' lengths.
	bodies, _ := readSample(t, Spec{API: Completions, Count: 2, Output: Length{N: 50, Spread: 0.2}, Seed: 9}, EveryTurn)
	if len(bodies) != 2 {
		t.Fatalf("%d bodies, want 2", len(bodies))
	}
	for i, b := range bodies {
		if b.MaxTokens < 40 || b.MaxTokens > 60 || maxOf(t, b.JSON) != b.MaxTokens {
			t.Errorf("body %d asks %d tokens (%d in the body), want 40..60", i, b.MaxTokens, maxOf(t, b.JSON))
		}
	}
	again, _ := readSample(t, Spec{API: Completions, Count: 2, Output: Length{N: 50, Spread: 0.2}, Seed: 9}, EveryTurn)
	for i := range bodies {
		if string(bodies[i].JSON) != string(again[i].JSON) {
			t.Errorf("body %d differs between two reads", i)
		}
	}
	if _, _, err := ReadShareGPT(strings.NewReader("[]"), Spec{API: Chat, Prompt: Length{N: 5}}, FirstTurn); err == nil || !strings.Contains(err.Error(), "must not be set") {
		t.Errorf("a prompt length with a ShareGPT file: error %v", err)
	}
}

func TestShareGPTErrors(t *testing.T) {
	long := strings.Repeat("word ", 1100)
	for _, tc := range []struct{ file, err string }{
		{``, "not a JSON list"},
		{`{"id": 1}`, "not a JSON list"},
		{`[]`, "list of conversations is empty"},
		{`[`, "after 0 entries"},
		{`[{"id": "a", "conversations": []}`, "after 1 entries"},
		{`[{"id": "a"}]`, `entry 0 (id "a"): it has no "conversations" list`},
		{`[{"conversations": [{"from": "human", "value": "a b c d e"}, {"from": "gpt"}]}]`, `entry 0: conversations[1] has no "value"`},
		{`[{"conversations": []}, {"id": 7, "conversations": [{"value": "x"}]}]`, `entry 1 (id 7): conversations[0] has no "from"`},
		{`[{"conversations": [{"from": "robot", "value": "x"}]}]`, `conversations[0] is from "robot"`},
		{`[{"conversations": "no"}]`, `entry 0: conversations is a JSON string, want a list of turns`},
		{`[{"conversations": [{"from": 3, "value": "x"}]}]`, `entry 0: conversations.from is a JSON number, want a string`},
		{`[1]`, `entry 0: a JSON number, want an object with a "conversations" list`},
		{`[{"conversations": [{"from": "human", "value": "hi"}, {"from": "gpt", "value": "hello there my friend"}]}]`, "none of 1 entries"},
		{`[{"conversations": [{"from": "human", "value": "` + long + `"}, {"from": "gpt", "value": "a b c d e"}]}]`, "none of 1 entries"},
	} {
		_, _, err := ReadShareGPT(strings.NewReader(tc.file), Spec{API: Chat}, FirstTurn)
		if err == nil || !strings.Contains(err.Error(), tc.err) || strings.Contains(err.Error(), "\n") || strings.Contains(err.Error(), "struct") {
			t.Errorf("file %.60q: error %v, want one line saying %q", tc.file, err, tc.err)
		}
	}
}

// FuzzReadShareGPT checks that whatever a file holds, every body is JSON
// whose prompt counts the tokens the body says, and that a file read in
// full is read the same with a Count of its bodies.
func FuzzReadShareGPT(f *testing.F) {
	sample, err := os.ReadFile("testdata/sharegpt.json")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(sample, true)
	f.Add([]byte(`[{"conversations":[{"from":"human","value":"one two three four"},{"from":"gpt","value":"five six seven eight"}]}]`), false)
	f.Add([]byte(`[{"conversations":[]}]`), false)
	f.Fuzz(func(t *testing.T, file []byte, every bool) {
		turns := FirstTurn
		if every {
			turns = EveryTurn
		}
		spec := Spec{API: Completions, Model: "m"}
		bodies, _, err := ReadShareGPT(strings.NewReader(string(file)), spec, turns)
		if err != nil {
			if len(bodies) != 0 || strings.Contains(err.Error(), "\n") {
				t.Fatalf("error %q with %d bodies", err, len(bodies))
			}
			return
		}
		for i, b := range bodies {
			if got := Count(promptOf(t, Completions, b.JSON)); got != b.PromptTokens {
				t.Fatalf("body %d: prompt counts %d, body says %d", i, got, b.PromptTokens)
			}
		}
		spec.Count = len(bodies)
		capped, _, err := ReadShareGPT(strings.NewReader(string(file)), spec, turns)
		if err != nil || len(capped) != len(bodies) {
			t.Fatalf("with Count %d: %d bodies, %v", len(bodies), len(capped), err)
		}
		for i := range capped {
			if string(capped[i].JSON) != string(bodies[i].JSON) {
				t.Fatalf("with Count %d, body %d differs", len(bodies), i)
			}
		}
	})
}

// TestShuffleOrder: every pass is a permutation (each body once), the
// passes differ, the same seed gives the same order and another seed
// another, and a prefix of the order is the order of fewer requests.
func TestShuffleOrder(t *testing.T) {
	const m, n = 50, 170 // 3 whole passes and 20 of a fourth
	order := ShuffleOrder(m, 7, n)
	if len(order) != n {
		t.Fatalf("%d requests ordered, want %d", len(order), n)
	}
	for p := 0; p*m < n; p++ {
		seen := map[int]bool{}
		for _, k := range order[p*m : min(n, (p+1)*m)] {
			if k < 0 || k >= m || seen[k] {
				t.Fatalf("pass %d: body %d out of range or twice", p, k)
			}
			seen[k] = true
		}
	}
	if slices.Equal(order[:m], order[m:2*m]) {
		t.Error("passes 0 and 1 are in the same order")
	}
	if slices.Equal(order[:m], ShuffleOrder(m, 1, m)) || !slices.Equal(order, ShuffleOrder(m, 7, n)) {
		t.Error("the order is not a function of the seed alone")
	}
	if !slices.Equal(order[:60], ShuffleOrder(m, 7, 60)) {
		t.Error("60 requests are not ordered as the first 60 of 170")
	}
	sorted := slices.Clone(order[:m])
	slices.Sort(sorted)
	if slices.Equal(sorted, order[:m]) {
		t.Error("pass 0 is in file order")
	}
}
