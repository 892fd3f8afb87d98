package servertiming

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	tests := []struct {
		in   []string
		want []Metric
	}{
		{[]string{"queue;dur=12.345, model;dur=50.012, total;dur=62.400"},
			[]Metric{{"queue", 12.345, true}, {"model", 50.012, true}, {"total", 62.4, true}}},
		{[]string{`miss, db;dur=53, app;dur=47.2;desc="a, b; c"`},
			[]Metric{{"miss", 0, false}, {"db", 53, true}, {"app", 47.2, true}}},
		{[]string{"a;dur=1", "b;dur=2"}, []Metric{{"a", 1, true}, {"b", 2, true}}},
		{[]string{`x;desc="unterminated, y;dur=3`}, nil},
		{[]string{"cache;desc=hit;dur=0.5", "  ,  , z ; dur = 7 "}, []Metric{{"cache", 0.5, true}, {"z", 7, true}}},
		{[]string{"a;dur=1;dur=2"}, []Metric{{"a", 1, true}}},
		{[]string{"a;dur=abc", "b;dur=NaN", "c;dur=\"4\""}, []Metric{{"a", 0, false}, {"b", 0, false}, {"c", 4, true}}},
		{[]string{"=bad;dur=1, good;dur=2", "a b;dur=3, c;;dur=1"}, []Metric{{"good", 2, true}}},
		{[]string{""}, nil},
	}
	for _, tc := range tests {
		got := ParseAll(tc.in...)
		var viaBytes []Metric
		for _, v := range tc.in {
			viaBytes = append(viaBytes, parseBytesAll([]byte(v))...)
		}
		if !reflect.DeepEqual(viaBytes, tc.want) {
			t.Errorf("ParseBytes(%q)\n got %+v\nwant %+v", tc.in, viaBytes, tc.want)
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Parse(%q)\n got %+v\nwant %+v", tc.in, got, tc.want)
		}
	}
}

// FuzzParse checks invariants on any input: names are non-empty tokens,
// durations are finite, and formatting the parsed metrics back and parsing
// again gives the same metrics (a round trip through the canonical form).
func FuzzParse(f *testing.F) {
	for _, s := range []string{"queue;dur=12.3, model;dur=50", `a;desc="x,y";dur=1`, "miss", ";;,,", `"`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ms := ParseAll(s)
		if b := parseBytesAll([]byte(s)); !reflect.DeepEqual(b, ms) {
			t.Fatalf("ParseBytes(%q) = %+v, Parse %+v", s, b, ms)
		}
		var parts []string
		for _, m := range ms {
			if m.Name == "" {
				t.Fatalf("empty name from %q", s)
			}
			for i := 0; i < len(m.Name); i++ {
				if !isTokenChar(m.Name[i]) {
					t.Fatalf("name %q is not a token", m.Name)
				}
			}
			if m.HasDur {
				parts = append(parts, fmt.Sprintf("%s;dur=%v", m.Name, m.Dur))
			} else {
				parts = append(parts, m.Name)
			}
		}
		again := ParseAll(strings.Join(parts, ", "))
		if len(ms) > 0 && !reflect.DeepEqual(again, ms) {
			t.Fatalf("round trip of %q: %+v then %+v", s, ms, again)
		}
	})
}

// parseBytesAll is ParseAll of one value through ParseBytes.
func parseBytesAll(v []byte) []Metric {
	var out []Metric
	ParseBytes(v, func(name []byte, dur float64, hasDur bool) {
		out = append(out, Metric{Name: string(name), Dur: dur, HasDur: hasDur})
	})
	return out
}

func BenchmarkParse(b *testing.B) {
	b.ReportAllocs()
	v := []string{"queue;dur=12.345, model;dur=50.012, total;dur=62.400"}
	n := 0
	for b.Loop() {
		Parse(v, func(Metric) { n++ })
	}
}

// BenchmarkParseBytes reads the stub's header from bytes, as the lean and
// epoll clients do: no allocation.
func BenchmarkParseBytes(b *testing.B) {
	b.ReportAllocs()
	v := []byte("queue;dur=12.345, model;dur=50.012, total;dur=62.400")
	n := 0
	for b.Loop() {
		ParseBytes(v, func([]byte, float64, bool) { n++ })
	}
}
