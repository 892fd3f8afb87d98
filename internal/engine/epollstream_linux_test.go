package engine

import "testing"

func TestContainsFold(t *testing.T) {
	for _, c := range []struct {
		b, sub string
		want   bool
	}{{"Content-Type: Text/Event-Stream\r\n", "text/event-stream", true}, {"text/event-strea", "text/event-stream", false}, {"", "x", false}, {"xx", "", true}} {
		if got := containsFold([]byte(c.b), []byte(c.sub)); got != c.want {
			t.Errorf("containsFold(%q, %q) = %v", c.b, c.sub, got)
		}
	}
}
