// Package stub is a stub model server behind overload gates: the kind of
// recommendation or inference service openload is aimed at. It can run as
// `openload stub` or in-process, like net/http/httptest:
//
//	cfg := stub.DefaultConfig()
//	cfg.Workers, cfg.Latency = 4, 20*time.Millisecond
//	srv, err := stub.NewServer(cfg) // listens on 127.0.0.1:<free port>
//	if err != nil { ... }
//	defer srv.Close()
//	resp, err := http.Get(srv.URL + "/predict")
//	// resp.Header.Get("X-Stub-Source") is "model" or "fallback"
//	st := srv.Stats() // server-side truth, also at GET srv.URL+"/stats"
//
// NewUnstartedServer plus Handler mounts the same handler in a server of your
// own (for example httptest.NewServer); call Close on the stub first.
//
// # The model
//
// Every request except GET /stats, GET /metrics (and the OpenAI-compatible paths, see
// Streamed answers) is a model request (its body is read, up to
// 1 MiB, and discarded). The model runs Workers calls at once; each call
// takes Latency. Requests that find every worker busy wait in an explicit
// FIFO queue in front of the model; a worker that finishes hands its slot
// straight to the oldest waiter. A request whose client goes away leaves the
// queue (or the model) at once.
//
// # Gates
//
// The rate limiter, when on, comes first (see Rate limiter below): a request
// it rejects never reaches the queue or the model. Past it, a request that
// finds a free worker (empty queue and fewer than Workers calls running)
// always goes straight to the model. Otherwise the Policy decides:
//
//   - none: join the queue.
//   - bounded: if QueueCap requests are already waiting, answer with the
//     fallback at once (reason queue-full). Exactly at the cap rejects; a
//     request that finds QueueCap−1 waiting joins, so at most QueueCap wait.
//   - admission: estimate the wait this request would have in front of the
//     model; if the estimate exceeds WaitBudget, answer with the fallback at
//     once (reason over-budget). An estimate exactly equal to the budget is
//     admitted.
//
// Under every policy a request that has waited MaxQueueWait in the queue
// leaves it with the fallback (reason wait-timeout).
//
// # Estimators
//
// With q the number of requests already waiting when the request arrives:
//
//   - believed: wait = q × BelievedLatency ÷ Workers (BelievedLatency
//     defaults to Latency; set it apart to model a gate that is wrong about
//     its model).
//   - completions: wait = q ÷ rate, where rate = model calls completed in the
//     sliding window ÷ the time the window covers. The window is a ring of
//     ceil(Window ÷ Bucket) counters of Bucket each, rotated by time. The
//     covered time runs from the start of the oldest retained bucket to now;
//     while the server has been up for less than a window, it runs from
//     server creation to now, so a young server's throughput is not
//     under-estimated by dividing a short history by the full window. Until
//     the window holds MinSamples completions (and at least one), the
//     believed formula is used instead.
//
// The completions estimator uses the rate of completions, never an average
// of request durations: durations observed at the server include queueing,
// so feeding them back would make the gate over-reject when the queue is
// long and over-admit when it is short. A completion is counted when the
// worker is released.
//
// # Answers
//
// Fallback answers are successful: status 200 with a small JSON body such as
//
//	{"source":"fallback","reason":"over-budget","items":["popular-1","popular-2","popular-3"]}
//
// and model answers are 200 with {"source":"model","reason":"served",...}.
// The contract of every answer:
//
//	status  X-Stub-Source  X-Stub-Reason                           body  other headers
//	200     model          served                                  JSON
//	200     fallback       queue-full | over-budget | wait-timeout JSON
//	200     fallback       worker-failed                           JSON
//	429     limiter        rate-limited                            JSON  Retry-After
//	503|204 deadline       deadline                                none  X-Stub-Drop
//
// (503 or 204 as DeadlineStatus says; X-Stub-Drop is late, no-stamp,
// bad-stamp or future-stamp.) Every answer also carries a W3C Server-Timing
// header, in milliseconds with 3 decimals:
//
//	Server-Timing: queue;dur=12.345, model;dur=50.012, total;dur=62.400
//
// queue is arrival to getting a worker (or to the fallback or limiter
// decision), model is the model call (0 for fallbacks) and total is arrival
// to the moment the answer is written. When a stall held the answer back,
// ", stall;dur=…" is appended; when the deadline gate is on and the dwell
// time is known, ", dwell;dur=…" is appended last, for dropped answers too
// (negative for a stamp from the future). Requests released by Close get 503
// with no X-Stub headers.
//
// # Stalls
//
// StallFor > 0 injects global pauses, like a garbage-collector pause. The
// stall clock starts at the first model request the server receives (GET
// /stats and GET /metrics do not start it); stall k covers [StallAt + k·StallEvery,
// StallAt + k·StallEvery + StallFor), with only k = 0 when StallEvery is 0.
// During a stall nothing completes: a model call that ends inside it keeps
// its worker until the stall ends, and fallbacks and 429s are held until
// then too. Arrivals are still limited, gated and queued during a stall.
//
// # Deadline gate
//
// Deadline > 0 promises a maximum: an answer that would leave after the
// cutoff does not leave at all. The dwell time of an answer is
//
//	dwell = the instant the answer is about to be written − the request's arrival
//
// and the gate checks it after every point where the request can wait
// (rate limiter, queue, model, fallback path, stalls), immediately before
// the status is written; every answer, 429s included, passes through it.
//
//   - dwell ≤ Deadline: the answer is sent. Exactly Deadline passes.
//   - dwell > Deadline: dropped, reason late.
//   - dwell < 0 (the arrival is later than the stub's now): dropped, reason
//     future-stamp. A negative dwell is never clamped to 0: under clock skew
//     that would pass stale requests.
//   - the arrival cannot be read: dropped, reason no-stamp (header absent or
//     empty) or bad-stamp (anything but one positive decimal integer that
//     fits in int64: signs, spaces, fractions, several values, 0).
//
// A dropped request gets DeadlineStatus (503 by default, or 204 as ad
// bidders answer) with X-Stub-Source and X-Stub-Reason "deadline",
// X-Stub-Drop naming the reason, and never the payload. Dropping is the
// fail-safe choice whenever the dwell time cannot be trusted.
//
// ArrivalStamp says where the arrival comes from:
//
//   - receive (default): the stub's own clock when it receives the request.
//     The dwell time is measured on the monotonic clock, so it is never
//     negative, and ClockSkew does not apply (both readings come from the
//     same clock; a shift would cancel out).
//   - header:NAME: an upstream stamped the arrival in request header NAME as
//     Unix time in nanoseconds (wall clock). Then
//     dwell = (time.Now() + ClockSkew) − stamp, in wall-clock terms.
//     ClockSkew (may be negative) rehearses a stub whose clock runs ahead of
//     (> 0) or behind (< 0) the stamping server's: ahead makes answers look
//     older, behind can put fresh stamps in the future.
//
// With the receive source the dwell time equals the total in Server-Timing
// (both are read at the same instant).
//
// DeadlinePosition last (default) is the only position that gives the
// bound. before-stall is deliberately misplaced, for demonstrations: it
// checks as soon as the answer is ready (when the model call returns, or
// when a fallback or 429 is decided), before the stall holds, so an answer
// it passed can still be held back by a stall and leave late. The dwell time
// in Server-Timing and in Stats is still the one at the write, and shows the
// broken bound (max_dwell_sent_ms above deadline_ms).
//
// With Deadline 0 the gate is off: nothing is dropped, no dwell metric is
// reported, and DeadlineStatus, ArrivalStamp, ClockSkew and DeadlinePosition
// have no effect.
//
// # Rate limiter
//
// LimitRPS > 0 puts a sharded rate limiter in front of the gates: LimitShards
// independent limiters, as when every instance behind a load balancer
// enforces its share of a global limit. Each shard admits
//
//	allowance = floor(LimitRPS × LimitWindow ÷ LimitShards)
//
// requests per window (rounded down, so the shards together never admit more
// than LimitRPS × LimitWindow; a configuration where the allowance is 0 is
// rejected as "limit below shards"). Windows are fixed: window k is
// [t0 + k·LimitWindow, t0 + (k+1)·LimitWindow), where t0 is the server's
// creation (NewUnstartedServer or NewServer), and every shard's count resets
// at a window's start. LimitRouting picks the shard that sees a request:
// round-robin (0, 1, …, n−1, 0, … in arrival order, so any multiple of n
// requests is spread exactly evenly) or random (uniform, from a source
// seeded with LimitSeed: the same seed gives the same shard sequence, in
// arrival order). With random routing some shards run out while others have
// allowance left, so the service as a whole admits less than LimitRPS under
// bursts.
//
// A request over its shard's allowance gets 429 with X-Stub-Source limiter,
// X-Stub-Reason rate-limited, a small JSON body and Retry-After: the whole
// seconds from the limiter's decision to the end of the shard's window,
// rounded up, at least 1. It never reaches the queue or the model.
//
// # The borrowed plane
//
// A share of the requests past the rate limiter (ShadowShare, exact: the
// n-th asks when ⌊n·share⌋ grows) also asks for a shadow score on a
// borrowed evaluation plane:
// BorrowWorkers attempts of BorrowLatency at once, the rest queued.
// Scoring is read-only and runs in the background; the answer never waits
// for it and says in X-Stub-Shadow what became of the intent when it was
// written: none (no intent), scored (admitted; its score accepted or on
// its way), shed-stale, shed-depth, shed-budget (refused on arrival), or
// late-rejected (admitted, and its score already came back late).
//
// Primary attempts fail with probability PrimaryFail (an injected worker
// timeout, after the call's Latency). A failure is compensated, retried
// once on the same worker, when the primary retry budget has a token;
// otherwise, or when the retry fails too, the answer is the fallback with
// reason worker-failed. A borrowed attempt that fails (BorrowFail, or
// slow: begun inside borrow-slow) asks the fence for one retry the same
// way. Budgets hold PrimaryBudget and BorrowBudget tokens and refill to
// that at each BudgetWindow from the first request. The borrowed plane
// publishes a health sample every HealthEvery (none inside stale-health);
// the model has a revision (R1, then one more at each revision fault), and
// a borrow is bound to the one it was admitted under.
//
// The fence (Fence) decides each intent on arrival and each retry and
// score after:
//
//   - shared: the naive design. Every intent is admitted (a missing or
//     stale sample counts as capacity, no depth limit); borrowed retries
//     spend the one budget, the primary's; a late score (for another
//     revision than its borrow's, delivered inside late-score, or for a
//     borrow not open) is replayed, which spends a token of it too.
//   - per-plane: a borrow is refused, in this order, when the health sample
//     is older than HealthMaxAge or missing (shed-stale), when BorrowDepth
//     borrows are queued or scoring (shed-depth), and when the borrowed
//     budget is empty (shed-budget); retries spend the borrowed budget and
//     only for borrows the fence admitted and still open; a late score is
//     rejected, never replayed. Invariant: nothing on the borrowed plane
//     changes the primary budget, and a shed borrow changes no budget.
//
// PlaneFaults injects, from the first request like the stalls, a
// comma-separated list of KIND@START+LENGTH (revision@START for an
// instant): stale-health, borrow-slow (attempts take SlowFactor ×
// BorrowLatency and fail), primary-saturate (every primary attempt fails,
// and no request asks for a shadow score), late-score, revision. The
// fence's counters are the fence object of Stats (FenceStats).
//
// # Streamed answers: the OpenAI-compatible endpoints
//
// POST /v1/chat/completions and POST /v1/completions answer as model
// servers with OpenAI's API do (vLLM, TGI, llama.cpp's server, Ollama);
// POST /tokenize as vLLM's does (below);
// GET /v1/models lists one model, "openload-stub", but a request may name
// any model and its answer echoes the name. They are model requests like
// any other: the rate limiter, the gate, the queue, stalls and the
// deadline gate apply, and they count in Stats. A request the stub cannot
// take (malformed JSON, no "model", max_tokens or max_completion_tokens
// outside 1..65536, n other than 1, stream_options without stream, no
// messages or prompt) gets 400 with an OpenAI error body,
// {"error":{"message":…,"type":"invalid_request_error","param":…,"code":null}},
// and is not a model request (not counted); a wrong method gets 405.
//
// The token model is that of a continuous-batching server:
//
//   - slots: BatchSlots sequences hold the model at once (when BatchSlots
//     is 0, Workers does; when set, it is the slot count for every model
//     request, /predict too). The rest wait in the gate and queue as any
//     request does; a sequence holds its slot until its last token.
//   - prompt tokens: text is counted by a real tokenizer, OpenAI's
//     cl100k_base (as tiktoken counts it, internal/prompt.Count), per
//     string (a chat message's content, or each text part of it; a
//     completions prompt string, or each of an array of strings), with no
//     chat template around messages; a prompt of token ids counts one
//     token per id. Counting costs 0.3 to 0.4 ms of CPU per 1024 tokens.
//   - time to first token = Prefill + PrefillPerToken × prompt tokens,
//     from the moment the sequence gets its slot.
//   - then one token every ITL + ITLPerSeq × (active − 1), where active is
//     the number of sequences holding a slot when the gap begins. Each
//     token's time follows the previous token's due time, not the moment
//     it was written, so a late write does not slow the sequence.
//   - output tokens: max_tokens (or max_completion_tokens), finish_reason
//     "length"; else OutputTokens, finish_reason "stop". Token k is a word
//     from a fixed list (" lorem", " ipsum", …).
//
// The admission gate's completions estimator counts a sequence as
// completed when it releases its slot, after its last token; the believed
// estimator knows only BelievedLatency, so for token traffic set that to
// the time of a whole answer (or keep the completions estimator).
//
// With "stream": true the answer is text/event-stream: the head and the
// first token leave together when the prefill ends (a chat answer's first
// event is the assistant role with empty content, as OpenAI sends it),
// then one "data: {…}" event per token, flushed as it is made, then an
// event with finish_reason, the usage event when stream_options.include_usage
// is set (choices empty, usage with prompt_tokens, completion_tokens and
// total_tokens; every other event carries "usage": null) and
// "data: [DONE]". Chat events are chat.completion.chunk objects, completion
// events text_completion objects. Without stream the answer is one
// chat.completion or text_completion object with usage, written when the
// last token is made.
//
// With PrefixCacheTokens > 0 the token model keeps a prefix cache as
// vLLM's automatic prefix caching does (prefixcache.go): blocks of
// PrefixCacheBlock tokens, hashed in a chain, shared by all requests,
// least recently used evicted, at most PrefixCacheTokens tokens. The
// prefill is Prefill + PrefillPerToken × (prompt tokens − cached tokens),
// the cached tokens being the longest run of whole leading blocks found,
// at most prompt tokens − 1. A prompt's blocks are cached at its prefill
// and its answer's (all but the last token) when the last token is made,
// a chat's tokens being its messages' text contents in order, each tagged
// with its role (no token is added). usage.prompt_tokens_details
// {"cached_tokens": N} is written when N > 0, as vLLM does; with the cache
// off nothing in the answer changes.
//
// POST /tokenize answers as vLLM's does: {"model": …, "prompt": "…"} or
// {"model": …, "messages": [...]} (any model, or none) gets {"count": N,
// "max_model_len": 131072, "tokens": [...], "token_strs": null}, the
// cl100k_base ids of the prompt, or of the messages' text contents in
// order, so that count is the usage.prompt_tokens a completion of the
// same prompt reports. The stub has no context window: max_model_len is
// only a plausible value, checked against nothing. It is not a model
// request (no gate, not counted); a bad body gets 400 with an OpenAI
// error body, a wrong method 405.
//
// Each stream costs its handler goroutine and one timer, reset per token.
// A stall freezes the model: a prefill that ends inside one waits for its
// end, and a token due inside one waits for its end, the gaps resuming
// from there. The deadline gate checks once, when the head is written (at
// the first token of a stream, at the whole answer otherwise): a stream
// that starts in time runs to its end. Server-Timing is written with the
// head: model is the prefill for a stream (prefill and decoding
// otherwise), total is arrival to the head. A fallback answers at once
// with three tokens in the request's form (streamed or not) and
// X-Stub-Source fallback; the limiter's 429 carries an OpenAI error body
// with code rate_limit_exceeded. A stream that stops early (the client
// went away, or Close) ends its connection without the chunked
// terminator. Stats.Tokens counts streams begun and completed, output
// tokens and the sequences active now.
//
// # Server-side truth
//
// GET /stats (and Server.Stats) report counts per source and reason, queue
// and model occupancy, the estimator's current throughput and whether it
// uses the believed fallback, the number of stalls begun, the deadline
// gate's configuration, answers sent, drops per reason and largest dwell time
// sent, the limiter's configuration and its accepted and rejected counts per
// shard and in total, and p50/p90/p99/max of queue wait and total time from
// HdrHistograms (1µs..1h, 3 significant digits). See Stats for the
// accounting identity every request satisfies.
//
// # Prometheus metrics
//
// GET /metrics serves the same figures in Prometheus' text format
// (MetricsHandler serves it on a listener of your own, Collector adds it
// to a registry of your own). The collector calls Stats at each scrape:
// nothing is added to a request's path, no series has a per-request label,
// and a scrape at rest agrees with /stats. Counters end in _total:
// stub_requests_received_total (Total); stub_requests_total{source,reason}
// (answers written, by X-Stub-Source and X-Stub-Reason, deadline drops as
// source and reason "deadline"), so that received = sum of
// stub_requests_total + stub_requests_canceled_total +
// stub_requests_closed_total + stub_requests_in_flight;
// stub_deadline_dropped_total{reason}; stub_limiter_requests_total
// {limiter_shard,decision} (limiter_shard, since openload's own metrics
// use shard for the generator's); stub_tokens_total, stub_streams_total,
// stub_streams_completed_total; stub_fence_… for the fence. Gauges are the
// state now: stub_queue_length, stub_in_model, stub_requests_in_flight,
// stub_sequences_active, stub_estimator_…, stub_limiter_… configuration.
// Durations are in seconds.
//
// The latencies are not histograms: the HdrHistograms have no classic
// buckets and no sum, so stub_queue_wait_seconds, stub_total_time_seconds
// and stub_token_lateness_seconds are gauges with stat="p50", "p90",
// "p99" or "max", since the start. Like a summary's quantiles they do not
// add across stubs. docs/REFERENCE.md lists every name.
package stub
