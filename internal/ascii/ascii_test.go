package ascii

import "testing"

func TestEqualFold(t *testing.T) {
	for _, c := range []struct {
		b, s string
		want bool
	}{
		{"Content-Type", "content-type", true},
		{"CONTENT-TYPE", "content-type", true},
		{"content-typ", "content-type", false},
		{"content-tyPe", "content-typf", false},
		{"", "", true},
		{"[", "{", false}, // '[' is not 'Z'+1's fold
	} {
		if got := EqualFold(c.b, c.s); got != c.want {
			t.Errorf("EqualFold(%q, %q) = %v", c.b, c.s, got)
		}
		if got := EqualFold([]byte(c.b), c.s); got != c.want {
			t.Errorf("EqualFold([]byte(%q), %q) = %v", c.b, c.s, got)
		}
	}
}
