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
// Every request except GET /stats is a model request (its body is read, up to
// 1 MiB, and discarded). The model runs Workers calls at once; each call
// takes Latency. Requests that find every worker busy wait in an explicit
// FIFO queue in front of the model; a worker that finishes hands its slot
// straight to the oldest waiter. A request whose client goes away leaves the
// queue (or the model) at once.
//
// # Gates
//
// On arrival a request that finds a free worker (empty queue and fewer than
// Workers calls running) always goes straight to the model. Otherwise the
// Policy decides:
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
// Every answer carries X-Stub-Source (model|fallback), X-Stub-Reason
// (served|queue-full|over-budget|wait-timeout) and a W3C Server-Timing
// header, in milliseconds with 3 decimals:
//
//	Server-Timing: queue;dur=12.345, model;dur=50.012, total;dur=62.400
//
// queue is arrival to getting a worker (or to the fallback decision), model
// is the model call (0 for fallbacks) and total is arrival to the moment the
// answer is written. When a stall held the answer back, ", stall;dur=…" is
// appended. Requests released by Close get 503 with no X-Stub headers.
//
// # Stalls
//
// StallFor > 0 injects global pauses, like a garbage-collector pause. The
// stall clock starts at the first model request the server receives (GET
// /stats does not start it); stall k covers [StallAt + k·StallEvery,
// StallAt + k·StallEvery + StallFor), with only k = 0 when StallEvery is 0.
// During a stall nothing completes: a model call that ends inside it keeps
// its worker until the stall ends, and fallbacks are held until then too.
// Arrivals are still gated and queued during a stall.
//
// # Server-side truth
//
// GET /stats (and Server.Stats) report counts per source and reason, queue
// and model occupancy, the estimator's current throughput and whether it
// uses the believed fallback, the number of stalls begun, and p50/p90/p99/max
// of queue wait and total time from HdrHistograms (1µs..1h, 3 significant
// digits).
package stub
