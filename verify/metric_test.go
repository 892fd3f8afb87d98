package verify

import (
	"strings"
	"testing"

	"github.com/openload/openload/result"
)

// TestMeasuresEveryMetric: every figure of result.MetricTable an
// objective may name is parsed back to its row and has a reader (the
// row's Of, or one of computed), and the unknown-metric error lists the
// table's names, so that a new row is judged without an edit here.
func TestMeasuresEveryMetric(t *testing.T) {
	var names []string
	for _, e := range grammar() {
		o, err := ParseObjective(e)
		if err != nil {
			t.Fatalf("%s: %v", e, err)
		}
		m, ok := result.LookupMetric(o.Metric)
		if !ok || m.Objective == "" || m.Share != (o.Share || m.Count && o.Count) {
			t.Errorf("%s: metric %q reads as row %+v", e, o.Metric, m)
		}
		if m.Of == nil && computed[m.Name] == nil {
			t.Errorf("%s: no reader for %s", e, m.Name)
		}
	}
	for _, m := range result.MetricTable() {
		if m.Objective != "" {
			names = append(names, m.Objective)
		}
		if computed[m.Name] != nil && m.Of != nil {
			t.Errorf("%s: read twice, by its Of and by computed", m.Name)
		}
	}
	for name := range computed {
		if m, ok := result.LookupMetric(name); !ok || m.Name != name || m.Objective == "" {
			t.Errorf("computed reads %q, which the table has not as an objective's", name)
		}
	}
	_, err := ParseObjective("latency.p99<=1ms")
	if want := "(known metrics: " + strings.Join(names, ", ") + ")"; err == nil || !strings.HasSuffix(err.Error(), want) {
		t.Errorf("unknown metric: %v, want it to end %q", err, want)
	}
}
