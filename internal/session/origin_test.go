package session

import (
	"net/url"
	"testing"

	"github.com/openload/openload/internal/engine"
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

// TestUnsendableStep: a step whose URL, made from a saved value, is no
// URL has no request: the engine counts it failed, and the session stops
// there. The first step too, which has no step before it to end at.
func TestUnsendableStep(t *testing.T) {
	p, err := Compile(Spec{Steps: []StepSpec{{Name: "a", URL: "{{seq}}"}}})
	if err != nil {
		t.Fatal(err)
	}
	st, v := p.Session(7).Next(nil)
	if v != engine.Go || st.Request != nil || st.Index != 0 {
		t.Errorf("Next: step %+v, verdict %v; want step 0 without a request, to go", st, v)
	}
}
