package main

import (
	"fmt"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/openload/openload/servers/shop"
	"github.com/openload/openload/servers/stub"
)

// shopYAML is the README's shop flow against url, think time think.
func shopYAML(url, think string) string {
	return fmt.Sprintf(`scenarios:
  - name: shop
    rate: 20
    url: %s
    steps:
      - name: login
        method: POST
        url: /login
        header: ["Content-Type: application/json"]
        body: '{"user": "u{{seq}}"}'
        save: {token: "json:token"}
      - name: browse
        think: %[2]s
        url: /browse?user=u{{seq}}
        header: ["Authorization: Bearer {{token}}"]
      - name: checkout
        think: %[2]s
        method: POST
        url: /checkout?user=u{{seq}}
        header: ["Authorization: Bearer {{token}}"]
`, url, think)
}

// TestSessionsCLI: the shop flow from a scenarios file, 20 users a
// second for 1 s: the shop's own log says 20 users walked their three
// steps in order, each with its own token and cookie, pausing the think
// time; the result says 60 steps, every one completed.
func TestSessionsCLI(t *testing.T) {
	sh := shop.New()
	srv := httptest.NewServer(sh)
	defer srv.Close()
	dir := t.TempDir()
	file := writeFile(t, dir, "shop.yaml", shopYAML(srv.URL, "100ms"))
	out := filepath.Join(dir, "r.json")
	runOK(t, "--scenarios", file, "-d", "1s", "-o", out, "--slo", "shop:checkout:response.p99<=1h")
	res := readResult(t, out)
	if len(res.Scenarios) != 1 {
		t.Fatalf("%d scenarios", len(res.Scenarios))
	}
	r := res.Scenarios[0].Result
	if c := r.Counts; c.Scheduled != 60 || c.Completed != 60 {
		t.Errorf("counts %+v, want 60 steps completed", c)
	}
	l := sh.Log()
	if len(l.Users) != 20 || l.Refused != 0 {
		t.Errorf("the shop saw %d users, %d refused", len(l.Users), l.Refused)
	}
	if bad, _ := l.Walked([]string{"/login", "/browse", "/checkout"}, 100*time.Millisecond); bad != "" {
		t.Error(bad)
	}
}

// TestSessionErrors: what a scenario's steps get wrong is one line naming
// the file, the scenario and the step, exit 2, before anything is sent.
func TestSessionErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, steps string) string {
		return writeFile(t, dir, name, "scenarios:\n  - name: shop\n    rate: 1\n    url: http://127.0.0.1:1/\n    steps:\n"+steps)
	}
	cases := []struct{ file, want string }{
		{write("unsaved.yaml", "      - name: a\n        url: /x?t={{token}}\n"), `scenario "shop": step 1 (a): url "/x?t={{token}}": at byte 5: unknown placeholder {{token}}: no earlier step saves "token"`},
		{write("later.yaml", "      - name: a\n        url: /a?t={{token}}\n      - name: b\n        url: /b\n        save: {token: \"json:t\"}\n"), `step 1 (a)`},
		{write("badrule.yaml", "      - name: a\n        url: /a\n        save: {t: \"xml:t\"}\n"), `step 1 (a): save t: rule "xml:t": unknown source "xml"`},
		{write("badre.yaml", "      - name: a\n        url: /a\n        save: {t: \"regex:(\"}\n"), `step 1 (a): save t: rule "regex:("`},
		{write("firstthink.yaml", "      - name: a\n        think: 1s\n        url: /a\n"), `step 1 (a): think on the first step`},
		{write("badthink.yaml", "      - name: a\n        url: /a\n      - name: b\n        think: soon\n        url: /b\n"), `step 2 (b): think "soon"`},
		{write("noname.yaml", "      - url: /a\n"), `step 1 (unnamed): no name`},
		{write("twice.yaml", "      - name: a\n        url: /a\n      - name: a\n        url: /b\n"), `step 2 (a): name "a" given twice`},
		{write("key.yaml", "      - name: a\n        urll: /a\n"), `field urll not found`},
		{write("empty.yaml", "      []\n"), `steps: an empty list`},
		{writeFile(t, dir, "fail.yaml", "scenarios:\n  - name: shop\n    rate: 1\n    url: http://127.0.0.1:1/\n    on-failure: retry\n    steps:\n      - name: a\n        url: /a\n"), `on-failure "retry": want stop or continue`},
		{writeFile(t, dir, "method.yaml", "scenarios:\n  - name: shop\n    rate: 1\n    method: POST\n    url: http://127.0.0.1:1/\n    steps:\n      - name: a\n        url: /a\n"), `--method with steps: each step says its own`},
	}
	for _, c := range cases {
		code, _, stderr := runCLI("--scenarios", c.file, "-d", "1s")
		first, _, _ := strings.Cut(stderr, "\n")
		if code != exitUsage || !strings.Contains(first, c.want) || !strings.Contains(first, filepath.Base(c.file)) {
			t.Errorf("%s: exit %d, %q; want exit 2 and %q", filepath.Base(c.file), code, first, c.want)
		}
	}
	// An objective on a step the scenario does not have.
	ok := write("ok.yaml", "      - name: a\n        url: /a\n")
	code, _, stderr := runCLI("--scenarios", ok, "-d", "1s", "--slo", "shop:b:response.p99<=1s")
	if first, _, _ := strings.Cut(stderr, "\n"); code != exitUsage || !strings.Contains(first, `scenario "shop" has no step "b" (its steps: "a")`) {
		t.Errorf("--slo shop:b:…: exit %d, %q", code, first)
	}
}

// TestConversationCLI: a conversation scenario against the stub with
// its prefix cache: 2 conversations of 3 turns, each turn's prompt the
// whole chat so far; the report shows the turns' stream figures, and the
// prompt and cached counts are the stub's known answers (100, 220, 340
// tokens; 0, 112, 224 cached).
func TestConversationCLI(t *testing.T) {
	cfg := stub.DefaultConfig()
	cfg.Policy = stub.PolicyNone
	cfg.PrefixCacheTokens = 1 << 16
	cfg.Prefill, cfg.PrefillPerToken, cfg.ITL = 0, 100*time.Microsecond, time.Millisecond
	s, err := stub.NewServer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	dir := t.TempDir()
	file := writeFile(t, dir, "chat.yaml", fmt.Sprintf(`scenarios:
  - name: chat
    rate: 2
    url: %s/v1/chat/completions
    conversation:
      turns: 3
      user-tokens: 100
      output-tokens: 20
      model: m
      think: 10ms
`, s.URL))
	out := filepath.Join(dir, "r.json")
	stdout, _ := runOK(t, "--scenarios", file, "-d", "1s", "-o", out, "--slo", "chat:turn3:ttft.p99<=1h")
	r := readResult(t, out).Scenarios[0].Result
	if c := r.Counts; c.Scheduled != 6 || c.Completed != 6 {
		t.Fatalf("counts %+v, want 6 turns completed", c)
	}
	for k, want := range [][2]int64{{100, 0}, {220, 112}, {340, 224}} {
		st := r.Steps[k].Stream
		if st == nil || st.PromptTokens == nil || st.PromptTokens.Sum != 2*want[0] || want[1] > 0 && (st.CachedTokens == nil || st.CachedTokens.Sum != 2*want[1]) {
			t.Errorf("%s: stream figures %+v, want prompt %d and cached %d per turn", r.Steps[k].Name, st, want[0], want[1])
		}
	}
	wantLines(t, stdout, "by step · streamed answers", "PASS  chat:turn3:ttft")
}

// TestSessionsShardedCLI: the shop flow run as 2 shards of a scenarios
// file that start together, then merged: each shard sent whole sessions
// (10 each), the merge holds 20 sessions and 60 steps with its checks
// passing, and the shop saw 20 users walk their 3 steps.
func TestSessionsShardedCLI(t *testing.T) {
	sh := shop.New()
	srv := httptest.NewServer(sh)
	defer srv.Close()
	dir := t.TempDir()
	file := writeFile(t, dir, "shop.yaml", shopYAML(srv.URL, "50ms"))
	start := time.Now().Add(time.Second).UTC().Format(time.RFC3339Nano)
	outs := []string{filepath.Join(dir, "0.json"), filepath.Join(dir, "1.json")}
	errs := make(chan error, 2)
	for i, out := range outs {
		go func() {
			code, stdout, stderr := runCLI("--scenarios", file, "-d", "1s", "--shard", fmt.Sprintf("%d/2", i), "--start-at", start, "-o", out)
			if code != exitOK {
				errs <- fmt.Errorf("shard %d: exit %d\n%s\n%s", i, code, stdout, stderr)
				return
			}
			errs <- nil
		}()
	}
	for range outs {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	for i, out := range outs {
		r := readResult(t, out).Scenarios[0].Result
		if s := r.Sessions; s == nil || s.Started != 10 || r.Counts.Scheduled != 30 {
			t.Errorf("shard %d: sessions %+v, %d steps; want 10 and 30", i, s, r.Counts.Scheduled)
		}
	}
	merged := filepath.Join(dir, "m.json")
	stdout, _ := runOK(t, "merge", "-o", merged, outs[0], outs[1])
	m := readResult(t, merged)
	r := m.Scenarios[0].Result
	if s := r.Sessions; s == nil || s.Started != 20 || s.Completed != 20 || s.StepRecords != 60 || m.Counts.Scheduled != 60 {
		t.Errorf("merged: sessions %+v, %d steps", s, m.Counts.Scheduled)
	}
	wantLines(t, stdout, "PASS  sessions")
	if strings.Contains(stdout, "FAIL") {
		t.Errorf("the merge fails a check:\n%s", stdout)
	}
	l := sh.Log()
	if bad, _ := l.Walked([]string{"/login", "/browse", "/checkout"}, 50*time.Millisecond); bad != "" || len(l.Users) != 20 {
		t.Errorf("the shop saw %d users; %s", len(l.Users), bad)
	}
}
