package engine

// queue is a FIFO of arrivals that reuses its slice: pushing after pops
// moves what is left to the front once the popped part is at least half,
// so a queue that never empties holds at most twice its longest length,
// however many items pass through it.
type queue struct {
	items []item // items[head:] are queued
	head  int
}

func (q *queue) len() int { return len(q.items) - q.head }

func (q *queue) push(it item) {
	if q.head > 0 && q.head >= len(q.items)/2 {
		n := copy(q.items, q.items[q.head:])
		q.items, q.head = q.items[:n], 0
	}
	q.items = append(q.items, it)
}

// pop removes and returns the oldest item; the queue must not be empty.
func (q *queue) pop() item {
	it := q.items[q.head]
	q.head++
	if q.head == len(q.items) {
		q.items, q.head = q.items[:0], 0
	}
	return it
}
