package engine

import (
	"errors"
	"testing"
	"time"

	"golang.org/x/net/http2"
)

// TestH2Bounces holds both HTTP/2 paths' one re-send rule to x/net's
// numbers: h2Resends charged bounces go again, the next fails; a refusal
// waits 0, 1 s, 2 s, …; an uncharged bounce (past a GOAWAY that let a
// stream through) never uses the budget up.
func TestH2Bounces(t *testing.T) {
	refused := http2.StreamError{StreamID: 1, Code: http2.ErrCodeRefusedStream}
	var b h2Bounces
	for k := 1; k <= h2Resends; k++ {
		again, wait := b.bounce(refused, true)
		want := time.Duration(0)
		if k > 1 {
			want = time.Second << (k - 2)
		}
		if !again || wait != want {
			t.Fatalf("refusal %d: again %v, wait %v; want true, %v", k, again, wait, want)
		}
	}
	if again, _ := b.bounce(refused, true); again {
		t.Fatalf("refusal %d went again; the budget is %d re-sends", h2Resends+1, h2Resends)
	}

	var g h2Bounces
	goAway := errors.New("past GOAWAY")
	for k := range 3 * h2Resends {
		if again, wait := g.bounce(goAway, false); !again || wait != 0 {
			t.Fatalf("uncharged bounce %d: again %v, wait %v; want true at once", k+1, again, wait)
		}
	}
	if again, wait := g.bounce(goAway, true); !again || wait != 0 {
		t.Fatalf("a GOAWAY bounce waits or is refused: again %v, wait %v", again, wait)
	}
}
