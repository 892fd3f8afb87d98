package engine

import (
	"math"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/openload/openload/internal/recorder"
)

// stampSlop widens each server write when a done is held to it: a stamp
// turned into the run's offset is off by the time between the wall and
// the monotonic reading of one time.Now (stamper.stamp), nanoseconds
// unless the thread is preempted between the two. 1 ms is a sixth of
// the lateness the defect gives (spacing − hold = 6 ms), and a write on
// loopback takes tens of microseconds.
const stampSlop = time.Millisecond

// writeLog notes when each write of a server's connections began and
// returned, on the test's clock: the server's own log of what it sent,
// against which a record's done (from the run's Stats.Start, with its
// monotonic reading) is held.
type writeLog struct {
	mu     sync.Mutex
	writes [][2]time.Time
}

// listener wraps ln so that its connections' writes are logged.
func (l *writeLog) listener(ln net.Listener) net.Listener { return loggedListener{ln, l} }

// conn wraps c so that its writes are logged.
func (l *writeLog) conn(c net.Conn) net.Conn { return loggedConn{c, l} }

// outside counts the records whose done lies outside every logged write
// (widened by stampSlop either side), logging each with the writes near
// it when quiet is false, and returns the largest distance of a done
// from its nearest write.
func (l *writeLog) outside(t testing.TB, recs map[uint64]recorder.Record, start time.Time, quiet bool) (n int, farthest time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, r := range recs {
		at := start.Add(r.Done)
		near := time.Duration(math.MaxInt64)
		for _, w := range l.writes {
			switch {
			case at.Before(w[0]):
				near = min(near, w[0].Sub(at))
			case !w[1].IsZero() && at.After(w[1]):
				near = min(near, at.Sub(w[1]))
			default:
				near = 0
			}
		}
		if near > stampSlop {
			n++
			if !quiet {
				t.Logf("seq %d: scheduled %v, sent %v, done %v: %v from the nearest write", r.Seq, r.Scheduled, r.Sent, r.Done, near)
				for _, w := range l.writes {
					if d := w[0].Sub(at); d > -20*time.Millisecond && d < 20*time.Millisecond {
						t.Logf("\ta write from %v to %v", w[0].Sub(start), w[1].Sub(start))
					}
				}
			}
		}
		farthest = max(farthest, near)
	}
	return n, farthest
}

type loggedListener struct {
	net.Listener
	log *writeLog
}

func (l loggedListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return l.log.conn(c), nil
}

type loggedConn struct {
	net.Conn
	log *writeLog
}

func (c loggedConn) Write(p []byte) (int, error) {
	// Logged before the write starts: a record may be checked while this
	// goroutine, its write returned, waits to note the end (an open
	// write, as it is in the log, ends at +∞).
	c.log.mu.Lock()
	i := len(c.log.writes)
	c.log.writes = append(c.log.writes, [2]time.Time{time.Now()})
	c.log.mu.Unlock()
	n, err := c.Conn.Write(p)
	to := time.Now()
	c.log.mu.Lock()
	c.log.writes[i][1] = to
	c.log.mu.Unlock()
	return n, err
}
