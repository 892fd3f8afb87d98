package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/openload/openload/result"
)

// TestClassSecondsAndRest: a table holding "none" shows the other values
// per 100 of the rest, blank for none and (none); a short run's seconds
// are a table, a value's row summing to the counts of its seconds; a long
// run's are a pointer to where they are.
func TestClassSecondsAndRest(t *testing.T) {
	h := "X-Stub-Shadow"
	ct := result.ClassTable{Header: h, Values: []result.ClassValue{
		{Value: "none", Count: 6, Share: 0.6},
		{Value: "scored", Count: 3, Share: 0.3, Per100Rest: 75},
		{Value: "shed-stale", Count: 1, Share: 0.1, Per100Rest: 25},
		{Value: result.NoClass, Count: 1, Share: 0.1},
	}}
	res := &result.Result{Classes: []result.ClassTable{ct}, Timeline: []result.Second{
		{Classes: map[string]map[string]int64{h: {"none": 4, "scored": 2}}},
		{Classes: map[string]map[string]int64{h: {"none": 2, "scored": 1, "shed-stale": 1, result.NoClass: 1, "warm": 1}}},
	}}
	var b bytes.Buffer
	if err := ClassTable(&b, ct); err != nil {
		t.Fatal(err)
	}
	if err := ClassSeconds(&b, res, ct); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"per 100 of the rest", "│ scored     │     3 │ 30.0 % │                75.0 │",
		"│ none       │     6 │ 60.0 % │                     │", "│ ended in second │ 0 │ 1 │",
		"│ none            │ 4 │ 2 │", "│ shed-stale      │ 0 │ 1 │", "│ warm            │ 0 │ 1 │"} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in\n%s", want, out)
		}
	}
	// A table shown unasked: no seconds.
	b.Reset()
	ct.Auto = true
	if err := ClassSeconds(&b, res, ct); err != nil || b.Len() != 0 {
		t.Errorf("auto table: %v, %q", err, b.String())
	}
	ct.Auto = false
	// Without "none", no such column; a long run: one line.
	ct.Values = ct.Values[1:3]
	ct.Values[0].Per100Rest, ct.Values[1].Per100Rest = 0, 0
	res.Timeline = append(res.Timeline, make([]result.Second, maxClassSeconds)...)
	b.Reset()
	if err := ClassTable(&b, ct); err != nil {
		t.Fatal(err)
	}
	if err := ClassSeconds(&b, res, ct); err != nil {
		t.Fatal(err)
	}
	if out := b.String(); strings.Contains(out, "rest") || !strings.HasSuffix(out, "X-Stub-Shadow per second: in the JSON timeline (classes) and the HTML report's chart\n") {
		t.Errorf("got\n%s", out)
	}
}
