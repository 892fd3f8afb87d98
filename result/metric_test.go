package result

import (
	"slices"
	"testing"
)

// TestMetricTable holds each row to the result it names: a histogram
// row's histogram is one the result file keeps (Histograms.named), a row
// with a reader reads the result's own field, a part's figure is a time
// a part keeps or a share, a scenario's figure is a run's that no part
// has, and each name finds its own row.
func TestMetricTable(t *testing.T) {
	var h Histograms
	var kept []string
	for _, p := range h.named() {
		kept = append(kept, p.name)
	}
	r := &Result{Stream: &StreamResult{}, Sessions: &Sessions{}}
	part := &Part{Stream: &PartStream{}}
	seen := map[string]bool{}
	for _, m := range MetricTable() {
		if seen[m.Name] {
			t.Errorf("%s: two rows", m.Name)
		}
		seen[m.Name] = true
		if got, ok := LookupMetric(m.Name); !ok || got.Name != m.Name {
			t.Errorf("LookupMetric(%q) = %q, %v", m.Name, got.Name, ok)
		}
		if m.Histogram && !slices.Contains(kept, m.Name) {
			t.Errorf("%s: a histogram the result does not keep", m.Name)
		}
		if m.Of != nil && (m.Of(r) == nil || m.Share) {
			t.Errorf("%s: Of reads nothing from a full result, or reads a share", m.Name)
		}
		if (m.OfPart != nil) != (m.Part && !m.Share) || m.OfPart != nil && m.OfPart(part) == nil {
			t.Errorf("%s: Part %v, Share %v, OfPart %v", m.Name, m.Part, m.Share, m.OfPart != nil)
		}
		if (m.Samples != 0) != (m.Of != nil) {
			t.Errorf("%s: Samples %v, but Of %v", m.Name, m.Samples, m.Of != nil)
		}
		if m.Scenario && (m.Part || m.Objective == "") {
			t.Errorf("%s: a scenario's figure that a part has too, or that no objective names", m.Name)
		}
	}
	if m, ok := LookupMetric("server.queue"); !ok || m.Prefix != "server." {
		t.Errorf("server.queue: %+v", m)
	}
	if _, ok := LookupMetric("ttfb"); ok {
		t.Error("ttfb: a row")
	}
	for _, m := range MetricTable() {
		if (m.Samples == OfStreams || m.Samples == OfSessions) && m.Of(&Result{}) != nil {
			t.Errorf("%s: a figure of a run that streamed nothing, or had no sessions", m.Name)
		}
		if m.OfPart != nil && m.Samples == OfStreams && m.OfPart(&Part{}) != nil {
			t.Errorf("%s: a figure of a part that streamed nothing", m.Name)
		}
	}
	for _, name := range []string{"session", "sessions_ended_early", "grpc.CODE"} {
		if m, ok := LookupMetric(name); !ok || !m.Scenario {
			t.Errorf("%s: %+v, want a scenario's figure", name, m)
		}
	}
}
