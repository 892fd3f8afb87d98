// Package docs_test checks that the code's references to MEASUREMENTS.md
// hold: the measurements behind a constant live in that file, under a
// heading that comments name, so a renamed heading, a moved file or a
// section nothing refers to any more must not go unnoticed.
package docs_test

import (
	"go/parser"
	"go/token"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// root is the module's root, seen from this package's directory; self is
// this file, whose comments name the file without a section.
var (
	root = ".."
	self = filepath.Join(root, "docs", "measurements_test.go")
)

// ref is a reference to a section: the file's name, a comma and the
// heading in quotes, typographic or plain, e.g.
// docs/MEASUREMENTS.md, “loopSlice”. A comment that names the file must
// name a section this way.
var (
	ref     = regexp.MustCompile(`MEASUREMENTS\.md(?:, (?:“([^”]+)”|"([^"]+)"))?`)
	space   = regexp.MustCompile(`\s+`)
	goFile  = regexp.MustCompile("`([A-Za-z0-9_./-]+\\.go)`")
	heading = regexp.MustCompile(`^##+ (.+)$`)
)

// TestMeasurementsReferences reads the comments of every Go file of the
// module, tests included, and checks that each reference to
// MEASUREMENTS.md names one of its headings, that every section is named
// by some comment, and that every Go file a section names exists.
func TestMeasurementsReferences(t *testing.T) {
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("not at the module's root: %v", err)
	}
	doc, err := os.ReadFile(filepath.Join(root, "docs", "MEASUREMENTS.md"))
	if err != nil {
		t.Fatal(err)
	}
	named := map[string]int{} // heading → references to it
	for line := range strings.SplitSeq(string(doc), "\n") {
		if m := heading.FindStringSubmatch(line); m != nil {
			if _, dup := named[m[1]]; dup {
				t.Errorf("MEASUREMENTS.md has two sections “%s”", m[1])
			}
			named[m[1]] = 0
		}
	}
	for _, m := range goFile.FindAllStringSubmatch(string(doc), -1) {
		if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(m[1]))); err != nil {
			t.Errorf("MEASUREMENTS.md names %s, which is not in the module", m[1])
		}
	}

	files := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			// What the go command ignores: testdata (which holds the
			// interop test's node_modules), hidden and _ directories.
			if n := d.Name(); path != root && (n == "testdata" || strings.HasPrefix(n, ".") || strings.HasPrefix(n, "_")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || path == self {
			return nil
		}
		files++
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		for _, c := range f.Comments {
			// A reference may wrap from one comment line to the next.
			text := space.ReplaceAllString(c.Text(), " ")
			for _, m := range ref.FindAllStringSubmatch(text, -1) {
				h := m[1] + m[2]
				switch _, ok := named[h]; {
				case h == "":
					t.Errorf("%s names MEASUREMENTS.md without a section: write MEASUREMENTS.md, “Heading”", path)
				case !ok:
					t.Errorf("%s refers to MEASUREMENTS.md, “%s”: no such heading", path, h)
				default:
					named[h]++
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 100 {
		t.Errorf("read %d Go files: the walk missed most of the module", files)
	}
	for _, h := range slices.Sorted(maps.Keys(named)) {
		if named[h] == 0 {
			t.Errorf("no comment refers to MEASUREMENTS.md, “%s”: the section is orphaned, or its reference is misspelt", h)
		}
	}
}
