package report_test

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/openload/openload/internal/report"
	"github.com/openload/openload/result"
)

var update = flag.Bool("update", false, "rewrite golden files")

// golden compares got with testdata/name; on mismatch it writes name.got
// next to it, and with -update it rewrites the golden file.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if string(want) != got {
		os.WriteFile(path+".got", []byte(got), 0o644)
		t.Errorf("%s differs from the golden file; see %s.got (go test -update accepts it)", path, path)
	}
}

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
