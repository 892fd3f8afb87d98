package result

import "testing"

// TestSends: a run's headline says what it sends: METHOD URL; a mix's
// targets by method, not its first target's; a few plain scenarios
// each with its own method; more, or mixes and sessions, by count.
func TestSends(t *testing.T) {
	mix := &Request{TargetMethods: map[string]int{"GET": 2, "POST": 1}}
	plain := func(name, method, url string) Scenario {
		return Scenario{Name: name, Result: &Result{Config: Config{Method: method, Target: url}}}
	}
	tests := []struct {
		res  *Result
		want string
	}{
		{&Result{Config: Config{Method: "GET", Target: "http://h/x"}}, "GET http://h/x"},
		{&Result{Config: Config{Method: "GET", Target: "http://h/b?u={{csv.user}}", Request: mix}}, "3 targets (GET 2, POST 1)"},
		{&Result{Scenarios: []Scenario{plain("a", "GET", "http://h/a"), plain("b", "POST", "http://h/b")}}, "GET http://h/a, POST http://h/b"},
		{&Result{Scenarios: []Scenario{plain("a", "GET", "http://h/a"), plain("b", "POST", "http://h/b"), plain("c", "GET", "http://h/c")}}, "3 targets (GET 2, POST 1)"},
		{&Result{Scenarios: []Scenario{{Name: "shop", Result: &Result{Config: Config{Method: "GET", Request: mix}}}, plain("b", "POST", "http://h/b")}}, "4 targets (GET 2, POST 2)"},
		{&Result{Scenarios: []Scenario{{Name: "shop", Result: &Result{Config: Config{Method: "POST", Target: "http://h/s"}, Steps: []Part{{Name: "a"}}}}, plain("b", "POST", "http://h/b")}}, "POST http://h/s, POST http://h/b"},
		{&Result{Scenarios: []Scenario{{Name: "shop", Result: &Result{Steps: []Part{{Name: "a"}}}}, plain("b", "POST", "http://h/b"), {Name: "m", Result: &Result{Config: Config{Request: mix}}}}}, "4 targets (GET 2, POST 2) + sessions of shop"},
	}
	for _, tc := range tests {
		if got := tc.res.Sends(); got != tc.want {
			t.Errorf("got %q, want %q", got, tc.want)
		}
	}
}
