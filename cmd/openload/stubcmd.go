package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/pflag"

	"github.com/openload/openload/targets/stub"
)

// The flag groups of `openload stub`, in the order the help gives them.
const (
	groupStubModel   = "Model"
	groupStubTokens  = "Token model (POST /v1/completions, /v1/chat/completions)"
	groupStubGate    = "Gate (when no worker is free)"
	groupStubFaults  = "Faults"
	groupStubDead    = "Deadline gate (off unless --deadline)"
	groupStubLimiter = "Rate limiter (off unless --limit-rps)"
	groupStubPlanes  = "Borrowed plane and fence (shadow scores off unless --shadow-share)"
	groupStubListen  = "Listen"
)

var stubGroups = []string{groupStubModel, groupStubTokens, groupStubGate, groupStubFaults, groupStubDead, groupStubLimiter, groupStubPlanes, groupStubListen, groupEnd}

// stubFlags registers the flags of `openload stub` on cfg, filed in the
// help's groups: the stub's package registers one flag per Config field
// and knows nothing of the help.
func stubFlags(cfg *stub.Config, help, child *bool) *pflag.FlagSet {
	fs := newFlagSet("openload stub")
	cfg.AddFlags(fs)
	setGroup(fs, groupStubModel, "workers", "latency")
	setGroup(fs, groupStubTokens, "batch-slots", "prefill", "prefill-per-token", "itl", "itl-per-seq", "output-tokens")
	setGroup(fs, groupStubGate, "policy", "queue-cap", "wait-budget", "believed-latency", "estimator", "window", "bucket", "min-samples", "max-queue-wait")
	setGroup(fs, groupStubFaults, "stall-at", "stall-for", "stall-every", "clock-skew")
	setGroup(fs, groupStubDead, "deadline", "deadline-status", "arrival-stamp", "deadline-position")
	setGroup(fs, groupStubLimiter, "limit-rps", "limit-shards", "limit-window", "limit-routing", "limit-seed")
	setGroup(fs, groupStubPlanes, "shadow-share", "fence", "primary-fail", "primary-budget", "borrow-workers", "borrow-latency",
		"borrow-depth", "borrow-fail", "borrow-budget", "budget-window", "health-every", "health-max-age",
		"borrow-slow-factor", "plane-faults", "plane-seed")
	inGroup(fs, groupStubListen, func() {
		// The built-in stub of a load run is this command in a child
		// process (stubchild.go): it stops when its parent closes its
		// standard input.
		fs.BoolVar(child, "until-stdin-closes", false, "stop when standard input closes")
		fs.MarkHidden("until-stdin-closes")
	})
	setGroup(fs, groupStubListen, "listen", "h2c")
	helpFlag(fs, help)
	return fs
}

// stubUsage heads the help of `openload stub`; targets/stub/doc.go is the
// contract it sums up.
const stubUsage = `openload stub — a model server behind overload gates, for rehearsing overload

Usage:
  openload stub [flags]

Examples:
  # the defaults: 4 workers of 50 ms behind an admission gate, on a port of your choosing
  openload stub --listen 127.0.0.1:8080
  openload -rate 160 -d 20s http://127.0.0.1:8080/predict

  # a bounded queue, and a 1 s stall every 10 s from 5 s after the first request
  openload stub --listen 127.0.0.1:8080 --policy bounded --queue-cap 8 \
      --stall-at 5s --stall-for 1s --stall-every 10s

  # a streaming model: 64 sequences at once, 10 ms a token slowed 0.2 ms by each other one
  openload stub --listen 127.0.0.1:8080 --batch-slots 64 --policy none \
      --itl 10ms --itl-per-seq 200us
  curl -N http://127.0.0.1:8080/v1/chat/completions -d '{"model":"m","stream":true,
      "messages":[{"role":"user","content":"hi"}],"max_tokens":8}'

  # a sharded rate limiter: 150 requests/s over 6 shards, 429 beyond
  openload stub --listen 127.0.0.1:8080 --limit-rps 150 --limit-shards 6

  # half the requests also ask for a shadow score on a borrowed plane, behind the fence;
  # its health goes stale at 5 s for 3 s, and it slows down at 10 s for 5 s
  openload stub --listen 127.0.0.1:8080 --shadow-share 0.5 --primary-fail 0.1 --fence per-plane \
      --plane-faults stale-health@5s+3s,borrow-slow@10s+5s

What it serves:
  GET /stats       server-side truth as JSON: answers per source and reason, queue and model
                   occupancy, stalls, deadline drops, limiter counts per shard, and percentiles
                   of queue wait and total time
  POST /v1/chat/completions, POST /v1/completions, GET /v1/models
                   OpenAI-compatible token model: "stream": true answers text/event-stream, one
                   chunk per token after --prefill (+ --prefill-per-token per prompt token, by
                   OpenAI's cl100k_base tokenizer), one token every --itl (+ --itl-per-seq per
                   other active sequence); a usage chunk when stream_options.include_usage is
                   set; --batch-slots sequences at once
  POST /tokenize   vLLM's tokenizer endpoint: {"prompt":…} or {"messages":[…]} answers
                   {"count","max_model_len","tokens"}, count as usage.prompt_tokens reports it
  any other path   a model request (e.g. POST /predict; a body is read and discarded). Every
                   answer says what became of it:
    X-Stub-Source  model (200), fallback (200: the gate answered in the model's place),
                   limiter (429, with Retry-After) or deadline (503 or 204, no body)
    X-Stub-Reason  served; queue-full, over-budget, wait-timeout or worker-failed (fallback);
                   rate-limited; deadline (X-Stub-Drop then says why: late, no-stamp, bad-stamp,
                   future-stamp)
    X-Stub-Shadow  the request's shadow intent: none, scored, shed-stale, shed-depth, shed-budget
                   or late-rejected (--class-header X-Stub-Shadow counts them)
    Server-Timing  what the stub measured, in ms: queue;dur=12.345, model;dur=50.012,
                   total;dur=62.400, then stall;dur=… and dwell;dur=… when they apply
  openload reads X-Stub-Source and Server-Timing without being asked: its report groups the
  answers by source and shows the stub's timings next to service time (--no-auto-headers: not).

`

// runStub runs the stub model server until ctx is cancelled (SIGINT or
// SIGTERM).
func runStub(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	cfg := stub.DefaultConfig()
	var help, child bool
	fs := stubFlags(&cfg, &help, &child)
	if err := parseFlags(fs, args); err != nil {
		return usageErrorIn(stderr, "stub", "%v", err)
	}
	if help {
		fmt.Fprint(stdout, stubUsage+flagHelp(fs, stubGroups))
		return exitOK
	}
	if fs.NArg() > 0 {
		return usageErrorIn(stderr, "stub", "unexpected argument %q", fs.Arg(0))
	}
	if err := cfg.Validate(); err != nil {
		return usageErrorIn(stderr, "stub", "%v", flagError(stubFields, err))
	}
	s, err := stub.NewServer(cfg)
	if err != nil {
		fmt.Fprintf(stderr, "openload: stub: %s\n", stubMessage(err))
		return exitRuntime
	}
	fmt.Fprintf(stdout, "%s%s (%s); stats at %s/stats; Ctrl-C stops\n", listeningPrefix, s.URL, describeStub(s.Config), s.URL)
	c := s.Config
	slots := c.BatchSlots
	if slots == 0 {
		slots = c.Workers
	}
	fmt.Fprintf(stdout, "openload stub: OpenAI-compatible at %s/v1 (chat/completions, completions, models): %d sequences at once, first token after %v + %v a prompt token, then one every %v + %v per other sequence\n",
		s.URL, slots, c.Prefill, c.PrefillPerToken, c.ITL, c.ITLPerSeq)
	var parentGone chan struct{}
	if child {
		parentGone = make(chan struct{})
		go func() {
			io.Copy(io.Discard, os.Stdin)
			close(parentGone)
		}()
	}
	select {
	case <-ctx.Done():
	case <-parentGone:
	}
	s.Close()
	fmt.Fprintln(stdout, "openload stub: stopped")
	return exitOK
}

// stubMessage is an error of package stub as the CLI says it: its fields
// named by their flags, and without the package's "stub: ", which the
// CLI's own prefix ("openload: stub: ", "openload: built-in stub: ")
// already says.
func stubMessage(err error) string {
	return strings.TrimPrefix(flagError(stubFields, err).Error(), "stub: ")
}
