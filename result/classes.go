package result

import (
	"cmp"
	"maps"
	"slices"
)

// ClassTable is the breakdown of requests by one response header's value.
type ClassTable struct {
	Header string       `json:"header"`
	Values []ClassValue `json:"values"` // by count, largest first
	// Auto: the header was looked for without being asked
	// (Recorder.TrackClassesSeen), and responses carried it.
	Auto bool `json:"auto,omitempty"`
}

// Counts is the table as value → count.
func (t ClassTable) Counts() map[string]int64 {
	m := make(map[string]int64, len(t.Values))
	for _, v := range t.Values {
		m[v.Value] = v.Count
	}
	return m
}

// ClassValue is one value of a class header: how many requests carried it,
// their share of all scheduled requests, and their response times.
type ClassValue struct {
	Value    string      `json:"value"`
	Count    int64       `json:"count"`
	Share    float64     `json:"share"`
	Response Percentiles `json:"response"`
	// Histogram is Response's histogram (EncodeHistogram), so that merged
	// shards' classes stay exact; empty in results written before.
	Histogram string `json:"histogram,omitempty"`
	// Per100Rest is, in a table that holds the value NoEvent ("none")
	// besides others, this value's count per 100 requests whose answer
	// carried the header with a value other than NoEvent: e.g. shed
	// decisions per 100 shadow intents. 0 for NoEvent and NoClass.
	Per100Rest float64 `json:"per_100_rest,omitempty"`
}

// SetPer100Rest sets Per100Rest of t's values when t holds NoEvent and at
// least one answer carried another value: each such value's count per 100
// answers that carried the header with a value other than NoEvent (NoClass
// answers did not carry it). NoEvent and NoClass get none.
func (t *ClassTable) SetPer100Rest() {
	var rest int64
	hasNone := false
	for _, v := range t.Values {
		switch v.Value {
		case NoEvent:
			hasNone = true
		case NoClass:
		default:
			rest += v.Count
		}
	}
	for i := range t.Values {
		v := &t.Values[i]
		v.Per100Rest = 0
		if hasNone && rest > 0 && v.Value != NoEvent && v.Value != NoClass {
			v.Per100Rest = 100 * float64(v.Count) / float64(rest)
		}
	}
}

// Class values with special meaning.
const (
	NoClass    = "(none)"  // the response had no such header, or there was no response
	OtherClass = "(other)" // beyond MaxClassValues distinct values
)

// NoEvent is the class value that, by convention, says "no such event
// happened" (the stub's X-Stub-Shadow: none = the request asked for no
// shadow score). A table holding it besides other values gets
// ClassValue.Per100Rest for those others.
const NoEvent = "none"

// mergeClasses adds b's class tables to a's, header by header and value
// by value, their response histograms included; tables come out sorted
// by header, values by count (largest first), then value. Shares are
// derived (ClassTable.derive).
func mergeClasses(a, b []ClassTable, m *merger) []ClassTable {
	if len(a) == 0 && len(b) == 0 {
		return nil
	}
	type acc struct {
		auto   bool
		values map[string]ClassValue
	}
	tables := map[string]*acc{}
	for i, ts := range [...][]ClassTable{a, b} {
		for _, t := range ts {
			x := tables[t.Header]
			if x == nil {
				x = &acc{auto: t.Auto, values: map[string]ClassValue{}}
				tables[t.Header] = x
			}
			x.auto = x.auto && t.Auto
			for _, v := range t.Values {
				if v.Histogram == "" && i == 1 {
					m.fail("class %s=%s has no histogram (written by an older openload): its response times cannot be merged", t.Header, v.Value)
					return nil
				}
				sum := x.values[v.Value]
				sum.Value = v.Value
				sum.Count += v.Count
				sum.Histogram, sum.Response = m.hist(sum.Histogram, v.Histogram, "class "+t.Header+"="+v.Value)
				x.values[v.Value] = sum
			}
		}
	}
	var out []ClassTable
	for _, header := range slices.Sorted(maps.Keys(tables)) {
		x := tables[header]
		t := ClassTable{Header: header, Auto: x.auto}
		for _, v := range slices.Sorted(maps.Keys(x.values)) {
			t.Values = append(t.Values, x.values[v])
		}
		slices.SortStableFunc(t.Values, func(p, q ClassValue) int { return cmp.Compare(q.Count, p.Count) })
		out = append(out, t)
	}
	return out
}

// derive sets each value's share of the n headline requests and the
// shares per 100 of the rest.
func (t *ClassTable) derive(n int64) {
	for i := range t.Values {
		t.Values[i].Share = 0
		if n > 0 {
			t.Values[i].Share = float64(t.Values[i].Count) / float64(n)
		}
	}
	t.SetPer100Rest()
}
