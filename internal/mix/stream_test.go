package mix

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/openload/openload/internal/engine"
)

// drain reads every target of a stream of src, and why it ended.
func drain(t *testing.T, src string, opt StreamOptions) ([]engine.Target, error) {
	t.Helper()
	s, err := ReadStream(strings.NewReader(src), "f", opt)
	if err != nil {
		return nil, err
	}
	var ts []engine.Target
	for tg := range s.Targets() {
		ts = append(ts, tg)
	}
	return ts, s.Err()
}

// TestStreamReadsAsWhole: a file read lazily gives the targets it gives
// read whole and built (Build), in order, and the errors of its lines.
func TestStreamReadsAsWhole(t *testing.T) {
	srcs := map[string]string{"grammar": strings.Join([]string{
		"  # openload: name=checkout",
		"POST http://h/cart",
		"x-lower: kept as written ",
		"# a comment among headers",
		"X-Multi: 1",
		"X-Multi: 2",
		"@body.json",
		"",
		"#openload: name=\"with space\"",
		"",
		"GET http://h/a?q={{seq}}",
		"GET http://h/b",
		"\t",
		"PUT http://h/c\r",
		"A: b:c",
	}, "\n")}
	for _, f := range []string{"simple.txt", "headers.txt", "bodies.txt", "comments.txt", "json.jsonl", "targets-test.txt"} {
		b, err := os.ReadFile(filepath.Join("testdata", "vegeta", f))
		if err != nil {
			t.Fatal(err)
		}
		srcs[f] = string(b)
	}
	read := files(map[string]string{"body.json": "{}", "BODY": "Hello world!", "/path/to/newthing.json": "{}", "/path/to/thing-71988591.json": "{}"})
	for name, src := range srcs {
		ts, err := ReadTargets(strings.NewReader(src), "f", Options{ReadFile: read})
		if err != nil {
			t.Fatal(err)
		}
		if name == "targets-test.txt" {
			ts = ts[:1] // the rest goes to other origins, which a run refuses either way
		}
		want, _, err := Build(ts, nil, 7)
		if err != nil {
			t.Fatal(name, err)
		}
		got, err := drain(t, src, StreamOptions{Options: Options{ReadFile: read}, Seed: 7})
		if name == "targets-test.txt" {
			if err == nil || !strings.Contains(err.Error(), "is not the first target's") {
				t.Errorf("%s: ended with %v, want the third target's origin refused", name, err)
			}
		} else if err != nil {
			t.Fatal(name, err)
		}
		if len(got) != len(want) {
			t.Fatalf("%s: %d targets lazily, %d read whole", name, len(got), len(want))
		}
		for i := range want {
			g, w := got[i], want[i]
			if g.Method != w.Method || g.URL.String() != w.URL.String() || !reflect.DeepEqual(g.Header, w.Header) || string(g.Body) != string(w.Body) ||
				(g.Path == nil) != (w.Path == nil) || g.Path != nil && string(g.Path.Append(nil, 3)) != string(w.Path.Append(nil, 3)) {
				t.Errorf("%s: target %d lazily %+v, read whole %+v", name, i, g, w)
			}
		}
	}
}

// TestStreamErrors: a line's error read lazily is the one read whole,
// but for what a stream cannot check (names taken: it keeps none) and
// weights, which it refuses.
func TestStreamErrors(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{"", "f: empty: no targets"},
		{"# only a comment\n\n", "f: no targets"},
		{"GET", `f:1: bad target "GET"`},
		{"\nDO_WORK http://h/", `f:2: bad method "DO_WORK"`},
		{"GET http://h/\n\n\nGET foobar", `f:4: bad URL "foobar"`},
		{"GET http://h/\nX: 1\nGET http://h/b", `f:3: bad header name "GET http"`},
		{"GET http://h/\n@b\nX: 1", `f:3: bad method "X:"`},
		{"GET http://h/\n# openload: name=a", "f:2: an openload directive goes before"},
		{"GET http://h/\n\n# openload: name=a", "f:3: openload directive with no target after it"},
		{"GET http://h/a\n\n# openload: weight=2\nGET http://h/", "f:4: GET http://h/: a weight, but targets read as the run sends"},
		{`{"method":"GET","url":"http://h/"}` + "\n\n" + `{"method":"GET","url":"http://h/","weight":2}`, "f:3: GET http://h/: a weight"},
		{"{\"method\":\"GET\",\"url\":\"http://h/\"}\n{", "f:2: bad JSON target"},
		{"GET http://h/\n\nGET http://other/", "f:3: GET http://other/: origin http://other:80 is not the first target's"},
	} {
		_, err := drain(t, c.src, StreamOptions{Options: Options{ReadFile: files(map[string]string{"b": ""})}})
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%q:\n got %v\nwant %q…", c.src, err, c.want)
		}
	}
	// Names are the file's, not checked: the run's records name none.
	ts, err := drain(t, "# openload: name=a\nGET http://h/\n\n# openload: name=a\nGET http://h/b", StreamOptions{})
	if err != nil || len(ts) != 2 {
		t.Errorf("a name twice: %d targets, %v", len(ts), err)
	}
}

// TestStreamAsItComes: each target is given as soon as the line after
// it shows it complete, before the file ends; -H's headers are added
// to each target that does not set its own.
func TestStreamAsItComes(t *testing.T) {
	pr, pw := io.Pipe()
	defer pw.Close()
	go io.WriteString(pw, "GET http://h/0\nX-A: own\n\n")
	s, err := ReadStream(pr, "standard input", StreamOptions{Header: http.Header{"X-A": {"cli"}, "X-B": {"cli"}}})
	if err != nil {
		t.Fatal(err)
	}
	if got := <-s.Targets(); got.URL.Path != "/0" || got.Header.Get("X-A") != "own" || got.Header.Get("X-B") != "cli" {
		t.Errorf("first target %+v", got)
	}
	for i := 1; i <= 3; i++ {
		go io.WriteString(pw, "GET http://h/"+string(rune('0'+i))+"\n\n")
		select {
		case got := <-s.Targets():
			if want := "/" + string(rune('0'+i)); got.URL.Path != want || got.Header.Get("X-A") != "cli" {
				t.Errorf("target %d: %s %v", i, got.URL.Path, got.Header)
			}
		case <-time.After(time.Minute):
			t.Fatalf("target %d not given before the file ended", i)
		}
	}
	pw.Close()
	if _, ok := <-s.Targets(); ok || s.Err() != nil {
		t.Errorf("after the end: open %v, err %v", ok, s.Err())
	}
}
