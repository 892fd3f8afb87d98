package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// flagWord is a --flag as a string would name one: two dashes and a
// letter, not inside a longer run of dashes or a word ("a--b"), and not a
// CSS custom property (--h: 0, var(--h)), the one other use of the form
// in openload's strings (internal/plot's page).
var flagWord = regexp.MustCompile(`(^|[^-\w(])--[a-z][a-z0-9-]*($|[^\w:-])`)

// TestLibrariesNameNoFlag: only cmd/ speaks in flags. Every string
// literal in the module's library code (everything but cmd/, examples/,
// and tests) is read, and none may name a --flag: a library's errors name
// its fields ({Field}, package field), which cmd renders with its flags
// (fieldflags.go), and its findings and hints say in words what to do.
func TestLibrariesNameNoFlag(t *testing.T) {
	root := filepath.Join("..", "..")
	fset := token.NewFileSet()
	var found []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() {
			switch {
			case rel == ".":
			case rel == "cmd", rel == "examples", rel == "deploy", rel == "bench", strings.HasPrefix(d.Name(), "."), d.Name() == "testdata", d.Name() == "node_modules":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			s, err := strconv.Unquote(lit.Value)
			if err == nil && flagWord.MatchString(s) {
				found = append(found, fset.Position(lit.Pos()).String()+": "+lit.Value)
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range found {
		t.Errorf("a library names a flag: %s", f)
	}
}
