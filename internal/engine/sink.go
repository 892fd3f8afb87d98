package engine

import (
	"sync"
	"time"

	"github.com/openload/openload/internal/recorder"
)

// Records reach the recorder through shards, one per goroutine that makes
// records (each worker, and the dispatcher for the requests it abandons).
// A shard is a slice behind its own mutex, which only its owner and the
// recorder goroutine ever take, so putting a record costs an uncontended
// lock and a copy. The recorder goroutine collects every shard
// collectEvery and adds what it found to the recorder, which it owns
// without locks. A channel per record would instead wake the recorder
// goroutine for almost every request, a measurable share of openload's CPU
// (see docs/MEASUREMENTS.md, “Record shards”).

// collectEvery is how often the recorder goroutine collects the shards.
// It bounds how far the progress line lags behind; the result does not
// depend on it.
const collectEvery = 20 * time.Millisecond

type shard struct {
	mu      sync.Mutex
	recs    []recorder.Record     // put by the owner
	out     []recorder.Record     // the recorder goroutine's spare
	toks    []recorder.TokenEvent // token events of streams (stream.go)
	toksOut []recorder.TokenEvent
	ends    []recorder.SessionRecord // sessions that ended (session.go)
	endsOut []recorder.SessionRecord
}

// putSession adds the record of a session that ended.
func (s *shard) putSession(r *recorder.SessionRecord) {
	s.mu.Lock()
	s.ends = append(s.ends, *r)
	s.mu.Unlock()
}

// putTokens adds a batch of token events.
func (s *shard) putTokens(evs []recorder.TokenEvent) {
	if len(evs) == 0 {
		return
	}
	s.mu.Lock()
	s.toks = append(s.toks, evs...)
	s.mu.Unlock()
}

func (s *shard) put(r *recorder.Record) {
	s.mu.Lock()
	s.recs = append(s.recs, *r)
	s.mu.Unlock()
}

// sink is the set of shards of a run.
type sink struct {
	mu     sync.Mutex
	shards []*shard
	tokens func([]recorder.TokenEvent)   // where collect hands token events; set before the run
	ends   func(*recorder.SessionRecord) // where collect hands session records; set before the run
}

// newShard returns a shard for one goroutine.
func (k *sink) newShard() *shard {
	s := &shard{}
	k.mu.Lock()
	k.shards = append(k.shards, s)
	k.mu.Unlock()
	return s
}

// collect calls add for every record put since the last collect; only the
// recorder goroutine calls it.
func (k *sink) collect(add func(*recorder.Record)) {
	k.mu.Lock()
	shards := k.shards
	k.mu.Unlock()
	for _, s := range shards {
		s.mu.Lock()
		s.recs, s.out = s.out[:0], s.recs
		s.toks, s.toksOut = s.toksOut[:0], s.toks
		s.ends, s.endsOut = s.endsOut[:0], s.ends
		s.mu.Unlock()
		if k.tokens != nil {
			k.tokens(s.toksOut)
		}
		for i := range s.out {
			add(&s.out[i])
			s.out[i] = recorder.Record{} // drop references (Earlier, Class strings)
		}
		// After the records: a session's steps are in before its end.
		for i := range s.endsOut {
			k.ends(&s.endsOut[i])
		}
	}
}
