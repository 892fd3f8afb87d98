package report_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/openload/openload/internal/golden"
	"github.com/openload/openload/internal/report"
	"github.com/openload/openload/result"
)

// TestDiffTableSmallRatios: a ratio below 1 keeps two significant digits
// (0.661 vs 132.863 ms is ×0.0050, never ×0.00), and a difference that
// rounds to zero is +0.000, never -0.000.
func TestDiffTableSmallRatios(t *testing.T) {
	a := result.Percentiles{P50: 132.863, P90: 10, P95: 10, P99: 10, P999: 997.887, P9999: 1, Max: 1, Mean: 4}
	b := result.Percentiles{P50: 0.661, P90: 5, P95: 0.5, P99: 0, P999: 2.861, P9999: 1.0000004, Max: 0.9999996, Mean: 4}
	var out bytes.Buffer
	if err := report.DiffTable(&out, report.Side{Label: "A", P: a}, report.Side{Label: "B", P: b}); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "diff-small-ratios.golden", out.String())
	for _, bad := range []string{"×0.00 ", "-0.000"} {
		if strings.Contains(out.String(), bad) {
			t.Errorf("table prints %q:\n%s", bad, out.String())
		}
	}
}
