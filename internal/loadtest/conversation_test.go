package loadtest

import (
	"context"
	"net/url"
	"testing"
	"time"

	"github.com/openload/openload/internal/engine"
	"github.com/openload/openload/internal/prompt"
	"github.com/openload/openload/internal/session"
	"github.com/openload/openload/result"
	"github.com/openload/openload/schedule"
	"github.com/openload/openload/servers/stub"
)

// converse runs conversations of 4 turns (100-token user messages,
// 20-token answers) at rate/s for d against a stub whose prefill costs 1
// ms per prompt token not in its prefix cache of cache tokens (0: off),
// and returns the run's one scenario-like result.
func converse(t *testing.T, rate float64, d time.Duration, cache int) *result.Result {
	t.Helper()
	cfg := stub.DefaultConfig()
	cfg.Policy = stub.PolicyNone
	cfg.Workers = 64
	cfg.MaxQueueWait = time.Minute
	cfg.Prefill = 0
	cfg.PrefillPerToken = time.Millisecond
	cfg.ITL = time.Millisecond
	cfg.PrefixCacheTokens = cache
	s, err := stub.NewServer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	u, _ := url.Parse(s.URL + "/v1/chat/completions")
	cv, err := session.CompileConversations(session.ConversationSpec{
		Prompt: prompt.ConversationSpec{API: prompt.Chat, Model: "m", Turns: 4, User: prompt.Length{N: 100}, Output: prompt.Length{N: 20}, Seed: 1, IgnoreEOS: true},
		URL:    u,
	})
	if err != nil {
		t.Fatal(err)
	}
	res, _, err := Run(context.Background(), Options{
		Config:   engine.Config{URL: u, Connections: 64, Timeout: 30 * time.Second, Drain: 30 * time.Second},
		Schedule: schedule.Spec{Kind: schedule.Constant, Rate: rate, Duration: d},
		Sessions: cv,
	})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestConversationPrefixCache: every turn sends the conversation so far,
// the model's own streamed answers in it. The stub's cache then holds
// each turn's prefix (16-token blocks, the last prompt token always
// recomputed), and its counts are known: turn k's prompt is 100 + 120·(k−1)
// tokens, of which 0, 112, 224, 352 are cached (servers/stub's
// TestPrefixCacheConversation). Without the cache turn 4 prefills all 460
// tokens; with it only 108, so its TTFT from the send is far below the
// uncached one — the bound, half, is wide of the 460:108 ratio, and
// holds on a busy machine since a busy machine adds to both. A cache of
// 128 tokens, smaller than one turn-2 prompt, let alone the 4
// conversations live at once, keeps too little of each: turn 4's TTFT is
// then well above the big cache's (the same bound).
func TestConversationPrefixCache(t *testing.T) {
	cached := converse(t, 4, time.Second, 1<<16)
	if c := cached.Counts; c.Scheduled != 16 || c.Completed != 16 {
		t.Fatalf("counts %+v, want 16 turns completed", c)
	}
	if s := cached.Sessions; s == nil || s.Started != 4 || s.Completed != 4 {
		t.Fatalf("sessions %+v, want 4 completed", s)
	}
	wantPrompt, wantCached := []int64{100, 220, 340, 460}, []int64{0, 112, 224, 352}
	for k, p := range cached.Steps {
		st := p.Stream
		if st == nil || st.PromptTokens == nil {
			t.Fatalf("%s: no stream figures", p.Name)
		}
		var c int64
		if st.CachedTokens != nil {
			c = st.CachedTokens.Sum / st.CachedTokens.Requests
		}
		if st.PromptTokens.Sum != 4*wantPrompt[k] || c != wantCached[k] {
			t.Errorf("%s: prompt tokens %d (want %d), cached per turn %d (want %d)", p.Name, st.PromptTokens.Sum, 4*wantPrompt[k], c, wantCached[k])
		}
	}
	plain := converse(t, 4, time.Second, 0)
	small := converse(t, 4, time.Second, 128)
	c4, p4, s4 := cached.Steps[3].Stream.TTFTService.P50, plain.Steps[3].Stream.TTFTService.P50, small.Steps[3].Stream.TTFTService.P50
	t.Logf("turn 4 TTFT p50 from send: cache of 65536 tokens %.1f ms, of 128 tokens %.1f ms, none %.1f ms", c4, s4, p4)
	if c4 >= p4/2 || c4 >= s4/2 {
		t.Errorf("turn 4 TTFT from send with the cache %.1f ms, a small one %.1f ms, none %.1f ms: want the cache's under half of each", c4, s4, p4)
	}
}
