package engine

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/openload/openload/schedule"
)

// TestProgressCountsRequestsInFlight: a progress snapshot's window counts
// the requests whose sending began in it, answered or not. The server
// holds every response until the second snapshot has been taken, so the
// first two windows see sends and no outcome; counting sends from the
// records of done requests, as the progress line once did, showed none.
// Each window is the growth of the running totals since the previous
// snapshot, and no snapshot shows more sent than due.
func TestProgressCountsRequestsInFlight(t *testing.T) {
	forClients(t, openClients, func(t *testing.T, cl clientCase) {
		t.Parallel()
		release := make(chan struct{})
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			<-release
		}))
		defer srv.Close()
		var snaps []Progress
		var once sync.Once
		rec, _ := runAgainst(t, srv.URL, Config{
			Lean:        cl.lean,
			Epoll:       cl.epoll,
			Connections: 128, // more than the run's 84 requests: none waits
			Timeout:     time.Minute,
			Drain:       time.Minute,
			Progress: func(p Progress) {
				snaps = append(snaps, p)
				if len(snaps) == 2 {
					once.Do(func() { close(release) })
				}
			},
		}, schedule.NewConstant(40, 2100*time.Millisecond))
		once.Do(func() { close(release) }) // the run ended before a second snapshot
		if len(snaps) < 2 {
			t.Fatalf("%d progress snapshots in a run of 2.1 s, want 2 or more", len(snaps))
		}
		var prev Progress
		for i, p := range snaps {
			if p.Window != p.Elapsed-prev.Elapsed || p.WindowSent != p.Sent-prev.Sent || p.WindowDue != p.Due-prev.Due {
				t.Errorf("snapshot %d: window %v sent %d due %d is not the growth from %+v to %+v", i, p.Window, p.WindowSent, p.WindowDue, prev, p)
			}
			if p.Sent > p.Due {
				t.Errorf("snapshot %d: sent %d > due %d", i, p.Sent, p.Due)
			}
			if i < 2 && (p.Done != 0 || p.WindowSent == 0 || p.InFlight < p.Sent) {
				t.Errorf("snapshot %d, every response held: done %d, window sent %d, in flight %d of %d sent; want no outcome and every send counted", i, p.Done, p.WindowSent, p.InFlight, p.Sent)
			}
			prev = p
		}
		if c := checkIdentity(t, rec, 84); c.Completed != 84 || prev.Sent > c.Sent {
			t.Errorf("counts %+v; the last snapshot had %d sent", c, prev.Sent)
		}
	})
}

// TestProgressRates: the rates are the window's counts over its length.
func TestProgressRates(t *testing.T) {
	p := Progress{Window: 1250 * time.Millisecond, WindowSent: 185, WindowDue: 200}
	if sent, due := p.Rates(); sent != 148 || due != 160 {
		t.Errorf("rates %v, %v; want 148, 160", sent, due)
	}
	if sent, due := (Progress{WindowSent: 5}).Rates(); sent != 0 || due != 0 {
		t.Errorf("empty window: rates %v, %v", sent, due)
	}
}
