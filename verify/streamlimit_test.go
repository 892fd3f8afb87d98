package verify

import (
	"strings"
	"testing"
	"time"

	"github.com/openload/openload/result"
)

// streamedBound is the run: 20/s for 5 s answers against 64
// connections (scaled to the check's fixture).
func streamedBound() *result.Result {
	r := good()
	r.Config.Rate, r.Config.Duration = 20, "50s"
	r.Counts = result.Counts{Expected: 1000, Scheduled: 1000, Sent: 1000, Completed: 1000}
	r.Limit = result.Limit{Connections: 64, MaxInFlight: 64, Waited: 812}
	r.Service = result.Percentiles{Count: 1000, P90: 5100, Mean: 5000}
	r.Stream = &result.StreamResult{TTFTResponse: result.Percentiles{P90: 2104}, TTFTService: result.Percentiles{P90: 205}}
	return r
}

func TestStreamLimit(t *testing.T) {
	f := find(t, Run(streamedBound(), Options{}), "connection limit")
	want := "bound: all 64 connections busy, streaming answers: 812 of 1000 requests waited; TTFT from the schedule p90 2104 ms against 205 ms from the send: the wait is openload's. At 20/s × 5.1 s answers (service p90) it takes 102 connections: raise the connection limit to that"
	if f.Severity != Warn || f.Message != want {
		t.Errorf("got %s %q\nwant warn %q", f.Severity, f.Message, want)
	}

	// Bunched arrivals: the mean load fits the limit given.
	r := streamedBound()
	r.Service.P90 = 1000
	if text, _ := StreamLimit(r); !strings.HasSuffix(text, "it takes 20 connections, within the 64 given: the arrivals came bunched") {
		t.Errorf("bunched: %q", text)
	}
	// No answer measured: the wait, without a size.
	r.Service = result.Percentiles{}
	if text, ok := StreamLimit(r); !ok || strings.Contains(text, "it takes") {
		t.Errorf("no service time: %v %q", ok, text)
	}
	// Not streamed, or not bound: the plain message.
	r = streamedBound()
	r.Stream = nil
	if _, ok := StreamLimit(r); ok {
		t.Error("a run that did not stream has no stream limit")
	}
	if f := find(t, Run(r, Options{}), "connection limit"); !strings.HasPrefix(f.Message, "bound: 812 of 1000 requests found all 64") {
		t.Errorf("plain: %q", f.Message)
	}
	r = streamedBound()
	r.Limit.Waited = 0
	if _, ok := StreamLimit(r); ok {
		t.Error("a limit that never bound")
	}
}

func TestNeededConnections(t *testing.T) {
	for _, c := range []struct {
		rate   float64
		answer time.Duration
		want   int
	}{
		{20, 5100 * time.Millisecond, 102},
		{20, 5 * time.Second, 100},
		{20, time.Second, 20},
		{3, 100 * time.Millisecond, 1},
	} {
		if got := NeededConnections(c.rate, c.answer); got != c.want {
			t.Errorf("NeededConnections(%v, %v) = %d, want %d", c.rate, c.answer, got, c.want)
		}
	}
}
