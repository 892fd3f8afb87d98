package engine

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Comments refer to the measurements behind a constant by a heading of
// docs/MEASUREMENTS.md; every heading they name must be there.
func TestMeasurementsReferences(t *testing.T) {
	root := filepath.Join("..", "..")
	doc, err := os.ReadFile(filepath.Join(root, "docs", "MEASUREMENTS.md"))
	if err != nil {
		t.Fatal(err)
	}
	headings := map[string]bool{}
	for line := range strings.SplitSeq(string(doc), "\n") {
		if h, ok := strings.CutPrefix(line, "## "); ok {
			headings[h] = true
		}
	}
	ref := regexp.MustCompile(`docs/MEASUREMENTS\.md, “([^”]+)”`)
	comment := regexp.MustCompile(`\n\s*//\s*`)
	space := regexp.MustCompile(`\s+`)
	refs := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		// A reference may wrap from one comment line to the next.
		text := space.ReplaceAllString(comment.ReplaceAllString(string(src), " "), " ")
		for _, m := range ref.FindAllStringSubmatch(text, -1) {
			refs++
			if !headings[m[1]] {
				t.Errorf("%s refers to docs/MEASUREMENTS.md, “%s”: no such heading", path, m[1])
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if refs == 0 {
		t.Error("no references to docs/MEASUREMENTS.md found")
	}
}
