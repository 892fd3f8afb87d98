package mix

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzReadTargets checks that every error is one line naming the file,
// and that whatever reads writes back, as JSON lines and (when the HTTP
// format can say it) as the HTTP format, to the same targets.
func FuzzReadTargets(f *testing.F) {
	seeds, _ := filepath.Glob("testdata/vegeta/*")
	for _, p := range seeds {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte("# openload: name=\"a b\" weight=2\nPOST http://h/{{seq}}?r={{rand 1 9}}\nX-A: {{csv.k}}\n@b\n\nGET http://h/x\nGET http://h/x\n"))
	f.Add([]byte(`{"method":"GET","url":"http://h/","header":{"A":[" x"]},"name":"n","weight":0.5,"body":"e3tzZXF9fQ=="}` + "\n"))
	bodies := files(map[string]string{"b": "{{seq}}", "/path/to/newthing.json": "{}", "/path/to/thing-71988591.json": "[]", "BODY": "x"})
	f.Fuzz(func(t *testing.T, data []byte) {
		ts, err := ReadTargets(strings.NewReader(string(data)), "f", Options{ReadFile: bodies})
		if err != nil {
			if s := err.Error(); strings.ContainsAny(s, "\n\r") || !strings.HasPrefix(s, "f:") {
				t.Fatalf("error not one line naming the file: %q", s)
			}
			return
		}
		// Build must not panic whatever it is given (it may refuse).
		_, _, _ = Build(ts, nil, 1)

		// JSON strings are UTF-8; a header value need not be (obs-text).
		if utf8Headers(ts) {
			again, err := ReadTargets(strings.NewReader(writeJSON(t, ts)), "f", Options{})
			if err != nil {
				t.Fatalf("re-reading as JSON: %v\n%s", err, writeJSON(t, ts))
			}
			same(t, "JSON", ts, again)
		}

		if src, bodies, ok := writeHTTP(ts); ok {
			again, err := ReadTargets(strings.NewReader(src), "f", Options{ReadFile: files(bodies)})
			if err != nil {
				t.Fatalf("re-reading as HTTP: %v\n%s", err, src)
			}
			same(t, "HTTP", ts, again)
		}
	})
}

func utf8Headers(ts []Target) bool {
	for _, x := range ts {
		for k, vs := range x.Header {
			if !utf8.ValidString(k) {
				return false
			}
			for _, v := range vs {
				if !utf8.ValidString(v) {
					return false
				}
			}
		}
	}
	return true
}

func same(t *testing.T, how string, a, b []Target) {
	t.Helper()
	if len(a) != len(b) {
		t.Fatalf("%s: %d targets, then %d", how, len(a), len(b))
	}
	for i := range a {
		x, y := a[i], b[i]
		if x.Name != y.Name || x.Method != y.Method || x.URL != y.URL || x.Weight != y.Weight ||
			string(x.Body) != string(y.Body) || !reflect.DeepEqual(x.Header, y.Header) {
			t.Fatalf("%s: target %d\n%+v\nbecame\n%+v", how, i, x, y)
		}
	}
}

// writeJSON writes ts as vegeta's JSON lines with openload's name and
// weight.
func writeJSON(t *testing.T, ts []Target) string {
	var b strings.Builder
	for _, x := range ts {
		m := map[string]any{"method": x.Method, "url": x.URL, "name": x.Name, "header": x.Header}
		if len(x.Body) > 0 {
			m["body"] = base64.StdEncoding.EncodeToString(x.Body)
		}
		if x.Weight != 0 {
			m["weight"] = x.Weight
		}
		line, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	return b.String()
}

// writeHTTP writes ts in the HTTP format, bodies as @files, unless the
// format cannot hold one of them (a lower-case method, a value with
// white space at its ends, a header named like a comment, …).
func writeHTTP(ts []Target) (string, map[string]string, bool) {
	var b strings.Builder
	bodies := map[string]string{}
	for i, x := range ts {
		if strings.TrimLeft(x.Method, "ABCDEFGHIJKLMNOPQRSTUVWXYZ") != "" || x.URL != strings.TrimSpace(x.URL) {
			return "", nil, false
		}
		fmt.Fprintf(&b, "# openload: name=%s", strconv.Quote(x.Name))
		if x.Weight != 0 {
			fmt.Fprintf(&b, " weight=%s", strconv.FormatFloat(x.Weight, 'g', -1, 64))
		}
		fmt.Fprintf(&b, "\n%s %s\n", x.Method, x.URL)
		names := make([]string, 0, len(x.Header))
		for k := range x.Header {
			names = append(names, k)
		}
		slices.Sort(names)
		for _, k := range names {
			if k[0] == '#' {
				return "", nil, false
			}
			for _, v := range x.Header[k] {
				if v == "" || v != strings.TrimSpace(v) {
					return "", nil, false
				}
				fmt.Fprintf(&b, "%s: %s\n", k, v)
			}
		}
		if len(x.Body) > 0 {
			p := fmt.Sprintf("body%d", i)
			bodies[p] = string(x.Body)
			fmt.Fprintf(&b, "@%s\n", p)
		}
		b.WriteByte('\n')
	}
	return b.String(), bodies, true
}
