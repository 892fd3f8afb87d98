package main

import (
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/openload/openload/servers/stub"
)

// Headings of the tables openload shows unasked.
const (
	autoClassHeading  = "\nby X-Stub-Source · shown because responses carried it\n"
	autoTimingHeading = "\nserver-reported (Server-Timing) next to the client's service time · shown because responses carried it\n"
)

// TestAutoHeadersAgainstStub: against a stub started on its own, twice
// overloaded, a run without flags shows how many answers were fallbacks
// and the stub's Server-Timing metrics, on the event loop; the flags turn
// either off, or ask for them as before.
func TestAutoHeadersAgainstStub(t *testing.T) {
	cfg := stub.DefaultConfig()
	cfg.Latency = 10 * time.Millisecond // 4 workers: 400/s
	s, err := stub.NewServer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	url := s.URL + "/predict"
	out := filepath.Join(t.TempDir(), "r.json")

	stdout, _ := runOK(t, "-rate", "800", "-d", "500ms", "-o", out, url)
	wantLines(t, stdout, autoClassHeading, "│ fallback", "│ model", autoTimingHeading, "│ server total", "client epoll")
	res := readResult(t, out)
	if len(res.Classes) != 1 || !res.Classes[0].Auto || len(res.Classes[0].Values) < 2 {
		t.Errorf("classes %+v: want model and fallback, shown unasked", res.Classes)
	}
	if c := res.Config; c.ServerTiming || c.ClassHeaders != nil || strings.Join(c.AutoHeaders, ",") != "Server-Timing,X-Stub-Source" {
		t.Errorf("config: server timing %v, class headers %v, auto %v", c.ServerTiming, c.ClassHeaders, c.AutoHeaders)
	}

	_, stdout, _ = runCLI("-rate", "100", "-d", "200ms", "--no-auto-headers", url)
	if strings.Contains(stdout, "by X-Stub-Source") || strings.Contains(stdout, "server-reported") {
		t.Errorf("--no-auto-headers shows tables:\n%s", stdout)
	}
	_, stdout, _ = runCLI("-rate", "100", "-d", "200ms", "--server-timing=false", url)
	wantLines(t, stdout, autoClassHeading)
	if strings.Contains(stdout, "server-reported") {
		t.Errorf("--server-timing=false shows Server-Timing:\n%s", stdout)
	}
	_, stdout, _ = runCLI("-rate", "100", "-d", "200ms", "--server-timing", "--class-header", "X-Stub-Reason", url)
	wantLines(t, stdout, "\nby X-Stub-Reason\n", autoClassHeading,
		"\nserver-reported (Server-Timing) next to the client's service time\n")
}

// TestNoAutoTablesWithoutHeaders: against a server that sends neither
// header, the report is as it was: no class or Server-Timing table.
func TestNoAutoTablesWithoutHeaders(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Other", "a")
		w.Write([]byte("ok"))
	}))
	defer srv.Close()
	out := filepath.Join(t.TempDir(), "r.json")
	stdout, _ := runOK(t, "-rate", "100", "-d", "200ms", "-o", out, srv.URL)
	if strings.Contains(stdout, "\nby ") || strings.Contains(stdout, "server-reported") {
		t.Errorf("tables for headers no response carried:\n%s", stdout)
	}
	wantLines(t, stdout, "status   200 ×20", "client epoll")
	if res := readResult(t, out); res.Classes != nil || res.ServerTiming != nil {
		t.Errorf("classes %+v, Server-Timing %+v", res.Classes, res.ServerTiming)
	}
}
