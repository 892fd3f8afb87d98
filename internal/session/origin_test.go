package session

import (
	"net/url"
	"testing"
)

// TestSameOrigin: steps relative to the scenario's URL, or absolute to
// its host, are the lean client's to send; another host, or a host made
// by a placeholder, is not.
func TestSameOrigin(t *testing.T) {
	base, _ := url.Parse("http://127.0.0.1:8080/")
	for _, c := range []struct {
		urls []string
		want bool
	}{
		{[]string{"/login", "/browse?u={{seq}}"}, true},
		{[]string{"/a", "http://127.0.0.1:8080/b/{{seq}}"}, true},
		{[]string{"/a", "http://127.0.0.1:9090/b"}, false},
		{[]string{"/a", "https://127.0.0.1:8080/b"}, false},
		{[]string{"http://{{seq}}.example/b"}, false},
		{[]string{"{{seq}}"}, false},
	} {
		var steps []StepSpec
		for i, u := range c.urls {
			steps = append(steps, StepSpec{Name: string(rune('a' + i)), URL: u})
		}
		p, err := Compile(Spec{Steps: steps, Base: base})
		if err != nil {
			t.Fatalf("%v: %v", c.urls, err)
		}
		if got := p.SameOrigin(base); got != c.want {
			t.Errorf("%v: SameOrigin %v, want %v", c.urls, got, c.want)
		}
	}
}
