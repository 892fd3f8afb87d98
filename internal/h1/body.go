package h1

import (
	"bufio"
	"io"
	"sync"
)

// DiscardBuf is what body bytes to be dropped are read into: 64 KiB reads
// instead of bufio's 4 KiB refills (see docs/MEASUREMENTS.md, "Body
// buffer").
type DiscardBuf [64 << 10]byte

var discardBufs = sync.Pool{New: func() any { return new(DiscardBuf) }}

// GetDiscardBuf returns a buffer from the pool; give it back with
// PutDiscardBuf.
func GetDiscardBuf() *DiscardBuf { return discardBufs.Get().(*DiscardBuf) }

// PutDiscardBuf gives b back to the pool.
func PutDiscardBuf(b *DiscardBuf) { discardBufs.Put(b) }

// Discard reads and drops the next n bytes of br, a body whose length its
// head gave. What does not fit in br's buffer is read straight from the
// connection into a DiscardBuf (a bufio.Reader reads into a caller's
// buffer at least as large as its own directly), not through
// io.CopyN(io.Discard, br, n), which reads 8 KiB at a time (see
// docs/MEASUREMENTS.md, "Body buffer"). A body cut short fails with the
// read's error (io.EOF at the connection's end).
func Discard(br *bufio.Reader, n int64) error {
	if n <= int64(br.Size()) {
		_, err := br.Discard(int(n))
		return err
	}
	buf := GetDiscardBuf()
	defer PutDiscardBuf(buf)
	for n > 0 {
		m, err := br.Read(buf[:min(n, int64(len(buf)))])
		n -= int64(m)
		if n > 0 && err != nil {
			return err
		}
		if n > 0 && m == 0 {
			return io.ErrNoProgress
		}
	}
	return nil
}
