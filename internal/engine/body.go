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

// BodyIndex returns the index into cfg.Bodies of request seq's body. With
// k = BodyOffset + seq, it is k mod len in order, or with BodySample a
// draw that depends only on BodySeed and k (SplitMix64 of their sum,
// whose outputs are equidistributed; the modulo bias is below 2⁻⁴⁰ for
// any list that fits in memory). The offset lets the runs of a sweep
// continue one sequence of bodies instead of each starting at the first
// (a prefix cache would serve the second run from the first's). 0
// without Bodies.
func (cfg *Config) BodyIndex(seq uint64) int {
	n := uint64(len(cfg.Bodies))
	if n == 0 {
		return 0
	}
	k := cfg.BodyOffset + seq
	if !cfg.BodySample {
		return int(k % n)
	}
	return int(splitmix.At(cfg.BodySeed, k) % n)
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
