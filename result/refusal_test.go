package result

import "testing"

// TestRefusalMerge: a merge keeps the refusal of the request scheduled
// first, whatever the order of the shards; none from none.
func TestRefusalMerge(t *testing.T) {
	a := &Refusal{Seq: 7, Status: 400, Body: "a"}
	b := &Refusal{Seq: 2, Status: 404, Body: "b"}
	tie := &Refusal{Seq: 7, Status: 422, Body: "tie"}
	for _, tc := range []struct {
		x, y, want *Refusal
	}{
		{nil, nil, nil},
		{a, nil, a},
		{nil, a, a},
		{a, b, b},
		{b, a, b},
		{a, tie, a}, // scenarios' seqs start at 0 each: the first added stays
	} {
		if got := tc.x.merge(tc.y); got != tc.want {
			t.Errorf("%+v merged with %+v: %+v, want %+v", tc.x, tc.y, got, tc.want)
		}
	}
}
