package prompt

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"unicode"
)

// Spec says what request bodies to make.
type Spec struct {
	API   API
	Model string // the model field; left out when empty
	// Prompt is the prompt length of generated bodies (Generate); a
	// ShareGPT file gives its own (ReadShareGPT, where it must be zero).
	Prompt Length
	// Output is the max tokens asked. Zero asks for none (the server's
	// default); for ReadShareGPT zero means each answer's own length.
	Output Length
	Seed   uint64 // draws of prompt i depend on (Seed, i) only
	// Count is the number of bodies: made by Generate (at least 1), at
	// most read by ReadShareGPT (0: all).
	Count int
	// IgnoreEOS asks the server to generate past the end of sequence, so
	// that an answer reaches its max tokens; only APIs with the field
	// take it (API.CanIgnoreEOS).
	IgnoreEOS bool
	// PrefixTokens > 0 begins every generated prompt with one of
	// Prefixes shared prefixes of PrefixTokens tokens, Prompt then being
	// the length of the unique suffix that follows (Generate): vLLM's
	// prefix_repetition dataset (prefix_len, suffix_len, num_prefixes),
	// GuideLLM's prefix_tokens and prefix_count. Generate only.
	PrefixTokens int
	Prefixes     int
	// Extra's members go into every body after the grammar's own fields,
	// none of which it may set (API.Clash).
	Extra Extra
	// Words are the words Generate draws prompts from, each one token of
	// the tokenizer that counts the prompts, alone and after a space
	// (ServerVocabulary finds a server's); nil: the built-in list, whose
	// words are cl100k_base's (Text). Generate only.
	Words []string
}

// Body is one request body and the counts it was made with.
type Body struct {
	JSON         []byte
	PromptTokens int // tokens of the prompt text: cl100k_base's (Count), or of Spec.Words' tokenizer
	MaxTokens    int // output tokens asked; 0 when not asked
}

// validate checks what Generate and ReadShareGPT share.
func (s Spec) validate() error {
	if _, err := ParseAPI(s.API.String()); err != nil {
		return fmt.Errorf("API: %w", err)
	}
	if s.Output != (Length{}) {
		if err := s.Output.Validate(); err != nil {
			return fmt.Errorf("output length: %w", err)
		}
	}
	if s.IgnoreEOS {
		if !s.API.CanIgnoreEOS() {
			return fmt.Errorf("the %s API has no field to ignore the end of sequence", s.API)
		}
		if s.Output == (Length{}) {
			return errors.New("ignoring the end of sequence needs an output length: the answer would run to the model's context")
		}
	}
	if s.Count < 0 {
		return fmt.Errorf("count must not be negative, got %d", s.Count)
	}
	if k, ok := s.API.Clash(s.Extra); ok {
		return fmt.Errorf("extra field %q is the %s body's own", k, s.API)
	}
	switch {
	case s.PrefixTokens < 0 || s.Prefixes < 0:
		return fmt.Errorf("shared prefixes: %d of %d tokens: neither may be negative", s.Prefixes, s.PrefixTokens)
	case s.PrefixTokens > 0 && s.Prefixes < 1:
		return fmt.Errorf("shared prefixes of %d tokens: their number must be at least 1, got %d", s.PrefixTokens, s.Prefixes)
	case s.PrefixTokens == 0 && s.Prefixes > 0:
		return fmt.Errorf("%d shared prefixes need a prefix length", s.Prefixes)
	}
	return nil
}

// Generate makes s.Count bodies of generated prompts. Body i's prompt
// length (drawn from s.Prompt), max tokens (from s.Output) and text (Text)
// are a function of (s.Seed, i) only, so every shard of a split run makes
// the same body for the same index without sharing anything. With shared
// prefixes (s.PrefixTokens) body i's prompt is prefix k(i), drawn
// uniformly from s.Prefixes by (s.Seed, i) too, one space, then the
// suffix Text would make for i: PrefixTokens + the length drawn tokens,
// exactly, as every word is one token after a space (Text). Prefix k's
// words depend on (s.Seed, k) alone.
func Generate(s Spec) ([]Body, error) {
	if err := s.validate(); err != nil {
		return nil, err
	}
	if err := s.Prompt.Validate(); err != nil {
		return nil, fmt.Errorf("prompt length: %w", err)
	}
	if lo, _ := s.Prompt.Bounds(); lo < 1 {
		// vLLM refuses the same (RandomDataset.sample): an empty prompt.
		return nil, fmt.Errorf("prompt length %v: the shortest prompt would be %d tokens", s.Prompt, lo)
	}
	if s.Count < 1 {
		return nil, fmt.Errorf("count must be at least 1, got %d", s.Count)
	}
	if s.Words != nil && len(s.Words) == 0 {
		return nil, errors.New("an empty word list makes no prompt")
	}
	for _, w := range s.Words {
		if w == "" || strings.ContainsFunc(w, unicode.IsSpace) {
			return nil, fmt.Errorf("word %q: words are one token each, without spaces", w)
		}
	}
	bodies := make([]Body, s.Count)
	prefixes := map[int]string{} // made when first drawn: Prefixes may be many
	var b strings.Builder
	for i := range bodies {
		m := 0
		if s.Output != (Length{}) {
			r := indexRand(s.Seed, uint64(i), tagLengths)
			s.Prompt.draw(r) // the prompt's length comes first in the stream
			m = s.Output.drawOutput(r)
		}
		b.Reset()
		n := s.writePrompt(&b, i, prefixes)
		js, err := s.API.body(s.Model, []Message{{Role: "user", Content: b.String()}}, m, s.IgnoreEOS, s.Extra)
		if err != nil {
			return nil, err
		}
		bodies[i] = Body{JSON: js, PromptTokens: n, MaxTokens: m}
	}
	return bodies, nil
}

// writePrompt writes body i's prompt text to b and returns its tokens:
// its shared prefix (made once into prefixes) and a space, when it has
// one, then the words of its drawn length.
func (s Spec) writePrompt(b *strings.Builder, i int, prefixes map[int]string) int {
	n := s.Prompt.draw(indexRand(s.Seed, uint64(i), tagLengths))
	ws := s.words()
	if s.PrefixTokens > 0 {
		k := s.PrefixOf(i)
		p, ok := prefixes[k]
		if !ok {
			var pb strings.Builder
			writeText(&pb, indexRand(s.Seed, uint64(k), tagPrefixWords), s.PrefixTokens, ws)
			p = pb.String()
			prefixes[k] = p
		}
		b.WriteString(p)
		b.WriteByte(' ')
	}
	writeText(b, indexRand(s.Seed, uint64(i), tagWords), n, ws)
	return s.PrefixTokens + n
}

// words are the words prompts are drawn from: Spec.Words, else the
// built-in list.
func (s Spec) words() []string {
	if s.Words != nil {
		return s.Words
	}
	return words[:]
}

// PrefixOf returns the shared prefix body i of Generate begins with, in
// 0..s.Prefixes−1, drawn by (s.Seed, i) alone; 0 without shared prefixes.
func (s Spec) PrefixOf(i int) int {
	if s.Prefixes < 1 {
		return 0
	}
	return indexRand(s.Seed, uint64(i), tagPrefix).IntN(s.Prefixes)
}

// Text returns prompt i of seed: n words drawn from a fixed list of
// common English words, separated by single spaces. It is exactly n
// cl100k_base tokens: every word is one token alone and after a space
// (TestWords), and cl100k_base's split pattern (' ?\p{L}+' among its
// alternatives) cuts the text before every space, so no token spans two
// words. The same n words are what Generate writes for index i when it
// draws length n.
func Text(seed, i uint64, n int) string {
	var b strings.Builder
	writeText(&b, indexRand(seed, i, tagWords), n, words[:])
	return b.String()
}

// writeText appends n words of ws drawn by r.
func writeText(b *strings.Builder, r *rand.Rand, n int, ws []string) {
	b.Grow(n * 7) // words average under 6 bytes, and a space
	for k := range n {
		if k > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(ws[r.IntN(len(ws))])
	}
}

// The tags of indexRand's streams: an index's lengths and its words are
// drawn apart, so that its words do not depend on its lengths' spreads.
const (
	tagLengths     = "prompt lengths  "
	tagWords       = "prompt words    "
	tagPrefix      = "prompt prefix k " // which shared prefix body i takes
	tagPrefixWords = "prompt prefix wd" // shared prefix k's words
	tagShuffle     = "dataset shuffle " // pass p's permutation (ShuffleOrder)
)

// indexRand returns stream tag of index i under seed: ChaCha8 keyed by
// all three, so that any two keys give independent streams, and index i's
// draws need none of the others'.
func indexRand(seed, i uint64, tag string) *rand.Rand {
	var key [32]byte
	binary.LittleEndian.PutUint64(key[0:], seed)
	binary.LittleEndian.PutUint64(key[8:], i)
	copy(key[16:], tag)
	return rand.New(rand.NewChaCha8(key))
}
