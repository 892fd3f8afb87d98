package schedule

import "testing"

// FuzzParseStages: whatever ParseStages accepts (it checks syntax only, so
// NaN and negative rates too), FormatStages writes back as text that
// parses to the same stages.
func FuzzParseStages(f *testing.F) {
	for _, s := range []string{"30s:100,1m:100,30s:0", "1s:0.5", "1h2m3.5s:1e3", " 2s:3 , 4s:5"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		st, err := ParseStages(s)
		if err != nil {
			return
		}
		again, err := ParseStages(FormatStages(st))
		if err != nil || len(again) != len(st) {
			t.Fatalf("%q → %q: %v, %d stages", s, FormatStages(st), err, len(again))
		}
		for i := range st {
			if again[i] != st[i] && !(again[i].Target != again[i].Target && st[i].Target != st[i].Target) { // NaN ≠ NaN
				t.Fatalf("%q: stage %d %v became %v", s, i, st[i], again[i])
			}
		}
	})
}
