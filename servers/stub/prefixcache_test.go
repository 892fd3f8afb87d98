package stub

import (
	"bytes"
	"context"
	"encoding/json"
	"math/rand/v2"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/openload/openload/internal/prompt"
)

// prefillLog records the prefill the token model computes for each
// request (Server.prefillHook), in arrival order.
type prefillLog struct {
	mu  sync.Mutex
	got []time.Duration
}

func (l *prefillLog) hook(s *Server) {
	s.prefillHook = func(_, _ int, d time.Duration) {
		l.mu.Lock()
		l.got = append(l.got, d)
		l.mu.Unlock()
	}
}

func (l *prefillLog) last() time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.got[len(l.got)-1]
}

// conversation is one chat: its messages so far, as a client keeps them.
type conversation struct {
	seed uint64
	msgs []map[string]string
}

// turn sends the conversation's next turn (a userTokens-token user
// message) with max_tokens out, keeps the model's answer as history, as a
// multi-turn client does, and returns the answer's usage. Odd turns are
// streamed with include_usage, even ones not, so that both writers count.
func (cv *conversation) turn(ctx context.Context, t *testing.T, c *http.Client, url string, userTokens, out int) oaUsage {
	t.Helper()
	k := len(cv.msgs)/2 + 1
	cv.msgs = append(cv.msgs, map[string]string{"role": "user", "content": prompt.Text(cv.seed, uint64(k), userTokens)})
	req := map[string]any{"model": "m", "messages": cv.msgs, "max_tokens": out}
	stream := k%2 == 1
	if stream {
		req["stream"] = true
		req["stream_options"] = map[string]bool{"include_usage": true}
	}
	body, _ := json.Marshal(req)
	a := post(ctx, t, c, url+pathChat, string(body))
	if a.err != nil || a.status != http.StatusOK {
		t.Fatalf("turn %d: status %d, err %v, body %s", k, a.status, a.err, a.body)
	}
	var answer string
	var usage *oaUsage
	if stream {
		for _, e := range a.events[:len(a.events)-1] { // [DONE] last
			ch := decodeChunk(t, e.data)
			if len(ch.Choices) > 0 && ch.Choices[0].Delta.Content != nil {
				answer += *ch.Choices[0].Delta.Content
			}
			if ch.Usage != nil {
				usage = ch.Usage
			}
		}
	} else {
		ch := decodeChunk(t, string(a.body))
		answer, usage = ch.Choices[0].Message.Content, ch.Usage
	}
	if usage == nil {
		t.Fatalf("turn %d: no usage", k)
	}
	cv.msgs = append(cv.msgs, map[string]string{"role": "assistant", "content": answer})
	return *usage
}

func cachedOf(u oaUsage) int {
	if u.PromptTokensDetails == nil {
		return 0
	}
	return u.PromptTokensDetails.CachedTokens
}

// Known answer: prefill 1 ms per uncached token, a 4-turn conversation of
// 100-token user messages and 20-token answers, blocks of 16. Turn 1
// finds nothing cached; turn k finds the whole previous prompt and answer
// cached, but its last token (vLLM caches no sampled-but-unfed token),
// rounded down to whole blocks; and the prefill the stub computes is
// Prefill + 1 ms × the tokens not cached.
func TestPrefixCacheConversation(t *testing.T) {
	const user, out, block = 100, 20, 16
	cfg := tokenConfig(func(c *Config) {
		c.PrefillPerToken = time.Millisecond
		c.PrefixCacheTokens, c.PrefixCacheBlock = 1<<16, block
	})
	var log prefillLog
	s := startServer(t, cfg, log.hook)
	c := newClient(t)
	cv := &conversation{seed: 7}
	prev := 0 // the previous turn's prompt + answer tokens, as the next prompt holds them
	var queries, hits int64
	for k := 1; k <= 4; k++ {
		u := cv.turn(context.Background(), t, c, s.URL, user, out)
		cached := cachedOf(u)
		queries, hits = queries+int64(u.PromptTokens), hits+int64(cached)
		want := 0
		if k > 1 {
			prev = u.PromptTokens - user // history: previous prompt + answer
			want = (prev - 1) / block * block
		}
		pf := log.last()
		t.Logf("turn %d: prompt_tokens=%d cached_tokens=%d (want %d) uncached=%d prefill=%v",
			k, u.PromptTokens, cached, want, u.PromptTokens-cached, pf)
		if cached != want {
			t.Errorf("turn %d: cached_tokens = %d, want %d", k, cached, want)
		}
		if wantPf := cfg.Prefill + time.Duration(u.PromptTokens-cached)*time.Millisecond; pf != wantPf {
			t.Errorf("turn %d: prefill = %v, want %v", k, pf, wantPf)
		}
		if k > 1 && u.PromptTokens-cached > user+block {
			t.Errorf("turn %d: %d tokens uncached, want at most the new message and one block (%d)", k, u.PromptTokens-cached, user+block)
		}
	}
	// The server's own counts agree with what the answers reported.
	pc := s.Stats().Tokens.PrefixCache
	t.Logf("stats: prefix_cache queries=%d hits=%d tokens=%d", pc.Queries, pc.Hits, pc.Tokens)
	if pc.Queries != queries || pc.Hits != hits {
		t.Errorf("stats: queries %d, hits %d; the answers reported %d and %d", pc.Queries, pc.Hits, queries, hits)
	}
}

// Known answer: N conversations interleaved round-robin against a cache
// that holds fewer than N of them lose their prefixes (least recently used
// goes first, and each conversation's blocks are the least recent when its
// next turn comes), so later turns find far fewer tokens cached and pay
// more prefill than against a cache that holds them all.
func TestPrefixCacheTooSmall(t *testing.T) {
	const convs, turns, user, out, block = 4, 3, 100, 20, 16
	run := func(cacheTokens int) (cached, prefill int64) {
		cfg := tokenConfig(func(c *Config) {
			c.PrefillPerToken = 10 * time.Microsecond // relations only: kept short
			c.PrefixCacheTokens, c.PrefixCacheBlock = cacheTokens, block
		})
		var log prefillLog
		s := startServer(t, cfg, log.hook)
		c := newClient(t)
		cs := make([]*conversation, convs)
		for i := range cs {
			cs[i] = &conversation{seed: uint64(100 + i)}
		}
		for k := 1; k <= turns; k++ {
			for _, cv := range cs {
				u := cv.turn(context.Background(), t, c, s.URL, user, out)
				if k > 1 {
					cached += int64(cachedOf(u))
					prefill += int64(log.last())
				}
			}
		}
		return cached, prefill
	}
	// A conversation's last prompt is 340 tokens: 4096 holds all four,
	// 256 holds the turn-1 prefixes of two (112 tokens each), fewer than
	// the four that are live.
	bigC, bigP := run(4096)
	smallC, smallP := run(256)
	t.Logf("%d conversations × %d turns, later turns: cache 4096 tokens: cached_tokens=%d prefill=%v; cache 256 tokens: cached_tokens=%d prefill=%v",
		convs, turns, bigC, time.Duration(bigP), smallC, time.Duration(smallP))
	if bigC == 0 || smallC*4 > bigC {
		t.Errorf("cached tokens: big cache %d, small cache %d; want the small one under a quarter of the big one", bigC, smallC)
	}
	if smallP <= bigP {
		t.Errorf("prefill: small cache %v, big cache %v; want the small one larger", time.Duration(smallP), time.Duration(bigP))
	}
}

// The cache never holds more than its bound, however much is put in, and
// its map and its recency list agree.
func TestPrefixCacheBounded(t *testing.T) {
	const n, block = 160, 16
	pc := newPrefixCache(testConfig(func(c *Config) { c.PrefixCacheTokens, c.PrefixCacheBlock = n, block }))
	r := rand.New(rand.NewPCG(1, 2))
	for range 1000 {
		ids := make([]uint64, 50+r.IntN(200))
		for i := range ids {
			ids[i] = uint64(r.IntN(8)) // few distinct ids: chains share prefixes
		}
		h := blockHashes(ids, block, len(ids))
		pc.lookup(h, len(ids))
		pc.touch(h)
		if got := pc.tokens(); got > n {
			t.Fatalf("cache holds %d tokens, bound %d", got, n)
		}
		if len(pc.blocks) != pc.lru.Len() {
			t.Fatalf("map holds %d blocks, list %d", len(pc.blocks), pc.lru.Len())
		}
	}
	if pc.tokens() != n {
		t.Errorf("after 1000 chains the cache holds %d tokens, want its bound %d", pc.tokens(), n)
	}
}

// vLLM's cap: a prompt found whole in the cache still computes its last
// token, so a repeat of a 32-token prompt in blocks of 16 hits 16, and a
// 33-token one 32. Blocks chain: the same block after a different first
// block is a miss.
func TestPrefixCacheLookup(t *testing.T) {
	pc := newPrefixCache(testConfig(func(c *Config) { c.PrefixCacheTokens, c.PrefixCacheBlock = 1024, 16 }))
	seq := func(n int, first uint64) []uint64 {
		ids := make([]uint64, n)
		for i := range ids {
			ids[i] = uint64(i)
		}
		ids[0] = first
		return ids
	}
	for _, tc := range []struct {
		n, want int
	}{{32, 16}, {33, 32}, {47, 32}, {15, 0}} {
		h := blockHashes(seq(48, 1), 16, 48)
		pc.touch(h)
		if got := pc.lookup(blockHashes(seq(tc.n, 1), 16, tc.n), tc.n); got != tc.want {
			t.Errorf("%d-token repeat: cached %d, want %d", tc.n, got, tc.want)
		}
	}
	if got := pc.lookup(blockHashes(seq(48, 2), 16, 48), 48); got != 0 {
		t.Errorf("different first block: cached %d, want 0", got)
	}
}

// With the cache off, a repeated prompt reports no prompt_tokens_details
// (the answer's bytes are what they were); with it on, the first one
// neither (vLLM writes it only when tokens were cached).
func TestPrefixCacheUsageField(t *testing.T) {
	body := `{"model":"m","prompt":"` + prompt.Text(3, 0, 60) + `","max_tokens":2}`
	for _, on := range []bool{false, true} {
		s := startServer(t, tokenConfig(func(c *Config) {
			if on {
				c.PrefixCacheTokens = 1024
			}
		}), nil)
		c := newClient(t)
		for i := range 2 {
			a := post(context.Background(), t, c, s.URL+pathCompletions, body)
			has := json.Valid(a.body) && containsDetails(a.body)
			if want := on && i == 1; has != want {
				t.Errorf("cache on %v, request %d: prompt_tokens_details present %v, want %v; body %s", on, i+1, has, want, a.body)
			}
		}
		// /stats and /metrics name the cache only when it is on.
		st, _ := json.Marshal(s.Stats())
		m := do(context.Background(), c, http.MethodGet, s.URL+"/metrics")
		for what, b := range map[string][]byte{"/stats": st, "/metrics": m.body} {
			if has := bytes.Contains(b, []byte("prefix_cache")); has != on {
				t.Errorf("cache on %v: %s names prefix_cache: %v", on, what, has)
			}
		}
		if on && !bytes.Contains(m.body, []byte("stub_prefix_cache_hits_total 48")) {
			t.Errorf("/metrics lacks stub_prefix_cache_hits_total 59 (the second request's hit: 60 tokens, 59 at most, 3 blocks):\n%s", m.body)
		}
	}
}

func containsDetails(b []byte) bool {
	var v struct {
		Usage map[string]json.RawMessage `json:"usage"`
	}
	_ = json.Unmarshal(b, &v)
	_, ok := v.Usage["prompt_tokens_details"]
	return ok
}
