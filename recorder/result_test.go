package recorder

import "testing"

func TestResultCheck(t *testing.T) {
	r := &Result{Checks: []Check{{Name: "schedule", Severity: "pass"}, {Name: "timeline", Severity: "warn"}}}
	if c, ok := r.Check("timeline"); !ok || c.Severity != "warn" {
		t.Errorf("timeline: %+v %v", c, ok)
	}
	if _, ok := r.Check("nope"); ok {
		t.Error("found a check that is not there")
	}
}
