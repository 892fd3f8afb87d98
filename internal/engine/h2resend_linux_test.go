//go:build linux

package engine

import (
	"bytes"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestH2ResendUnwritten: what tells unwritten from never, and when HEADERS
// count as written. The server answers its first connection's first
// stream (a body of one byte), reads the second's HEADERS and then
// nothing: that request's body, framed whole with its HEADERS
// (h2QueueBody raised to its size), fills the socket (the server's
// receive buffer is fixed at 64 KiB; the body is twice what the sender's
// buffer may grow to, sendBufferMax), so the HEADERS of the three requests
// after it wait behind the body in openload's buffer when the server
// resets the connection. (Behind the 256 KiB the loop queues by default,
// they were written now and then: the kernel took more of the stalled
// connection's bytes over time.) Those three never left: unwritten sends
// them again on a new connection, where they are answered; never fails
// them. The second request's HEADERS did leave, though its body did not:
// it is an attempt under either policy, never sent again, and
// wire.attempts equals the streams the server read.
//
// The last four are due at one instant, so the loop puts all four on the
// stalling connection in one turn, however slow it is: spread 20 ms
// apart, a loop slowed by the race detector (framing bodies of 8 MiB
// over TLS took it about 400 ms each) took in the last after the reset,
// on a new connection, where it was answered (completed 2, not 1, once in
// CI).
func TestH2ResendUnwritten(t *testing.T) {
	if !h2LoopFields(&Config{Epoll: true, Protocol: H2C}) {
		t.Skip("no HTTP/2 event loop here")
	}
	body := bytes.Repeat([]byte("x"), 2*sendBufferMax())
	defer func(q int) { h2QueueBody = q }(h2QueueBody)
	h2QueueBody = len(body)
	for _, p := range h2Protocols {
		for _, policy := range []string{ResendUnwritten, ResendNever} {
			t.Run(p.name+"/"+policy, func(t *testing.T) {
				s := newStallingH2(t, p.tls, 2, 300*time.Millisecond)
				ms := time.Millisecond
				cfg := Config{Protocol: p.proto, TLS: s.TLS, Epoll: true, Resend: policy, Method: http.MethodPost, Timeout: 10 * time.Second,
					Bodies: [][]byte{[]byte("x"), body, body, body, body}}
				rec, ents := h2Run(t, s.URL, cfg, &offsets{d: []time.Duration{0, 200 * ms, 200 * ms, 200 * ms, 200 * ms}})
				c := checkIdentity(t, rec, 5)
				for _, e := range ents {
					// What goes again goes at once, not at the loop's next
					// deadline check, the first request's: Timeout in.
					if e.Done >= cfg.Timeout {
						t.Errorf("request %d ended at %v, after the first deadline check (%v)", e.Seq, e.Done, cfg.Timeout)
					}
				}
				w := rec.Wire()
				if read := s.read.Load(); w.Attempts != read {
					t.Errorf("wire.attempts %d, the server read %d streams", w.Attempts, read)
				}
				want := struct{ completed, unwritten int64 }{4, 3}
				if policy == ResendNever {
					want.completed, want.unwritten = 1, 0
				}
				if c.Completed != want.completed || c.Completed != s.answered.Load() || w.ResendsUnwritten != want.unwritten || w.ResendsWritten != 0 {
					t.Errorf("counts %+v, wire %+v, the server answered %d: want %d completed, %d sent again unwritten",
						c, w, s.answered.Load(), want.completed, want.unwritten)
				}
				t.Logf("server read %d, answered %d; counts %+v, kinds %v, wire %+v", s.read.Load(), s.answered.Load(), c, rec.ErrorKinds(), w)
			})
		}
	}
}

// sendBufferMax is the most a TCP socket's send buffer grows to here
// (tcp_wmem's third field), at least 4 MiB. A body of 16 MiB once fitted
// in loopback's buffers where tcp_rmem let the unread receiver's grow to
// 32 MiB, and every HEADERS after it counted as written.
func sendBufferMax() int {
	n := 4 << 20
	if b, err := os.ReadFile("/proc/sys/net/ipv4/tcp_wmem"); err == nil {
		if f := strings.Fields(string(b)); len(f) == 3 {
			if v, err := strconv.Atoi(f[2]); err == nil {
				n = max(n, v)
			}
		}
	}
	return n
}
