package verify

import (
	"strings"
	"testing"

	"github.com/openload/openload/result"
)

// TestResends: the re-sends check says how many written requests the
// server closed the connection under without answering, and what became
// of them; it warns, at any share, and never fails.
func TestResends(t *testing.T) {
	for _, c := range []struct {
		name     string
		wire     *result.Wire
		method   string
		protocol string
		retries  bool
		sev      Severity // "": no finding
		msg      []string
	}{
		{"no wire", nil, "GET", "", false, "", nil},
		{"nothing dropped", &result.Wire{Attempts: 2000, Counted: true}, "GET", "", false, "", nil},
		{"timeouts only", &result.Wire{Attempts: 2000, Silent: 5, Counted: true}, "GET", "", false, "", nil},
		// nginx's return 444 on a fifth of the GETs, re-sent by default.
		{"444, re-sent", &result.Wire{Attempts: 2494, Resends: 494, Resent: 494, Closed: 494, ResendsWritten: 494, Counted: true}, "GET", "", false, Warn,
			[]string{"the server closed 494 connections after a request was written, before a byte of its answer (19.8 % of the 2494 requests written to it); 494 GETs re-sent on a new connection"}},
		{"444, some re-sent", &result.Wire{Attempts: 2400, Resends: 400, Resent: 400, Closed: 480, ResendsWritten: 400, Counted: true}, "GET", "", false, Warn,
			[]string{"closed 480 connections", "(20.0 % of the 2400", "400 GETs re-sent", "the other 80 ended as resets ("}},
		{"444, never re-sent", &result.Wire{Attempts: 2000, Closed: 400, Counted: true}, "GET", "", false, Warn,
			[]string{"closed 400 connections", "none re-sent: each ended as a reset ("}},
		{"444, with retries", &result.Wire{Attempts: 2000, Closed: 400, Counted: true}, "POST", "", true, Warn,
			[]string{"each ended as a reset, or went to the retry policy"}},
		{"one, no method", &result.Wire{Attempts: 10, Resends: 1, Resent: 1, Closed: 1, ResendsWritten: 1, Counted: true}, "", "", false, Warn,
			[]string{"closed 1 connection after", "1 request re-sent"}},
		{"and unwritten", &result.Wire{Attempts: 100, Resends: 10, Resent: 10, Closed: 5, ResendsWritten: 5, ResendsUnwritten: 5, Counted: true}, "GET", "", false, Warn,
			[]string{"5 GETs re-sent", "5 more requests re-sent before any byte of them was written"}},
		{"unwritten only", &result.Wire{Attempts: 100, ResendsUnwritten: 3, Counted: true}, "GET", "", false, Pass,
			[]string{"3 requests re-sent on a new connection after a kept-alive one failed before any byte of them was written: the server never saw those attempts"}},
		{"old result", &result.Wire{Attempts: 120, Resends: 20, Resent: 20}, "GET", "", false, Warn,
			[]string{"re-sent 20 requests", "written before why was counted"}},
		{"old result, none", &result.Wire{Attempts: 100}, "GET", "", false, "", nil},
		{"HTTP/2", &result.Wire{Attempts: 110, Resends: 10, Resent: 10, Counted: true}, "GET", "h2c", false, Pass,
			[]string{"streams the server refused"}},
	} {
		res := good()
		res.Wire, res.Config.Method, res.Config.Protocol = c.wire, c.method, c.protocol
		if c.retries {
			res.Retries = &result.RetryCounts{}
		}
		f, ok := resends(res)
		if !ok {
			if c.sev != "" {
				t.Errorf("%s: no finding, want %s", c.name, c.sev)
			}
			continue
		}
		if f.Severity != c.sev || f.Check != "re-sends" {
			t.Errorf("%s: %s %s, want %s: %s", c.name, f.Check, f.Severity, c.sev, f.Message)
		}
		for _, m := range c.msg {
			if !strings.Contains(f.Message, m) {
				t.Errorf("%s: %q lacks %q", c.name, f.Message, m)
			}
		}
		if f.Severity == Fail {
			t.Errorf("%s: the check failed the run", c.name)
		}
	}
	// In the run's findings, after the outcomes.
	res := good()
	res.Wire = &result.Wire{Attempts: 36, Resends: 6, Resent: 6, Closed: 6, ResendsWritten: 6, Counted: true}
	fs := Run(res, Options{})
	if f := find(t, fs, "re-sends"); f.Severity != Warn {
		t.Errorf("run: %+v", f)
	}
	for i, f := range fs {
		if f.Check == "outcomes" && (i+1 >= len(fs) || fs[i+1].Check != "re-sends") {
			t.Errorf("the re-sends finding does not follow the outcomes: %+v", fs)
		}
	}
}
