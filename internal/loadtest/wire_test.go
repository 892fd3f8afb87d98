package loadtest

import (
	"bufio"
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"

	"github.com/openload/openload/internal/engine"
	"github.com/openload/openload/internal/recorder"
	"github.com/openload/openload/schedule"
)

// The wire test: one connection-level fault, one name, one outcome, on every
// client.
//
// A scripted loopback server (rawtcp) reads each request head (and, unless
// the script says otherwise, its body) and answers with a script of byte
// writes, pauses, and a FIN or an RST at a chosen point. Every client
// (epoll, lean, net/http) runs the same short schedule against each script,
// and must report the same outcome, status and error kind for it; and the
// attempts the per-request log counts must add up to the request heads the
// server read, whatever the client re-sent.
//
// go test -run TestWire -v ./internal/loadtest -wire-table prints the table
// of every case and client.

var wireTable = flag.Bool("wire-table", false, "print the wire test's table of outcomes (markdown)")

// wireStep is one thing the server does after reading a request.
type wireStep struct {
	write string        // bytes to write
	sleep time.Duration // pause
	fin   bool          // close (FIN)
	rst   bool          // close with an RST (SO_LINGER 0)
	hold  bool          // wait until the server closes (never answer)
}

func w(s string) wireStep            { return wireStep{write: s} }
func pause(d time.Duration) wireStep { return wireStep{sleep: d} }

var (
	fin  = wireStep{fin: true}
	rst  = wireStep{rst: true}
	hold = wireStep{hold: true}
)

// wireCase is one scripted server and what every client must report.
type wireCase struct {
	name   string
	method string
	body   int         // request body bytes
	header http.Header // request headers beyond the defaults
	// script answers the n-th request (0-based) of a connection; nil steps
	// answer it plainly, keeping the connection.
	script func(n int) []wireStep
	// noBody: the server reads the head only, not the request body.
	noBody bool
	// bodyFirst: steps run only after the body was read (the default);
	// with earlyReply the first steps run before the body is read, and
	// the body is then read (unless noBody).
	earlyReply []wireStep

	timeout time.Duration // per request; 0: 5 s

	// want, per request
	outcome recorder.Outcome
	status  int                // of a completed request
	kind    recorder.ErrorKind // of a failed one
	// head: the status of the whole head the server wrote before the
	// request failed; the result keeps it apart (FailedStatus) for every
	// request. 0: no head came, FailedStatus is empty.
	head int
	// mixed, for the keep-alive cases on one connection: the outcomes
	// (as wireResult.outcomes) and the request heads the server reads.
	mixed map[string]int64
	heads int64
	// silent: the server may not read every attempt (see the case); the
	// surplus must be re-sends.
	silent bool
}

const okResponse = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"

var (
	resentGET  = map[string]int64{"completed 200": wireRequests}
	failedPOST = map[string]int64{"completed 200": wireRequests / 2, "reset": wireRequests / 2}
)

func always(steps ...wireStep) func(int) []wireStep {
	return func(int) []wireStep { return steps }
}

// secondFails answers the first request of each connection and treats the
// second with steps: a keep-alive connection that fails when reused.
func secondFails(steps ...wireStep) func(int) []wireStep {
	return func(n int) []wireStep {
		if n == 0 {
			return []wireStep{w(okResponse)}
		}
		return steps
	}
}

func wireCases() []wireCase {
	mb := 1 << 20
	cont := http.Header{"Expect": {"100-continue"}}
	return []wireCase{
		{name: "plain 200", script: always(w(okResponse)), outcome: recorder.Completed, status: 200},
		{name: "FIN before the response", script: always(fin), outcome: recorder.Failed, kind: recorder.KindReset},
		{name: "RST before the response", script: always(rst), outcome: recorder.Failed, kind: recorder.KindReset},
		{name: "partial status line, FIN", script: always(w("HTTP/1.1 2"), pause(5*time.Millisecond), fin), outcome: recorder.Failed, kind: recorder.KindReset},
		{name: "partial status line, RST", script: always(w("HTTP/1.1 2"), pause(5*time.Millisecond), rst), outcome: recorder.Failed, kind: recorder.KindReset},
		{name: "partial head, FIN", script: always(w("HTTP/1.1 200 OK\r\nContent-Len"), pause(5*time.Millisecond), fin), outcome: recorder.Failed, kind: recorder.KindReset},
		{name: "partial head, RST", script: always(w("HTTP/1.1 200 OK\r\nContent-Len"), pause(5*time.Millisecond), rst), outcome: recorder.Failed, kind: recorder.KindReset},
		{name: "head, no body, FIN", script: always(w("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n"), pause(5*time.Millisecond), fin), outcome: recorder.Failed, kind: recorder.KindReset, head: 200},
		{name: "head, 10 of 100 body bytes, FIN", script: always(w("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n0123456789"), pause(5*time.Millisecond), fin), outcome: recorder.Failed, kind: recorder.KindReset, head: 200},
		{name: "head, 10 of 100 body bytes, RST", script: always(w("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n0123456789"), pause(5*time.Millisecond), rst), outcome: recorder.Failed, kind: recorder.KindReset, head: 200},
		{name: "chunked body cut mid-chunk, FIN", script: always(w("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\na\r\n01234"), pause(5*time.Millisecond), fin), outcome: recorder.Failed, kind: recorder.KindReset, head: 200},
		{name: "chunked body, no last chunk, FIN", script: always(w("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n"), pause(5*time.Millisecond), fin), outcome: recorder.Failed, kind: recorder.KindReset, head: 200},
		{name: "chunked body, whole", script: always(w("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n")), outcome: recorder.Completed, status: 200},
		{name: "close-delimited body, FIN", script: always(w("HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nall of it"), fin), outcome: recorder.Completed, status: 200},
		{name: "HTTP/1.0 close-delimited body, FIN", script: always(w("HTTP/1.0 200 OK\r\n\r\nall of it"), fin), outcome: recorder.Completed, status: 200},
		{name: "close-delimited body, RST", script: always(w("HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nsome of it"), pause(5*time.Millisecond), rst), outcome: recorder.Failed, kind: recorder.KindReset, head: 200},
		{name: "204 with Connection: close, FIN after", script: always(w("HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n"), fin), outcome: recorder.Completed, status: 204},
		// A server that closes every connection after answering without
		// saying so races the client's next request: one written before
		// the FIN arrives is never read, by any client. The clients peek
		// (lean), watch (epoll, net/http) and re-send (GET), so the
		// request completes; only such a re-sent request can have an
		// attempt the server never read (silent).
		{name: "200, then a silent FIN", script: always(w(okResponse), fin), outcome: recorder.Completed, status: 200, silent: true},
		{name: "bytes after the body", script: always(w(okResponse + "junk")), outcome: recorder.Completed, status: 200},
		{name: "two different Content-Lengths", script: always(w("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\nok")), outcome: recorder.Failed, kind: recorder.KindOther},
		{name: "malformed status line", script: always(w("HTTP/1.1 ok-ish\r\n\r\n")), outcome: recorder.Failed, kind: recorder.KindOther},
		{name: "not HTTP at all", script: always(w("SSH-2.0-OpenSSH_9.2\r\n"), fin), outcome: recorder.Failed, kind: recorder.KindOther},
		{name: "bad chunk size", script: always(w("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nok\r\n0\r\n\r\n")), outcome: recorder.Failed, kind: recorder.KindOther, head: 200},
		{name: "103 Early Hints, then 200", script: always(w("HTTP/1.1 103 Early Hints\r\nLink: </a.css>\r\n\r\n"), pause(2*time.Millisecond), w(okResponse)), outcome: recorder.Completed, status: 200},
		{name: "100 Continue, then FIN", script: always(w("HTTP/1.1 100 Continue\r\n\r\n"), pause(5*time.Millisecond), fin), outcome: recorder.Failed, kind: recorder.KindReset},
		{
			// The server says go on at once and only then reads the body,
			// slowly enough that the client is still writing it when the
			// 100 arrives.
			name: "Expect: 100-continue, 8 MB body, 100 at once", method: http.MethodPost, body: 8 * mb, header: cont,
			earlyReply: []wireStep{w("HTTP/1.1 100 Continue\r\n\r\n"), pause(50 * time.Millisecond)},
			script:     always(w(okResponse)), outcome: recorder.Completed, status: 200,
		},
		{
			// Closed with the body unread, the socket sends RST, and the
			// client's write of the body fails: net/http reports that
			// unless it read the 413 first. 200 ms lets a loaded client
			// read it first (with 5 ms, under -race in .ci/run, net/http
			// once reported a reset for 1 of 8).
			name: "1 MB body, 413 before reading it, then FIN", method: http.MethodPost, body: mb, noBody: true,
			script:  always(w("HTTP/1.1 413 Content Too Large\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"), pause(200*time.Millisecond), fin),
			outcome: recorder.Completed, status: 413,
		},
		{name: "accepts, never answers", script: always(hold), timeout: 200 * time.Millisecond, outcome: recorder.TimedOut, kind: recorder.KindTimeout},
		// The head must be read before the timeout for its status to be
		// kept: with 200 ms, under -race in .ci/run with every case in
		// parallel, net/http once read 7 heads of 8; 1 s leaves room.
		{name: "head, then a stalled body", script: always(w("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n01"), hold), timeout: time.Second, outcome: recorder.TimedOut, kind: recorder.KindTimeout, head: 200},
		// Keep-alive connections that fail when reused, on one connection:
		// each connection's first request is answered and its second read
		// and dropped. A GET is re-sent on a new connection (whose first it
		// is) and counted: 1 + 2 × 7 request heads. A POST that was written
		// is never re-sent: every second one fails.
		{name: "reused connection: GET read, then FIN", script: secondFails(fin), mixed: resentGET, heads: 15},
		{name: "reused connection: POST read, then FIN", method: http.MethodPost, body: 7, script: secondFails(fin), mixed: failedPOST, heads: 8},
		{name: "reused connection: GET read, then RST", script: secondFails(rst), mixed: resentGET, heads: 15},
		{name: "reused connection: POST read, then RST", method: http.MethodPost, body: 7, script: secondFails(rst), mixed: failedPOST, heads: 8},
	}
}

// wireServer runs c's script on every connection and counts the request
// heads it reads.
type wireServer struct {
	heads atomic.Int64
	addr  string
}

func startWireServer(t *testing.T, c wireCase) *wireServer {
	ws := &wireServer{}
	ws.addr = newFaultServer(t, func(conn net.Conn, done <-chan struct{}) {
		br := bufio.NewReader(conn)
		for n := 0; ; n++ {
			req, err := http.ReadRequest(br)
			if err != nil {
				return
			}
			ws.heads.Add(1)
			if !runSteps(conn, c.earlyReply, done) {
				return
			}
			if !c.noBody {
				if _, err := io.Copy(io.Discard, req.Body); err != nil {
					return
				}
			}
			steps := []wireStep{w(okResponse)}
			if c.script != nil {
				steps = c.script(n)
			}
			if !runSteps(conn, steps, done) {
				return
			}
		}
	})
	return ws
}

// runSteps plays steps on conn; it reports whether the connection is still
// open.
func runSteps(conn net.Conn, steps []wireStep, done <-chan struct{}) bool {
	for _, s := range steps {
		switch {
		case s.write != "":
			if _, err := io.WriteString(conn, s.write); err != nil {
				return false
			}
		case s.sleep > 0:
			if !sleepOr(s.sleep, done) {
				return false
			}
		case s.fin:
			conn.Close()
			return false
		case s.rst:
			resetConn(conn)
			return false
		case s.hold:
			<-done
			return false
		}
	}
	return true
}

// wireClients are the clients the wire test compares.
var wireClients = []struct {
	name        string
	lean, epoll bool
}{{"epoll", true, true}, {"lean", true, false}, {"net/http", false, false}}

// wireResult is what one client reported for one case.
type wireResult struct {
	outcomes map[string]int64 // outcome (and status or kind) → requests
	partial  map[string]int64 // the result's FailedStatus
	attempts int64            // the log's attempts column, summed
	resends  int64
	heads    int64 // what the server read
	client   string
}

func (r wireResult) String() string {
	keys := make([]string, 0, len(r.outcomes))
	for k := range r.outcomes {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s ×%d", k, r.outcomes[k]))
	}
	return strings.Join(parts, ", ")
}

const wireRequests = 8

func runWire(t *testing.T, c wireCase, lean, epoll bool) wireResult {
	ws := startWireServer(t, c)
	u, err := url.Parse("http://" + ws.addr + "/")
	if err != nil {
		t.Fatal(err)
	}
	method := c.method
	if method == "" {
		method = http.MethodGet
	}
	timeout := c.timeout
	if timeout == 0 {
		timeout = 5 * time.Second
	}
	conns := 2
	if c.mixed != nil {
		conns = 1 // one connection: the order of its requests is fixed
	}
	var logBuf bytes.Buffer
	logw := recorder.NewLogWriter(&logBuf)
	res, _, err := Run(context.Background(), Options{
		Config: engine.Config{
			URL:         u,
			Method:      method,
			Header:      c.header,
			Body:        bytes.Repeat([]byte("b"), c.body),
			Connections: conns,
			Timeout:     timeout,
			Drain:       10 * time.Second,
			Lean:        lean,
			Epoll:       epoll,
		},
		Schedule: schedule.Spec{Kind: schedule.Constant, Rate: 200, Duration: wireRequests * 5 * time.Millisecond},
		Log:      logw,
	})
	if err != nil {
		t.Fatal(err)
	}
	out := wireResult{outcomes: map[string]int64{}, heads: ws.heads.Load(), client: res.Config.Client}
	if want := wantClient(lean, epoll); out.client != want {
		t.Errorf("client %s, want %s", out.client, want)
	}
	if res.Wire == nil {
		t.Fatal("the result has no wire counts")
	}
	out.resends = res.Wire.Resends
	out.partial = res.FailedStatus
	lr := recorder.NewLogReader(&logBuf, "log")
	for lr.Scan() {
		e := lr.Entry()
		out.attempts += int64(e.Attempts)
	}
	if err := lr.Err(); err != nil {
		t.Fatal(err)
	}
	if res.Wire.Attempts != out.attempts {
		t.Errorf("the result counts %d attempts, the log %d", res.Wire.Attempts, out.attempts)
	}
	for k, n := range res.Status {
		out.outcomes["completed "+k] += n
	}
	for k, n := range res.ErrorKinds {
		out.outcomes[k] += n
	}
	if c := res.Counts; c.Scheduled != wireRequests || !c.Balanced() {
		t.Errorf("counts %+v: want %d scheduled, balanced", c, wireRequests)
	}
	return out
}

func TestWire(t *testing.T) {
	cases := wireCases()
	results := make([][]wireResult, len(cases))
	var mu sync.Mutex
	t.Run("cases", func(t *testing.T) {
		for i, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				t.Parallel()
				row := make([]wireResult, len(wireClients))
				for j, cl := range wireClients {
					row[j] = runWire(t, c, cl.lean, cl.epoll)
				}
				mu.Lock()
				results[i] = row
				mu.Unlock()
				checkWire(t, c, row)
			})
		}
	})
	if *wireTable {
		printWireTable(os.Stdout, cases, results)
	}
}

// checkWire compares one case's results across clients and with what the
// case wants.
func checkWire(t *testing.T, c wireCase, row []wireResult) {
	t.Helper()
	for j, r := range row {
		name := wireClients[j].name
		switch {
		case c.silent && (r.attempts < r.heads || r.attempts-r.heads > r.resends):
			t.Errorf("%s: the log counts %d attempts with %d re-sends, the server read %d request heads", name, r.attempts, r.resends, r.heads)
		case !c.silent && r.attempts != r.heads:
			t.Errorf("%s: the log counts %d attempts, the server read %d request heads", name, r.attempts, r.heads)
		}
		partial := map[string]int64{}
		if c.head != 0 {
			partial[strconv.Itoa(c.head)] = wireRequests
		}
		if !maps2Equal(r.partial, partial) {
			t.Errorf("%s: heads of failed responses %v, want %v", name, r.partial, partial)
		}
		if c.mixed != nil {
			if !maps2Equal(r.outcomes, c.mixed) || r.heads != c.heads {
				t.Errorf("%s: %v, %d request heads; want %v, %d", name, r, r.heads, c.mixed, c.heads)
			}
			continue
		}
		want := c.kind.String()
		if c.outcome == recorder.Completed {
			want = fmt.Sprintf("completed %d", c.status)
		}
		if r.outcomes[want] != wireRequests || len(r.outcomes) != 1 {
			t.Errorf("%s: %v, want %s ×%d", name, r, want, wireRequests)
		}
	}
	for j := 1; j < len(row); j++ {
		if !maps2Equal(row[0].outcomes, row[j].outcomes) {
			t.Errorf("clients disagree: %s %v, %s %v", wireClients[0].name, row[0], wireClients[j].name, row[j])
		}
	}
}

func maps2Equal(a, b map[string]int64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func printWireTable(out io.Writer, cases []wireCase, results [][]wireResult) {
	fmt.Fprintf(out, "| case |")
	for _, cl := range wireClients {
		fmt.Fprintf(out, " %s | attempts / heads (re-sends) |", cl.name)
	}
	fmt.Fprintln(out)
	fmt.Fprintln(out, "| --- |"+strings.Repeat(" --- | ---: |", len(wireClients)))
	for i, c := range cases {
		if results[i] == nil {
			continue
		}
		fmt.Fprintf(out, "| %s |", c.name)
		for _, r := range results[i] {
			fmt.Fprintf(out, " %s | %d / %d (%d) |", r, r.attempts, r.heads, r.resends)
		}
		fmt.Fprintln(out)
	}
}

// TestWireHTTP2RefusedStream: an HTTP/2 server that refuses the first
// stream of every connection (RST_STREAM REFUSED_STREAM) and answers the
// others. A refused stream was not processed (RFC 9113 §8.7; nginx logs
// nothing for one), so it is no attempt; x/net/http2's client re-sends the
// request on its own, and that stream is. The log's attempts add up to the
// streams the server processed: the HEADERS it read less those it refused.
func TestWireHTTP2RefusedStream(t *testing.T) {
	var heads, refused atomic.Int64
	addr := newFaultServer(t, func(c net.Conn, _ <-chan struct{}) {
		first := true
		h2Fault(c, func(fr *http2.Framer, stream uint32) bool {
			heads.Add(1)
			if first {
				first = false
				refused.Add(1)
				return fr.WriteRSTStream(stream, http2.ErrCodeRefusedStream) == nil
			}
			var block bytes.Buffer
			enc := hpack.NewEncoder(&block)
			enc.WriteField(hpack.HeaderField{Name: ":status", Value: "200"})
			enc.WriteField(hpack.HeaderField{Name: "content-length", Value: "0"})
			return fr.WriteHeaders(http2.HeadersFrameParam{StreamID: stream, BlockFragment: block.Bytes(), EndStream: true, EndHeaders: true}) == nil
		})
	})
	u, err := url.Parse("http://" + addr + "/")
	if err != nil {
		t.Fatal(err)
	}
	var logBuf bytes.Buffer
	res, _, err := Run(context.Background(), Options{
		Config:   engine.Config{URL: u, Protocol: engine.H2C, Connections: 2, Timeout: 5 * time.Second, Drain: 10 * time.Second},
		Schedule: schedule.Spec{Kind: schedule.Constant, Rate: 200, Duration: wireRequests * 5 * time.Millisecond},
		Log:      recorder.NewLogWriter(&logBuf),
	})
	if err != nil {
		t.Fatal(err)
	}
	var attempts int64
	lr := recorder.NewLogReader(&logBuf, "log")
	for lr.Scan() {
		attempts += int64(lr.Entry().Attempts)
	}
	if lr.Err() != nil {
		t.Fatal(lr.Err())
	}
	c, wr := res.Counts, res.Wire
	if c.Completed != wireRequests || wr == nil {
		t.Fatalf("counts %+v, kinds %v, wire %+v: want %d completed", c, res.ErrorKinds, wr, wireRequests)
	}
	processed := heads.Load() - refused.Load()
	if refused.Load() == 0 || attempts != processed || wr.Attempts != attempts || wr.Attempts != c.Completed {
		t.Errorf("log attempts %d, wire %+v; the server read %d HEADERS and refused %d", attempts, *wr, heads.Load(), refused.Load())
	}
	t.Logf("%d requests: log attempts %d, wire %+v; the server read %d HEADERS and refused %d", c.Scheduled, attempts, *wr, heads.Load(), refused.Load())
}
