package main

import (
	"bufio"
	"net"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/openload/openload/internal/rawtcp"
)

// TestResendFlagErrors: a policy the engine does not know, or one that
// net/http cannot follow, is a usage error naming --resend.
func TestResendFlagErrors(t *testing.T) {
	const u = "http://127.0.0.1:1/"
	for _, args := range [][]string{
		{"-r", "10", "--resend", "sometimes", u},
		{"-r", "10", "--resend", "never", "--net-http", u},
		{"-r", "10", "--resend", "unwritten", "https://127.0.0.1:1/"},
		{"-r", "10", "--resend", "never", "--h2c", "--net-http", u},
		{"--closed", "-c", "2", "-d", "1s", "--resend", "never", "--h2c", u},
	} {
		code, _, stderr := runCLI(args...)
		if code != exitUsage || !strings.Contains(stderr, "--resend") || strings.Contains(stderr, "Resend") {
			t.Errorf("%q: exit %d, want %d with an error naming --resend:\n%s", args, code, exitUsage, stderr)
		}
	}
}

// TestResendDropsVisible: a server that reads every request and closes
// without answering the 5th a connection carries (nginx's return 444). By
// default the GETs it dropped are re-sent and answered: the run completes
// every request, and the verdict and the report's wire line still say
// that the server dropped a fifth of what it read. With --resend never
// each drop is a reset, and the default objective on errors fails the
// run.
//
// The server counts per connection, and its own count of drops is what
// the wire's closed must equal. It counted every 5th read of the whole
// server before: a re-send, written on a new connection where a failure
// is not sent again, was then dropped when the interleaving of the four
// connections made it a 5th read, and the run had an error (1 in 4 runs
// with -race beside a CPU hog). Now a re-send is its connection's first
// request, never dropped.
func TestResendDropsVisible(t *testing.T) {
	var read, dropped atomic.Int64
	srv, err := rawtcp.Serve(func(c net.Conn, _ <-chan struct{}) {
		br := bufio.NewReader(c)
		for n := 1; rawtcp.ReadRequest(br); n++ {
			read.Add(1)
			if n%5 == 0 {
				dropped.Add(1)
				return // closed without a byte of answer
			}
			if _, err := c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")); err != nil {
				return
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	u := "http://" + srv.Addr() + "/"
	dir := t.TempDir()

	out := filepath.Join(dir, "default.json")
	stdout, _ := runOK(t, "-r", "200", "-d", "1s", "-c", "4", "-o", out, u)
	res := readResult(t, out)
	w := res.Wire
	if w == nil || w.Attempts != read.Load() || w.Closed != dropped.Load() || w.Closed == 0 || w.ResendsWritten != w.Closed || res.Counts.Completed != 200 {
		t.Fatalf("wire %+v, counts %+v; the server read %d and dropped %d", w, res.Counts, read.Load(), dropped.Load())
	}
	wantLines(t, stdout, "DROPPED: the server closed the connection under", "re-sent by the client on a new connection")
	var found bool
	for _, c := range res.Checks {
		if c.Name == "re-sends" {
			found = true
			if c.Severity != "warn" || !strings.Contains(c.Message, "GETs re-sent") {
				t.Errorf("check %+v: want a warning that GETs were re-sent", c)
			}
			t.Logf("%s: %s", c.Severity, c.Message)
		}
	}
	if !found {
		t.Errorf("checks %+v: no re-sends check", res.Checks)
	}

	read.Store(0)
	dropped.Store(0)
	out = filepath.Join(dir, "never.json")
	code, stdout, stderr := runCLI("-r", "200", "-d", "1s", "-c", "4", "--resend", "never", "-o", out, u)
	if code != exitTargetFailed {
		t.Fatalf("--resend never: exit %d, want %d (the default objective on errors)\n%s\n%s", code, exitTargetFailed, stdout, stderr)
	}
	res = readResult(t, out)
	if w := res.Wire; w.Attempts != read.Load() || w.Resends != 0 || res.ErrorKinds["reset"] != w.Closed || w.Closed != dropped.Load() || w.Closed == 0 {
		t.Errorf("--resend never: wire %+v, error kinds %v; the server read %d and dropped %d", w, res.ErrorKinds, read.Load(), dropped.Load())
	}
	wantLines(t, stdout, "none re-sent (resets)")
}
