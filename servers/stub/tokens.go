package stub

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/openload/openload/internal/prompt"
)

// maxOutputTokens bounds max_tokens and OutputTokens: an unstreamed answer
// is built in memory (about 7 bytes a token).
const maxOutputTokens = 1 << 16

// tokenState is the token model's shared state.
type tokenState struct {
	// active counts the sequences holding a model slot (in prefill or
	// decoding): each one slows every other's decoding by ITLPerSeq.
	active atomic.Int64
	ids    atomic.Uint64 // answer ids, "chatcmpl-stub-<n>"

	// Counters for Stats.
	streams   atomic.Int64 // streamed model answers begun (head written)
	completed atomic.Int64 // streamed model answers written to the end ([DONE])
	tokens    atomic.Int64 // output tokens written, streamed or not

	lateMu sync.Mutex
	late   *hdrhistogram.Histogram // per completed stream, its largest token lateness; nil until the first
}

// recordLate records the largest lateness of one completed stream: how
// long after its due time a token was flushed, at worst.
func (t *tokenState) recordLate(d time.Duration) {
	t.lateMu.Lock()
	if t.late == nil {
		t.late = newHist()
	}
	recordDuration(t.late, d)
	t.lateMu.Unlock()
}

func (t *tokenState) lateness() Percentiles {
	t.lateMu.Lock()
	defer t.lateMu.Unlock()
	if t.late == nil {
		return Percentiles{}
	}
	return percentiles(t.late)
}

// promptTokens counts the tokens of a prompt text with a real tokenizer,
// OpenAI's cl100k_base (prompt.Count), so that usage.prompt_tokens, the
// prefill time and POST /tokenize agree with what a client that counts
// with tiktoken sent. (A prompt given as token ids counts one per id; see
// openai.go.) Counting costs 0.3 to 0.4 ms of CPU per 1024 tokens.
func promptTokens(text string) int {
	return prompt.Count(text)
}

// tokenWords are the output tokens, cycled: one word, one token, one chunk.
var tokenWords = [...]string{" lorem", " ipsum", " dolor", " sit", " amet", " consectetur", " adipiscing", " elit"}

// tokenText is output token k (0-based).
func tokenText(k int) string { return tokenWords[k%len(tokenWords)] }

// prefill is the time to first token of a prompt of n tokens.
func (c Config) prefill(n int) time.Duration {
	return c.Prefill + time.Duration(n)*c.PrefillPerToken
}

// itl is the time between two tokens of one sequence while active
// sequences (itself included) hold model slots.
func (c Config) itl(active int64) time.Duration {
	return c.ITL + time.Duration(max(active-1, 0))*c.ITLPerSeq
}

// pacer paces the tokens of one sequence with one timer, reset for each
// token: a stream costs one goroutine (its handler's) and one runtime
// timer, never one per token. The time of each token follows the one
// before it by the gap the model gives at that moment (Config.itl of the
// sequences active then); a stall freezes the model, so tokens due inside
// one wait for its end and the gaps resume from there.
type pacer struct {
	s       *Server
	ctx     context.Context
	timer   *time.Timer
	first   time.Time // the stall clock's origin (the first model request)
	next    time.Time // when the last token was (or the next one is) due
	stalled bool      // a stall held a token back
}

func (s *Server) newPacer(ctx context.Context, start time.Time) *pacer {
	s.mu.Lock()
	first := s.first
	s.mu.Unlock()
	return &pacer{s: s, ctx: ctx, first: first, next: start}
}

// stop releases the pacer's timer.
func (p *pacer) stop() {
	if p.timer != nil {
		p.timer.Stop()
	}
}

// nextToken waits until the next token is due and returns false if the
// client went away or the server closed meanwhile.
func (p *pacer) nextToken() bool {
	p.next = p.next.Add(p.s.Config.itl(p.s.tok.active.Load()))
	for {
		if !p.sleepUntil(p.next) {
			return false
		}
		end, stalled := p.s.stall.within(time.Since(p.first))
		if !stalled || p.s.stall.dur <= 0 {
			return true
		}
		p.stalled = true
		p.next = p.first.Add(end)
	}
}

// sleepUntil waits until t (at once when t has passed).
func (p *pacer) sleepUntil(t time.Time) bool {
	d := time.Until(t)
	if d <= 0 {
		select {
		case <-p.ctx.Done():
			return false
		case <-p.s.closing:
			return false
		default:
			return true
		}
	}
	if p.timer == nil {
		p.timer = time.NewTimer(d)
	} else {
		p.timer.Reset(d)
	}
	select {
	case <-p.timer.C:
		return true
	case <-p.ctx.Done():
		return false
	case <-p.s.closing:
		return false
	}
}
