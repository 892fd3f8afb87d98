package loadtest

import (
	"context"
	"fmt"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/openload/openload/internal/engine"
	"github.com/openload/openload/internal/session"
	"github.com/openload/openload/result"
	"github.com/openload/openload/schedule"
	"github.com/openload/openload/servers/shop"
	"github.com/openload/openload/verify"
)

// shopSpec is the login → browse → checkout flow.
func shopSpec(base string, think string) session.Spec {
	u, _ := url.Parse(base)
	return session.Spec{
		Base: u,
		Steps: []session.StepSpec{
			{Name: "login", URL: "/login", Header: []string{"Content-Type: application/json"}, Body: `{"user": "u{{seq}}"}`,
				Save: map[string]string{"token": "json:token"}},
			{Name: "browse", URL: "/browse?user=u{{seq}}", Think: think, Header: []string{"Authorization: Bearer {{token}}"}},
			{Name: "checkout", Method: "POST", URL: "/checkout?user=u{{seq}}", Think: think, Header: []string{"Authorization: Bearer {{token}}"}},
		},
	}
}

// TestSessionsShop: 20 users a second for 1 s walk login → browse →
// checkout with 100 ms of think time. The shop's own log says: 20
// sessions and 60 steps, each user's three in order, every token and
// cookie its own session's, and each step read at least the think time
// after the shop wrote the answer before it (the answer's end reached
// openload no earlier than it was written, and the next step was due
// 100 ms after that).
func TestSessionsShop(t *testing.T) {
	sh := shop.New()
	srv := httptest.NewServer(sh)
	defer srv.Close()
	plan, err := session.Compile(shopSpec(srv.URL, "100ms"))
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(srv.URL)
	res, _, err := Run(context.Background(), Options{
		Config:   engine.Config{URL: u, Connections: 16, Timeout: 10 * time.Second, Drain: 10 * time.Second},
		Schedule: schedule.Spec{Kind: schedule.Constant, Rate: 20, Duration: time.Second},
		Sessions: plan,
	})
	if err != nil {
		t.Fatal(err)
	}
	c := res.Counts
	if c.Scheduled != 60 || c.Completed != 60 || !c.Balanced() {
		t.Errorf("counts %+v, want 60 steps completed", c)
	}
	l := sh.Log()
	if l.Counts["/login"] != 20 || l.Counts["/browse"] != 20 || l.Counts["/checkout"] != 20 || l.Refused != 0 || len(l.Users) != 20 {
		t.Errorf("the shop counted %v, %d refused, %d users; want 20 of each, none refused", l.Counts, l.Refused, len(l.Users))
	}
	if bad, _ := l.Walked([]string{"/login", "/browse", "/checkout"}, 100*time.Millisecond); bad != "" {
		t.Error(bad)
	}
}

// TestSessionsStall: one connection, and the shop stalls 1 s from 500 ms
// on. The steps due meanwhile — arrivals, and steps whose think time
// ended — wait in openload for the connection: the wait is in their
// response time (from when they were due), not in their service time.
// Bounds: a quarter of the 80 steps are due during the stall, so p90 of
// response is most of a second; only the one step caught at the shop
// has a long service time, far beyond the 10 % tail.
func TestSessionsStall(t *testing.T) {
	sh := shop.New()
	var once sync.Once
	start := time.Now()
	var stallMu sync.Mutex
	sh.Stall = func() {
		stallMu.Lock()
		defer stallMu.Unlock()
		if time.Since(start) > 500*time.Millisecond {
			once.Do(func() { time.Sleep(time.Second) })
		}
	}
	srv := httptest.NewServer(sh)
	defer srv.Close()
	spec := shopSpec(srv.URL, "50ms")
	spec.Steps = spec.Steps[:2]
	plan, err := session.Compile(spec)
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(srv.URL)
	start = time.Now()
	res, _, err := Run(context.Background(), Options{
		Config:   engine.Config{URL: u, Connections: 1, Timeout: 10 * time.Second, Drain: 10 * time.Second},
		Schedule: schedule.Spec{Kind: schedule.Constant, Rate: 20, Duration: 2 * time.Second},
		Sessions: plan,
	})
	if err != nil {
		t.Fatal(err)
	}
	if c := res.Counts; c.Scheduled != 80 || c.Completed != 80 {
		t.Fatalf("counts %+v, want 80 steps completed", c)
	}
	if res.Response.P90 < 5*res.Service.P90 || res.Response.P90 < 300 {
		t.Errorf("response p90 %.1f ms, service p90 %.1f ms: the stall should be in response only", res.Response.P90, res.Service.P90)
	}
}

// TestSessionsSharded: the shop flow split into 2 shards that start
// together. A session is never split: each user's three steps are in
// one shard's records; the shards' users are the whole's, none twice;
// and their merge (result.Merge) is lossless: 20 sessions, 60 steps,
// each step's figures the sum of the shards', the sessions check passing
// on the whole. The same seed gives the same sessions: the users are
// u0 … u19 whichever shard sent them.
func TestSessionsSharded(t *testing.T) {
	sh := shop.New()
	srv := httptest.NewServer(sh)
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	start := time.Now().Add(300 * time.Millisecond)
	var in []result.MergeInput
	var wg sync.WaitGroup
	parts := make([]*result.Result, 2)
	errs := make([]error, 2)
	for i := range 2 {
		plan, err := session.Compile(shopSpec(srv.URL, "50ms"))
		if err != nil {
			t.Fatal(err)
		}
		wg.Go(func() {
			parts[i], _, errs[i] = Run(context.Background(), Options{
				Config:   engine.Config{URL: u, Connections: 8, Timeout: 10 * time.Second, Drain: 10 * time.Second, StartAt: start},
				Schedule: schedule.Spec{Kind: schedule.Constant, Rate: 20, Duration: time.Second},
				Shard:    schedule.Shard{Index: i, Of: 2},
				Sessions: plan,
			})
		})
	}
	wg.Wait()
	for i, res := range parts {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		if s := res.Sessions; s == nil || s.Started != 10 || s.Completed != 10 || res.Counts.Scheduled != 30 {
			t.Errorf("shard %d: sessions %+v, %d steps; want 10 sessions, 30 steps", i, s, res.Counts.Scheduled)
		}
		in = append(in, result.MergeInput{Name: fmt.Sprintf("shard%d", i), Result: res})
	}
	whole, err := result.Merge(in...)
	if err != nil {
		t.Fatal(err)
	}
	if s := whole.Sessions; s.Started != 20 || s.Completed != 20 || s.StepRecords != 60 || whole.Counts.Scheduled != 60 {
		t.Errorf("merged: sessions %+v, %d steps", s, whole.Counts.Scheduled)
	}
	for k, p := range whole.Steps {
		if p.Counts.Completed != parts[0].Steps[k].Counts.Completed+parts[1].Steps[k].Counts.Completed || p.Counts.Completed != 20 {
			t.Errorf("merged step %s: %d completed", p.Name, p.Counts.Completed)
		}
	}
	if f := findCheck(verify.Run(whole, verify.Options{}), "sessions"); f == nil || f.Severity != verify.Pass {
		t.Errorf("the merge's sessions check: %+v", f)
	}
	l := sh.Log()
	for i := range 20 {
		if steps := l.Users[fmt.Sprintf("u%d", i)]; len(steps) != 3 {
			t.Errorf("user u%d: %d steps at the shop, want 3", i, len(steps))
		}
	}
	if bad, _ := l.Walked([]string{"/login", "/browse", "/checkout"}, 50*time.Millisecond); bad != "" || len(l.Users) != 20 {
		t.Errorf("%d users; %s", len(l.Users), bad)
	}
}
