package mix

import (
	"strings"
	"testing"
)

func read(t *testing.T, src string) []Target {
	t.Helper()
	ts, err := ReadTargets(strings.NewReader(src), "t.txt", Options{ReadFile: files(map[string]string{
		"tmpl.json":   `{"id":{{seq}},"user":"{{csv.user}}"}`,
		"static.json": `{"a":{{"{{"}}}`,
		"bad.json":    "{\n  \"x\": {{nope}}\n}",
	})})
	if err != nil {
		t.Fatal(err)
	}
	return ts
}

func TestBuildTemplates(t *testing.T) {
	v := mustValues(t, "user,q\nann,a%20b\nbob,c\n")
	ts := read(t, `# openload: name=static weight=3
GET http://Goku:80/a{{"{{"}}b?x=1#frag
X-Case: kept

# openload: name=varying
POST http://goku/u/{{seq}}?q={{csv.q}}
x-id: {{seq}}-{{rand 1 6}}
X-Static: {{"{{"}}
@tmpl.json

GET http://goku?only={{seq}}

GET http://goku/r/{{rand 1 5}}

PUT http://goku/s
@static.json
`)
	es, weights, err := Build(ts, v, 7)
	if err != nil {
		t.Fatal(err)
	}
	if len(weights) != 5 || weights[0] != 3 || weights[1] != 1 {
		t.Errorf("weights %v, want [3 1 1 1]", weights)
	}
	s := es[0]
	if s.Path != nil || s.Headers != nil || s.BodyT != nil {
		t.Error("static target has templates")
	}
	if s.URL.Path != "/a{{b" || s.URL.RawQuery != "x=1" || s.URL.Fragment != "frag" || s.Header.Get("X-Case") != "kept" || s.Name != "static" {
		t.Errorf("static target %+v", s)
	}
	p := es[1]
	if p.Path == nil || p.BodyT == nil || p.Body != nil {
		t.Fatalf("varying target %+v", p)
	}
	if got := string(p.Path.Append(nil, 1)); got != "/u/1?q=c" {
		t.Errorf("path %q", got)
	}
	if got := string(p.BodyT.Append(nil, 2)); got != `{"id":2,"user":"ann"}` {
		t.Errorf("body %q", got)
	}
	h, ok := p.Headers["x-id"] // as written in the file
	if !ok || len(p.Headers) != 1 {
		t.Fatalf("headers %v", p.Headers)
	}
	if got := string(h.Append(nil, 5)); !strings.HasPrefix(got, "5-") || len(got) != 3 || got[2] < '1' || got[2] > '6' {
		t.Errorf("x-id %q", got)
	}
	// Header keeps names as written (vegeta's case), so look by range.
	for k := range p.Header {
		if strings.EqualFold(k, "x-id") {
			t.Error("templated header also in Header")
		}
	}
	if p.Header.Get("X-Static") != "{{" {
		t.Errorf("X-Static %q", p.Header.Get("X-Static"))
	}
	// A query with no path starts the request target at "/".
	if got := string(es[2].Path.Append(nil, 9)); got != "/?only=9" {
		t.Errorf("query-only %q", got)
	}
	if got := string(es[3].Path.Append(nil, 0)); len(got) != 4 || got[:3] != "/r/" || got[3] < '1' || got[3] > '5' {
		t.Errorf("rand in the path: %q", got)
	}
	if string(es[4].Body) != `{"a":{{}` || es[4].BodyT != nil {
		t.Errorf("static body %q", es[4].Body)
	}
	// The same seed builds the same draws; another, others.
	es2, _, _ := Build(ts, v, 7)
	es3, _, _ := Build(ts, v, 8)
	diff := 0
	for seq := range uint64(100) {
		a := string(es[1].Headers["x-id"].Append(nil, seq))
		if a != string(es2[1].Headers["x-id"].Append(nil, seq)) {
			t.Fatal("not reproducible")
		}
		if a != string(es3[1].Headers["x-id"].Append(nil, seq)) {
			diff++
		}
	}
	if diff == 0 {
		t.Error("seeds 7 and 8 draw alike")
	}
}

func TestBuildRoundRobin(t *testing.T) {
	_, w, err := Build(read(t, "GET http://h/a\nGET http://h/b\n"), nil, 0)
	if err != nil || w != nil {
		t.Errorf("weights %v, %v; want nil", w, err)
	}
}

func TestBuildErrors(t *testing.T) {
	v := mustValues(t, "sp,ctl\na b,x\n")
	for _, c := range []struct{ src, want string }{
		{"GET http://h/a\nGET https://h/b", "t.txt:2: GET https://h/b: origin https://h:443 is not the first target's, http://h:80"},
		{"GET http://h/a\nGET http://h:8080/b", "t.txt:2: GET http://h:8080/b: origin http://h:8080"},
		{"GET http://h/a\nGET http://i/b", "origin http://i:80"},
		{"GET http://h/{{nope}}", "t.txt:1: GET http://h/{{nope}}: in the URL, at byte 9: unknown placeholder {{nope}}"},
		{"GET http://h/{{csv.x}}", `in the URL, at byte 9: {{csv.x}}: v.csv has no column "x"`},
		{"GET http://h/#{{seq}}", "a template in the URL's fragment"},
		{"GET http://h/{{seq}}/a b", "in the URL: byte ' ' must be percent-encoded"},
		{"GET http://h/{{csv.sp}}", `in the URL, at byte 9: v.csv:2: column "sp"'s value "a b" must be percent-encoded`},
		{"GET http://h/\nX: {{bad", `t.txt:1: GET http://h/: in header X, at byte 0: "{{" without "}}"`},
		{"GET http://h/\nHost: {{seq}}", "a template in the Host header"},
		{"GET http://h/\nX: {{seq}}\nX: 2", "header X: a header with a template has one value"},
		{"GET http://h/\nX: {{seq}}\nx: 2", "a header with a template has one value"},
		{"GET http://h/\nX: {{\"\\n\"}}", "header X: control character"},
		{"GET http://h/\nX: {{seq}}{{\"\\r\"}}", "header X: control character"},
		{"POST http://h/\n@bad.json", "t.txt:1: POST http://h/: in body file bad.json, line 2 column 8: unknown placeholder {{nope}}"},
		{"GET http://h/{{\"\\n\"}}", `bad URL`},
	} {
		ts := read(t, c.src)
		_, _, err := Build(ts, v, 0)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q:\n got %v\nwant …%s…", c.src, err, c.want)
		}
	}
	// What a hand-made []Target can hold that a file cannot.
	ok := Target{Name: "a", Method: "GET", URL: "http://h/", File: "f", Line: 1}
	for _, c := range []struct {
		mod  func(*Target)
		want string
	}{
		{func(t *Target) { t.Name = "" }, "empty name"},
		{func(t *Target) { t.Method = "G T" }, `bad method "G T"`},
		{func(t *Target) { t.Weight = -1 }, "bad weight -1"},
		{func(t *Target) { t.URL = "h/" }, `bad URL "h/"`},
		{func(t *Target) { t.Header = map[string][]string{"A B": {"x"}} }, `bad header name "A B"`},
		{func(t *Target) { t.Header = map[string][]string{"A": {"x\r\n"}} }, "header A: control character"},
		{func(t *Target) { t.Name = "a" }, "name taken by target 1 (f:1)"},
	} {
		b := ok
		b.Name = "b"
		c.mod(&b)
		_, _, err := Build([]Target{ok, b}, nil, 0)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v", c.want, err)
		}
	}
	if _, _, err := Build(nil, nil, 0); err == nil {
		t.Error("no targets: no error")
	}
	// Checked on the count: a table over the bound is too big to make in
	// a test.
	if err := tooManyTargets("big.http", 1<<20+1); err.Error() != "big.http: 1048577 targets, over the 1048576 a run holds (each is kept parsed in memory for the whole run)" {
		t.Errorf("too many: %v", err)
	}
}
