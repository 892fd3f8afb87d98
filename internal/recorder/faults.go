package recorder

import (
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// faultTally counts what misbehaving servers made the engine do beyond
// an outcome: redirects followed, bodies cut at the cap, the causes of TLS
// failures (tlscause.go) and the response times of the requests that got
// no answer (answered.go).
type faultTally struct {
	redirects  int64 // redirects followed, over all requests
	overCap    int64 // completed responses whose body exceeded the cap
	tls        [numTLSCauses]int64
	unanswered *hdrhistogram.Histogram // nil until a request fails
}

func (r *Recorder) addFaults(rec *Record) {
	r.faults.redirects += int64(rec.Redirects)
	if rec.BodyOverCap {
		r.faults.overCap++
	}
	r.faults.addTLSCause(rec)
	r.faults.addUnanswered(rec)
}

// Redirects is the number of redirects followed so far.
func (r *Recorder) Redirects() int64 { return r.faults.redirects }

// BodyOverCap is the number of responses whose body exceeded the cap so
// far.
func (r *Recorder) BodyOverCap() int64 { return r.faults.overCap }

// ParseKind is the inverse of ErrorKind.String: "" is KindNone.
func ParseKind(name string) (ErrorKind, bool) {
	for k, n := range kindNames {
		if n == name {
			return ErrorKind(k), true
		}
	}
	return 0, false
}

// maxLogMillis bounds the times a log holds, in whole milliseconds, so
// that they fit a time.Duration (about 292 years).
const maxLogMillis = (1<<63-1)/int64(time.Millisecond) - 1
