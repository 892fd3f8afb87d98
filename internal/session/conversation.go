package session

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"

	"github.com/openload/openload/internal/engine"
	"github.com/openload/openload/internal/prompt"
)

// A conversation is a session whose steps are the turns of a chat with a
// model server: turn k sends the whole conversation so far — the system
// prompt, every earlier user message and the model's own answer to it, as
// streamed back (prompt.AnswerText), not a dataset's — and then the next
// user message (prompt.API.TurnBody: messages for the chat grammars, one
// joined prompt for the others). So later turns share a long prefix with
// earlier ones, and a server's prefix cache has something to reuse:
// vLLM's benchmarks/multi_turn and SGLang's agentic loads measure this.
// Step k is named "turnK+1"; turn k+1 is due at turn k's done plus the
// think time (a user reading the answer).

// ConversationSpec is a scenario's conversations.
type ConversationSpec struct {
	// Prompt says what the turns are: synthetic (Turns, User, Output,
	// System, SharedSystem), or read from a ShareGPT file (Convs, every
	// human turn in order).
	Prompt prompt.ConversationSpec
	Convs  []prompt.Conversation // from a file; nil: synthetic
	File   string                // the file's name, for errors
	URL    *url.URL              // the endpoint every turn is sent to
	Header http.Header
	Think  string // before every turn after the first (Think's grammar)
	// OnFailure, as Spec's: a failed turn ends its conversation ("stop")
	// or the next turn goes without its answer ("continue").
	OnFailure string
}

// Conversations is a compiled ConversationSpec, the run's
// engine.SessionSource.
type Conversations struct {
	spec  prompt.ConversationSpec
	convs []prompt.Conversation
	url   string
	hdr   http.Header
	think Think
	cont  bool
	names []string
}

// MaxTurns bounds a conversation's turns, each a step with figures of its
// own (recorder.MaxTargetParts share the last part past it).
const MaxTurns = engine.MaxSteps

// CompileConversations checks c and makes its sessions.
func CompileConversations(c ConversationSpec) (*Conversations, error) {
	cv := &Conversations{spec: c.Prompt, convs: c.Convs, hdr: c.Header}
	if c.URL == nil {
		return nil, errors.New("conversation: no url to send the turns to")
	}
	cv.url = c.URL.String()
	switch c.OnFailure {
	case "", Stop:
	case Continue:
		cv.cont = true
	default:
		return nil, fmt.Errorf("on-failure %q: want %s or %s", c.OnFailure, Stop, Continue)
	}
	if c.Think != "" {
		t, err := ParseThink(c.Think)
		if err != nil {
			return nil, fmt.Errorf("conversation: %w", err)
		}
		cv.think = t
	}
	turns := c.Prompt.Turns
	if c.Convs == nil {
		if err := c.Prompt.Validate(); err != nil {
			return nil, fmt.Errorf("conversation: %w", err)
		}
	} else {
		if len(c.Convs) == 0 {
			return nil, fmt.Errorf("conversation: %s: no conversation in it", c.File)
		}
		turns = 0
		for _, v := range c.Convs {
			turns = max(turns, len(v.Users))
		}
	}
	if turns > MaxTurns {
		return nil, fmt.Errorf("conversation: %d turns: at most %d", turns, MaxTurns)
	}
	for k := range turns {
		cv.names = append(cv.names, "turn"+strconv.Itoa(k+1))
	}
	return cv, nil
}

// SameOrigin reports whether the turns go to u's scheme and host
// (engine.SameOrigin): they all go to the conversation's URL.
func (cv *Conversations) SameOrigin(u *url.URL) bool {
	v, err := url.Parse(cv.url)
	return err == nil && v.Scheme == u.Scheme && v.Host == u.Host
}

// StepNames are the turns' names: turn1, turn2, …
func (cv *Conversations) StepNames() []string { return append([]string(nil), cv.names...) }

// Session is arrival seq's conversation: synthetic conversation seq (a
// pure function of the seed and seq), or the file's conversation seq
// modulo their number, so every shard has the same ones.
func (cv *Conversations) Session(seq uint64) engine.Session {
	var c prompt.Conversation
	if cv.convs != nil {
		c = cv.convs[seq%uint64(len(cv.convs))]
	} else {
		c = cv.spec.Synthetic(seq)
	}
	ch := &chat{cv: cv, seq: seq, conv: c}
	if c.System != "" {
		ch.history = append(ch.history, prompt.Message{Role: "system", Content: c.System})
	}
	return ch
}

// chat is one conversation as it goes.
type chat struct {
	cv      *Conversations
	seq     uint64
	conv    prompt.Conversation
	history []prompt.Message
	next    int
}

func (ch *chat) Next(prev *engine.Answer) (engine.Step, engine.Verdict) {
	if prev != nil && prev.Failed() && !ch.cv.cont {
		return engine.Step{}, engine.Stop
	}
	if ch.next == len(ch.conv.Users) {
		return engine.Step{}, engine.Done
	}
	k := ch.next
	ch.next++
	ch.history = append(ch.history, prompt.Message{Role: "user", Content: ch.conv.Users[k]})
	maxTokens := 0
	if k < len(ch.conv.MaxTokens) {
		maxTokens = ch.conv.MaxTokens[k]
	}
	step := engine.Step{Index: k, Think: ch.cv.think.Draw(ch.cv.spec.Seed, ch.seq, k), Keep: true}
	// A body or request that cannot be made (Validate refuses what would
	// make one) leaves Request nil: the engine counts the turn failed.
	body, err := ch.cv.spec.API.TurnBody(ch.cv.spec.Model, ch.history, maxTokens, ch.cv.spec.IgnoreEOS && maxTokens > 0, ch.cv.spec.Extra)
	if err != nil {
		return step, engine.Go
	}
	req, err := http.NewRequest(http.MethodPost, ch.cv.url, bytes.NewReader(body))
	if err != nil {
		return step, engine.Go
	}
	for name, vs := range ch.cv.hdr {
		req.Header[name] = vs
	}
	req.Header.Set("Content-Type", "application/json")
	step.Request = req
	return step, engine.Go
}

// Take puts the model's answer in the conversation. A turn whose answer
// cannot be read fails (its conversation has no answer to go on with).
func (ch *chat) Take(a *engine.Answer) error {
	if a.Cut {
		return fmt.Errorf("turn %d: the answer is over %d bytes, past what is kept", a.Step+1, engine.MaxKeep)
	}
	text, err := prompt.AnswerText(a.Header.Get("Content-Type"), a.Body)
	if err != nil {
		return fmt.Errorf("turn %d: %w", a.Step+1, err)
	}
	ch.history = append(ch.history, prompt.Message{Role: "assistant", Content: text})
	return nil
}
