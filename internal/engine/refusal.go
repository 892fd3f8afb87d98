package engine

import (
	"sync"
	"sync/atomic"

	"github.com/openload/openload/result"
)

// The first refusal of a run (Stats.Refusal).
//
// A run whose every answer is a 4xx says why only in the server's own
// words: "you must provide a model parameter" is in the body, not in the
// status. So every client keeps the beginning of the body of one refused
// answer: of the requests answered with a client error (a 4xx other than
// 408 and 429, result.ClientError) and read to their end, the one with
// the lowest seq, so that the pick is the same whatever the client, the
// order the answers came in or the number of shards (a merge keeps the
// lowest too). The cost is paid on refusals only: any other answer never
// gets past the status test, and a refusal of a request after the one
// kept costs one atomic load.

// RefusalCap is how much of a refused answer's body is kept.
const RefusalCap = 512

// Refusal is a refused answer (result.ClientError): its request's seq,
// its status and the first RefusalCap bytes of its body, as they came
// (after the transfer's framing: chunks undone, HTTP/2 DATA joined). Cut
// says the body was longer.
type Refusal struct {
	Seq    uint64
	Status int
	Body   []byte
	Cut    bool
}

// refusals keeps a run's first refusal (see above).
type refusals struct {
	// first is the kept refusal's seq + 1; 0 until one is kept.
	first atomic.Uint64
	mu    sync.Mutex
	r     Refusal
}

// isRefusal reports whether status refuses the request: a client error
// as the default objective counts them (result.ClientError).
func isRefusal(status int) bool { return result.ClientError(status) }

// wants reports whether an answer of status to request seq is to be
// kept, once read to its end: a refusal of a request before any kept.
func (k *refusals) wants(status int, seq uint64) bool {
	if !isRefusal(status) {
		return false
	}
	n := k.first.Load()
	return n == 0 || seq < n-1
}

// keep keeps g's refusal of request seq with status, unless one of an
// earlier request was kept meanwhile.
func (k *refusals) keep(seq uint64, status int, g *grab) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if n := k.first.Load(); n != 0 && seq >= n-1 {
		return
	}
	k.r = Refusal{Seq: seq, Status: status, Body: append([]byte(nil), g.b...), Cut: g.cut}
	k.first.Store(seq + 1)
}

// get is the refusal kept, or nil.
func (k *refusals) get() *Refusal {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.first.Load() == 0 {
		return nil
	}
	r := k.r
	return &r
}

// grab collects the first RefusalCap bytes of a body, as each client
// reads it.
type grab struct {
	b   []byte
	cut bool
}

func newGrab() *grab { return &grab{b: make([]byte, 0, RefusalCap)} }

// add takes p, the next bytes of the body.
func (g *grab) add(p []byte) {
	room := RefusalCap - len(g.b)
	if len(p) > room {
		p, g.cut = p[:room], true
	}
	g.b = append(g.b, p...)
}

// grabBody is a body read through a grab (the goroutine paths).
type grabBody struct {
	rc interface {
		Read([]byte) (int, error)
		Close() error
	}
	g *grab
}

func (b *grabBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	b.g.add(p[:n])
	return n, err
}

func (b *grabBody) Close() error { return b.rc.Close() }
