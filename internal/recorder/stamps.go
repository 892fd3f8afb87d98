package recorder

import (
	"time"

	"github.com/openload/openload/result"
)

// # Stamps in order
//
// Every record's stamps are ordered (docs/DESIGN.md, "Three timestamps"):
//
//	scheduled ≤ sent ≤ last sent ≤ first byte ≤ first token ≤ first answer
//	  ≤ last token ≤ done
//
// each where the record has it (sent when WasSent, last sent when sent
// again, first byte when GotFirstByte, the tokens when Events > 0, the
// first answer token when FirstAnswer > 0). A
// record that breaks the order was timed wrongly by the client that made
// it: a default client once ended every streamed answer at its head's
// stamp, before its last token, and every figure built on done was wrong
// while counts stayed exact. So the recorder checks every record as it is
// added, and verify fails a run with any record out of order.
//
// Two stamps within StampSlack of each other are in order: a figure is
// recorded to the microsecond, and a stamp taken from the kernel's
// receive clock and one from the monotonic clock can disagree by the
// conversion between them (beat_linux.go), far less than that.

// StampSlack is how far a stamp may be before the one it should follow
// and still be in order.
const StampSlack = time.Microsecond

// The stamps of a record, in the order they must keep.
const (
	stScheduled = iota
	stSent
	stLastSent
	stFirstByte
	stFirstToken
	stFirstAnswer
	stLastToken
	stDone
	numStamps
)

// stampNames are the stamps' names in results and messages, as the
// per-request log names its columns.
var stampNames = [numStamps]string{"scheduled", "sent", "last_sent", "first_byte", "first_token", "first_answer", "last_token", "done"}

// stampTally counts the records checked and those out of order, by the
// pair of stamps found out of order: breaks[a][b], stamp b before stamp
// a, which it should follow.
type stampTally struct {
	checked, disordered int64
	breaks              [numStamps][numStamps]int64
	worst               time.Duration // the largest amount a stamp came before the one it follows
	worstSeq            uint64        // the request of the worst break
}

// addStamps checks rec's stamps. It does not allocate.
func (r *Recorder) addStamps(rec *Record) {
	t := &r.stamps
	t.checked++
	if !inOrder(rec) {
		r.addStampsSlow(rec)
	}
}

// addStampsSlow counts what is out of order in rec.
func (r *Recorder) addStampsSlow(rec *Record) {
	t := &r.stamps
	var at [numStamps]time.Duration
	var has [numStamps]bool
	at[stScheduled], has[stScheduled] = rec.Scheduled, true
	if rec.WasSent {
		at[stSent], has[stSent] = rec.Sent, true
		if rec.sentAgain() {
			at[stLastSent], has[stLastSent] = rec.LastSent, true
		}
	}
	if rec.GotFirstByte {
		at[stFirstByte], has[stFirstByte] = rec.FirstByte, true
	}
	if rec.Events > 0 {
		at[stFirstToken], has[stFirstToken] = rec.FirstToken, true
		at[stLastToken], has[stLastToken] = rec.LastToken, true
	}
	if rec.FirstAnswer > 0 {
		at[stFirstAnswer], has[stFirstAnswer] = rec.FirstAnswer, true
	}
	at[stDone], has[stDone] = rec.Done, true
	bad := false
	prev := stScheduled
	for s := stSent; s < numStamps; s++ {
		if !has[s] {
			continue
		}
		// prev is the latest stamp so far: one early stamp is one break,
		// not a break of every stamp after it too.
		if by := at[prev] - at[s]; by > StampSlack {
			t.breaks[prev][s]++
			if by > t.worst {
				t.worst, t.worstSeq = by, rec.Seq
			}
			bad = true
		}
		if at[s] > at[prev] {
			prev = s
		}
	}
	if bad {
		t.disordered++
	}
}

// stampsResult is the result's Stamps.
func (r *Recorder) stampsResult() *result.Stamps {
	t := &r.stamps
	s := &result.Stamps{Checked: t.checked, Disordered: t.disordered}
	if t.disordered == 0 {
		return s
	}
	s.Breaks = map[string]int64{}
	for a := range numStamps {
		for b := range numStamps {
			if n := t.breaks[a][b]; n > 0 {
				s.Breaks[result.StampBreak(stampNames[b], stampNames[a])] = n
			}
		}
	}
	s.WorstMs = float64(t.worst) / float64(time.Millisecond)
	s.WorstSeq = t.worstSeq
	return s
}

// InOrder reports whether r's stamps keep the order above, within
// StampSlack: the rule every run checks, for a test to hold one record
// to.
func (r *Record) InOrder() bool { return inOrder(r) }

// inOrder is the check's fast path, taken by every record that is in
// order: the stamps compared in a line, with none of the bookkeeping of
// addStamps, which finds what is out of order.
func inOrder(rec *Record) bool {
	last := rec.Scheduled
	if rec.WasSent {
		if rec.Sent < last-StampSlack {
			return false
		}
		last = max(last, rec.Sent)
		if rec.sentAgain() {
			if rec.LastSent < last-StampSlack {
				return false
			}
			last = max(last, rec.LastSent)
		}
	}
	if rec.GotFirstByte {
		if rec.FirstByte < last-StampSlack {
			return false
		}
		last = max(last, rec.FirstByte)
	}
	if rec.Events > 0 {
		if rec.FirstToken < last-StampSlack {
			return false
		}
		last = max(last, rec.FirstToken)
	}
	if rec.FirstAnswer > 0 {
		if rec.FirstAnswer < last-StampSlack {
			return false
		}
		last = max(last, rec.FirstAnswer)
	}
	if rec.Events > 0 {
		if rec.LastToken < last-StampSlack {
			return false
		}
		last = max(last, rec.LastToken)
	}
	return rec.Done >= last-StampSlack
}
