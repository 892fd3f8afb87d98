package engine

import (
	"sync"
	"testing"

	"github.com/openload/openload/internal/recorder"
)

// TestSinkDeliversEveryRecordOnce: records put by many goroutines while the
// collector runs all arrive, once each.
func TestSinkDeliversEveryRecordOnce(t *testing.T) {
	const workers, each = 8, 5000
	var k sink
	seen := make([]int, workers*each)
	add := func(r *recorder.Record) { seen[r.Seq]++ }
	var wg sync.WaitGroup
	for w := range workers {
		sh := k.newShard()
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				sh.put(&recorder.Record{Seq: uint64(w*each + i)})
			}
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	for running := true; running; {
		select {
		case <-done:
			running = false
		default:
		}
		k.collect(add)
	}
	k.collect(add)
	for seq, n := range seen {
		if n != 1 {
			t.Fatalf("record %d delivered %d times", seq, n)
		}
	}
}

// BenchmarkShardPut is what a worker pays to hand over one record: an
// uncontended lock and a copy; the collector's side is included once per
// 64 records. Zero allocations once the shard's slices have grown.
func BenchmarkShardPut(b *testing.B) {
	var k sink
	sh := k.newShard()
	r := recorder.Record{Status: 200, Outcome: recorder.Completed}
	var n int
	add := func(*recorder.Record) { n++ }
	b.ReportAllocs()
	for i := range b.N {
		r.Seq = uint64(i)
		sh.put(&r)
		if i%64 == 63 {
			k.collect(add)
		}
	}
	k.collect(add)
	if n != b.N {
		b.Fatalf("collected %d of %d", n, b.N)
	}
}
