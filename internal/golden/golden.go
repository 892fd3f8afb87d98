// Package golden compares what a test printed with a file under the
// test's testdata, as benchstat's tests do: go test -update rewrites the
// files, and a mismatch leaves what was printed next to the file, as
// NAME.got, to diff. Only tests import it.
package golden

import (
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files")

// Check compares got with testdata/name; on mismatch it writes name.got
// next to it, and with -update it rewrites the golden file.
func Check(t testing.TB, name, got string) {
	t.Helper()
	CheckFile(t, filepath.Join("testdata", name), got)
}

// CheckFile is Check for a golden file at path, outside testdata: a
// file of the repository that a command's output must equal, such as a
// manifest the command renders.
func CheckFile(t testing.TB, path, got string) {
	t.Helper()
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
