package mix

import (
	"errors"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// files is a ReadFile over a map, for @path bodies.
func files(m map[string]string) func(string) ([]byte, error) {
	return func(p string) ([]byte, error) {
		s, ok := m[p]
		if !ok {
			return nil, &fs.PathError{Op: "open", Path: p, Err: fs.ErrNotExist}
		}
		return []byte(s), nil
	}
}

// readme's bodies: vegeta's README names them and leaves them unwritten.
var readmeBodies = files(map[string]string{
	"/path/to/newthing.json":       `{"name":"new"}`,
	"/path/to/thing-71988591.json": `{"id":71988591}`,
})

// TestVegetaREADME reads the examples of vegeta's README unchanged
// (testdata/vegeta/README.md says where each comes from) and builds
// them.
func TestVegetaREADME(t *testing.T) {
	h := func(kv ...string) http.Header {
		h := http.Header{}
		for i := 0; i < len(kv); i += 2 {
			h[kv[i]] = append(h[kv[i]], kv[i+1])
		}
		return h
	}
	type tg struct {
		method, url string
		header      http.Header
		body        string
	}
	for _, c := range []struct {
		file string
		want []tg
	}{
		{"simple.txt", []tg{
			{"GET", "http://goku:9090/path/to/dragon?item=ball", h(), ""},
			{"GET", "http://user:password@goku:9090/path/to", h(), ""},
			{"HEAD", "http://goku:9090/path/to/success", h(), ""},
		}},
		{"headers.txt", []tg{
			{"GET", "http://user:password@goku:9090/path/to", h("X-Account-ID", "8675309"), ""},
			{"DELETE", "http://goku:9090/path/to/remove", h("Confirmation-Token", "90215", "Authorization", "Token DEADBEEF"), ""},
		}},
		{"bodies.txt", []tg{
			{"POST", "http://goku:9090/things", h(), `{"name":"new"}`},
			{"PATCH", "http://goku:9090/thing/71988591", h(), `{"id":71988591}`},
		}},
		{"bodies-headers.txt", []tg{
			{"POST", "http://goku:9090/things", h("X-Account-ID", "99"), `{"name":"new"}`},
		}},
		{"comments.txt", []tg{
			{"GET", "http://goku:9090/path/to/dragon?item=ball", h("X-Account-ID", "99"), ""},
		}},
		{"json.jsonl", []tg{
			{"GET", "http://goku", h("Content-Type", "text/plain"), "Punch!"},
		}},
	} {
		t.Run(c.file, func(t *testing.T) {
			ts, err := ReadTargetsFile(filepath.Join("testdata", "vegeta", c.file), Options{ReadFile: readmeBodies})
			if err != nil {
				t.Fatal(err)
			}
			if len(ts) != len(c.want) {
				t.Fatalf("%d targets, want %d", len(ts), len(c.want))
			}
			for i, w := range c.want {
				g := ts[i]
				if g.Method != w.method || g.URL != w.url || !reflect.DeepEqual(g.Header, w.header) || string(g.Body) != w.body {
					t.Errorf("target %d: %s %s %v %q, want %s %s %v %q", i, g.Method, g.URL, g.Header, g.Body, w.method, w.url, w.header, w.body)
				}
				if want := w.method + " " + strings.Replace(w.url, ":password@", ":xxxxx@", 1); g.Name != want {
					t.Errorf("target %d named %q, want %q", i, g.Name, want)
				}
			}
			es, weights, err := Build(ts, nil, 1)
			if err != nil {
				t.Fatal(err)
			}
			if weights != nil {
				t.Errorf("weights %v, want nil (round robin)", weights)
			}
			for i, e := range es {
				if e.Path != nil || e.Headers != nil || e.BodyT != nil {
					t.Errorf("target %d: a template where none was written", i)
				}
				// Credentials go in an Authorization header, as net/http,
				// vegeta's client, sends them; the URL keeps none.
				want, auth := strings.Replace(ts[i].URL, "user:password@", "", 1), ""
				if want != ts[i].URL {
					auth = "Basic dXNlcjpwYXNzd29yZA==" // user:password
				}
				if e.URL.String() != want || auth != "" && e.Header.Get("Authorization") != auth {
					t.Errorf("target %d: URL %s, Authorization %q; want %s, %q", i, e.URL, e.Header.Get("Authorization"), want, auth)
				}
			}
		})
	}
}

// TestVegetaTargeterTest reads the targets of vegeta's own
// TestNewHTTPTargeter to the same targets (without its -header default,
// which is the CLI's).
func TestVegetaTargeterTest(t *testing.T) {
	ts, err := ReadTargetsFile("testdata/vegeta/targets-test.txt", Options{ReadFile: files(map[string]string{"BODY": "Hello world!"})})
	if err != nil {
		t.Fatal(err)
	}
	x := http.Header{"X-Header": {"1", "2"}}
	want := []struct {
		method, url string
		header      http.Header
		body        string
	}{
		{"GET", "http://:6060/", x, ""},
		{"PUT", "https://:6060/123", http.Header{}, ""},
		{"DELETE", "http://moo:443/boo", http.Header{}, ""},
		{"POST", "http://foobar.org/fnord", http.Header{"Authorization": {"x12345"}}, "Hello world!"},
		{"POST", "http://foobar.org/fnord/2", http.Header{"Authorization": {"x67890"}}, "Hello world!"},
		{"SUBSCRIBE", "http://foobar.org/sub", http.Header{}, ""},
		{"GET", "http://:6060/", x, ""},
		{"GET", "http://:8000/", x, ""},
	}
	if len(ts) != len(want) {
		t.Fatalf("%d targets, want %d", len(ts), len(want))
	}
	for i, w := range want {
		g := ts[i]
		if g.Method != w.method || g.URL != w.url || !reflect.DeepEqual(g.Header, w.header) || string(g.Body) != w.body {
			t.Errorf("target %d: %s %s %v %q", i, g.Method, g.URL, g.Header, g.Body)
		}
	}
	// The repeated "GET http://:6060/" is numbered, not refused.
	if ts[0].Name != "GET http://:6060/" || ts[6].Name != "GET http://:6060/ #2" {
		t.Errorf("names %q, %q", ts[0].Name, ts[6].Name)
	}
}

func TestReadHTTPGrammar(t *testing.T) {
	src := strings.Join([]string{
		"  # openload: name=checkout weight=2.5",
		"POST http://h/cart",
		"x-lower: kept as written ",
		"# a comment among headers",
		"X-Multi: 1",
		"X-Multi: 2",
		"@body.json",
		"",
		"#openload: name=\"with space\"",
		"GET http://h/a",
		"GET http://h/b", // a METHOD line right after one starts a target
		"\t",
		"PUT http://h/c\r",
		"A: b:c",
	}, "\n")
	ts, err := ReadTargets(strings.NewReader(src), "t.txt", Options{ReadFile: files(map[string]string{"body.json": "{}"})})
	if err != nil {
		t.Fatal(err)
	}
	if len(ts) != 4 {
		t.Fatalf("%d targets: %+v", len(ts), ts)
	}
	c := ts[0]
	if c.Name != "checkout" || c.Weight != 2.5 || c.Line != 2 || c.BodyFile != "body.json" || string(c.Body) != "{}" {
		t.Errorf("first target %+v", c)
	}
	if !reflect.DeepEqual(c.Header, http.Header{"x-lower": {"kept as written"}, "X-Multi": {"1", "2"}}) {
		t.Errorf("header %v", c.Header)
	}
	if ts[1].Name != "with space" || ts[1].Weight != 0 || ts[2].Name != "GET http://h/b" {
		t.Errorf("names %q %q", ts[1].Name, ts[2].Name)
	}
	if ts[3].URL != "http://h/c" || ts[3].Header.Get("A") != "b:c" {
		t.Errorf("last %+v", ts[3])
	}
}

func TestReadJSON(t *testing.T) {
	src := `{"method":"POST","url":"https://h/x","header":{"x-a":["1","2"],"B":null,"C":[]},"body":"e30=","name":"n1","weight":3,"extra":{"deep":[1,2]}}

{"method":"GET","url":"https://h/y","METHOD":"PUT","name":null,"url":"https://h/z"}
{"method":"GET","url":"https://h/last-line-without-newline"}`
	ts, err := ReadTargets(strings.NewReader(src), "t.jsonl", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(ts) != 3 {
		t.Fatalf("%d targets", len(ts))
	}
	a := ts[0]
	if a.Name != "n1" || a.Weight != 3 || string(a.Body) != "{}" || !reflect.DeepEqual(a.Header, http.Header{"x-a": {"1", "2"}}) || a.Line != 1 {
		t.Errorf("first %+v", a)
	}
	// Keys match exactly; the last of a repeated key wins; null is absent.
	if b := ts[1]; b.Method != "GET" || b.URL != "https://h/z" || b.Name != "GET https://h/z" || b.Line != 3 {
		t.Errorf("second %+v", b)
	}
}

func TestFormatOption(t *testing.T) {
	if _, err := ReadTargets(strings.NewReader(`{"method":"GET","url":"http://h/"}`), "f", Options{Format: HTTP}); err == nil {
		t.Error("JSON read as HTTP: no error")
	}
	if _, err := ReadTargets(strings.NewReader("GET http://h/\n"), "f", Options{Format: JSON}); err == nil {
		t.Error("HTTP read as JSON: no error")
	}
	if ts, err := ReadTargets(strings.NewReader("\ufeff\n\n  {\"method\":\"GET\",\"url\":\"http://h/\"}\n"), "f", Options{}); err != nil || len(ts) != 1 {
		t.Errorf("auto after a BOM and blank lines: %v %v", ts, err)
	}
}

func TestReadErrors(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{"", "f: empty: no targets"},
		{"# only a comment\n\n", "f: no targets"},
		{"\n\n", "f: no targets"},
		{"GET", `f:1: bad target "GET"`},
		{"\nDO_WORK http://h/", `f:2: bad method "DO_WORK"`},
		{"DOwork http://h/", `f:1: bad method "DOwork"`},
		{"GET\thttp://h/ x", `f:1: bad method`},
		{"GET foobar", `f:1: bad URL "foobar"`},
		{"GET /path", `f:1: bad URL "/path": no scheme`},
		{"GET ftp://h/", `f:1: bad URL "ftp://h/": scheme "ftp"`},
		{"GET http:///p", `f:1: bad URL "http:///p": no host`},
		{"GET http://{{csv.host}}/", `f:1: bad URL "http://{{csv.host}}/": a template in the scheme or host`},
		{"GET http://h/\nAuthorization", `f:2: bad header "Authorization"`},
		{"GET http://h/\nAuthorization:", `f:2: bad header "Authorization:"`},
		{"GET http://h/\n: 1234", `f:2: bad header ": 1234"`},
		{"GET http://h/\nX: 1\nGET http://h/b", `f:3: bad header name "GET http"`},
		{"GET http://h/\nX: a\x01b", `f:2: bad header "X": control character`},
		{"GET http://h/\n@", `f:2: GET http://h/: @ without a body file path`},
		{"GET http://h/\n@missing.json", `f:2: GET http://h/: body file "missing.json": open missing.json: file does not exist`},
		{"GET http://h/\n@b\nX: 1", `f:3: bad method "X:"`},
		{"# openload: name=a\n# openload: weight=2\nGET http://h/", "f:2: a second openload directive"},
		{"# openload: name=a", "f:1: openload directive with no target after it"},
		{"GET http://h/\n# openload: name=a\nX: 1", "f:2: an openload directive goes before"},
		{"# openload: colour=red\nGET http://h/", `f:1: openload directive: unknown key "colour"`},
		{"# openload:\nGET http://h/", "f:1: empty openload directive"},
		{"# openload: name\nGET http://h/", "f:1: bad openload directive"},
		{"# openload: name=a name=b\nGET http://h/", "f:1: openload directive: name given twice"},
		{"# openload: name=\"a\nGET http://h/", "f:1: bad openload directive: name: unterminated"},
		{"# openload: name=\"a\"b\nGET http://h/", "f:1: bad openload directive: name: text after"},
		{"# openload: name=\"a\\nb\"\nGET http://h/", `f:1: name "a\nb" has a control character`},
		{"# openload: name=\nGET http://h/", "f:1: empty name"},
		{"# openload: weight=0\nGET http://h/", `f:1: bad weight "0"`},
		{"# openload: weight=-1\nGET http://h/", `f:1: bad weight "-1"`},
		{"# openload: weight=NaN\nGET http://h/", `f:1: bad weight "NaN"`},
		{"# openload: weight=+Inf\nGET http://h/", `f:1: bad weight "+Inf"`},
		{"# openload: weight=x\nGET http://h/", `f:1: bad weight "x"`},
		{"# openload: name=a\nGET http://h/\n\n# openload: name=a\nGET http://h/b", `f:5: name "a" is taken by the target on line 2`},
		{"# openload: name=\"GET http://h/\"\nGET http://h/b\nGET http://h/", `f:3: target's default name "GET http://h/" is taken by the target on line 2`},
		// JSON lines.
		{"{}", "f:1: target has no method"},
		{`{"method":""}`, "f:1: target has no method"},
		{`{"method":"GET"}`, "f:1: target has no url"},
		{`{"method":"GET","url":null}`, "f:1: target has no url"},
		{"{\"method\":\"GET\",\"url\":\"http://h/\"}\n{", "f:2: bad JSON target"},
		{`{"method":"GET","url":"http://h/"} x`, "f:1: bad JSON target"},
		{`{"method":1,"url":"http://h/"}`, `f:1: bad "method"`},
		{`{"method":"G T","url":"http://h/"}`, `f:1: bad method "G T"`},
		{`{"method":"GET","url":"h/p"}`, `f:1: bad URL "h/p"`},
		{`{"method":"GET","url":"http://h/","body":"NOT BASE64"}`, `f:1: bad "body" (want base64): illegal base64 data at input byte 3`},
		{`{"method":"GET","url":"http://h/","body":3}`, `f:1: bad "body"`},
		{`{"method":"GET","url":"http://h/","header":{"A":"x"}}`, `f:1: bad "header"`},
		{`{"method":"GET","url":"http://h/","header":{"A B":["x"]}}`, `f:1: bad header name "A B"`},
		{`{"method":"GET","url":"http://h/","header":{"A":["x\ny"]}}`, `f:1: bad header "A": control character`},
		{`{"method":"GET","url":"http://h/","name":""}`, "f:1: empty name"},
		{`{"method":"GET","url":"http://h/","name":7}`, `f:1: bad "name"`},
		{`{"method":"GET","url":"http://h/","weight":0}`, `f:1: bad weight 0`},
		{`{"method":"GET","url":"http://h/","weight":-1e-9}`, `f:1: bad weight -1e-9`},
		{`{"method":"GET","url":"http://h/","weight":1e999}`, `f:1: bad "weight"`},
		{`{"method":"GET","url":"http://h/","weight":"2"}`, `f:1: bad "weight"`},
		{"{\"method\":\"GET\",\"url\":\"http://h/\"}\n{\"method\":\"GET\",\"url\":\"http://h/b\",\"name\":\"GET http://h/\"}", `f:1: target's default name "GET http://h/" is taken by the target on line 2`},
	} {
		_, err := ReadTargets(strings.NewReader(c.src), "f", Options{ReadFile: files(map[string]string{"b": ""})})
		if err == nil {
			t.Errorf("%q: no error, want %q", c.src, c.want)
			continue
		}
		if !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%q:\n got %q\nwant %q…", c.src, err, c.want)
		}
		if strings.ContainsAny(err.Error(), "\n\r") {
			t.Errorf("%q: error on more than one line: %q", c.src, err)
		}
		var e *Error
		if !errors.As(err, &e) {
			t.Errorf("%q: %T, want *Error", c.src, err)
		}
	}
}

func TestReadTargetsFile(t *testing.T) {
	if _, err := ReadTargetsFile(filepath.Join(t.TempDir(), "nope"), Options{}); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
	// A relative @path is the working directory's, as vegeta reads it
	// (os.ReadFile(line[1:])), not the targets file's.
	dir := t.TempDir()
	tf := filepath.Join(dir, "targets.txt")
	if err := os.WriteFile(tf, []byte("POST http://h/\n@testdata/vegeta/json.jsonl\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ts, err := ReadTargetsFile(tf, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(ts[0].Body), "goku") {
		t.Errorf("body %q", ts[0].Body)
	}
}
