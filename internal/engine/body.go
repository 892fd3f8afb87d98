package engine

import (
	"github.com/openload/openload/internal/recorder"
	"github.com/openload/openload/internal/splitmix"
)

// Request bodies from a list (Config.Bodies, the CLI's --body-file): a
// model server's prompts of varied lengths load it as real traffic does.
// The body of request seq is a pure function of seq, so every client, and
// every shard of a split schedule, sends the same body for the same
// request without sharing any state.

// BodyIndex returns the index into cfg.Bodies of request seq's body: seq
// mod len in order, or with BodySample a draw that depends only on
// BodySeed and seq (SplitMix64 of their sum, whose outputs are
// equidistributed; the modulo bias is below 2⁻⁴⁰ for any list that fits
// in memory). 0 without Bodies.
func (cfg *Config) BodyIndex(seq uint64) int {
	n := uint64(len(cfg.Bodies))
	if n == 0 {
		return 0
	}
	if !cfg.BodySample {
		return int(seq % n)
	}
	return int(splitmix.At(cfg.BodySeed, seq) % n)
}

// BodyTokens is what openload counted of one request body (Config.BodyTokens).
type BodyTokens struct {
	Prompt int // prompt tokens, by openload's tokenizer
	Asked  int // output tokens asked for (max_tokens), 0 when not said
}

// bodyTokens fills r's prompt and asked tokens from its body's counts;
// a usage count the server sent is kept.
func (cfg *Config) bodyTokens(r *recorder.Record) {
	if len(cfg.BodyTokens) == 0 || !r.WasSent { // a prompt never sent has no tokens to count
		return
	}
	bt := cfg.BodyTokens[cfg.BodyIndex(r.Seq)]
	if r.PromptTokens == 0 {
		r.PromptTokens = bt.Prompt
	}
	r.AskedTokens = bt.Asked
}
