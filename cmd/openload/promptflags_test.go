package main

import (
	"crypto/sha256"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openload/openload/internal/prompt"
	"github.com/openload/openload/result"
	"github.com/openload/openload/servers/stub"
)

// tokenStub starts the stub's token model, fast enough for a test.
func tokenStub(t *testing.T) *stub.Server {
	t.Helper()
	cfg := stub.DefaultConfig()
	cfg.Policy, cfg.BatchSlots = stub.PolicyNone, 32
	cfg.Prefill, cfg.ITL = 2*time.Millisecond, 500*time.Microsecond
	s, err := stub.NewServer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// TestGeneratedPrompts: --prompt-tokens and --output-tokens make bodies
// whose prompt the stub's tokenizer counts as asked, each asking its
// output tokens, which the stub sends in full; the result, the log and
// the report say so, and --model auto names the stub's model.
func TestGeneratedPrompts(t *testing.T) {
	s := tokenStub(t)
	dir := t.TempDir()
	out, logf := filepath.Join(dir, "r.json"), filepath.Join(dir, "r.csv")
	stdout, _ := runOK(t, "-rate", "40", "-d", "500ms", "--prompt-tokens", "200,0.1", "--output-tokens", "12", "--model", "auto",
		"--log", logf, "-o", out, s.URL+"/v1/chat/completions")
	wantLines(t, stdout,
		`request: Content-Type: application/json added (the body is JSON) · model "openload-stub", the first of GET `+s.URL+`/v1/models · 20 generated chat prompts of 180–221 (200 ± 10 %) tokens, max tokens 12, ignore_eos (tokens counted with cl100k_base)`,
		"\nprompts  20 requests · prompt tokens p50 ",
		"\nasked    20 requests asked for 240 output tokens (p50 12, min 12, max 12) · received 240 · 0 completed with fewer than they asked\n")
	res := readResult(t, out)
	st := res.Stream
	if st == nil || st.PromptTokens == nil || st.Asked == nil {
		t.Fatalf("stream %+v", st)
	}
	if p := st.PromptTokens; p.Requests != 20 || p.Min < 180 || p.Max > 221 {
		t.Errorf("prompt tokens %+v, want 20 requests within 180 and 221", p)
	}
	if st.OutputTokens != 240 || st.Asked.Received != 240 || st.Asked.Short != 0 {
		t.Errorf("output tokens %d, asked %+v", st.OutputTokens, st.Asked)
	}
	entries, err := readLog(t, logf)
	if err != nil || len(entries) != 20 {
		t.Fatalf("log: %d entries, %v", len(entries), err)
	}
	var sum int64
	for _, e := range entries {
		if e.AskedTokens != 12 || e.Tokens != 12 || e.PromptTokens < 180 || e.PromptTokens > 221 {
			t.Errorf("log entry %+v", e)
		}
		sum += int64(e.PromptTokens)
	}
	if sum != st.PromptTokens.Sum {
		t.Errorf("the log sums %d prompt tokens, the result %d", sum, st.PromptTokens.Sum)
	}
	if q := res.Config.Request; q == nil || q.Model != "openload-stub" || !strings.Contains(q.Prompts, "20 generated chat prompts") {
		t.Errorf("result's request %+v", q)
	}
}

// TestDatasetPrompts: a ShareGPT file's first turns are the prompts and
// its answers' lengths the max tokens asked; the stub answers each in
// full.
func TestDatasetPrompts(t *testing.T) {
	s := tokenStub(t)
	out := filepath.Join(t.TempDir(), "r.json")
	stdout, _ := runOK(t, "-rate", "20", "-d", "500ms", "--dataset", "../../internal/prompt/testdata/sharegpt.json", "--model", "m", "-o", out, s.URL+"/v1/completions")
	wantLines(t, stdout, "completions prompts from ../../internal/prompt/testdata/sharegpt.json (each entry's first turn")
	st := readResult(t, out).Stream
	if st == nil || st.Asked == nil || st.Asked.Requests != 10 || st.Asked.Received != st.Asked.Sum || st.OutputTokens != st.Asked.Sum {
		t.Fatalf("stream %+v", st)
	}
}

func TestPromptFlagErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(`[{"conversations":[{"from":"human","value":"hi there you"}, 7]}]`), 0o644); err != nil {
		t.Fatal(err)
	}
	const u = "http://127.0.0.1:1/v1/chat/completions"
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--prompt-tokens", "0", u}, "--prompt-tokens: "},
		{[]string{"--prompt-tokens", "100,1.5", u}, "--prompt-tokens: "},
		{[]string{"--prompt-tokens", "ten", u}, "--prompt-tokens: "},
		{[]string{"--prompt-tokens", "", u}, "--prompt-tokens needs N"},
		{[]string{"--output-tokens", "10", u}, "--output-tokens applies to generated prompts"},
		{[]string{"--api", "chat", u}, "--api applies to generated prompts"},
		{[]string{"--prompt-tokens", "10", "--body", "{}", u}, "drop --body and --body-file"},
		{[]string{"--prompt-tokens", "10", "--dataset", bad, u}, "are exclusive"},
		{[]string{"--prompt-tokens", "10", "--api", "gpt", u}, "--api: unknown API"},
		{[]string{"--prompt-tokens", "10", "http://127.0.0.1:1/predict"}, "--api is needed"},
		{[]string{"--prompt-tokens", "10", "--api", "tgi"}, "the built-in stub serves chat and completions"},
		{[]string{"--prompt-tokens", "10", "--output-tokens", "5", "--api", "tgi", "--ignore-eos", u}, "no field to ignore the end of sequence"},
		{[]string{"--prompt-tokens", "10", "--prompt-count", "0", u}, "--prompt-count must be at least 1"},
		{[]string{"--prefix-tokens", "10", u}, "--prefix-tokens applies to --prompt-tokens"},
		{[]string{"--dataset", bad, "--prefix-tokens", "10", u}, "--prefix-tokens applies to --prompt-tokens"},
		{[]string{"--prompt-tokens", "10", "--prefix-count", "4", u}, "--prefix-count needs --prefix-tokens"},
		{[]string{"--prompt-tokens", "10", "--prefix-tokens", "0", u}, "--prefix-tokens must be at least 1, got 0"},
		{[]string{"--prompt-tokens", "10", "--prefix-tokens", "5", "--prefix-count", "0", u}, "--prefix-count must be at least 1, got 0"},
		{[]string{"--dataset", filepath.Join(dir, "none.json"), u}, "no such file"},
		{[]string{"--dataset", bad, u}, "entry 0"},
		{[]string{"--dataset", bad, "--dataset-turns", "all", u}, "--dataset-turns \"all\""},
	}
	for _, c := range cases {
		code, _, stderr := runCLI(append([]string{"-rate", "10", "-d", "1s"}, c.args...)...)
		first, _, _ := strings.Cut(stderr, "\n")
		if code != exitUsage || !strings.Contains(first, c.want) {
			t.Errorf("%v: exit %d, %q; want exit 2 and %q", c.args, code, first, c.want)
		}
	}
}

// TestGeneratedBodiesShardStable: two shards of one run send the bodies
// the whole run would, request for request: with --seed given, as here
// (three separate runs), or with the shards' shared --start-at.
func TestGeneratedBodiesShardStable(t *testing.T) {
	var whole, shards seen
	a, b := whole.server(t, ""), shards.server(t, "")
	args := []string{"-rate", "20", "-d", "500ms", "-q", "--prompt-tokens", "30,0.5", "--output-tokens", "4,0.5", "--api", "completions", "--seed", "3"}
	runOK(t, append(args, a.URL)...)
	runOK(t, append(args, "--shard", "0/2", b.URL)...)
	runOK(t, append(args, "--shard", "1/2", b.URL)...)
	types, wholeBodies, _ := whole.read()
	_, shardBodies, _ := shards.read()
	if len(wholeBodies) != 10 || len(shardBodies) != 10 {
		t.Fatalf("%d and %d bodies", len(wholeBodies), len(shardBodies))
	}
	sent := map[string]int{}
	for _, body := range wholeBodies {
		var v struct {
			Prompt    string `json:"prompt"`
			MaxTokens int    `json:"max_tokens"`
			Stream    bool   `json:"stream"`
		}
		if err := json.Unmarshal([]byte(body), &v); err != nil || !v.Stream || v.MaxTokens < 2 || v.MaxTokens > 6 || v.Prompt == "" {
			t.Errorf("body %s: %v", body, err)
		}
		sent[body]++
	}
	for _, body := range shardBodies {
		sent[body]--
	}
	for body, n := range sent {
		if n != 0 {
			t.Errorf("the shards sent %s %d times less than the whole", body, n)
		}
	}
	if types[0] != "application/json" {
		t.Errorf("Content-Type %q", types[0])
	}
}

// TestPrefixSharedCache: 8 shared prefixes of 900 tokens + 100-token
// suffixes against the stub's prefix cache (16-token blocks, big enough
// for all). With -c 1 the stub takes the requests one at a time, so each
// prefix's first use has prefilled before its next: a first use finds
// nothing cached, every later use the prefix's 56 whole blocks, 896
// tokens (block 57 holds the prefix's last 4 tokens and the unique
// suffix). Which requests are first uses follows from the seed alone
// (prompt.Spec.PrefixOf), so the server's cached count is known exactly.
// The TTFT from the send then falls with the prompt left to prefill,
// 104 of 1000 tokens at 20 µs each, against 1000 for prompts without
// sharing.
//
// The second known answer: 64 prefixes against a cache for 8
// prompts (8 × 1024 tokens, least recently used blocks evicted). A
// prefix comes back within the last 8 requests with probability
// 1 − (63/64)⁸ ≈ 12 %, so most requests prefill the whole prompt: fewer
// than a quarter are cached (about 2 of 40 expected), and the TTFT p50
// is over half the unshared one's.
func TestPrefixSharedCache(t *testing.T) {
	serve := func(cacheTokens int) *stub.Server {
		cfg := stub.DefaultConfig()
		cfg.Policy, cfg.BatchSlots = stub.PolicyNone, 32
		cfg.Prefill, cfg.PrefillPerToken, cfg.ITL = 0, 20*time.Microsecond, 500*time.Microsecond
		cfg.PrefixCacheTokens = cacheTokens
		s, err := stub.NewServer(cfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s.Close)
		return s
	}
	big, small := serve(1<<16), serve(8*1024)
	dir := t.TempDir()
	run := func(s *stub.Server, name string, prompts ...string) *result.Result {
		out := filepath.Join(dir, name+".json")
		args := append([]string{"-rate", "40", "-d", "1s", "-c", "1", "--seed", "7", "--output-tokens", "2", "--model", "m", "-o", out}, prompts...)
		stdout, _ := runOK(t, append(args, s.URL+"/v1/chat/completions")...)
		if name == "shared" {
			wantLines(t, stdout, "40 generated chat prompts: 8 shared prefixes of 900 tokens + suffixes of 100 tokens, max tokens 2, ignore_eos (tokens counted")
		}
		return readResult(t, out)
	}
	shared := run(big, "shared", "--prompt-tokens", "100", "--prefix-tokens", "900", "--prefix-count", "8")
	plain := run(big, "plain", "--prompt-tokens", "1000")
	many := run(small, "many", "--prompt-tokens", "100", "--prefix-tokens", "900", "--prefix-count", "64")
	spec := prompt.Spec{Seed: 7, PrefixTokens: 900, Prefixes: 8}
	used := map[int]bool{}
	for i := range 40 {
		used[spec.PrefixOf(i)] = true
	}
	hits := int64(40 - len(used))
	st := shared.Stream
	if st == nil || st.PromptTokens == nil || st.PromptTokens.Sum != 40*1000 {
		t.Fatalf("shared: stream %+v, want 40 prompts of 1000 tokens", st)
	}
	if c := st.CachedTokens; c == nil || c.Requests != hits || c.Sum != 896*hits {
		t.Errorf("shared: cached tokens %+v, want %d requests of 896 (%d prefixes first used)", c, hits, len(used))
	}
	if c := plain.Stream.CachedTokens; c != nil {
		t.Errorf("plain: cached tokens %+v, want none", c)
	}
	ps, pp := st.TTFTService.P50, plain.Stream.TTFTService.P50
	t.Logf("TTFT p50 from send: shared prefixes %.2f ms (%d of 40 cached), none %.2f ms", ps, hits, pp)
	// The cache saves 896 tokens' prefill, 17.9 ms: a third of it is the
	// bound. A busy machine adds to both medians alike (under -race with
	// the other core busy: 17.26 against 27.65 ms), so the bound is on
	// the difference, not the ratio.
	if pp-ps < 896*0.020/3 {
		t.Errorf("TTFT p50 from send with shared prefixes %.2f ms, without %.2f ms: want at least 6 ms less", ps, pp)
	}
	var manyCached int64
	if c := many.Stream.CachedTokens; c != nil {
		manyCached = c.Requests
	}
	pm := many.Stream.TTFTService.P50
	t.Logf("64 prefixes, a cache for 8: %d of 40 cached, TTFT p50 from send %.2f ms", manyCached, pm)
	if manyCached >= 10 || pm <= pp/2 {
		t.Errorf("64 prefixes, a cache for 8: %d of 40 cached, TTFT p50 %.2f ms against %.2f ms unshared: want under 10 cached and over half", manyCached, pm, pp)
	}
}

// TestDatasetOrderShuffle: --dataset-order shuffle sends the dataset's
// bodies shuffled by the seed, every pass a permutation of them (each
// once), the same seed the same order; file order is the file's.
func TestDatasetOrderShuffle(t *testing.T) {
	send := func(args ...string) []string {
		var got seen
		srv := got.server(t, "")
		runCLI(append([]string{"-rate", "20", "-d", "1s", "-c", "1", "-q", "--dataset", "../../internal/prompt/testdata/sharegpt.json"}, append(args, srv.URL+"/v1/completions")...)...)
		_, bodies, _ := got.read()
		if len(bodies) != 20 {
			t.Fatalf("%v: %d bodies sent, want 20", args, len(bodies))
		}
		return bodies
	}
	file := send()
	distinct := map[string]bool{}
	for _, b := range file {
		distinct[b] = true
	}
	m := len(distinct)
	if m < 3 || !slices.Equal(file[:m], file[m:2*m]) {
		t.Fatalf("file order: %d distinct bodies, taken in turn: %q", m, file)
	}
	a, b := send("--dataset-order", "shuffle", "--seed", "3"), send("--dataset-order", "shuffle", "--seed", "3")
	if !slices.Equal(a, b) {
		t.Error("the same seed sent another order")
	}
	if slices.Equal(a, file) {
		t.Error("shuffled as the file is")
	}
	for p := 0; p < len(a); p += m {
		pass := map[string]bool{}
		for _, body := range a[p:min(len(a), p+m)] {
			if pass[body] || !distinct[body] {
				t.Fatalf("pass at %d: a body twice, or not the file's: %q", p, a)
			}
			pass[body] = true
		}
	}
	code, _, stderr := runCLI("-rate", "10", "-d", "1s", "--prompt-tokens", "5", "--dataset-order", "shuffle", "http://127.0.0.1:1/v1/completions")
	if first, _, _ := strings.Cut(stderr, "\n"); code != exitUsage || !strings.Contains(first, "--dataset-order applies to --dataset") {
		t.Errorf("exit %d, %q", code, first)
	}
	code, _, stderr = runCLI("-rate", "10", "-d", "1s", "--dataset", "x.json", "--dataset-order", "random", "http://127.0.0.1:1/v1/completions")
	if first, _, _ := strings.Cut(stderr, "\n"); code != exitUsage || !strings.Contains(first, `--dataset-order "random": want file or shuffle`) {
		t.Errorf("exit %d, %q", code, first)
	}
}

// TestPromptsNeverRepeat: generated prompts are drawn anew for every run
// unless --seed asks for the same ones. A server that hashes every body
// it reads counts, over two runs of 20 requests each: 40 distinct bodies
// without --seed, 20 with --seed 5 twice (the same 20, on purpose).
func TestPromptsNeverRepeat(t *testing.T) {
	var mu sync.Mutex
	seen := map[[32]byte]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		seen[sha256.Sum256(b)]++
		mu.Unlock()
	}))
	defer srv.Close()
	distinct := func(args ...string) int {
		mu.Lock()
		clear(seen)
		mu.Unlock()
		for range 2 {
			runOK(t, append([]string{"-rate", "20", "-d", "1s", "--prompt-tokens", "256", "-q", srv.URL + "/v1/completions"}, args...)...)
		}
		mu.Lock()
		defer mu.Unlock()
		return len(seen)
	}
	if n := distinct(); n != 40 {
		t.Errorf("two runs without --seed: %d distinct bodies of 40, want 40", n)
	}
	if n := distinct("--seed", "5"); n != 20 {
		t.Errorf("two runs with --seed 5: %d distinct bodies of 40, want the same 20", n)
	}
}

// TestPromptsNeverRepeatAcrossRuns: the runs of one invocation take the
// bodies on from where the run before stopped, so a server that hashes
// every body it reads counts none twice over a sweep's 3 points, 2
// repeats, a search's probes and a profile sweep's probes and points;
// with --seed 5 a second sweep repeats the first, on purpose; and when
// --prompt-count makes fewer bodies than the sweep's requests, the note
// says how often each is sent.
func TestPromptsNeverRepeatAcrossRuns(t *testing.T) {
	var mu sync.Mutex
	seen, read := map[[32]byte]int{}, 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		time.Sleep(10 * time.Millisecond) // so that a closed loop of one user sends a few, not thousands
		mu.Lock()
		seen[sha256.Sum256(b)]++
		read++
		mu.Unlock()
	}))
	defer srv.Close()
	u := srv.URL + "/v1/completions"
	count := func() (distinct, total int) {
		mu.Lock()
		defer mu.Unlock()
		distinct, total = len(seen), read
		clear(seen)
		read = 0
		return distinct, total
	}
	gen := []string{"--prompt-tokens", "256", "-q", "--pause", "0"}
	sweep3 := append([]string{"sweep", "--rates", "40,80,120", "-d", "250ms"}, gen...)
	for _, c := range []struct {
		name   string
		runs   [][]string
		want   int // bodies read
		unique int // of them distinct
	}{
		{"a 3-point sweep", [][]string{append(sweep3, u)}, 60, 60},
		{"--repeats 2", [][]string{{"-rate", "80", "-d", "250ms", "--repeats", "2", "--prompt-tokens", "256", "-q", u}}, 40, 40},
		{"a search's probes", [][]string{append([]string{"sweep", "--search", "--slo", "response.p99<=5s", "--from", "40", "--to", "80", "--precision", "50%", "-d", "250ms"}, append(gen, u)...)}, 30, 30},
		{"--seed 5, twice", [][]string{append(sweep3, "--seed", "5", u), append(sweep3, "--seed", "5", u)}, 120, 60},
	} {
		for _, args := range c.runs {
			runOK(t, args...)
		}
		if distinct, total := count(); total != c.want || distinct != c.unique {
			t.Errorf("%s: the server read %d bodies, %d distinct; want %d, %d distinct", c.name, total, distinct, c.want, c.unique)
		}
	}

	// A profile sweep: the synchronous point's bodies (a count known only
	// once it ran), the probe's and the open points' are all distinct.
	out := filepath.Join(t.TempDir(), "profile.json")
	runOK(t, append([]string{"sweep", "--profile", "sweep", "--points", "1", "-d", "1s", "--requests", "20", "-c", "4", "-o", out}, append(gen, u)...)...)
	distinct, total := count()
	f := readSweepFile(t, out)
	var sent int64
	for _, p := range f.Points {
		sent += p.Result.Counts.Sent
	}
	if len(f.Points) != 3 || total != int(sent) || distinct != total {
		t.Errorf("profile sweep: %d runs sent %d, the server read %d bodies, %d distinct; want 3 runs, all read and distinct", len(f.Points), sent, total, distinct)
	}
	if q := f.Points[0].Result.Config.Request; q == nil || !strings.Contains(q.Prompts, "; 10000 bodies for all the runs of a sweep whose rates are found as it runs: past 10000 requests they are sent again") {
		t.Errorf("profile sweep's note: %+v", q)
	}

	// Fewer bodies than requests: each sent 3 times, and said so.
	out = filepath.Join(t.TempDir(), "sweep.json")
	runOK(t, append(sweep3, "--prompt-count", "20", "-o", out, u)...)
	if distinct, total := count(); total != 60 || distinct != 20 {
		t.Errorf("--prompt-count 20: the server read %d bodies, %d distinct; want 60, 20", total, distinct)
	}
	want := "20 generated completions prompts of 256 tokens; 20 bodies for about 60 requests over 3 points, so each is sent about 3.0 times"
	for i, p := range readSweepFile(t, out).Points {
		if q := p.Result.Config.Request; q == nil || !strings.Contains(q.Prompts, want) {
			t.Errorf("point %d's note %+v, want %q", i+1, q, want)
		}
	}
}

// readSweepFile reads a sweep's -o file.
func readSweepFile(t *testing.T, name string) *result.File {
	t.Helper()
	fh, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	f, ok, err := result.ReadFile(fh, name)
	if err != nil || !ok {
		t.Fatalf("%s: sweep file %v, %v", name, ok, err)
	}
	return f
}
