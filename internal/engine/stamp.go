package engine

import (
	"strconv"
	"time"
)

// stampChunk is how many header value slots a worker allocates at once.
const stampChunk = 256

// stamp returns the value of Config.StampHeader for a request scheduled at
// offset off: its scheduled time on the wall clock, in Unix nanoseconds,
//
//	stamp = wall-clock start of the run (Stats.Start) + off
//
// so a gate downstream can measure dwell from the moment the user arrived,
// send delay included. The digits are formatted into the worker's buffer;
// the value slice is carved from a per-worker chunk, one slot per request
// and never reused, because the transport may still read a request's
// headers after Do returned (a timeout, or a response that arrived before
// the request was fully written). That leaves one allocation per request,
// the string itself.
func (w *worker) stamp(off time.Duration) []string {
	w.stampDigits(off)
	if len(w.stampVals) == 0 {
		w.stampVals = make([]string, stampChunk)
	}
	v := w.stampVals[:1:1]
	w.stampVals = w.stampVals[1:]
	v[0] = string(w.stampBuf)
	return v
}

// stampDigits formats the stamp for offset off into w.stampBuf and returns
// it; the lean client writes these bytes as they are.
func (w *worker) stampDigits(off time.Duration) []byte {
	w.stampBuf = strconv.AppendInt(w.stampBuf[:0], w.g.start.UnixNano()+int64(off), 10)
	return w.stampBuf
}
