package plot

import (
	"fmt"
	"maps"
	"slices"

	"github.com/openload/openload/result"
)

// ClassTimelineCharts is one chart per class header whose per-second
// counts the result holds (recorder.Second.Classes): a line per value,
// answers per second by the second they ended in, so that a cause active
// for a while (an injected fault's window) shows as its value's line
// rising then and only then. Lines are in the class table's order (by
// count), then values only warm-up requests had; a value's line goes to
// the run's end, as the completed line of the timeline does.
func ClassTimelineCharts(res *result.Result) []Chart {
	sched, end := Ends(res)
	var out []Chart
	for i, t := range res.Classes {
		seen := map[string]bool{}
		for _, s := range res.Timeline {
			for v := range s.Classes[t.Header] {
				seen[v] = true
			}
		}
		if len(seen) == 0 {
			continue
		}
		var values []string
		for _, v := range t.Values {
			if seen[v.Value] {
				values = append(values, v.Value)
				delete(seen, v.Value)
			}
		}
		values = append(values, slices.Sorted(maps.Keys(seen))...)
		c := Chart{ID: fmt.Sprintf("class-%d-seconds", i), Title: t.Header + " per second", Subtitle: []string{Identity(res)},
			Note:   "requests by the second they ended in, by the header's value",
			XLabel: "seconds from the start", YLabel: "requests per second", Unit: "/s", XMin: 0, XMax: end}
		if res.Warmup != nil {
			c.Note += " (warm-up included)"
		}
		layers := []Style{under, solid, dashed, dotted}
		colors := []string{blue, orange, vermillion, green, purple, grey}
		for k, v := range values {
			counts := make([]int64, len(res.Timeline))
			for j, s := range res.Timeline {
				counts[j] = s.Classes[t.Header][v]
			}
			s := perSecond(counts, end)
			s.Name, s.Style = v, layers[k%len(layers)].in(colors[k%len(colors)])
			c.Series = append(c.Series, s)
		}
		if end > sched {
			c.Spans = append(c.Spans, Span{From: sched, To: end, Label: "drain (schedule over)"})
		}
		out = append(out, c)
	}
	return out
}
