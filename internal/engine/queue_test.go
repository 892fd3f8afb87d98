package engine

import "testing"

// TestQueueStaysBounded: a backlog that never empties while a million
// arrivals pass through keeps the queue's memory bounded and its order
// first in, first out.
func TestQueueStaysBounded(t *testing.T) {
	var q queue
	var in, out uint64
	for range 100 {
		q.push(item{seq: in})
		in++
	}
	for range 1_000_000 {
		q.push(item{seq: in})
		in++
		if it := q.pop(); it.seq != out {
			t.Fatalf("popped %d, want %d", it.seq, out)
		}
		out++
	}
	if q.len() != 100 {
		t.Errorf("len %d, want 100", q.len())
	}
	// 101 at most are queued at once: append's growth and the move to
	// the front keep the slice within a small multiple of that.
	if c := cap(q.items); c > 4*101 {
		t.Errorf("capacity %d after a million items through a backlog of 100", c)
	}
	for q.len() > 0 {
		if it := q.pop(); it.seq != out {
			t.Fatalf("popped %d, want %d", it.seq, out)
		}
		out++
	}
	if out != in {
		t.Errorf("popped %d of %d", out, in)
	}
}
