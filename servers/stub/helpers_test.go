package stub

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// testConfig is DefaultConfig with the given changes applied.
func testConfig(change func(*Config)) Config {
	cfg := DefaultConfig()
	if change != nil {
		change(&cfg)
	}
	return cfg
}

// startServer starts a stub on loopback and closes it when the test ends.
// hooks, if given, runs on the unstarted server (to set test hooks).
func startServer(t *testing.T, cfg Config, hooks func(*Server)) *Server {
	t.Helper()
	s, err := NewUnstartedServer(cfg)
	if err != nil {
		t.Fatalf("NewUnstartedServer: %v", err)
	}
	if hooks != nil {
		hooks(s)
	}
	if err := s.Start(); err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(s.Close)
	return s
}

// newClient returns a client with its own transport whose idle connections
// are closed when the test ends (so goleak sees no connection goroutines).
func newClient(t *testing.T) *http.Client {
	tr := &http.Transport{MaxIdleConns: 2000, MaxIdleConnsPerHost: 2000}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: 15 * time.Second}
}

type result struct {
	status int
	source string
	reason string
	timing map[string]float64 // Server-Timing metric -> ms
	header http.Header
	body   []byte
	err    error
	done   time.Time
}

func do(ctx context.Context, c *http.Client, method, url string) result {
	return doHeader(ctx, c, method, url, nil)
}

// doHeader is do with request headers.
func doHeader(ctx context.Context, c *http.Client, method, url string, h http.Header) result {
	req, err := http.NewRequestWithContext(ctx, method, url, strings.NewReader("{}"))
	if err != nil {
		return result{err: err, done: time.Now()}
	}
	for k, vs := range h {
		req.Header[k] = vs
	}
	resp, err := c.Do(req)
	if err != nil {
		return result{err: err, done: time.Now()}
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	r := result{
		status: resp.StatusCode,
		source: resp.Header.Get("X-Stub-Source"),
		reason: resp.Header.Get("X-Stub-Reason"),
		header: resp.Header,
		body:   body,
		err:    err,
		done:   time.Now(),
	}
	r.timing, _ = parseServerTiming(resp.Header.Get("Server-Timing"))
	return r
}

// goDo sends a request in a goroutine; the result arrives on the channel.
func goDo(ctx context.Context, c *http.Client, url string) <-chan result {
	ch := make(chan result, 1)
	go func() { ch <- do(ctx, c, http.MethodPost, url) }()
	return ch
}

// parseServerTiming parses "name;dur=1.234, name2;dur=5.000" strictly.
func parseServerTiming(h string) (map[string]float64, bool) {
	if h == "" {
		return nil, false
	}
	m := make(map[string]float64)
	for _, part := range strings.Split(h, ", ") {
		name, dur, ok := strings.Cut(part, ";dur=")
		if !ok || name == "" {
			return nil, false
		}
		if i := strings.IndexByte(dur, '.'); i < 0 || len(dur)-i-1 != 3 {
			return nil, false // exactly 3 decimals
		}
		v, err := strconv.ParseFloat(dur, 64)
		if err != nil {
			return nil, false
		}
		m[name] = v
	}
	return m, true
}

// waitFor polls Stats until cond holds (10s at most: a generous bound for a
// condition that normally holds within milliseconds).
func waitFor(t *testing.T, s *Server, what string, cond func(Stats) bool) Stats {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		st := s.Stats()
		if cond(st) {
			return st
		}
		if time.Now().After(deadline) {
			b, _ := json.Marshal(st)
			t.Fatalf("timed out waiting for %s; stats: %s", what, b)
		}
		time.Sleep(time.Millisecond)
	}
}

// checkAccounting asserts that every request is accounted for exactly once.
func checkAccounting(t *testing.T, st Stats) {
	t.Helper()
	if st.InFlight != 0 {
		t.Errorf("in_flight = %d after all requests returned, want 0", st.InFlight)
	}
	src, d := st.Sources, st.Deadline.Dropped
	if got := src.Model + src.Fallback + src.Limiter + d.Total + st.Canceled + st.Closed; got != st.Total {
		t.Errorf("model+fallback+limiter+dropped+canceled+closed = %d, total = %d", got, st.Total)
	}
	if sum := d.Late + d.NoStamp + d.BadStamp + d.FutureStamp; sum != d.Total {
		t.Errorf("drop reasons sum to %d, dropped total = %d", sum, d.Total)
	}
	if st.Deadline.DeadlineMs > 0 {
		if sent := src.Model + src.Fallback + src.Limiter; st.Deadline.Sent != sent {
			t.Errorf("deadline sent = %d, answers sent = %d", st.Deadline.Sent, sent)
		}
	}
	r := st.Reasons
	if r.Served != src.Model {
		t.Errorf("served = %d, model = %d", r.Served, src.Model)
	}
	if fb := r.QueueFull + r.OverBudget + r.WaitTimeout + r.WorkerFailed; fb != src.Fallback {
		t.Errorf("fallback reasons sum to %d, fallback = %d", fb, src.Fallback)
	}
	if r.RateLimited != src.Limiter {
		t.Errorf("rate_limited = %d, limiter = %d", r.RateLimited, src.Limiter)
	}
	if l := st.Limiter; l.RPS > 0 && l.Rejected < src.Limiter {
		t.Errorf("limiter rejected %d, but %d limiter answers sent", l.Rejected, src.Limiter)
	}
}
