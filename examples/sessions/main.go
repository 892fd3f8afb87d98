// Command sessions shows session runs next to the servers' own logs:
// users who arrive open and walk several steps, each step timed from
// when it was due (issue 52's known answers).
//
//  1. shop: 5 users a second for 10 s walk login → browse → checkout,
//     reading 200 ms between clicks, against a loopback shop
//     (servers/shop) that refuses a token not its user's. openload's
//     report next to the shop's log: 50 users, 150 steps, every token its
//     session's, and the shortest gap between an answer and the next
//     click (≥ 200 ms).
//
//  2. stall: the same shop stalls 2 s, one connection: the steps due
//     during the stall carry the wait in their response time, not in
//     their service time.
//
//  3. chat: conversations of 4 turns (100-token messages, 20-token
//     answers) against the stub with its prefix cache, 1 ms of prefill
//     per uncached token: TTFT by turn with a cache that holds every
//     conversation, with one of 128 tokens, and with none.
//
// Run it:
//
//	go run ./examples/sessions           # about 40 s
//	go run ./examples/sessions -short    # about 10 s (what CI runs)
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http/httptest"
	"net/url"
	"os"
	"sync"
	"time"

	"github.com/openload/openload/examples/internal/demo"
	"github.com/openload/openload/internal/engine"
	"github.com/openload/openload/internal/loadtest"
	"github.com/openload/openload/internal/prompt"
	"github.com/openload/openload/internal/report"
	"github.com/openload/openload/internal/session"
	"github.com/openload/openload/result"
	"github.com/openload/openload/schedule"
	"github.com/openload/openload/servers/shop"
	"github.com/openload/openload/servers/stub"
)

// Scale is how long each experiment runs.
type Scale struct {
	Shop  time.Duration // the shop's arrivals, 5 users/s
	Stall time.Duration // the stalled shop's arrivals, 10 users/s
	Chat  time.Duration // the conversations' arrivals, 4/s
}

var (
	Full  = Scale{Shop: 10 * time.Second, Stall: 4 * time.Second, Chat: 2 * time.Second}
	Short = Scale{Shop: 2 * time.Second, Stall: 3 * time.Second, Chat: time.Second}
)

func main() {
	short := flag.Bool("short", false, "run the scaled-down version (what CI runs)")
	flag.Parse()
	sc := Full
	if *short {
		sc = Short
	}
	demo.Main("sessions", func(ctx context.Context) error { return run(ctx, sc, os.Stdout) })
}

func run(ctx context.Context, sc Scale, w io.Writer) error {
	shopRes, l, err := Shop(ctx, sc.Shop, nil, 16)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "=== 1. shop: 5 users/s for %v, login → browse → checkout, think 200 ms\n\n", sc.Shop)
	if err := report.Text(w, shopRes); err != nil {
		return err
	}
	PrintShopLog(w, l)

	stallRes, _, err := Stalled(ctx, sc.Stall)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "\n=== 2. stall: 10 users/s for %v, one connection, the shop stalls 2 s from 1 s on\n\n", sc.Stall)
	if err := report.Text(w, stallRes); err != nil {
		return err
	}

	fmt.Fprintf(w, "\n=== 3. chat: conversations of 4 turns at 4/s for %v, prefill 1 ms per uncached token\n\n", sc.Chat)
	for _, cache := range []int{1 << 16, 128, 0} {
		res, err := Chat(ctx, sc.Chat, cache)
		if err != nil {
			return err
		}
		PrintTurns(w, cache, res)
	}
	if ctx.Err() != nil {
		return errors.New("interrupted")
	}
	return nil
}

// shopSteps is the shop flow, think apart.
func shopSteps(think string) []session.StepSpec {
	return []session.StepSpec{
		{Name: "login", URL: "/login", Header: []string{"Content-Type: application/json"}, Body: `{"user": "u{{seq}}"}`,
			Save: map[string]string{"token": "json:token"}},
		{Name: "browse", URL: "/browse?user=u{{seq}}", Think: think, Header: []string{"Authorization: Bearer {{token}}"}},
		{Name: "checkout", Method: "POST", URL: "/checkout?user=u{{seq}}", Think: think, Header: []string{"Authorization: Bearer {{token}}"}},
	}
}

// Shop runs 5 users a second for d against a fresh shop (stall, if set,
// called before each answer) over conns connections, and returns the
// result and the shop's log.
func Shop(ctx context.Context, d time.Duration, stall func(), conns int) (*result.Result, shop.Log, error) {
	return shopRun(ctx, 5, d, stall, conns)
}

func shopRun(ctx context.Context, rate float64, d time.Duration, stall func(), conns int) (*result.Result, shop.Log, error) {
	sh := shop.New()
	sh.Stall = stall
	srv := httptest.NewServer(sh)
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	plan, err := session.Compile(session.Spec{Steps: shopSteps("200ms"), Base: u})
	if err != nil {
		return nil, shop.Log{}, err
	}
	res, _, err := loadtest.Run(ctx, loadtest.Options{
		Config:   engine.Config{URL: u, Connections: conns, Timeout: 30 * time.Second, Drain: 30 * time.Second},
		Schedule: schedule.Spec{Kind: schedule.Constant, Rate: rate, Duration: d},
		Sessions: plan,
	})
	return res, sh.Log(), err
}

// Stalled runs 10 users a second for d over one connection against a
// shop that stalls 2 s, 1 s after its first request.
func Stalled(ctx context.Context, d time.Duration) (*result.Result, shop.Log, error) {
	var (
		once  sync.Once
		first time.Time
		mu    sync.Mutex
		done  bool
	)
	stall := func() {
		mu.Lock()
		defer mu.Unlock()
		once.Do(func() { first = time.Now() })
		if !done && time.Since(first) >= time.Second {
			done = true
			time.Sleep(2 * time.Second)
		}
	}
	return shopRun(ctx, 10, d, stall, 1)
}

// PrintShopLog writes what the shop saw.
func PrintShopLog(w io.Writer, l shop.Log) {
	bad, gap := l.Walked([]string{"/login", "/browse", "/checkout"}, 200*time.Millisecond)
	steps := 0
	for _, n := range l.Counts {
		steps += n
	}
	fmt.Fprintf(w, "\nthe shop's own log: %d users, %d steps (login %d, browse %d, checkout %d), %d refused (a token or cookie not its user's)\n",
		len(l.Users), steps, l.Counts["/login"], l.Counts["/browse"], l.Counts["/checkout"], l.Refused)
	fmt.Fprintf(w, "shortest gap between an answer written and the same user's next request read: %.1f ms (think 200 ms)\n", float64(gap)/1e6)
	if bad != "" {
		fmt.Fprintf(w, "NOT WALKED AS ASKED: %s\n", bad)
	} else {
		fmt.Fprintln(w, "every user walked login → browse → checkout in order, with its own token and cookie")
	}
}

// Chat runs conversations of 4 turns at 4/s for d against a stub whose
// prefix cache holds cache tokens (0: off).
func Chat(ctx context.Context, d time.Duration, cache int) (*result.Result, error) {
	cfg := stub.DefaultConfig()
	cfg.Policy = stub.PolicyNone
	cfg.Workers = 64
	cfg.MaxQueueWait = time.Minute
	cfg.Prefill, cfg.PrefillPerToken, cfg.ITL = 0, time.Millisecond, time.Millisecond
	cfg.PrefixCacheTokens = cache
	s, err := stub.NewServer(cfg)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	u, _ := url.Parse(s.URL + "/v1/chat/completions")
	cv, err := session.CompileConversations(session.ConversationSpec{
		Prompt: prompt.ConversationSpec{API: prompt.Chat, Model: "m", Turns: 4, User: prompt.Length{N: 100}, Output: prompt.Length{N: 20}, Seed: 1, IgnoreEOS: true},
		URL:    u,
		Think:  "100ms",
	})
	if err != nil {
		return nil, err
	}
	res, _, err := loadtest.Run(ctx, loadtest.Options{
		Config:   engine.Config{URL: u, Connections: 64, Timeout: 30 * time.Second, Drain: 30 * time.Second, Stream: true},
		Schedule: schedule.Spec{Kind: schedule.Constant, Rate: 4, Duration: d},
		Sessions: cv,
	})
	return res, err
}

// PrintTurns writes a conversation run's figures by turn.
func PrintTurns(w io.Writer, cache int, res *result.Result) {
	name := fmt.Sprintf("prefix cache of %d tokens", cache)
	if cache == 0 {
		name = "no prefix cache"
	}
	s := res.Sessions
	fmt.Fprintf(w, "%s: %d conversations started, %d completed; %d turns\n", name, s.Started, s.Completed, res.Counts.Scheduled)
	fmt.Fprintf(w, "  turn   prompt tok  cached tok  TTFT p50 from due  TTFT p50 from send  TPOT p50\n")
	for _, p := range res.Steps {
		st := p.Stream
		if st == nil || st.PromptTokens == nil {
			fmt.Fprintf(w, "  %-6s no data\n", p.Name)
			continue
		}
		cached := 0.0
		if st.CachedTokens != nil {
			cached = float64(st.CachedTokens.Sum) / float64(st.PromptTokens.Requests)
		}
		fmt.Fprintf(w, "  %-6s %10.1f  %10.1f  %14.1f ms  %15.1f ms  %6.2f ms\n", p.Name, st.PromptTokens.Mean, cached,
			st.TTFTResponse.P50, st.TTFTService.P50, st.TPOT.P50)
	}
	fmt.Fprintln(w)
}
