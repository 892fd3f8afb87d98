package stub

import (
	"container/list"
	"encoding/binary"
	"hash/fnv"
	"sync"
)

// prefixCache is the stub's automatic prefix cache, modelled on vLLM's
// (vllm-project/vllm, vllm/v1/core):
//
//   - A prompt is cut into blocks of PrefixCacheBlock tokens; only whole
//     blocks are hashed, and each block's hash covers its parent's hash and
//     its own token ids (kv_cache_utils.py, hash_block_tokens:
//     hash((parent_block_hash, curr_block_token_ids, extra_keys)), the first
//     block's parent being NONE_HASH; request_block_hasher hashes
//     request.all_token_ids, so generated tokens are hashed too). A block's
//     hash therefore names the whole prefix up to its end.
//   - A request's cached prefix is the longest run of leading block hashes
//     found in the cache, capped at prompt tokens − 1 so that the last
//     token is always computed (kv_cache_manager.py, get_computed_blocks:
//     max_cache_hit_length = request.num_tokens - 1).
//   - Blocks are cached as they are computed, the prompt's at its prefill
//     and the generated tokens' as decoding fills them, up to the tokens
//     already fed to the model (allocate_slots: num_tokens_to_cache =
//     min(total_computed_tokens + num_new_tokens, request.num_tokens)): the
//     last sampled token never is, so an answer's blocks cover at most
//     prompt + output − 1 tokens.
//   - Eviction is least recently used, and a request's blocks are freed in
//     reverse order so that a chain's tail goes before its head
//     (block_pool.py / FreeKVCacheBlockQueue: "the one with more hash
//     tokens (the tail of a block chain) is at the front"). touch does the
//     same: it makes a chain's first block the most recently used.
//
// Unlike vLLM's pool, blocks held by running requests are not pinned: the
// stub has no KV memory to run out of, only a bound on what it remembers.
// The hash is 64-bit FNV-1a, not vLLM's sha256: a collision would only make
// the stub report a hit it should not.
//
// The cache is shared by every request; one mutex guards it, held only for
// the map and list operations (hashing is done outside it, by the caller).
type prefixCache struct {
	block     int // tokens per block
	capBlocks int // blocks held at most: PrefixCacheTokens ÷ block

	mu      sync.Mutex
	blocks  map[uint64]*list.Element // block hash → its element in lru
	lru     list.List                // of uint64 hashes, most recently used first
	queries int64                    // prompt tokens looked up
	hits    int64                    // of which found cached
}

// newPrefixCache returns the cache cfg asks for, nil when it is off.
func newPrefixCache(cfg Config) *prefixCache {
	if cfg.PrefixCacheTokens <= 0 {
		return nil
	}
	return &prefixCache{
		block:     cfg.PrefixCacheBlock,
		capBlocks: cfg.PrefixCacheTokens / cfg.PrefixCacheBlock,
		blocks:    make(map[uint64]*list.Element),
	}
}

// blockHashes returns the chained hashes of the whole blocks of the first
// n tokens of ids (all of them when n > len(ids)).
func blockHashes(ids []uint64, block, n int) []uint64 {
	n = min(n, len(ids))
	out := make([]uint64, 0, n/block)
	var parent uint64 // the chain's seed, vLLM's NONE_HASH
	var buf [8]byte
	for end := block; end <= n; end += block {
		h := fnv.New64a()
		binary.LittleEndian.PutUint64(buf[:], parent)
		h.Write(buf[:])
		for _, id := range ids[end-block : end] {
			binary.LittleEndian.PutUint64(buf[:], id)
			h.Write(buf[:])
		}
		parent = h.Sum64()
		out = append(out, parent)
	}
	return out
}

// lookup returns the number of leading tokens of a prompt of n tokens
// whose block hashes are hashes that the cache holds: whole blocks, at
// most n − 1 tokens. It counts the query for Stats.
func (c *prefixCache) lookup(hashes []uint64, n int) int {
	limit := min(len(hashes), max(n-1, 0)/c.block)
	c.mu.Lock()
	k := 0
	for k < limit {
		if _, ok := c.blocks[hashes[k]]; !ok {
			break
		}
		k++
	}
	c.queries += int64(n)
	c.hits += int64(k * c.block)
	c.mu.Unlock()
	return k * c.block
}

// touch inserts (or refreshes) the blocks of one chain, tail first, so that
// its first block ends up the most recently used, and evicts the least
// recently used blocks beyond the bound.
func (c *prefixCache) touch(hashes []uint64) {
	c.mu.Lock()
	for i := len(hashes) - 1; i >= 0; i-- {
		h := hashes[i]
		if e, ok := c.blocks[h]; ok {
			c.lru.MoveToFront(e)
			continue
		}
		c.blocks[h] = c.lru.PushFront(h)
	}
	for c.lru.Len() > c.capBlocks {
		e := c.lru.Back()
		delete(c.blocks, e.Value.(uint64))
		c.lru.Remove(e)
	}
	c.mu.Unlock()
}

// stats returns the cache's figures; nil when it is off (c nil).
func (c *prefixCache) stats() *PrefixCacheStats {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return &PrefixCacheStats{Queries: c.queries, Hits: c.hits, Tokens: c.lru.Len() * c.block}
}

// tokens returns the tokens the cache holds now (whole blocks).
func (c *prefixCache) tokens() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lru.Len() * c.block
}
