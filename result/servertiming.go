package result

import (
	"maps"
	"slices"
)

// ServerMetric summarises one Server-Timing metric over the run, in ms.
type ServerMetric struct {
	Name        string      `json:"name"`
	Percentiles Percentiles `json:"percentiles"`
	Histogram   string      `json:"histogram"`
}

// mergeServerTiming adds b's Server-Timing metrics to a's by name, sorted
// by name.
func mergeServerTiming(a, b []ServerMetric, m *merger) []ServerMetric {
	sums := map[string]ServerMetric{}
	for _, ms := range [...][]ServerMetric{a, b} {
		for _, x := range ms {
			s := sums[x.Name]
			s.Name = x.Name
			s.Histogram, s.Percentiles = m.hist(s.Histogram, x.Histogram, "Server-Timing "+x.Name)
			sums[x.Name] = s
		}
	}
	var out []ServerMetric
	for _, name := range slices.Sorted(maps.Keys(sums)) {
		out = append(out, sums[name])
	}
	return out
}
