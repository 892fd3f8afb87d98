package result

import (
	"reflect"
	"testing"
)

// TestLazyMerge: a merge keeps a lazy section whole, adds the waits, and
// keeps where the targets first ended.
func TestLazyMerge(t *testing.T) {
	a := &Lazy{Waited: 2}
	b := &Lazy{Waited: 3, Ended: true, AtS: 1.5, Error: "t.http:4: bad method"}
	c := &Lazy{Waited: 1, Ended: true, AtS: 0.5}
	for _, tc := range []struct {
		name       string
		x, y, want *Lazy
	}{
		{"neither", nil, nil, nil},
		{"only the first", a, nil, a},
		{"only the second", nil, b, b},
		{"the waits add, the end is the one that ended", a, b, &Lazy{Waited: 5, Ended: true, AtS: 1.5, Error: "t.http:4: bad method"}},
		{"the first end is kept", c, b, &Lazy{Waited: 4, Ended: true, AtS: 0.5}},
	} {
		if got := tc.x.merge(tc.y); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: %+v, want %+v", tc.name, got, tc.want)
		}
	}
	if a.Waited != 2 || b.Waited != 3 {
		t.Errorf("a merge changed its inputs: %+v, %+v", a, b)
	}
}
