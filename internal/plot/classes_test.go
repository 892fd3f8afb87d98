package plot

import (
	"slices"
	"testing"

	"github.com/openload/openload/result"
)

// TestClassTimelineCharts: one line per value, in the table's order then
// warm-up-only values, each second's count as its rate; no chart for a
// table whose seconds the result does not hold.
func TestClassTimelineCharts(t *testing.T) {
	h := "X-Stub-Shadow"
	res := &result.Result{Config: result.Config{Duration: "3s"}, Elapsed: 3,
		Classes: []result.ClassTable{
			{Header: "X-Old"},
			{Header: h, Values: []result.ClassValue{{Value: "none", Count: 9}, {Value: "shed-stale", Count: 4}}},
		},
		Timeline: []result.Second{
			{Classes: map[string]map[string]int64{h: {"none": 3, "warm": 1}}},
			{Classes: map[string]map[string]int64{h: {"none": 3, "shed-stale": 4}}},
			{Classes: map[string]map[string]int64{h: {"none": 3}}},
		}}
	cs := ClassTimelineCharts(res)
	if len(cs) != 1 || cs[0].ID != "class-1-seconds" {
		t.Fatalf("charts %+v", cs)
	}
	var names []string
	for _, s := range cs[0].Series {
		names = append(names, s.Name)
	}
	if !slices.Equal(names, []string{"none", "shed-stale", "warm"}) {
		t.Errorf("lines %v", names)
	}
	if s := cs[0].Series[1]; !slices.Equal(s.X, []float64{0, 1, 2}) || !slices.Equal(s.Y, []float64{0, 4, 0}) || s.Step != 1 {
		t.Errorf("shed-stale %+v", s)
	}
}

// TestClassCharts: a bar per value, its share of 0–100 and a label with
// share and count; shares that round to 0 or 100 but are neither say so.
func TestClassCharts(t *testing.T) {
	res := &result.Result{Classes: []result.ClassTable{{Header: "X-Stub-Source", Values: []result.ClassValue{
		{Value: "model", Count: 244, Share: 244.0 / 360}, {Value: "fallback", Count: 116, Share: 116.0 / 360},
	}}}}
	cs := ClassCharts(res)
	if len(cs) != 1 || cs[0].ID != "class-0" || cs[0].Unit != "%" || !slices.Equal(cs[0].Bars, []string{"model", "fallback"}) {
		t.Fatalf("charts %+v", cs)
	}
	if s := cs[0].Series[0]; !slices.Equal(s.Labels, []string{"67.8 % (244)", "32.2 % (116)"}) || s.X[1] != 1 {
		t.Errorf("bars %+v", s)
	}
	for _, c := range []struct {
		pct   float64
		count int64
		want  string
	}{{100, 5, "100 % (5)"}, {99.99, 9999, ">99.9 % (9999)"}, {0.01, 1, "<0.1 % (1)"}, {0, 0, "0.0 % (0)"}, {50, 2, "50.0 % (2)"}} {
		if got := shareLabel(c.pct, c.count); got != c.want {
			t.Errorf("shareLabel(%v, %d) = %q, want %q", c.pct, c.count, got, c.want)
		}
	}
}
