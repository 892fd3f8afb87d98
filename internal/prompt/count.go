package prompt

import (
	"sync"

	"github.com/tiktoken-go/tokenizer/codec"
)

// The tokenizer is OpenAI's cl100k_base, from tiktoken-go's codec package
// (pure Go, vocabulary compiled in). Only its constructor is named, so the
// linker keeps this one vocabulary and drops the others. Building it fills
// a 100k-entry map, so it is built on first use, once.
//
// A *codec.Codec is safe for concurrent Count calls: its vocabulary map is
// only read after construction, its split regexp (dlclark/regexp2) is
// documented as safe for concurrent use, and the one lazily built field
// (the reverse vocabulary, for Decode) is guarded by a sync.Once.
// SetErrorMode is the one writer, and it is never called here.
var cl100k = sync.OnceValue(codec.NewCl100kBase)

// Count returns the number of cl100k_base tokens of text, as tiktoken
// counts them (no special tokens are parsed or added). It is safe for
// concurrent use.
func Count(text string) int {
	// With the codec's default error mode, Count fails only if the split
	// regexp does, which it cannot without a match timeout.
	n, err := cl100k().Count(text)
	if err != nil {
		panic("prompt: cl100k_base: " + err.Error())
	}
	return n
}

// Tokens returns the cl100k_base token ids of text, as Count counts them.
func Tokens(text string) []int {
	ids, _, err := cl100k().Encode(text)
	if err != nil {
		panic("prompt: cl100k_base: " + err.Error())
	}
	out := make([]int, len(ids))
	for i, id := range ids {
		out[i] = int(id)
	}
	return out
}
