package stub

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestMetricsDocumented: docs/REFERENCE.md's table names every metric,
// and every stub_ name the Grafana dashboard queries exists.
func TestMetricsDocumented(t *testing.T) {
	ref, err := os.ReadFile(filepath.Join("..", "..", "docs", "REFERENCE.md"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, m := range stubMetrics {
		names = append(names, m.name)
		if !strings.Contains(string(ref), "`"+m.name+"`") {
			t.Errorf("docs/REFERENCE.md does not name %s", m.name)
		}
	}
	dash, err := os.ReadFile(filepath.Join("..", "..", "deploy", "grafana", "openload.json"))
	if err != nil {
		t.Fatal(err)
	}
	used := regexp.MustCompile(`\bstub_[a-z_]+`).FindAllString(string(dash), -1)
	if len(used) == 0 {
		t.Error("the dashboard queries no stub metric")
	}
	for _, u := range used {
		if !slices.Contains(names, u) {
			t.Errorf("the dashboard queries %s, which the stub does not expose", u)
		}
	}
}
