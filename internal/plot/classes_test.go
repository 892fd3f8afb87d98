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
