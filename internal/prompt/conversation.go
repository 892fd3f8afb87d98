package prompt

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"
)

// ConversationSpec says what multi-turn conversations to make: generated
// ones (Synthetic) or a ShareGPT file's (ReadConversations). Each turn's
// request holds the whole conversation so far, the model's own answers
// included (TurnBody), so that later turns have long prompts whose
// beginning the server has seen: what a prefix cache is measured on.
type ConversationSpec struct {
	API   API
	Model string // the model field; left out when empty
	// Turns is the number of user turns of a generated conversation
	// (at least 1); a file gives its own.
	Turns int
	// User is the length of a generated user message; a file gives its
	// own.
	User Length
	// Output is the max tokens asked per turn. Zero asks for none (the
	// server's default); for a file, zero means each recorded answer's
	// own length.
	Output Length
	// System is the length of a generated system prompt, 0 for none; a
	// file gives its own (a leading system turn).
	System int
	// SharedSystem makes one system prompt for every conversation, a
	// prefix all of them share; else each conversation has its own. They
	// are vLLM's multi-turn benchmark's common_prefix_num_tokens and
	// prefix_num_tokens (benchmarks/multi_turn/bench_dataset.py), which
	// it writes at the start of the first user turn.
	SharedSystem bool
	Seed         uint64 // conversation i depends on (Seed, i) only
	// IgnoreEOS asks the server to generate past the end of sequence, as
	// Spec.IgnoreEOS does.
	IgnoreEOS bool
	// Extra goes into every turn's body, as Spec.Extra does (TurnBody).
	Extra Extra
}

// Conversation is the part of a conversation openload writes: the
// system prompt and the user turns, with what each turn asks. The
// assistant's turns are the model's answers, known only at run time
// (AnswerText).
type Conversation struct {
	System     string   // the system prompt; "" for none
	Users      []string // the user messages, in order
	MaxTokens  []int    // per user turn, the output tokens asked; 0 when not asked
	UserTokens []int    // per user turn, the cl100k_base tokens of its message (Count)
}

// maxTurns bounds ConversationSpec.Turns: every turn resends the whole
// conversation, so even one-token turns this many would make a prompt
// far past any model's context.
const maxTurns = 1 << 16

// common checks what Synthetic and ReadConversations share: as
// Spec.validate checks it.
func (s ConversationSpec) common() error {
	return Spec{API: s.API, Output: s.Output, IgnoreEOS: s.IgnoreEOS, Extra: s.Extra}.validate()
}

// Validate checks s for Synthetic: the common fields as Generate checks
// them, at least one turn, a user length whose shortest message has a
// token, and a system prompt length that is not negative (and given, for
// a shared one). ReadConversations checks its spec itself.
func (s ConversationSpec) Validate() error {
	if err := s.common(); err != nil {
		return err
	}
	if s.Turns < 1 || s.Turns > maxTurns {
		return fmt.Errorf("turns must be in 1..%d, got %d", maxTurns, s.Turns)
	}
	if err := s.User.Validate(); err != nil {
		return fmt.Errorf("user length: %w", err)
	}
	if lo, _ := s.User.Bounds(); lo < 1 {
		return fmt.Errorf("user length %v: the shortest user message would be %d tokens", s.User, lo)
	}
	if s.System < 0 {
		return fmt.Errorf("system prompt length must not be negative, got %d", s.System)
	}
	if s.SharedSystem && s.System == 0 {
		return errors.New("a shared system prompt needs a system prompt length")
	}
	return nil
}

// The tags of a conversation's indexRand streams. A turn's tag is a kind
// of 8 bytes and the turn's index (turnTag), so that every turn draws
// from its own stream, and no tag is Generate's.
const (
	tagTurnLengths  = "conv len" // a generated turn's user length, then its max tokens
	tagTurnWords    = "conv wrd" // a generated turn's words
	tagTurnOutput   = "conv out" // a file's turn's max tokens, when Output is given
	tagSystem       = "conv system     "
	tagSharedSystem = "conv shared sys "
)

// turnTag is the tag of turn k's stream of kind.
func turnTag(kind string, k int) string {
	var b [16]byte
	copy(b[:8], kind)
	binary.LittleEndian.PutUint64(b[8:], uint64(k))
	return string(b[:])
}

// Synthetic returns generated conversation i of s (valid: Validate). It
// is a function of (s.Seed, i) alone, so every shard of a split run makes
// the same conversation for the same index: turn k's user length and max
// tokens are drawn as Generate draws a body's, from a stream of its own
// (Seed, i, turn k), and its words as Text makes them, each word one
// token, so UserTokens are the lengths drawn. The shared system prompt
// depends on s.Seed alone; another one on (Seed, i).
func (s ConversationSpec) Synthetic(i uint64) Conversation {
	turns := max(s.Turns, 0)
	c := Conversation{Users: make([]string, turns), MaxTokens: make([]int, turns), UserTokens: make([]int, turns)}
	var b strings.Builder
	if s.System > 0 {
		r := indexRand(s.Seed, i, tagSystem)
		if s.SharedSystem {
			r = indexRand(s.Seed, 0, tagSharedSystem)
		}
		writeText(&b, r, s.System, words[:])
		c.System = b.String()
	}
	for k := range turns {
		r := indexRand(s.Seed, i, turnTag(tagTurnLengths, k))
		n := s.User.draw(r)
		if s.Output != (Length{}) {
			c.MaxTokens[k] = s.Output.drawOutput(r)
		}
		b.Reset()
		writeText(&b, indexRand(s.Seed, i, turnTag(tagTurnWords, k)), n, words[:])
		c.Users[k], c.UserTokens[k] = b.String(), n
	}
	return c
}

// ReadConversations reads a ShareGPT file (the format ReadShareGPT reads)
// as conversations, one per entry, in file order: a leading system turn
// is the System, every human turn a user turn, in order; the recorded
// answers are dropped, as the model's own answers take their place at run
// time. A turn's MaxTokens is its recorded answer's length (the gpt turn
// right after it), at least 1, as vLLM's multi-turn benchmark asks it
// (send_turn in vllm-project/vllm
// benchmarks/multi_turn/benchmark_serving_multi_turn.py @00d39539:
// max(1, answer_num_tokens)), and 0 (not asked) for a turn no answer
// follows; with s.Output given it is drawn by (s.Seed, entry, turn)
// instead. A system turn elsewhere is dropped.
//
// An entry with no human turn is skipped, and counted. file names the
// file in errors, each one line: a file that is not a ShareGPT list, an
// entry that is not one (by index, and id), and a file with no entry of
// two human turns or more, which has no multi-turn conversation to
// offer. s.Turns, s.User, s.System and s.SharedSystem must be zero: the
// file gives them.
func ReadConversations(r io.Reader, file string, s ConversationSpec) (convs []Conversation, skipped int, err error) {
	if err := s.common(); err != nil {
		return nil, 0, err
	}
	if s.Turns != 0 || s.User != (Length{}) || s.System != 0 || s.SharedSystem {
		return nil, 0, errors.New("a ShareGPT file gives its own turns: the turn count, user length and system prompt must not be set")
	}
	if file == "" {
		file = "sharegpt"
	}
	multi := false
	entries, err := readEntries(r, file, func(entry int, msgs []Message) (bool, error) {
		c := s.fileConversation(entry, msgs)
		if len(c.Users) == 0 {
			skipped++
			return false, nil
		}
		multi = multi || len(c.Users) >= 2
		convs = append(convs, c)
		return false, nil
	})
	if err != nil {
		return nil, 0, err
	}
	if !multi {
		return nil, skipped, fmt.Errorf("%s: no multi-turn conversation in it (%d entries, none with two human turns)", file, entries)
	}
	return convs, skipped, nil
}

// fileConversation is entry's conversation (ReadConversations).
func (s ConversationSpec) fileConversation(entry int, msgs []Message) Conversation {
	var c Conversation
	for k, m := range msgs {
		switch {
		case m.Role == "system" && k == 0:
			c.System = m.Content
		case m.Role == "user":
			mt := 0
			if s.Output != (Length{}) {
				mt = s.Output.drawOutput(indexRand(s.Seed, uint64(entry), turnTag(tagTurnOutput, len(c.Users))))
			} else if k+1 < len(msgs) && msgs[k+1].Role == "assistant" {
				mt = max(1, Count(msgs[k+1].Content))
			}
			c.Users = append(c.Users, m.Content)
			c.MaxTokens = append(c.MaxTokens, mt)
			c.UserTokens = append(c.UserTokens, Count(m.Content))
		}
	}
	return c
}

// TurnBody returns the request body of one turn of a conversation:
// history is the conversation so far, system prompt, user turns and the
// model's answers, the turn's own user message last. The chat grammars
// (Chat, OllamaChat) send it as their messages list. The others have no
// roles, so the history is one prompt (promptText). maxTokens 0 asks for
// none; ignoreEOS is as Spec.IgnoreEOS, an error where the API has no
// such field; extra's members follow the grammar's own (Spec.Extra).
func (a API) TurnBody(model string, history []Message, maxTokens int, ignoreEOS bool, extra Extra) ([]byte, error) {
	switch {
	case len(history) == 0:
		return nil, errors.New("a turn needs at least one message")
	case maxTokens < 0:
		return nil, fmt.Errorf("max tokens must not be negative, got %d", maxTokens)
	case ignoreEOS && !a.CanIgnoreEOS():
		return nil, fmt.Errorf("the %s API has no field to ignore the end of sequence", a)
	case ignoreEOS && maxTokens == 0:
		return nil, errors.New("ignoring the end of sequence needs max tokens: the answer would run to the model's context")
	}
	return a.body(model, history, maxTokens, ignoreEOS, extra)
}

// promptText is a conversation as one prompt, for the grammars without
// roles: the text the model has read and written, in order. An assistant
// message, the model's own continuation of the text before it, is
// appended as it came, so that a turn's prompt begins with exactly the
// text, hence the tokens, of the last turn's prompt and answer, which is
// what the server's prefix cache holds (a separator before an answer
// would put a token between the two, and no block past it could hit). A
// message a person wrote (system, user) follows what precedes it after
// one space, as GuideLLM joins a conversation's prompts and answers for
// /v1/completions (TextCompletionsRequestHandler.format in
// vllm-project/guidellm src/guidellm/backends/openai/request_handlers.py
// @003104dd: " ".join(prompts)); one space before a word adds no token
// in cl100k_base (a generated text's words are one token after a space,
// TestWords), so such a prompt is as many tokens as its messages. vLLM's
// multi-turn benchmark has no such join: it speaks the chat grammar
// only. One message is its content as it is.
func promptText(msgs []Message) string {
	if len(msgs) == 1 {
		return msgs[0].Content
	}
	n := 0
	for _, m := range msgs {
		n += len(m.Content) + 1
	}
	var b strings.Builder
	b.Grow(n)
	for k, m := range msgs {
		if k > 0 && m.Role != "assistant" {
			b.WriteByte(' ')
		}
		b.WriteString(m.Content)
	}
	return b.String()
}
