package main

import (
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openload/openload/internal/golden"
)

// retryUsageCases are the usage errors of --retries, --retry-*,
// --expect-* and 'openload model', for TestUsageErrorsGolden.
func retryUsageCases() [][]string {
	const u = "http://127.0.0.1:1/"
	return [][]string{
		{"-rate", "10", "--retries", "1", "--retry-on", "42", u},
		{"-rate", "10", "--retries", "1", "--retry-on", "429,bogus", u},
		{"-rate", "10", "--retries", "1", "--retry-on", "429,,503", u},
		{"-rate", "10", "--retries", "1", "--retry-budget", "1.5", u},
		{"-rate", "10", "--retries", "1", "--retry-budget", "-0.1", u},
		{"-rate", "10", "--retries", "1", "--retry-min-per-sec", "0", u},
		{"-rate", "10", "--retries", "1", "--retry-jitter", "half", u},
		{"-rate", "10", "--retries", "1", "--retry-backoff", "-1s", u},
		{"-rate", "10", "--retries", "-1", u},
		{"-rate", "10", "--retries", "101", u},
		{"-rate", "10", "--retry-on", "429", u},
		{"-rate", "10", "--expect-shards", "6", u},
		{"-rate", "10", "--expect-limit", "-150", u},
		{"-rate", "10", "--expect-limit", "150", "--expect-shards", "0", u},
		{"-rate", "10", "--expect-limit", "150", "--expect-shards", "200", u},
		{"-rate", "10", "--expect-limit", "150", "--expect-routing", "hash", u},
		{"--closed", "-rate", "10", "--expect-limit", "150", u},
		{"model"},
		{"model", "erlang"},
		{"model", "poisson", "--rate", "-5", "--limit-rps", "150"},
		{"model", "poisson", "--limit-rps", "150"},
		{"model", "poisson", "--rate", "135"},
		{"model", "poisson", "--rate", "135", "--limit-rps", "150", "--limit-shards", "200"},
		{"model", "poisson", "--rate", "135", "--limit-rps", "150", "--limit-routing", "hash"},
		{"model", "poisson", "--rate", "135", "--limit-rps", "150", "--retries", "101"},
		{"model", "poisson", "--rate", "135", "--limit-rps", "150", "--limit-window", "0s"},
		{"model", "poisson", "--rate", "135", "--limit-rps", "150", "extra"},
	}
}

// TestModelPoissonGolden: 'openload model poisson' for the rows of
// examples/rate-limit-429 (135/s against 150/s: one shard, six with random
// and with round-robin routing, with and without one retry).
func TestModelPoissonGolden(t *testing.T) {
	var b strings.Builder
	for _, args := range [][]string{
		{"--rate", "135", "--limit-rps", "150"},
		{"--rate", "135", "--limit-rps", "150", "--limit-shards", "6"},
		{"--rate", "135", "--limit-rps", "150", "--limit-shards", "6", "--limit-routing", "round-robin"},
		{"-rate", "135", "-limit-rps", "150", "-limit-shards", "6", "-retries", "1"},
		{"--rate", "135", "--limit-rps", "150", "--limit-shards", "6", "--limit-routing", "round-robin", "--retries", "1"},
	} {
		code, stdout, stderr := runCLI(append([]string{"model", "poisson"}, args...)...)
		if code != exitOK || stderr != "" {
			t.Fatalf("%q: exit %d\n%s", args, code, stderr)
		}
		b.WriteString("$ openload model poisson " + strings.Join(args, " ") + "\n" + stdout + "\n")
	}
	golden.Check(t, "model-poisson.golden", b.String())
	code, stdout, _ := runCLI("model", "poisson", "--help")
	if code != exitOK || !strings.Contains(stdout, "--limit-routing") {
		t.Errorf("model poisson --help: exit %d\n%s", code, stdout)
	}
}

// TestRetriesAndExpectation: a target that answers every request 429, 50
// constant arrivals over 500 ms, one retry at once. Every request is
// retried once and ends with 429: 100 attempts, all 429, so the observed
// 429 rate is 100 ÷ 0.5 s = 200/s exactly, printed next to the model's
// prediction for 100/s against a 10/s limit, with the notes that the run
// was not Poisson and that its retries come back within the window.
func TestRetriesAndExpectation(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusTooManyRequests)
	}))
	defer srv.Close()
	out := filepath.Join(t.TempDir(), "r.json")
	stdout, _ := runOK(t, "-rate", "100", "-d", "500ms", "--retries", "1", "--retry-backoff", "0s",
		"--retry-budget", "1", "--expect-limit", "10", "--send-delay-budget", "1s", "-o", out, srv.URL)
	wantLines(t, stdout,
		"retries  up to 1 retry on 429,503, backoff 0s full jitter, budget 100% + 10/s over 10s",
		"first attempts 50 · retries sent 50 · refused by budget 0 · out of retries 50 · requests retried 50",
		"attempts 429 ×100 (every attempt",
		"status   429 ×50",
		"limiter  the model's prediction for this run (openload model poisson --rate 100 --limit-rps 10 --limit-shards 1 --limit-window 1s --limit-routing random --retries 1)",
		"observed 429/s 200.000 (100 answers 429, every attempt counted, ÷ 500ms)\n         predicted 184.868 at --rate 100/s\n",
		"observed attempts/s 200.000 (50 first attempts + 50 retries, ÷ 500ms)\n         predicted 194.868 at --rate 100/s\n",
		"note     the model assumes Poisson arrivals; this run's were constant",
		"note     retries can come back within the window that rejected them")
	res := readResult(t, out)
	r := res.Retries
	if r == nil || r.FirstAttempts != 50 || r.RetriesSent != 50 || r.Exhausted != 50 || r.AttemptStatus["429"] != 100 ||
		res.Config.Retry != r.Policy || res.Counts.Scheduled != 50 || res.Status["429"] != 50 || res.AttemptStatus(429) != 100 {
		t.Errorf("result retries %+v config %q counts %+v", r, res.Config.Retry, res.Counts)
	}
}
