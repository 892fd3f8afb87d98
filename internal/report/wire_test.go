package report

import (
	"bytes"
	"testing"

	"github.com/openload/openload/result"
)

// TestWireLines: the wire line gives the attempts, the bound on what the
// server read, the drops and what became of them; a result written before
// the drops were counted keeps the line it had.
func TestWireLines(t *testing.T) {
	for _, c := range []struct {
		name string
		wire *result.Wire
		want string
	}{
		{"plain", &result.Wire{Attempts: 200, Counted: true},
			"wire     200 attempts written to connections for 200 requests (what the server should have read)\n"},
		{"444, re-sent", &result.Wire{Attempts: 249, Resends: 49, Resent: 49, Closed: 49, ResendsWritten: 49, Counted: true},
			"wire     249 attempts written to connections for 200 requests (what the server read, less up to the 49 that got no byte of an answer); " +
				"DROPPED: the server closed the connection under 49 of them before a byte of an answer (19.7 %), each re-sent by the client on a new connection (49 GETs)\n"},
		{"444, some re-sent", &result.Wire{Attempts: 240, Resends: 30, Resent: 30, Closed: 48, ResendsWritten: 30, Counted: true},
			"wire     240 attempts written to connections for 200 requests (what the server read, less up to the 48 that got no byte of an answer); " +
				"DROPPED: the server closed the connection under 48 of them before a byte of an answer (20.0 %): 30 GETs re-sent by the client on a new connection, 18 not (resets)\n"},
		{"444, never", &result.Wire{Attempts: 200, Closed: 40, Counted: true},
			"wire     200 attempts written to connections for 200 requests (what the server read, less up to the 40 that got no byte of an answer); " +
				"DROPPED: the server closed the connection under 40 of them before a byte of an answer (20.0 %), none re-sent (resets)\n"},
		{"silent and unwritten", &result.Wire{Attempts: 200, Silent: 3, ResendsUnwritten: 2, Counted: true},
			"wire     200 attempts written to connections for 200 requests (what the server read, less up to the 3 that got no byte of an answer); " +
				"3 got nothing before their timeout or the drain's end; 2 re-sent before any byte of them was written (the server never saw those)\n"},
		{"bytes", &result.Wire{Attempts: 200, Counted: true, Bytes: &result.Bytes{Written: 18400, Read: 52600}},
			"wire     200 attempts written to connections for 200 requests (what the server should have read); 18400 bytes written, 52600 read (on the TCP connections, TLS included)\n"},
		{"old result", &result.Wire{Attempts: 210, Resends: 10, Resent: 10},
			"wire     210 attempts written to connections for 200 requests (what the server should have read); 10 re-sent by the client on a new connection (10 times) after a kept-alive one failed before answering\n"},
	} {
		var b bytes.Buffer
		res := &result.Result{Wire: c.wire, Counts: result.Counts{Scheduled: 200}, Config: result.Config{Method: "GET"}}
		WireLines(&b, res)
		if b.String() != c.want {
			t.Errorf("%s:\n got %q\nwant %q", c.name, b.String(), c.want)
		}
	}
	var b bytes.Buffer
	WireLines(&b, &result.Result{})
	if b.Len() != 0 {
		t.Errorf("no wire: %q", b.String())
	}
}
