package report_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/openload/openload/internal/report"
	"github.com/openload/openload/result"
)

// readResult reads the result testdata/name, as a run wrote it.
func readResult(t *testing.T, name string) *result.Result {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	res, err := result.Read(f, name)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// text is the terminal report of the result testdata/name, under a
// "== name" line.
func text(t *testing.T, name string) string {
	t.Helper()
	var b bytes.Buffer
	b.WriteString("== " + name + "\n")
	if err := report.Text(&b, readResult(t, name)); err != nil {
		t.Fatal(err)
	}
	return b.String() + "\n"
}
