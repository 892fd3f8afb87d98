package main

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"text/template"
	"time"

	"github.com/openload/openload/internal/recorder"
	"github.com/openload/openload/result"
)

// TestNginx: nginx as the judge of openload's counts (DESIGN.md, "Judged
// from the outside"). nginx logs one line for every request it read; a
// count openload reports is true only when it agrees with that log.
//
// Each case × client starts its own nginx (Debian's package, /usr/sbin/
// nginx; .ci/run installs it) on a loopback port picked here, with its
// prefix, configuration (testdata/nginx/nginx.conf.tmpl), error log and
// access log in the subtest's directory, runs openload against it through
// the CLI (flags, result file and per-request log as a user gets them),
// stops it, and compares what each side counted:
//
//   - the accounting identity: completed + errors + timeouts + unfinished
//     == scheduled == expected, and one log line per request;
//   - the log's attempts column summed == the result's wire.attempts;
//   - the documented bound (DESIGN.md, "Accounting: nothing vanishes"),
//     on every case and client: attempts − unanswered_closed −
//     unanswered_silent ≤ the lines nginx logged ≤ attempts, and
//     attempts == lines where no race a client cannot see through is
//     possible (nginxWire);
//   - the statuses: the response heads openload saw (completed, by
//     status, every attempt's when retrying; and the partial ones,
//     failed_status) are, status by status, the lines nginx logged but
//     its 444s (nginxStatuses);
//   - no POST read twice (the --stamp-header value of a POST on two
//     lines), nginx's POST lines ≤ the POSTs scheduled, equal when every
//     request was answered (nginxPosts);
//   - per case, what its server does must show (nginxCase.check).
//
// The table of every case and client, the figures each side counted, is
// printed with t.Logf: go test -v -run TestNginx ./cmd/openload.
//
// It runs here rather than in internal/loadtest because the judge should
// judge what a user gets: the flags as typed, the result file and the log
// as written, the verdict and exit code (the 444 case is about the
// verdict). Without nginx it skips; with OPENLOAD_INTEROP set (.ci/run) it
// fails instead. Network: loopback only (nginx, and the slow upstream of
// the 504 and 499 cases, a server of the test's); each run half a second
// (the races 1.1 s), each with its own nginx, so the runs go in parallel
// (go test's -parallel, GOMAXPROCS by default: two on 2 cores); about
// 50 s in all on 2 cores.
func TestNginx(t *testing.T) {
	bin := nginxBinary
	if _, err := os.Stat(bin); err != nil {
		if os.Getenv(interopRequired) != "" {
			t.Fatalf("%s: %v, and %s is set (apt-get install nginx)", bin, err, interopRequired)
		}
		t.Skipf("%s: %v: .ci/run installs it (apt-get install nginx; set %s=1 to fail instead)", bin, err, interopRequired)
	}
	if testing.Short() {
		t.Skip("-short: about 30 s of runs against nginx")
	}
	cert, key := selfSigned(t, t.TempDir())
	var (
		mu   sync.Mutex
		rows = map[string]nginxRow{}
		keys []string
	)
	// The group returns when its parallel runs have ended.
	t.Run("runs", func(t *testing.T) {
		for _, c := range nginxCases {
			for _, cl := range nginxClients {
				if c.clients != nil && !c.clients(cl) {
					continue
				}
				name := c.name + "/" + cl.name
				keys = append(keys, name)
				t.Run(name, func(t *testing.T) {
					t.Parallel()
					row := runNginx(t, c, cl, cert, key)
					mu.Lock()
					rows[name] = row
					mu.Unlock()
				})
			}
		}
	})
	var table []nginxRow
	for _, k := range keys {
		if r, ok := rows[k]; ok {
			table = append(table, r)
		}
	}
	t.Logf("nginx-judged runs:\n%s", nginxTable(table))
}

const nginxBinary = "/usr/sbin/nginx" // Debian's package nginx (1.22 in bookworm)

// stampHeader carries each request's scheduled time (--stamp-header), which
// nginx logs: the same value on two lines is one request read twice.
const stampHeader = "X-Openload-Stamp"

// nginxClient is one of openload's clients, and how nginx must listen for
// it.
type nginxClient struct {
	name   string
	args   []string
	scheme string
	listen string // after the address: "", "http2" (h2c), "ssl http2"
	h2     bool
	own    bool // one of openload's own clients, which take --resend
}

var nginxClients = []nginxClient{
	{name: "epoll", scheme: "http", own: true}, // the default on Linux (not with --retries: then lean)
	{name: "lean", args: []string{"--no-epoll"}, scheme: "http", own: true},
	{name: "net/http", args: []string{"--net-http"}, scheme: "http"},
	// nginx 1.22 serves HTTP/2 without TLS, with prior knowledge only, on
	// a listen socket marked http2.
	{name: "h2c", args: []string{"--h2c"}, scheme: "http", listen: "http2", h2: true, own: true},
	{name: "h2 TLS", args: []string{"--http2", "--insecure"}, scheme: "https", listen: "ssl http2", h2: true, own: true},
	// x/net/http2's transport (h2.go), without --retries: with them
	// every HTTP/2 run takes it.
	{name: "x/net h2c", args: []string{"--h2c", "--net-http"}, scheme: "http", listen: "http2", h2: true},
	{name: "x/net h2 TLS", args: []string{"--http2", "--insecure", "--net-http"}, scheme: "https", listen: "ssl http2", h2: true},
}

// Which clients a case runs on, beside all of them (nil).
func ownClients(cl nginxClient) bool { return cl.own }
func h2Clients(cl nginxClient) bool  { return cl.h2 }

// plainAndOneH2 are the HTTP/1.1 clients and one HTTP/2 client of each
// kind, for the cases whose runs are the longest.
func plainAndOneH2(cl nginxClient) bool { return !cl.h2 || cl.name == "h2c" || cl.name == "x/net h2c" }

// nginxConf fills testdata/nginx/nginx.conf.tmpl.
type nginxConf struct {
	Dir, User, Listen, Cert, Key        string
	KeepaliveTimeout, KeepaliveRequests string
	LimitRate                           string // limit_req_zone's rate, "" for none
	LimitStatus                         string // limit_req_status, "" for its default (503)
	Drop                                string // the share answered 444, "" for none
	MaxBody                             string // client_max_body_size, "" for its default (1m)
	// Upstream, when set, is the address nginx proxies every request to
	// (the test's slowUpstream), with proxy_read_timeout ReadTimeout.
	Upstream, ReadTimeout string
}

// nginxCase is one server behaviour and the load sent to it.
type nginxCase struct {
	name string
	conf nginxConf // the case's fields: keep-alive, limit_req, 444
	// clients, when set, picks the clients the case runs on.
	clients func(cl nginxClient) bool
	// args are openload's flags beyond the common ones (runNginx):
	// the load shape, method, retries.
	args []string
	// arrivals, when set, are the offsets of a --arrivals file written
	// for the run.
	arrivals []time.Duration
	post     bool // every request is a POST (postArgs among args)
	// stopAfter, when set, stops nginx (nginx -s quit) this long after
	// openload started; with kill, kills it (SIGKILL to its master and
	// worker) and starts it again on the same port kill later.
	stopAfter time.Duration
	kill      time.Duration
	// sigint, when set, runs openload as a process of its own and sends
	// it SIGINT this long after it started.
	sigint time.Duration
	// upstream: nginx proxies to a server of the test's (slowUpstream),
	// which holds every slow-th request for a second (0: none).
	upstream bool
	slow     int
	// wire is the relation between openload's attempts and nginx's lines
	// (nginxWire) for this client.
	wire func(cl nginxClient) wireRule
	// check, when set, asserts what the case's server does must show.
	check func(r *nginxRow, fail failFunc)
	// showReport logs the report's wire, error, check and result lines.
	showReport bool
}

// wireRule is how the attempts openload counts (wire.attempts, and the
// log's attempts column, which must always equal it) relate to the request
// lines nginx logged. Every run is held to the documented bound
// (documentedBound); wireExact holds it to equality besides.
type wireRule int

const (
	// wireExact: nothing can be written that nginx does not read.
	wireExact wireRule = iota
	// wireBound: a race no client can see through is possible: nginx
	// closes a connection (an idle keep-alive timeout, keepalive_requests
	// on HTTP/2, a graceful stop, a kill) just as a request goes onto it;
	// the request is written and never read. See documentedBound.
	wireBound
)

func exact(nginxClient) wireRule { return wireExact }
func bound(nginxClient) wireRule { return wireBound }

// boundOnH2 is exact on HTTP/1.1 and the bound on HTTP/2, where nginx's
// GOAWAY can cross a stream already written.
func boundOnH2(cl nginxClient) wireRule {
	if cl.h2 {
		return wireBound
	}
	return wireExact
}

// documentedBound is the bound DESIGN.md ("Accounting: nothing vanishes")
// and REFERENCE.md document, on the result's wire:
//
//	attempts − unanswered_closed − unanswered_silent ≤ read by the server ≤ attempts
//
// Every written attempt that got a byte of an answer was read; one that
// got none (closed under, or silent until its timeout or the drain) may
// not have been. This is the one place to change when the documented
// bound changes. (Until issue 50 this test held runs to a looser one,
// lines + re-sends + failed written requests, under which net/http's
// written GET whose re-send was refused passed uncounted.)
func documentedBound(w *result.Wire, lines int64) error {
	lo := w.Attempts - w.Closed - w.Silent
	if !w.Counted || lines < lo || lines > w.Attempts {
		return fmt.Errorf("nginx read %d: want attempts %d − unanswered_closed %d − unanswered_silent %d = %d ≤ %d ≤ attempts %d (counted %v)",
			lines, w.Attempts, w.Closed, w.Silent, lo, lines, w.Attempts, w.Counted)
	}
	return nil
}

// nginxWire checks the result's wire against nginx's lines by rule.
func nginxWire(rule wireRule, w *result.Wire, lines int64) error {
	if err := documentedBound(w, lines); err != nil {
		return err
	}
	if rule == wireExact && w.Attempts != lines {
		return fmt.Errorf("wire.attempts %d, nginx read %d requests: want equal", w.Attempts, lines)
	}
	return nil
}

// The common load: 400/s for 0.5 s, 200 requests.
var (
	load     = []string{"--rate", "400", "-d", "500ms"}
	postArgs = []string{"-m", "POST", "--body", `{"judge":"nginx"}`}
	// A body of 1 KiB, past the 512 bytes of the 413 case's nginx.
	kib = `{"judge":"` + strings.Repeat("n", 1024-12) + `"}`
)

// withLoad is load followed by more flags.
func withLoad(more ...string) []string { return append(load[:len(load):len(load)], more...) }

// raceArrivals are the replayed arrivals of the keep-alive race: bursts of
// raceBurst requests 150 µs apart, the bursts 99.5-102 ms apart, around
// keepalive_timeout 100ms (nginx's timer fires at 100-102 ms, its clock
// being in whole ms), so that now and then a request goes onto a
// connection nginx is closing as it is written. A burst uses several
// connections at once, each reused by the next burst: more chances of a
// race per second of run.
const raceBurst = 8

func raceArrivals() []time.Duration {
	var offs []time.Duration
	var at time.Duration
	for i := range 12 {
		for j := range raceBurst {
			offs = append(offs, at+time.Duration(j)*150*time.Microsecond)
		}
		at += 99500*time.Microsecond + time.Duration(i%6)*500*time.Microsecond
	}
	return offs
}

// drops444 checks a case of nginx's return 444: nginx reads a share of the
// requests and closes the connection without an answer; it logs them, so
// the count is exact. Each was re-sent or its request's outcome, an error,
// and openload counted each as what it was: a written attempt closed
// under before a byte of its answer (on HTTP/2, nginx resets the stream:
// an error of kind reset, not a closed connection). written is whether a
// re-send of a written attempt is allowed.
func drops444(written bool) func(r *nginxRow, fail failFunc) {
	return func(r *nginxRow, fail failFunc) {
		n444 := r.nginxStatus["444"]
		if n444 == 0 {
			fail("setup", "nginx answered no request with 444")
			return
		}
		w := r.res.Wire
		if c := r.res.Counts; c.Errors+w.Resends != n444 || c.Timeouts != 0 {
			fail("444 seen", "nginx dropped %d requests it read (444), openload has %d errors (%v) + %d re-sends, %d timeouts",
				n444, c.Errors, r.res.ErrorKinds, w.Resends, c.Timeouts)
		}
		if !written && w.ResendsWritten != 0 {
			fail("444 not re-sent", "%d written attempts re-sent: want none (wire %+v)", w.ResendsWritten, *w)
		}
		if !r.h2 && (!w.Counted || w.Closed != n444) {
			fail("444 counted", "nginx dropped %d requests it read (444); openload counts %d attempts closed before an answer (wire %+v)", n444, w.Closed, *w)
		}
		if w.Resends > 0 && !nonPassCheck(r.res, resendWords) {
			fail("444 shown", "nginx dropped %d of %d requests it read (444); openload re-sent %d of them and no check says so (exit %d, checks %v)",
				n444, len(r.lines), w.Resends, r.code, r.res.Checks)
		}
	}
}

// statusSeen: nginx answered some requests with status, and openload saw
// each (nginxStatuses checks they are equal).
func statusSeen(status string) func(r *nginxRow, fail failFunc) {
	return func(r *nginxRow, fail failFunc) {
		if r.nginxStatus[status] == 0 || r.res.Status[status] == 0 {
			fail("setup", "nginx answered %s %d times, openload saw %d: want some", status, r.nginxStatus[status], r.res.Status[status])
		}
	}
}

var nginxCases = []nginxCase{
	{
		name: "GET", args: load, wire: exact,
		check: healthy,
	},
	{
		// Five times the common rate: 1,000 requests in 0.5 s.
		name: "GET 2000/s", args: []string{"--rate", "2000", "-d", "500ms"}, wire: exact,
		check: healthy,
	},
	{
		name: "POST", args: withLoad(postArgs...), post: true, wire: exact,
		check: healthy,
	},
	{
		// Request bodies of 1 KiB, read whole (nginx proxies them; a
		// body it answers without proxying it discards, uncounted):
		// nginx's request_length is at least the body on every line.
		name: "POST 1 KiB", conf: nginxConf{ReadTimeout: "5s"}, upstream: true, args: withLoad("-m", "POST", "--body", kib), post: true, wire: exact,
		check: func(r *nginxRow, fail failFunc) {
			healthy(r, fail)
			for _, l := range r.lines {
				if n, err := strconv.Atoi(l.requestLength); err != nil || n < len(kib) {
					fail("body", "nginx read a request of %s bytes: want the %d of the body at least", l.requestLength, len(kib))
					return
				}
			}
		},
	},
	{
		// client_max_body_size 512: every 1 KiB body is refused, 413.
		name: "POST 1 KiB, 413", conf: nginxConf{MaxBody: "512"}, args: withLoad("-m", "POST", "--body", kib), post: true,
		wire: exact, check: statusSeen("413"),
	},
	{
		// keepalive_timeout 100ms, bursts of requests about 100 ms
		// apart (raceArrivals): nginx closes an idle connection as the
		// next request is written onto it, now and then.
		name: "keep-alive race", conf: nginxConf{KeepaliveTimeout: "100ms"},
		arrivals: raceArrivals(), args: []string{"-c", strconv.Itoa(raceBurst)}, wire: bound,
	},
	{
		// The same race with POSTs: one written and lost with its
		// connection is a reset, never sent again (and never read
		// twice), and one of unanswered_closed.
		name: "keep-alive race POST", conf: nginxConf{KeepaliveTimeout: "100ms"}, post: true,
		arrivals: raceArrivals(), args: append([]string{"-c", strconv.Itoa(raceBurst)}, postArgs...), wire: bound,
	},
	{
		// The third request on a connection is answered with
		// Connection: close (HTTP/1.1) or followed by a GOAWAY (HTTP/2,
		// where a stream sent before it arrives is not read: the
		// bound).
		name: "keepalive_requests 3", conf: nginxConf{KeepaliveRequests: "3"}, args: load,
		wire: boundOnH2, check: healthy,
	},
	{
		// A GOAWAY every five streams at 2,000/s: requests bounce off
		// several in a row. x/net's own loop waits 1, 2, 4 s before its
		// 2nd, 3rd, 4th re-sends, past the 5 s timeout after the 4th:
		// it left 10–45 of 1,000 to the drain (issue 50), here 4–50 of
		// 1,000 timed out in 19 of 20 runs. Every request must complete.
		// (Not the exit code: 200 TLS dials one at a time under the
		// bounces can delay sends past the send-delay check's budget on
		// a busy machine, which is about the machine.)
		name: "keepalive_requests 5, 2000/s", conf: nginxConf{KeepaliveRequests: "5"}, clients: h2Clients,
		args: []string{"--rate", "2000", "-d", "500ms"}, wire: bound,
		check: func(r *nginxRow, fail failFunc) {
			c := r.res.Counts
			if c.Completed != c.Scheduled || r.res.Status["200"] != c.Scheduled {
				fail("all answered", "completed %d of %d, statuses %v, errors %v, timeouts %d, unfinished %d: want every request answered 200",
					c.Completed, c.Scheduled, r.res.Status, r.res.ErrorKinds, c.Timeouts, c.Unfinished)
			}
		},
	},
	{
		// 200 r/s in one bucket at 400/s: about half answered 503, each
		// retried up to twice (the budget raised so that none is refused
		// for want of it).
		name: "limit_req + retries", conf: nginxConf{LimitRate: "200r/s"},
		args: withLoad("--retries", "2", "--retry-on", "503", "--retry-backoff", "20ms", "--retry-budget", "1"),
		wire: exact,
		check: func(r *nginxRow, fail failFunc) {
			if r.nginxStatus["503"] == 0 || r.res.Retries == nil || r.res.Retries.RetriesSent == 0 {
				fail("setup", "nginx answered 503 %d times, openload retried %+v: want some of both", r.nginxStatus["503"], r.res.Retries)
			}
		},
	},
	{
		// The same limit answering 429, no retries: each a completed
		// request of that status.
		name: "limit_req 429", conf: nginxConf{LimitRate: "200r/s", LimitStatus: "429"}, args: load,
		wire: exact, check: statusSeen("429"),
	},
	{
		// What the user reads must show that a fifth of the requests
		// were dropped: as errors (no silent re-send of a written
		// request), or in a failed or warning check that names the
		// re-sends.
		name: "return 444 on 20 %", conf: nginxConf{Drop: "20%"}, args: load, wire: exact, showReport: true,
		check: drops444(true),
	},
	{
		// --resend never: each drop is its request's outcome.
		name: "return 444, --resend never", conf: nginxConf{Drop: "20%"}, clients: ownClients,
		args: withLoad("--resend", "never"), wire: exact,
		check: func(r *nginxRow, fail failFunc) {
			drops444(false)(r, fail)
			if w := r.res.Wire; w.Resends != 0 || w.ResendsUnwritten != 0 {
				fail("never", "wire %+v: want no re-send", *w)
			}
		},
	},
	{
		// POSTs dropped: never sent again, each a reset.
		name: "return 444 on POSTs", conf: nginxConf{Drop: "20%"}, args: withLoad(postArgs...), post: true,
		wire: exact, check: drops444(false),
	},
	{
		// nginx proxies to an upstream that holds every 4th request a
		// second, past proxy_read_timeout 100ms: nginx answers 504.
		name: "504 slow upstream", conf: nginxConf{ReadTimeout: "100ms"}, upstream: true, slow: 4, args: load,
		wire: exact, check: statusSeen("504"),
	},
	{
		// The same upstream, proxy_read_timeout 5s, and openload's
		// timeout 200ms: openload gives up first, a timeout, silent; nginx
		// logs 499 for each.
		name: "client timeout, 499", conf: nginxConf{ReadTimeout: "5s"}, upstream: true, slow: 4, args: withLoad("--timeout", "200ms"),
		wire: exact,
		check: func(r *nginxRow, fail failFunc) {
			c, w := r.res.Counts, r.res.Wire
			if c.Timeouts == 0 || r.nginxStatus["499"] != c.Timeouts || w.Silent != c.Timeouts {
				fail("499", "openload timed out %d requests (unanswered_silent %d), nginx logged 499 %d times: want equal, not 0", c.Timeouts, w.Silent, r.nginxStatus["499"])
			}
		},
	},
	{
		// nginx quit half-way (SIGQUIT, as nginx -s quit): it finishes
		// what it is answering and closes; the rest are refused (no attempt written), and nothing
		// may be reported as answered that nginx did not answer.
		name: "nginx stopped mid-run", args: load, stopAfter: 250 * time.Millisecond, wire: bound,
		check: refusedAfterStop,
	},
	{
		// kill -9 at 300 ms of a 1 s run, nginx started again 100 ms
		// later: the connections are cut (resets, or attempts closed
		// under), the gap refused, and the new nginx reads the rest.
		name: "kill -9 and restart", args: []string{"--rate", "400", "-d", "1s"}, stopAfter: 300 * time.Millisecond, kill: 100 * time.Millisecond,
		clients: plainAndOneH2, wire: bound,
		check: func(r *nginxRow, fail failFunc) {
			if r.res.ErrorKinds["refused"]+r.res.ErrorKinds["reset"] == 0 || len(r.lines) <= r.beforeKill {
				fail("setup", "error kinds %v, nginx read %d before the kill and %d in all: want errors, and reads after the restart",
					r.res.ErrorKinds, r.beforeKill, len(r.lines))
			}
		},
	},
	{
		// SIGINT to openload half-way: it stops scheduling, drains, and
		// writes its result; what it counts still bounds what nginx read.
		name: "SIGINT", args: []string{"--rate", "400", "-d", "10s"}, sigint: 300 * time.Millisecond,
		clients: plainAndOneH2, wire: bound,
		check: func(r *nginxRow, fail failFunc) {
			if r.code != exitInterrupted || !r.res.Interrupted || r.res.Counts.Scheduled == 0 {
				fail("interrupted", "exit %d, interrupted %v, scheduled %d: want 130, true, some", r.code, r.res.Interrupted, r.res.Counts.Scheduled)
			}
		},
	},
}

// refusedAfterStop: some requests were refused after nginx stopped.
func refusedAfterStop(r *nginxRow, fail failFunc) {
	if r.res.ErrorKinds["refused"] == 0 {
		fail("setup", "no request refused after nginx stopped (error kinds %v)", r.res.ErrorKinds)
	}
}

// resendWords is what a check that tells of re-sends says.
var resendWords = regexp.MustCompile(`(?i)re-?sen[dt]`)

// nonPassCheck reports whether a check of res that is not a pass matches
// re.
func nonPassCheck(res *result.Result, re *regexp.Regexp) bool {
	for _, c := range res.Checks {
		if c.Severity != "pass" && re.MatchString(c.Name+" "+c.Message) {
			return true
		}
	}
	return false
}

// healthy: nginx answered everything 200 and the run is valid.
func healthy(r *nginxRow, fail failFunc) {
	c := r.res.Counts
	if c.Completed != c.Scheduled || r.code != exitOK || len(r.res.Status) != 1 || r.res.Status["200"] != c.Scheduled {
		fail("healthy", "nginx answers every request 200: got exit %d, completed %d of %d, statuses %v, errors %v",
			r.code, c.Completed, c.Scheduled, r.res.Status, r.res.ErrorKinds)
	}
}

// nginxLine is one line of the access log (log_format judge).
type nginxLine struct {
	status, method, uri, conn, connRequests, proto, requestLength, bodyBytes, stamp string
}

// nginxRow is one run: what openload reported and what nginx logged.
type nginxRow struct {
	cs, client  string
	res         *result.Result
	code        int
	stdout      string
	logLines    int
	logAttempts int64
	h2          bool
	lines       []nginxLine
	beforeKill  int // the lines nginx logged before it was killed
	// unlogged are the answers openload saw, by status, whose request
	// has no line in nginx's log (unloggedAnswers).
	unlogged    map[string]int64
	nginxStatus map[string]int64
	conns       int      // distinct $connection
	failed      []string // the assertions that failed
}

// runNginx runs case c with client cl against a fresh nginx and asserts.
func runNginx(t *testing.T, c nginxCase, cl nginxClient, cert, key string) nginxRow {
	dir := t.TempDir()
	conf := c.conf
	conf.Dir = dir
	if conf.KeepaliveTimeout == "" {
		conf.KeepaliveTimeout = "75s"
	}
	if conf.KeepaliveRequests == "" {
		conf.KeepaliveRequests = "1000"
	}
	if os.Geteuid() == 0 {
		conf.User = "root"
	}
	if cl.scheme == "https" {
		conf.Cert, conf.Key = cert, key
	}
	if c.upstream {
		conf.Upstream = slowUpstream(t, c.slow)
	}
	ng := startNginx(t, conf, cl.listen)

	res, logPath := filepath.Join(dir, "result.json"), filepath.Join(dir, "requests.csv")
	args := []string{"--timeout", "5s", "--drain", "5s", "--stamp-header", stampHeader, "-o", res, "--log", logPath}
	args = append(args, c.args...)
	args = append(args, cl.args...)
	if c.arrivals != nil {
		f := filepath.Join(dir, "arrivals.txt")
		var b strings.Builder
		for _, off := range c.arrivals {
			fmt.Fprintf(&b, "%dus\n", off.Microseconds())
		}
		if err := os.WriteFile(f, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		args = append(args, "--arrivals", f)
	}
	args = append(args, cl.scheme+"://"+ng.addr+"/judge")

	// A kill and restart happens on a goroutine of its own, which hands
	// over the new nginx (or why there is none) when it is done.
	var restarted chan killed
	switch {
	case c.kill > 0:
		restarted = make(chan killed, 1)
		stop := time.AfterFunc(c.stopAfter, func() { restarted <- ng.killAndRestart(conf, cl.listen, c.kill) })
		defer stop.Stop()
	case c.stopAfter > 0:
		// SIGQUIT, what nginx -s quit sends the master, sent here:
		// starting nginx -s quit took past the run's end now and then
		// with the runs in parallel (5 of 70 runs stopped nothing).
		master := ng.cmd.Process
		stop := time.AfterFunc(c.stopAfter, func() { master.Signal(syscall.SIGQUIT) })
		defer stop.Stop()
	}
	var (
		code           int
		stdout, stderr string
	)
	if c.sigint > 0 {
		// A process of its own: SIGINT goes to it, not to the test.
		cmd, out := startOpenload(t, args...)
		time.Sleep(c.sigint)
		if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
			t.Fatal(err)
		}
		code = exitCode(t, cmd)
		stdout = out.String()
	} else {
		code, stdout, stderr = runCLI(args...)
	}
	beforeKill := 0
	if restarted != nil {
		k := <-restarted
		if k.err != nil {
			t.Fatalf("kill -9 and restart: %v", k.err)
		}
		beforeKill = k.before
		t.Cleanup(func() { k.ng.stop(t) })
		ng = k.ng
	}
	ng.stop(t)
	if code == exitUsage || code == exitRuntime {
		t.Fatalf("openload %s: exit %d\n%s\n%s", strings.Join(args, " "), code, stdout, stderr)
	}

	r := nginxRow{cs: c.name, client: cl.name, code: code, stdout: stdout, res: readResult(t, res), nginxStatus: map[string]int64{}, h2: cl.h2, beforeKill: beforeKill}
	if r.res.Config.Client != "" && r.res.Config.Client != cl.name && !cl.h2 {
		r.client += " (" + r.res.Config.Client + ")"
	}
	entries, err := readLog(t, logPath)
	if err != nil {
		t.Fatalf("%s: %v", logPath, err)
	}
	r.logLines = len(entries)
	for _, e := range entries {
		r.logAttempts += int64(e.Attempts)
	}
	r.lines = ng.accessLog(t)
	r.unlogged = unloggedAnswers(entries, r.lines)
	if c.kill > 0 {
		// A head openload saw on a request that then failed (a partial
		// answer, failed_status; the log has no status for it): when
		// nginx was killed, one it was still sending, so never logged.
		for s, n := range r.res.FailedStatus {
			r.unlogged[s] += n
		}
	}
	conns := map[string]bool{}
	for _, l := range r.lines {
		r.nginxStatus[l.status]++
		conns[l.conn] = true
	}
	r.conns = len(conns)

	// Every assertion goes through fail, so that the table can mark it.
	fail := func(what, format string, a ...any) {
		t.Helper()
		t.Errorf(what+": "+format, a...)
		r.failed = append(r.failed, what)
	}
	nginxCount(&r, fail)
	// Every answer openload saw is a line nginx logged, stamp by stamp,
	// but when nginx was killed: it logs a request after sending its
	// answer, and SIGKILL can land between the two (x/net h2c: 200×150
	// seen, 200×149 logged, 1 of 10 runs). Those are requests nginx read:
	// they count as read, as do the partial answers of the kill (above:
	// h2c, 200×1 partial, 1 of 10 runs). At 400/s with answers in well
	// under a millisecond, the answers sent in that instant are one or
	// two (HTTP/2 may have a few streams answered at once): at most 3.
	unlogged := sum(r.unlogged)
	if unlogged > 0 && (c.kill == 0 || unlogged > 3) {
		fail("stamps", "openload saw %s answered whose stamp nginx did not log (killed: %v)", histogram(r.unlogged), c.kill > 0)
	}
	w := r.res.Wire
	if w == nil {
		fail("wire", "the result has no wire counts")
		return r
	}
	if r.logAttempts != w.Attempts {
		fail("Σlog=wire", "the log's attempts add up to %d, wire.attempts is %d", r.logAttempts, w.Attempts)
	}
	if err := nginxWire(c.wire(cl), w, int64(len(r.lines))+unlogged); err != nil {
		fail("wire=nginx", "%v", err)
	}
	nginxStatuses(&r, fail)
	nginxPosts(&r, c, fail)
	if c.check != nil {
		c.check(&r, fail)
	}
	if c.showReport {
		t.Logf("the report's lines on errors, the wire, checks and the result:\n%s", reportLines(stdout))
	}
	if t.Failed() {
		t.Logf("openload %s: exit %d\n%s%s", strings.Join(args, " "), code, stdout, stderr)
	}
	return r
}

// reportLines are the lines of a report that tell what went wrong: errors,
// partial answers, the wire, checks that did not pass, the result.
func reportLines(stdout string) string {
	var b strings.Builder
	for _, l := range strings.Split(stdout, "\n") {
		f := strings.Fields(l)
		if len(f) > 0 && (slices.Contains([]string{"errors", "partial", "wire", "WARN", "FAIL"}, f[0]) || f[0] == "result:") {
			b.WriteString(l + "\n")
		}
	}
	return b.String()
}

// failFunc reports a failed assertion, named by what (the table's fails
// column).
type failFunc func(what, format string, a ...any)

// nginxCount checks the accounting identity and the per-request log.
func nginxCount(r *nginxRow, fail failFunc) {
	c := r.res.Counts
	// An interrupted run schedules fewer than expected (SIGINT).
	if !c.Balanced() || float64(c.Scheduled) != c.Expected && !r.res.Interrupted {
		fail("identity", "expected %g, scheduled %d, completed %d + errors %d + timeouts %d + unfinished %d",
			c.Expected, c.Scheduled, c.Completed, c.Errors, c.Timeouts, c.Unfinished)
	}
	if int64(r.logLines) != c.Scheduled {
		fail("identity", "the log has %d lines for %d requests", r.logLines, c.Scheduled)
	}
}

// nginxStatuses: every response head openload saw is a line nginx logged
// with that status: completed responses by status (every attempt's when
// retrying, since nginx logs each) plus the partial ones (failed_status),
// against nginx's lines but its 444s (closed without an answer) and 499s
// (the client closed first: nothing was sent).
func nginxStatuses(r *nginxRow, fail failFunc) {
	got := map[string]int64{}
	from := r.res.Status
	if r.res.Retries != nil {
		from = r.res.Retries.AttemptStatus
	}
	for s, n := range from {
		got[s] += n
	}
	for s, n := range r.res.FailedStatus {
		got[s] += n
	}
	want := map[string]int64{}
	for s, n := range r.nginxStatus {
		if s != "444" && s != "499" {
			want[s] = n
		}
	}
	for s, n := range r.unlogged { // answered, the log line lost to a kill
		want[s] += n
	}
	if histogram(got) != histogram(want) {
		fail("statuses", "openload saw %s (completed %s, partial %s), nginx answered %s",
			histogram(got), histogram(from), histogram(r.res.FailedStatus), histogram(want))
	}
}

// nginxPosts: no POST read twice; nginx's POST lines ≤ the POSTs scheduled,
// and equal when every request was answered.
func nginxPosts(r *nginxRow, c nginxCase, fail failFunc) {
	var posts int64
	stamps := map[string]int{}
	for _, l := range r.lines {
		if l.method == "POST" {
			posts++
			stamps[l.stamp]++
		}
	}
	var twice []string
	for s, n := range stamps {
		if n > 1 {
			twice = append(twice, fmt.Sprintf("%s ×%d", s, n))
		}
	}
	sort.Strings(twice)
	if len(twice) > 0 {
		fail("POST once", "nginx read %d POSTs more than once: %s", len(twice), strings.Join(twice, ", "))
	}
	var scheduled int64
	if c.post {
		scheduled = r.res.Counts.Scheduled
	}
	cn := r.res.Counts
	if posts > scheduled || (cn.Completed == cn.Scheduled && posts != scheduled) {
		fail("POST once", "nginx read %d POSTs, %d scheduled (%d completed)", posts, scheduled, cn.Completed)
	}
}

// unloggedAnswers are the requests openload got an answer to (a status:
// completed, or a head before a failure) that have no line of their stamp
// in nginx's log, by status. A stamp is the run's wall-clock start plus
// the request's scheduled offset (--stamp-header, engine's stamp.go), so
// the start is the lowest stamp logged less the lowest scheduled offset
// of a request written to nginx, and a request's line is one within a
// microsecond (the log's resolution) of start + its offset.
func unloggedAnswers(entries []recorder.LogEntry, lines []nginxLine) map[string]int64 {
	var stamps []int64
	for _, l := range lines {
		if v, err := strconv.ParseInt(l.stamp, 10, 64); err == nil {
			stamps = append(stamps, v)
		}
	}
	slices.Sort(stamps)
	first := time.Duration(-1)
	for _, e := range entries {
		if e.Attempts > 0 && (first < 0 || e.Scheduled < first) {
			first = e.Scheduled
		}
	}
	out := map[string]int64{}
	for _, e := range entries {
		if e.Status == 0 {
			continue
		}
		if len(stamps) == 0 {
			out[strconv.Itoa(e.Status)]++
			continue
		}
		want := stamps[0] + int64(e.Scheduled-first)
		i, _ := slices.BinarySearch(stamps, want-int64(time.Microsecond))
		if i == len(stamps) || stamps[i] > want+int64(time.Microsecond) {
			out[strconv.Itoa(e.Status)]++
		}
	}
	return out
}

// sum adds the counts of m.
func sum(m map[string]int64) int64 {
	var n int64
	for _, v := range m {
		n += v
	}
	return n
}

// histogram renders counts by key as "200×180 503×20", keys in order.
func histogram(m map[string]int64) string {
	var keys []string
	for k, n := range m {
		if n != 0 {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	var b strings.Builder
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%s×%d", k, m[k])
	}
	if b.Len() == 0 {
		return "-"
	}
	return b.String()
}

// nginxTable renders the rows as a markdown table.
func nginxTable(rows []nginxRow) string {
	var b strings.Builder
	b.WriteString("| case | client | sched | compl | errors | statuses | partial | wire att (re-sends) | Σlog att | closed/silent | bound (att−closed−silent ≤ read ≤ att) | nginx read (conns) | nginx statuses | exit | fails |\n")
	b.WriteString("|---|---|--:|--:|---|---|---|--:|--:|--:|---|--:|---|--:|---|\n")
	for _, r := range rows {
		c := r.res.Counts
		errs := map[string]int64{}
		for k, n := range r.res.ErrorKinds {
			errs[k] = n
		}
		// error_kinds may name them already.
		errs["timeout"] = max(errs["timeout"], c.Timeouts)
		errs["unfinished"] = max(errs["unfinished"], c.Unfinished)
		statuses := histogram(r.res.Status)
		if r.res.Retries != nil {
			statuses += " (attempts " + histogram(r.res.Retries.AttemptStatus) + ")"
		}
		var att, resends, closed, silent int64
		if w := r.res.Wire; w != nil {
			att, resends, closed, silent = w.Attempts, w.Resends, w.Closed, w.Silent
		}
		// nginx read its lines and the answers whose lines a kill lost.
		read := int64(len(r.lines)) + sum(r.unlogged)
		fails := "ok"
		if len(r.failed) > 0 {
			fails = "**" + strings.Join(dedup(r.failed), ", ") + "**"
		}
		fmt.Fprintf(&b, "| %s | %s | %d | %d | %s | %s | %s | %d (%d) | %d | %d/%d | %d ≤ %d ≤ %d | %d (%d) | %s | %d | %s |\n",
			r.cs, r.client, c.Scheduled, c.Completed, histogram(errs), statuses, histogram(r.res.FailedStatus),
			att, resends, r.logAttempts, closed, silent, att-closed-silent, read, att, read, r.conns,
			histogram(r.nginxStatus), r.code, fails)
	}
	return b.String()
}

func dedup(s []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, x := range s {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}

// nginxServer is one nginx started by startNginx.
type nginxServer struct {
	dir, addr string
	cmd       *exec.Cmd
	done      chan error
}

// startNginx writes conf into conf.Dir and starts nginx in the foreground
// on a free loopback port, listening as listen says ("http2", "ssl http2"
// or plain); it returns once nginx accepts connections. A port taken
// between picking it and nginx binding it is tried again.
func startNginx(t *testing.T, conf nginxConf, listen string) *nginxServer {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(conf.Dir, "tmp"), 0o755); err != nil {
		t.Fatal(err)
	}
	for try := 0; ; try++ {
		ng, err := launchNginx(conf, freePort(t), listen)
		if err == nil {
			t.Cleanup(func() { ng.stop(t) })
			return ng
		}
		if try < 2 && errors.Is(err, errAddrInUse) {
			continue
		}
		t.Fatal(err)
	}
}

var errAddrInUse = errors.New("address already in use")

// launchNginx writes conf into conf.Dir and starts nginx on addr, in a
// process group of its own (killAndRestart kills its master and worker
// at once); it returns once nginx accepts connections. It does not touch
// a testing.T: killAndRestart calls it off the test's goroutine.
func launchNginx(conf nginxConf, addr, listen string) (*nginxServer, error) {
	tmpl, err := template.ParseFiles(filepath.Join("testdata", "nginx", "nginx.conf.tmpl"))
	if err != nil {
		return nil, err
	}
	conf.Listen = strings.TrimSpace(addr + " " + listen)
	var b strings.Builder
	if err := tmpl.Execute(&b, conf); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(conf.Dir, "nginx.conf"), []byte(b.String()), 0o644); err != nil {
		return nil, err
	}
	ng := &nginxServer{dir: conf.Dir, addr: addr, done: make(chan error, 1)}
	ng.cmd = exec.Command(nginxBinary, ng.args("daemon off;")...)
	ownGroup(ng.cmd) // so that a kill reaches its workers too
	out, err := os.OpenFile(filepath.Join(conf.Dir, "nginx.out"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	ng.cmd.Stdout, ng.cmd.Stderr = out, out
	err = ng.cmd.Start()
	out.Close()
	if err != nil {
		return nil, err
	}
	go func() { ng.done <- ng.cmd.Wait() }()
	if err = ng.ready(); err == nil {
		return ng, nil
	}
	ng.cmd.Process.Kill()
	<-ng.done
	log, _ := os.ReadFile(filepath.Join(conf.Dir, "error.log"))
	msg, _ := os.ReadFile(filepath.Join(conf.Dir, "nginx.out"))
	if strings.Contains(string(log)+string(msg), "Address already in use") {
		return nil, fmt.Errorf("nginx on %s: %w", addr, errAddrInUse)
	}
	return nil, fmt.Errorf("nginx did not start: %v\n%s%s", err, msg, log)
}

// killed is what killAndRestart hands over: the new nginx, the lines the
// killed one had logged, or why there is no new one.
type killed struct {
	ng     *nginxServer
	before int
	err    error
}

// killAndRestart kills nginx as kill -9 does (SIGKILL to its master and
// worker: its process group), waits for it, and after gap starts it again
// on the same port with the same files; nginx appends to the access log.
// The port is free once the killed listener is closed; should it still be
// taken, it tries again for a second.
func (ng *nginxServer) killAndRestart(conf nginxConf, listen string, gap time.Duration) killed {
	if err := killGroup(ng.cmd); err != nil {
		return killed{err: err}
	}
	<-ng.done
	ng.done <- nil // stop finds it ended
	n, err := countLines(filepath.Join(ng.dir, "access.log"))
	if err != nil {
		return killed{err: err}
	}
	time.Sleep(gap)
	for try := 0; ; try++ {
		nn, err := launchNginx(conf, ng.addr, listen)
		if err == nil {
			return killed{ng: nn, before: n}
		}
		if try == 20 || !errors.Is(err, errAddrInUse) {
			return killed{err: err}
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// countLines counts the lines of a file, 0 when there is none.
func countLines(path string) (int, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	return strings.Count(string(b), "\n"), err
}

// slowUpstream starts the upstream of the 504, 499 and body cases, a
// server of the test's on loopback that answers "ok" at once, but every
// every-th request (0: none) only after a second (or when nginx gives up
// on it), and returns its address.
func slowUpstream(t *testing.T, every int) string {
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// A proxied body is read whole first (request_length).
		io.Copy(io.Discard, r.Body)
		if every > 0 && n.Add(1)%int64(every) == 0 {
			select {
			case <-time.After(time.Second):
			case <-r.Context().Done():
				return
			}
		}
		io.WriteString(w, "ok\n")
	}))
	t.Cleanup(srv.Close)
	return srv.Listener.Addr().String()
}

// args are nginx's command-line arguments with extra global directives.
// -e: the error log nginx opens before it reads the configuration, which
// would otherwise be /var/log/nginx/error.log.
func (ng *nginxServer) args(global string) []string {
	return []string{"-p", ng.dir, "-c", filepath.Join(ng.dir, "nginx.conf"), "-e", filepath.Join(ng.dir, "error.log"),
		"-g", global + " pid " + filepath.Join(ng.dir, "nginx.pid") + ";"}
}

// ready waits until nginx accepts a connection (up to 5 s), or exits.
func (ng *nginxServer) ready() error {
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case err := <-ng.done:
			ng.done <- err
			return fmt.Errorf("nginx exited: %v", err)
		default:
		}
		if c, err := net.DialTimeout("tcp", ng.addr, 100*time.Millisecond); err == nil {
			c.Close()
			// The pid file, which nginx -s quit reads, is written by then.
			if _, err := os.Stat(filepath.Join(ng.dir, "nginx.pid")); err == nil {
				return nil
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	return errors.New("nginx did not accept a connection in 5 s")
}

// quit stops nginx gracefully, as an operator does: nginx -s quit, which
// signals the master whose pid the pid file holds.
func (ng *nginxServer) quit() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return exec.CommandContext(ctx, nginxBinary, append(ng.args(""), "-s", "quit")...).Run()
}

// stop quits nginx and waits for it (5 s, then kills it). Calling it again
// does nothing.
func (ng *nginxServer) stop(t *testing.T) {
	if ng.cmd == nil {
		return
	}
	defer func() { ng.cmd = nil }()
	select {
	case <-ng.done:
		return
	default:
	}
	if err := ng.quit(); err != nil {
		t.Logf("nginx -s quit: %v", err)
	}
	select {
	case <-ng.done:
	case <-time.After(5 * time.Second):
		t.Errorf("nginx did not stop in 5 s after nginx -s quit; killed")
		ng.cmd.Process.Kill()
		<-ng.done
	}
}

// accessLog reads the access log (after stop).
func (ng *nginxServer) accessLog(t *testing.T) []nginxLine {
	f, err := os.Open(filepath.Join(ng.dir, "access.log"))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var lines []nginxLine
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) != 9 {
			t.Fatalf("access.log: line %q: want 9 fields", sc.Text())
		}
		lines = append(lines, nginxLine{fs[0], fs[1], fs[2], fs[3], fs[4], fs[5], fs[6], fs[7], fs[8]})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return lines
}

// freePort returns a loopback address nobody listened on a moment ago.
func freePort(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// selfSigned writes a self-signed ECDSA certificate for 127.0.0.1 and its
// key into dir, in PEM, for nginx's TLS listener (openload runs with
// --insecure).
func selfSigned(t *testing.T, dir string) (cert, key string) {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "openload nginx judge"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		t.Fatal(err)
	}
	kd, err := x509.MarshalECPrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	cert, key = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(cert, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(key, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kd}), 0o600); err != nil {
		t.Fatal(err)
	}
	return cert, key
}

// TestUnloggedAnswers: the stamp match of TestNginx finds an answer whose
// line is missing, and only that one, whatever the run's start.
func TestUnloggedAnswers(t *testing.T) {
	const start = 1_700_000_000_123_456_789
	entries := []recorder.LogEntry{
		{Scheduled: 0, Status: 200, Attempts: 1},
		{Scheduled: 2500 * time.Microsecond, Status: 200, Attempts: 1},
		{Scheduled: 5 * time.Millisecond, Status: 503, Attempts: 2},
		{Scheduled: 7500 * time.Microsecond, Error: "refused"},
		{Scheduled: 10 * time.Millisecond, Status: 200, Attempts: 1},
	}
	line := func(off time.Duration) nginxLine {
		// nginx's stamp is in ns, the log's offsets in µs: a few hundred
		// ns apart.
		return nginxLine{stamp: strconv.FormatInt(start+int64(off)+400, 10)}
	}
	lines := []nginxLine{line(0), line(2500 * time.Microsecond), line(5 * time.Millisecond), line(5 * time.Millisecond)}
	if got := histogram(unloggedAnswers(entries, lines)); got != "200×1" {
		t.Errorf("unlogged %s, want 200×1 (the request at 10 ms)", got)
	}
	lines = append(lines, line(10*time.Millisecond))
	if got := histogram(unloggedAnswers(entries, lines)); got != "-" {
		t.Errorf("unlogged %s, want none", got)
	}
}
