package mix

import (
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/openload/openload/internal/engine"
)

var _ engine.Template = (*Template)(nil)

func mustValues(t testing.TB, src string) *Values {
	t.Helper()
	v, err := ReadValues(strings.NewReader(src), "v.csv")
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func mustTemplate(t testing.TB, src string, v *Values, seed uint64) *Template {
	t.Helper()
	tp, err := ParseTemplate(src, v, seed)
	if err != nil {
		t.Fatal(err)
	}
	return tp
}

func TestTemplateText(t *testing.T) {
	v := mustValues(t, "id,name\n7,ann\n8,bob\n9,\"c,d\"\n")
	for _, c := range []struct {
		src  string
		seq  uint64
		want string
	}{
		{"/a/{{seq}}", 41, "/a/41"},
		{"{{ seq }}-{{seq}}", 0, "0-0"},
		{"{{csv.id}}:{{csv.name}}", 0, "7:ann"},
		{"{{csv.id}}:{{csv.name}}", 4, "8:bob"},
		{"{{csv.name}}", 2, "c,d"},
		{"{{rand 5 5}}", 123, "5"},
		{"{{rand -3 -3}}", 1, "-3"},
		{`{{"{{"}}seq}}`, 1, "{{seq}}"},
		{`a{{ "}}" }}b`, 1, "a}}b"},
		{`{{"\u00e9\n"}}`, 1, "é\n"},
		{"{ } }} {x}", 1, "{ } }} {x}"},
		{"", 1, ""},
	} {
		tp := mustTemplate(t, c.src, v, 1)
		if got := string(tp.Append(nil, c.seq)); got != c.want {
			t.Errorf("%q at %d: %q, want %q", c.src, c.seq, got, c.want)
		}
		if tp.String() != c.src {
			t.Errorf("String %q, want %q", tp, c.src)
		}
	}
	for src, static := range map[string]bool{"abc": true, `x{{"{{"}}`: true, "": true, "{{seq}}": false, "{{rand 1 2}}": false, "{{csv.id}}": false} {
		if got := mustTemplate(t, src, v, 0).Static(); got != static {
			t.Errorf("%q: Static %v", src, got)
		}
	}
}

func TestTemplateErrors(t *testing.T) {
	v := mustValues(t, "id,name\n1,a\n")
	for _, c := range []struct {
		src  string
		vals *Values
		want string
	}{
		{"a{{seq", v, `at byte 1: "{{" without "}}"`},
		{"{{", v, `at byte 0: "{{" without "}}"`},
		{"ab{{nope}}", v, "at byte 2: unknown placeholder {{nope}}"},
		{"{{}}", v, "at byte 0: unknown placeholder {{}}"},
		{"{{Seq}}", v, "at byte 0: unknown placeholder {{Seq}}"},
		{"{{rand}}", v, "at byte 0: {{rand}}: want {{rand A B}}"},
		{"{{rand 1}}", v, "want {{rand A B}}"},
		{"{{rand 1 2 3}}", v, "want {{rand A B}}"},
		{"{{rand a 2}}", v, "A and B must be integers"},
		{"{{rand 1 99999999999999999999}}", v, "A and B must be integers"},
		{"{{rand 3 2}}", v, "{{rand 3 2}}: A > B"},
		{"x{{csv.id}}", nil, "at byte 1: {{csv.id}} needs a values file"},
		{"{{csv.zip}}", v, `{{csv.zip}}: v.csv has no column "zip" (it has id, name)`},
		{`{{"a}}`, v, `bad quoted text`},
		{`{{"a" x}}`, v, `without "}}" after the quoted text`},
	} {
		_, err := ParseTemplate(c.src, c.vals, 0)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want …%s…", c.src, err, c.want)
		}
	}
}

func TestSeqDistinct(t *testing.T) {
	tp := mustTemplate(t, "/item/{{seq}}?r={{rand 0 9}}", nil, 3)
	seen := map[string]bool{}
	for seq := range uint64(10000) {
		s := string(tp.Append(nil, seq))
		if seen[s] {
			t.Fatalf("seq %d repeats %q", seq, s)
		}
		seen[s] = true
	}
}

// TestUIDDistinct: the {{seq}} of two scenarios collide (each counts
// from 0); their {{uid}} do not, and without a scope {{uid}} is {{seq}}.
func TestUIDDistinct(t *testing.T) {
	seqs, uids := map[string]int{}, map[string]bool{}
	for i := range uint64(3) {
		tp := mustTemplate(t, "{{seq}}", nil, 3)
		tu := mustTemplate(t, "{{uid}}", nil, 3).In(Scope{Of: 3, Index: i})
		for seq := range uint64(1000) {
			seqs[string(tp.Append(nil, seq))]++
			u := string(tu.Append(nil, seq))
			if uids[u] {
				t.Fatalf("scenario %d, seq %d: uid %s repeats", i, seq, u)
			}
			uids[u] = true
		}
	}
	if len(seqs) != 1000 || len(uids) != 3000 {
		t.Errorf("%d distinct seqs, %d distinct uids; want 1000 and 3000", len(seqs), len(uids))
	}
	if got := string(mustTemplate(t, "{{ uid }}", nil, 3).Append(nil, 42)); got != "42" {
		t.Errorf("{{uid}} of seq 42 in a run of one schedule: %q", got)
	}
}

// TestRand checks bounds, reproducibility, independence of the
// placeholders and, loosely, uniformity.
func TestRand(t *testing.T) {
	tp := mustTemplate(t, "{{rand -2 7}} {{rand -2 7}}", nil, 99)
	again := mustTemplate(t, "{{rand -2 7}} {{rand -2 7}}", nil, 99)
	other := mustTemplate(t, "{{rand -2 7}} {{rand -2 7}}", nil, 100)
	const n = 100000
	counts := map[int64]int{}
	same, sameSeed := 0, 0
	for seq := range uint64(n) {
		got := string(tp.Append(nil, seq))
		if got != string(again.Append(nil, seq)) {
			t.Fatalf("seq %d: not reproducible", seq)
		}
		if got == string(other.Append(nil, seq)) {
			sameSeed++
		}
		a, b, _ := strings.Cut(got, " ")
		x, _ := strconv.ParseInt(a, 10, 64)
		y, _ := strconv.ParseInt(b, 10, 64)
		if x < -2 || x > 7 || y < -2 || y > 7 {
			t.Fatalf("seq %d: %q out of [-2, 7]", seq, got)
		}
		if x == y {
			same++
		}
		counts[x]++
	}
	if len(counts) != 10 {
		t.Errorf("%d distinct values, want 10", len(counts))
	}
	// Each value's count is Binomial(n, 1/10): mean 10,000, sd 95; 6 sd
	// is 570, wide enough never to fail by chance.
	for x, c := range counts {
		if c < n/10-600 || c > n/10+600 {
			t.Errorf("value %d drawn %d times of %d", x, c, n)
		}
	}
	// Two placeholders agree 1 time in 10 if independent (sd 95); a
	// shared stream would make it every time.
	if same < n/10-600 || same > n/10+600 {
		t.Errorf("the two placeholders agree %d times of %d", same, n)
	}
	// Another seed: both values agree 1 in 100 (sd 31).
	if sameSeed > n/100+300 {
		t.Errorf("seeds 99 and 100 agree %d times of %d", sameSeed, n)
	}
	full := mustTemplate(t, "{{rand -9223372036854775808 9223372036854775807}}", nil, 1)
	if a, b := string(full.Append(nil, 1)), string(full.Append(nil, 2)); a == b {
		t.Errorf("full range: %s twice", a)
	}
}

func TestCSVCycles(t *testing.T) {
	v := mustValues(t, "k\na\nb\nc\n")
	tp := mustTemplate(t, "{{csv.k}}", v, 0)
	var got []string
	for seq := range uint64(7) {
		got = append(got, string(tp.Append(nil, seq)))
	}
	if s := strings.Join(got, ""); s != "abcabca" {
		t.Errorf("%s, want abcabca", s)
	}
}

func TestValuesErrors(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{"", "v.csv: empty"},
		{"a,b\n", "v.csv:1: a header row and no rows"},
		{"a,a\n1,2\n", `v.csv:1: column "a" named twice`},
		{"a,\n1,2\n", "v.csv:1: column 2 has no name"},
		{"a,b\n1,2\n3\n", "v.csv:3: column 1: wrong number of fields"},
		{"a\n\"x\n", "v.csv:2: column"},
	} {
		_, err := ReadValues(strings.NewReader(c.src), "v.csv")
		if err == nil || !strings.HasPrefix(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: %v, want %s…", c.src, err, c.want)
		}
	}
	v := mustValues(t, "\ufeffid,x\n1,2\n3,4\n")
	if v.Rows() != 2 || strings.Join(v.Columns(), ",") != "id,x" || v.File() != "v.csv" {
		t.Errorf("rows %d, columns %v", v.Rows(), v.Columns())
	}
}

func TestTemplateConcurrent(t *testing.T) {
	v := mustValues(t, "k\na\nb\n")
	tp := mustTemplate(t, "/{{seq}}/{{rand 1 1000}}/{{csv.k}}", v, 5)
	want := make([]string, 1000)
	for i := range want {
		want[i] = string(tp.Append(nil, uint64(i)))
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			var buf []byte
			for i := range want {
				if buf = tp.Append(buf[:0], uint64(i)); string(buf) != want[i] {
					t.Errorf("seq %d: %q, want %q", i, buf, want[i])
					return
				}
			}
		})
	}
	wg.Wait()
}

func TestAppendAllocs(t *testing.T) {
	v := mustValues(t, "user\nalice\nbob\n")
	tp := mustTemplate(t, `{"user":"{{csv.user}}","n":{{seq}},"r":{{rand -1000000 1000000}},"lit":"{{"{{"}}"}`, v, 1)
	buf := make([]byte, 0, 256)
	seq := uint64(0)
	if a := testing.AllocsPerRun(1000, func() {
		buf = tp.Append(buf[:0], seq)
		seq++
	}); a != 0 {
		t.Errorf("%v allocations per Append, want 0", a)
	}
}

func BenchmarkAppend(b *testing.B) {
	v := mustValues(b, "user\nalice\nbob\n")
	tp := mustTemplate(b, `{"user":"{{csv.user}}","n":{{seq}},"r":{{rand -1000000 1000000}}}`, v, 1)
	buf := make([]byte, 0, 256)
	b.ReportAllocs()
	var seq uint64
	for b.Loop() {
		buf = tp.Append(buf[:0], seq)
		seq++
	}
}
