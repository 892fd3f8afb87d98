package recorder

import (
	"strconv"

	"github.com/openload/openload/result"
)

// statusTally counts answers by HTTP status code: the final answers
// (Recorder.status), the earlier attempts' (retryTally.status) and the
// heads of responses that failed before their end (wireTally.failed).
type statusTally struct {
	codes [600]int64 // by code, for codes in [100, 600)
	other int64      // codes outside [100, 600); 0 (no status) is not counted
}

func (t *statusTally) add(code int) {
	switch {
	case code >= 100 && code < 600:
		t.codes[code]++
	case code != 0:
		t.other++
	}
}

// addTo adds the counts to m under a result's keys: the code ("200") or
// "other"; codes never seen get no key.
func (t *statusTally) addTo(m map[string]int64) {
	for code, n := range t.codes {
		if n > 0 {
			m[strconv.Itoa(code)] += n
		}
	}
	if t.other > 0 {
		m["other"] += t.other
	}
}

// grpcTally counts gRPC calls by grpc-status (result.GRPCKey): the
// codes of the spec's table, and the others.
type grpcTally struct {
	codes [result.GRPCCodes]int64
	other int64
}

func (t *grpcTally) add(code int) {
	if code >= 0 && code < result.GRPCCodes {
		t.codes[code]++
	} else {
		t.other++
	}
}

// counts is the tally as Result.GRPC holds it; nil when no call was
// counted (a run of HTTP requests).
func (t *grpcTally) counts() map[string]int64 {
	var m map[string]int64
	put := func(k string, n int64) {
		if n > 0 {
			if m == nil {
				m = map[string]int64{}
			}
			m[k] += n
		}
	}
	for c, n := range t.codes {
		put(result.GRPCKey(c), n)
	}
	put(result.GRPCOther, t.other)
	return m
}

// EachGRPC calls f with each grpc-status of the completed gRPC calls and
// its count, in the order of the codes, then with −1 for the codes
// outside the spec's table; codes never seen are not called. It does not
// allocate.
func (r *Recorder) EachGRPC(f func(code int, n int64)) {
	for c, n := range r.grpc.codes {
		if n > 0 {
			f(c, n)
		}
	}
	if r.grpc.other > 0 {
		f(-1, r.grpc.other)
	}
}

// kindTally counts records or attempts by error kind (KindNone included).
type kindTally [numKinds]int64

// addTo adds the counts of the error kinds (KindNone left out) to m under
// their names; kinds never seen get no key.
func (t *kindTally) addTo(m map[string]int64) {
	for k := KindNone + 1; k < numKinds; k++ {
		if n := t[k]; n > 0 {
			m[k.String()] += n
		}
	}
}

// EachStatus calls f with each status code of the completed responses
// and its count, in the order of the codes, and then with code 0 for
// those outside [100, 600) (the result's "other"); codes never seen are
// not called. It does not allocate: live metrics read it once a second.
func (r *Recorder) EachStatus(f func(code int, n int64)) {
	for code, n := range r.status.codes {
		if n > 0 {
			f(code, n)
		}
	}
	if r.status.other > 0 {
		f(0, r.status.other)
	}
}

// EachErrorKind calls f with each error kind seen (KindNone left out) and
// its count, as ErrorKinds has them, without allocating.
func (r *Recorder) EachErrorKind(f func(k ErrorKind, n int64)) {
	for k := KindNone + 1; k < numKinds; k++ {
		if n := r.kinds[k]; n > 0 {
			f(k, n)
		}
	}
}
