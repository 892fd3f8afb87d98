package docs_test

import (
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"
)

// TestDesignPackageTable checks that DESIGN.md's package table names every
// package of the module: the table is where a reader learns what each
// package owns, and a package added without a row is one nobody can find.
// A row names a package by its path in backticks (`result/` or
// `internal/mix`); the examples' commands may share one row, by name.
func TestDesignPackageTable(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join(root, "docs", "DESIGN.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(doc), "| package | owns |\n")
	if !ok {
		t.Fatal("DESIGN.md has no table headed | package | owns |")
	}
	table, _, _ := strings.Cut(after, "\n\n")

	pkgs := map[string]bool{}
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); p != root && (n == "testdata" || n == "node_modules" || strings.HasPrefix(n, ".") || strings.HasPrefix(n, "_")) {
				return filepath.SkipDir
			}
			// A module of its own (deploy/) is not the module's package.
			if _, err := os.Stat(filepath.Join(p, "go.mod")); err == nil && p != root {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(p, ".go") {
			rel, err := filepath.Rel(root, filepath.Dir(p))
			if err != nil {
				return err
			}
			pkgs[filepath.ToSlash(rel)] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(pkgs) < 30 {
		t.Fatalf("found %d packages: the walk missed most of the module", len(pkgs))
	}
	for p := range pkgs {
		named := strings.Contains(table, "`"+p+"`") || strings.Contains(table, "`"+p+"/`") ||
			path.Dir(p) == "examples" && strings.Contains(table, "`"+path.Base(p)+"`")
		if !named {
			t.Errorf("DESIGN.md's package table has no row for %s", p)
		}
	}
}
