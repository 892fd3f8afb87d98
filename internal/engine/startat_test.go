package engine

import (
	"context"
	"testing"
	"time"
)

// TestStartClock: the start is the instant asked for, whether it is ahead
// (the wait ends at or after it) or already past (not shifted: late by at
// least how far past it was).
func TestStartClock(t *testing.T) {
	ctx := context.Background()
	if s, late := startClock(ctx, time.Time{}, 0); !s.IsZero() || late != 0 {
		t.Fatalf("no start asked: %v %v", s, late)
	}
	at := time.Now().Add(20 * time.Millisecond).Round(0)
	s, late := startClock(ctx, at, 0)
	if !s.Equal(at) || time.Now().Before(at) || late < 0 { // lead 0: the wait ends at or after at
		t.Errorf("ahead: start %v for %v, late %v, now %v", s, at, late, time.Now())
	}
	past := time.Now().Add(-time.Second).Round(0)
	s, late = startClock(ctx, past, startLead)
	if !s.Equal(past) || late < time.Second {
		t.Errorf("past: start %v for %v, late %v (want ≥ 1s)", s, past, late)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	far := time.Now().Add(time.Hour)
	if s, _ := startClock(cctx, far, startLead); !s.Equal(far) || time.Now().After(far) {
		t.Errorf("cancelled: start %v for %v", s, far)
	}
}
