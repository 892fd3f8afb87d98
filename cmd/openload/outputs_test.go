package main

import (
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
)

// TestWroteNotice: each file a command writes is named on stderr once it
// is written, one line, after the rest; stdout (the report a pipe reads)
// is the same as without the file; -q and -o - (stdout) print no notice.
func TestWroteNotice(t *testing.T) {
	dir := t.TempDir()
	page := filepath.Join(dir, "run.html")
	plain, _ := runOK(t, "report", "testdata/diff-open.json")
	stdout, stderr := runOK(t, "report", "testdata/diff-open.json", "--html", page)
	if stderr != "openload: wrote "+page+"\n" || stdout != plain {
		t.Errorf("report --html: stderr %q, want one wrote line; stdout as without --html: %v", stderr, stdout == plain)
	}
	_, stderr = runOK(t, "diff", "testdata/diff-closed.json", "testdata/diff-open.json", "--html", filepath.Join(dir, "diff.html"))
	if stderr != "openload: wrote "+filepath.Join(dir, "diff.html")+"\n" {
		t.Errorf("diff --html: stderr %q", stderr)
	}

	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer srv.Close()
	out := filepath.Join(dir, "run.json")
	_, stderr = runOK(t, "-rate", "20", "-d", "200ms", "-o", out, srv.URL)
	lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
	if last := lines[len(lines)-1]; last != "openload: wrote "+out || strings.Count(stderr, "wrote") != 1 {
		t.Errorf("-o FILE: stderr ends %q, want the wrote line:\n%s", last, stderr)
	}
	if _, stderr = runOK(t, "-q", "-rate", "20", "-d", "200ms", "-o", out, srv.URL); strings.Contains(stderr, "wrote") {
		t.Errorf("-q: stderr %q", stderr)
	}
	if stdout, stderr = runOK(t, "-rate", "20", "-d", "200ms", "-o", "-", srv.URL); strings.Contains(stderr+stdout, "wrote") {
		t.Errorf("-o -: told it wrote:\n%s", stderr)
	}
}
