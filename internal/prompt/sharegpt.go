package prompt

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Turns says which turns of a ShareGPT conversation become requests.
type Turns int

const (
	// FirstTurn is vLLM's reading (ShareGPTDataset.sample in
	// vllm/benchmarks/datasets.py): one body per entry, whose prompt is
	// conversations[0] and whose max tokens is the length of
	// conversations[1], whatever their "from"; entries with fewer than
	// two turns are skipped, and so are those vLLM's is_valid_sequence
	// (vllm/benchmarks/dataset_utils.py) rejects: a prompt or answer under
	// 4 tokens, a prompt over 1024, or both over 2048 (the answer checks
	// are dropped when Spec.Output sets the max tokens, as vLLM's
	// --sharegpt-output-len does). vLLM's counts are its model's
	// tokenizer's, with the special tokens it adds (a BOS, often), so an
	// entry near a limit may fall on the other side here. vLLM then
	// shuffles the entries; here they stay in file order unless the caller
	// shuffles them (ShuffleOrder).
	FirstTurn Turns = iota
	// EveryTurn makes one body per human turn that a gpt turn answers:
	// its max tokens is that answer's length. In the chat grammars the
	// conversation so far goes in as history (system, user and assistant
	// messages, as a chat client resends it), so later turns have long
	// prompts that share a prefix; in the others the human turn alone is
	// the prompt, as those grammars have no roles to join history with.
	// Pairs with a prompt or answer under 4 tokens are skipped, as in
	// FirstTurn; vLLM's upper limits are not applied, as they would cut
	// every long conversation short.
	EveryTurn
)

// vLLM's is_valid_sequence defaults.
const (
	shareGPTMinTokens = 4
	shareGPTMaxPrompt = 1024
	shareGPTMaxTotal  = 2048
)

// shareGPTEntry is one entry of a ShareGPT file; other fields are ignored.
type shareGPTEntry struct {
	ID            json.RawMessage `json:"id"`
	Conversations *[]struct {
		From  *string `json:"from"`
		Value *string `json:"value"`
	} `json:"conversations"`
}

// roles maps the "from" of a turn to a chat role. ShareGPT exports name
// the assistant after the model the conversation was with.
var roles = map[string]string{
	"human": "user", "user": "user",
	"gpt": "assistant", "chatgpt": "assistant", "bing": "assistant", "bard": "assistant", "assistant": "assistant",
	"system": "system",
}

// ReadShareGPT reads a ShareGPT file, a JSON list of {"id": …,
// "conversations": [{"from": "human", "value": …}, {"from": "gpt",
// "value": …}, …]}, and makes bodies in s.API's grammar from its turns
// (FirstTurn, EveryTurn), at most s.Count of them when s.Count > 0. It
// returns the bodies and how many entries (FirstTurn) or pairs
// (EveryTurn) the length rules skipped. With s.Output given, each body's
// max tokens is drawn from it, by (s.Seed, body index), instead of the
// answer's length. A file that is not such a list fails with one line
// naming the entry (by index, and id) and what is wrong, and so do an
// empty list, one with nothing usable, and a turn from none of human,
// user, gpt, chatgpt, bing, bard, assistant or system (another format,
// most likely; vLLM does not look at "from").
func ReadShareGPT(r io.Reader, s Spec, turns Turns) (bodies []Body, skipped int, err error) {
	if err := s.validate(); err != nil {
		return nil, 0, err
	}
	if s.Prompt != (Length{}) {
		return nil, 0, errors.New("a ShareGPT file gives its own prompts: the prompt length must not be set")
	}
	if s.PrefixTokens > 0 {
		return nil, 0, errors.New("a ShareGPT file gives its own prompts: shared prefixes are for generated ones")
	}
	if turns != FirstTurn && turns != EveryTurn {
		return nil, 0, fmt.Errorf("unknown turns %d", int(turns))
	}
	entries, err := readEntries(r, "sharegpt", func(_ int, msgs []Message) (bool, error) {
		var add []Body
		var skip int
		var err error
		if turns == FirstTurn {
			add, skip, err = s.firstTurn(msgs, len(bodies))
		} else {
			add, skip, err = s.everyTurn(msgs, len(bodies))
		}
		if err != nil {
			return false, err
		}
		if s.Count > 0 {
			add = add[:min(len(add), s.Count-len(bodies))]
		}
		bodies = append(bodies, add...)
		skipped += skip
		return s.Count > 0 && len(bodies) == s.Count, nil // enough: the rest is not read
	})
	if err != nil {
		return nil, 0, err
	}
	switch {
	case entries == 0:
		return nil, 0, errors.New("sharegpt: the list of conversations is empty")
	case len(bodies) == 0:
		return nil, skipped, fmt.Errorf("sharegpt: none of %d entries has a prompt and answer of usable length (at least %d tokens each)", entries, shareGPTMinTokens)
	}
	return bodies, skipped, nil
}

// readEntries reads a ShareGPT file's list entry by entry, handing each
// entry's index and turns, as chat messages, to use; it returns the
// number of entries read. use returns stop to read no further: the rest
// of the file is then neither read nor checked. Every error is one line
// that begins with name (the file's) and names the entry, by index and
// id, when it is about one.
func readEntries(r io.Reader, name string, use func(entry int, msgs []Message) (stop bool, err error)) (entries int, err error) {
	dec := json.NewDecoder(r)
	if tok, err := dec.Token(); err != nil || tok != json.Delim('[') {
		return 0, fmt.Errorf("%s: the file is not a JSON list of conversations", name)
	}
	for ; dec.More(); entries++ {
		var e shareGPTEntry
		if err := dec.Decode(&e); err != nil {
			return 0, fmt.Errorf("%s: entry %d: %v", name, entries, entryError(err))
		}
		msgs, err := e.messages()
		if err == nil {
			var stop bool
			if stop, err = use(entries, msgs); err == nil && stop {
				return entries + 1, nil
			}
		}
		if err != nil {
			return 0, fmt.Errorf("%s: entry %d%s: %v", name, entries, e.idText(), err)
		}
	}
	// The whole list was read: check that it ends as a list does.
	if _, err := dec.Token(); err != nil {
		return 0, fmt.Errorf("%s: after %d entries: %v", name, entries, err)
	}
	return entries, nil
}

// entryError says what is wrong with an entry in the file's words: a
// member of the wrong JSON type is named by its path, not by the Go type
// it was read into.
func entryError(err error) error {
	var te *json.UnmarshalTypeError
	if !errors.As(err, &te) {
		return err
	}
	want := map[string]string{"conversations": "a list of turns", "from": "a string", "value": "a string"}
	path := te.Field
	if path == "" {
		return fmt.Errorf("a JSON %s, want an object with a \"conversations\" list", te.Value)
	}
	name := path[strings.LastIndexByte(path, '.')+1:]
	if w, ok := want[name]; ok {
		return fmt.Errorf("%s is a JSON %s, want %s", path, te.Value, w)
	}
	return fmt.Errorf("%s is a JSON %s", path, te.Value)
}

// idText is the entry's id for an error message, if it has one.
func (e *shareGPTEntry) idText() string {
	if len(e.ID) == 0 || string(e.ID) == "null" {
		return ""
	}
	// Compacted: an id written over several lines ([\n]) stays in the
	// error's one line (FuzzReadShareGPT found it).
	var b bytes.Buffer
	if json.Compact(&b, e.ID) != nil {
		return " (id " + strconv.Quote(string(e.ID)) + ")"
	}
	return " (id " + b.String() + ")"
}

// messages checks the entry's turns and returns them as chat messages.
func (e *shareGPTEntry) messages() ([]Message, error) {
	if e.Conversations == nil {
		return nil, errors.New(`it has no "conversations" list`)
	}
	msgs := make([]Message, len(*e.Conversations))
	for k, t := range *e.Conversations {
		switch {
		case t.From == nil:
			return nil, fmt.Errorf(`conversations[%d] has no "from"`, k)
		case t.Value == nil:
			return nil, fmt.Errorf(`conversations[%d] has no "value"`, k)
		}
		role, ok := roles[*t.From]
		if !ok {
			return nil, fmt.Errorf(`conversations[%d] is from %s: want human, gpt or system`, k, strconv.Quote(*t.From))
		}
		msgs[k] = Message{Role: role, Content: *t.Value}
	}
	return msgs, nil
}

// maxTokens is the max tokens of body i whose answer is answer tokens.
func (s Spec) maxTokens(i, answer int) int {
	if s.Output == (Length{}) {
		return answer
	}
	return s.Output.drawOutput(indexRand(s.Seed, uint64(i), tagLengths))
}

// firstTurn makes vLLM's one body of an entry: turns 0 and 1.
func (s Spec) firstTurn(msgs []Message, i int) ([]Body, int, error) {
	if len(msgs) < 2 {
		return nil, 1, nil
	}
	p, a := Count(msgs[0].Content), Count(msgs[1].Content)
	m := s.maxTokens(i, a)
	if p < shareGPTMinTokens || p > shareGPTMaxPrompt || p+m > shareGPTMaxTotal ||
		s.Output == (Length{}) && m < shareGPTMinTokens {
		return nil, 1, nil
	}
	user := Message{Role: "user", Content: msgs[0].Content}
	js, err := s.API.body(s.Model, []Message{user}, m, s.IgnoreEOS, s.Extra)
	if err != nil {
		return nil, 0, err
	}
	return []Body{{JSON: js, PromptTokens: p, MaxTokens: m}}, 0, nil
}

// everyTurn makes a body of every user turn an assistant turn answers.
func (s Spec) everyTurn(msgs []Message, i int) ([]Body, int, error) {
	var out []Body
	skipped, history := 0, 0 // history: tokens of msgs[:k]
	for k := 0; k+1 < len(msgs); k++ {
		here := Count(msgs[k].Content)
		if msgs[k].Role != "user" || msgs[k+1].Role != "assistant" {
			history += here
			continue
		}
		a := Count(msgs[k+1].Content)
		m := s.maxTokens(i+len(out), a)
		if here < shareGPTMinTokens || s.Output == (Length{}) && m < shareGPTMinTokens {
			skipped++
			history += here
			continue
		}
		conv, p := msgs[k:k+1], here
		if s.API.chat() {
			conv, p = msgs[:k+1], history+here
		}
		js, err := s.API.body(s.Model, conv, m, s.IgnoreEOS, s.Extra)
		if err != nil {
			return nil, 0, err
		}
		out = append(out, Body{JSON: js, PromptTokens: p, MaxTokens: m})
		history += here
	}
	return out, skipped, nil
}

// ShuffleOrder returns the order in which n requests take m bodies
// shuffled by seed: request j takes body order[j], a pass of m requests
// being a permutation of 0..m−1 (every body once), pass p's drawn by
// (seed, p) alone, so a shard computes any request's body without the
// others. It is vLLM's ShareGPT order (ShareGPTDataset.load_data in
// vllm/benchmarks/datasets.py: random.seed(random_seed), then
// random.shuffle(data) unless --disable-shuffle; sample takes the entries
// in that order), not its draws: Python's generator is not ChaCha8. Past
// the first pass vLLM's maybe_oversample_requests draws with replacement
// (random.choices, unless --no-oversample); here each pass is a new
// permutation, so no body repeats before every one has been sent.
func ShuffleOrder(m int, seed uint64, n int) []int {
	if m < 1 || n < 1 {
		return nil
	}
	order := make([]int, 0, n)
	for p := 0; len(order) < n; p++ {
		perm := make([]int, m)
		for k := range perm {
			perm[k] = k
		}
		r := indexRand(seed, uint64(p), tagShuffle)
		r.Shuffle(m, func(a, b int) { perm[a], perm[b] = perm[b], perm[a] })
		order = append(order, perm[:min(m, n-len(order))]...)
	}
	return order
}
