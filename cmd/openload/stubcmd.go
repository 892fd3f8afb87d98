package main

import (
	"context"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/openload/openload/servers/stub"
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
func stubFlags(cfg *stub.Config, help, child *bool, metricsAddr *string) *pflag.FlagSet {
	fs := newFlagSet("openload stub")
	cfg.AddFlags(fs)
	setGroup(fs, groupStubModel, "workers", "latency")
	setGroup(fs, groupStubTokens, "batch-slots", "prefill", "prefill-per-token", "itl", "itl-per-seq", "output-tokens",
		"prefix-cache-tokens", "prefix-cache-block")
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
	inGroup(fs, groupStubListen, func() {
		// A listener of the CLI's, not a field of stub.Config: the
		// package serves /metrics on its own listener and hands out the
		// handler; this only gives a scraper a port apart from the model's.
		fs.StringVar(metricsAddr, "metrics-addr", "", "also serve /metrics on this `host:port` (e.g. :9464); it is always at the stub's own /metrics")
	})
	helpFlag(fs, help)
	return fs
}

// stubUsage heads the help of `openload stub`; servers/stub/doc.go is the
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
  GET /metrics     the same figures in Prometheus' text format, read at each scrape
                   (stub_requests_total{source,reason}, stub_queue_length, stub_in_model,
                   stub_limiter_requests_total, stub_tokens_total, …); --metrics-addr serves it
                   on a port of its own too
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
	var metricsAddr string
	fs := stubFlags(&cfg, &help, &child, &metricsAddr)
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
	if fs.Changed("metrics-addr") {
		if err := checkListenAddr(metricsAddr); err != nil {
			return usageErrorIn(stderr, "stub", "--metrics-addr %v", err)
		}
	}
	s, err := stub.NewServer(cfg)
	if err != nil {
		fmt.Fprintf(stderr, "openload: stub: %s\n", stubMessage(err))
		return exitRuntime
	}
	var metrics *metricsServer
	if metricsAddr != "" {
		if metrics, err = serveMetrics(metricsAddr, s.MetricsHandler()); err != nil {
			s.Close()
			fmt.Fprintf(stderr, "openload: stub: --metrics-addr %s: %v\n", metricsAddr, err)
			return exitRuntime
		}
		defer metrics.close()
	}
	fmt.Fprintf(stdout, "%s%s (%s); stats at %s/stats; Ctrl-C stops\n", listeningPrefix, s.URL, describeStub(s.Config), s.URL)
	c := s.Config
	slots := c.BatchSlots
	if slots == 0 {
		slots = c.Workers
	}
	fmt.Fprintf(stdout, "openload stub: OpenAI-compatible at %s/v1 (chat/completions, completions, models): %d sequences at once, first token after %v + %v a prompt token, then one every %v + %v per other sequence\n",
		s.URL, slots, c.Prefill, c.PrefillPerToken, c.ITL, c.ITLPerSeq)
	if metrics != nil {
		fmt.Fprintf(stdout, "openload stub: metrics at %s/metrics and %s/metrics\n", metrics.url, s.URL)
	}
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
	// The model listener first: a last scrape on the metrics listener
	// still reads the final counts while the stub drains.
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

// checkListenAddr checks a listen address given on the command line:
// host:port with a numeric port (0 picks a free one); the host may be
// empty (every interface).
func checkListenAddr(addr string) error {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("must be host:port (e.g. :9464 or 127.0.0.1:9464), got %q", addr)
	}
	if _, err := strconv.ParseUint(port, 10, 16); err != nil {
		return fmt.Errorf("port must be a number in 0..65535, got %q", port)
	}
	return nil
}

// metricsServer serves a /metrics handler on a listener of its own.
type metricsServer struct {
	url  string
	srv  *http.Server
	done chan struct{}
}

func serveMetrics(addr string, h http.Handler) (*metricsServer, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", h)
	m := &metricsServer{
		url:  "http://" + ln.Addr().String(),
		srv:  &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, ErrorLog: log.New(io.Discard, "", 0)},
		done: make(chan struct{}),
	}
	go func() {
		defer close(m.done)
		_ = m.srv.Serve(ln) // http.ErrServerClosed on close
	}()
	return m, nil
}

// close stops the listener, letting a scrape under way finish (a scrape
// is one Stats call: it does not wait on the model).
func (m *metricsServer) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := m.srv.Shutdown(ctx); err != nil {
		_ = m.srv.Close()
	}
	<-m.done
}
