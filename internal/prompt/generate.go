package prompt

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
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
}

// Body is one request body and the counts it was made with.
type Body struct {
	JSON         []byte
	PromptTokens int // cl100k_base tokens of the prompt text (Count)
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
	return nil
}

// Generate makes s.Count bodies of generated prompts. Body i's prompt
// length (drawn from s.Prompt), max tokens (from s.Output) and text (Text)
// are a function of (s.Seed, i) only, so every shard of a split run makes
// the same body for the same index without sharing anything.
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
	bodies := make([]Body, s.Count)
	var b strings.Builder
	for i := range bodies {
		r := indexRand(s.Seed, uint64(i), tagLengths)
		n := s.Prompt.draw(r)
		m := 0
		if s.Output != (Length{}) {
			m = s.Output.drawOutput(r)
		}
		b.Reset()
		writeText(&b, indexRand(s.Seed, uint64(i), tagWords), n)
		js, err := s.API.body(s.Model, []Message{{Role: "user", Content: b.String()}}, m, s.IgnoreEOS)
		if err != nil {
			return nil, err
		}
		bodies[i] = Body{JSON: js, PromptTokens: n, MaxTokens: m}
	}
	return bodies, nil
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
	writeText(&b, indexRand(seed, i, tagWords), n)
	return b.String()
}

// writeText appends n words drawn by r.
func writeText(b *strings.Builder, r *rand.Rand, n int) {
	b.Grow(n * 7) // words average under 6 bytes, and a space
	for k := range n {
		if k > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(words[r.IntN(len(words))])
	}
}

// The tags of indexRand's streams: an index's lengths and its words are
// drawn apart, so that its words do not depend on its lengths' spreads.
const (
	tagLengths = "prompt lengths  "
	tagWords   = "prompt words    "
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
