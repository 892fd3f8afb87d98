package docs_test

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

// BENCHMARKS.md is rewritten at the top by bench/run.sh and pruned by hand
// below it, so a note that code or a page points to can go without
// anyone seeing the pointer. Its references are looser than those of the
// measurements page (measurements_test.go): a quoted section names the
// start of a heading
// (“Streamed answers” for “Streamed answers (issue 22, 2026-12-01)”), a
// link names a heading's anchor, and a mention without a section is
// allowed (the file as a whole).
var (
	benchRef    = regexp.MustCompile(`BENCHMARKS\.md,? (?:“([^”]+)”|"([^"]+)")`)
	benchAnchor = regexp.MustCompile(`BENCHMARKS\.md#([^)\s]+)`)
	benchSelf   = filepath.Join(root, "docs", "benchmarks_test.go")
)

// TestBenchmarksReferences checks that every section of BENCHMARKS.md a
// Go comment or a Markdown file names, by a quoted heading or a link's
// anchor, is still there.
func TestBenchmarksReferences(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join(root, "docs", "BENCHMARKS.md"))
	if err != nil {
		t.Fatal(err)
	}
	var headings []string
	anchors := map[string]bool{}
	for line := range strings.SplitSeq(string(doc), "\n") {
		if m := heading.FindStringSubmatch(line); m != nil {
			headings = append(headings, m[1])
			anchors[anchor(m[1])] = true
		}
	}

	refs := 0
	check := func(path, text string) {
		text = space.ReplaceAllString(text, " ")
		for _, m := range benchRef.FindAllStringSubmatch(text, -1) {
			refs++
			h := m[1] + m[2]
			if !startsAny(headings, h) {
				t.Errorf("%s refers to BENCHMARKS.md, “%s”: no heading starts so", path, h)
			}
		}
		for _, m := range benchAnchor.FindAllStringSubmatch(text, -1) {
			refs++
			if !anchors[m[1]] {
				t.Errorf("%s links BENCHMARKS.md#%s: no heading has that anchor", path, m[1])
			}
		}
	}
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); path != root && (n == "testdata" || n == "node_modules" || strings.HasPrefix(n, ".") || strings.HasPrefix(n, "_")) {
				return filepath.SkipDir
			}
			return nil
		}
		switch {
		case path == benchSelf:
		case strings.HasSuffix(path, ".md"):
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			check(path, string(b))
		case strings.HasSuffix(path, ".go"):
			f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ParseComments|parser.SkipObjectResolution)
			if err != nil {
				return err
			}
			for _, c := range f.Comments {
				check(path, c.Text())
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// The module refers to BENCHMARKS.md's sections in seven places at
	// least (DESIGN.md, REFERENCE.md, the engine's comments): none found
	// means the patterns, not the references, are broken.
	if refs < 7 {
		t.Errorf("found %d references to BENCHMARKS.md's sections, want 7 or more", refs)
	}
}

func startsAny(headings []string, prefix string) bool {
	for _, h := range headings {
		if strings.HasPrefix(h, prefix) {
			return true
		}
	}
	return false
}

// anchor is the fragment GitHub gives a heading: lower case, letters,
// digits, spaces, hyphens and underscores kept, spaces made hyphens.
func anchor(h string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(h) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsNumber(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}
