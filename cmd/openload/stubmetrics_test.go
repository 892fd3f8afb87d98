package main

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestStubMetricsAddrRefused: a bad --metrics-addr is a one-line usage
// error naming the flag, and a port that cannot be bound a one-line
// runtime error; neither leaves the stub running.
func TestStubMetricsAddrRefused(t *testing.T) {
	for _, c := range []struct{ addr, want string }{
		{"9464", `openload: stub: --metrics-addr must be host:port (e.g. :9464 or 127.0.0.1:9464), got "9464"`},
		{"", `openload: stub: --metrics-addr must be host:port (e.g. :9464 or 127.0.0.1:9464), got ""`},
		{"127.0.0.1:http", `openload: stub: --metrics-addr port must be a number in 0..65535, got "http"`},
		{"127.0.0.1:70000", `openload: stub: --metrics-addr port must be a number in 0..65535, got "70000"`},
	} {
		code, stdout, stderr := runCLI("stub", "--listen", "127.0.0.1:0", "--metrics-addr", c.addr)
		if code != exitUsage || stdout != "" || stderr != c.want+"\nrun 'openload stub --help' for usage\n" {
			t.Errorf("--metrics-addr %q: exit %d, stdout %q, stderr %q; want exit %d and %q", c.addr, code, stdout, stderr, exitUsage, c.want)
		}
	}

	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	code, _, stderr := runCLI("stub", "--listen", "127.0.0.1:0", "--metrics-addr", taken.Addr().String())
	prefix := "openload: stub: --metrics-addr " + taken.Addr().String() + ": "
	if code != exitRuntime || !strings.HasPrefix(stderr, prefix) || strings.Count(stderr, "\n") != 1 {
		t.Errorf("a port in use: exit %d, stderr %q; want exit %d and one line starting %q", code, stderr, exitRuntime, prefix)
	}
}

// lineWriter collects what the stub prints and hands on each line.
type lineWriter struct {
	mu    sync.Mutex
	buf   strings.Builder
	lines chan string
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	for {
		s := w.buf.String()
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			break
		}
		w.lines <- s[:i]
		w.buf.Reset()
		w.buf.WriteString(s[i+1:])
	}
	return len(p), nil
}

// TestStubMetricsAddr: with --metrics-addr the stub serves /metrics on a
// second listener as on its own, and both count the model requests sent.
func TestStubMetricsAddr(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	out := &lineWriter{lines: make(chan string, 16)}
	done := make(chan int, 1)
	go func() {
		done <- runStub(ctx, []string{"--listen", "127.0.0.1:0", "--metrics-addr", "127.0.0.1:0"}, out, io.Discard)
	}()
	defer func() {
		cancel()
		if code := <-done; code != exitOK {
			t.Errorf("stub exited %d", code)
		}
	}()

	var metricsURL, stubURL string
	timeout := time.After(10 * time.Second) // the stub prints its lines at once; a generous bound
	for metricsURL == "" {
		select {
		case l := <-out.lines:
			if rest, ok := strings.CutPrefix(l, "openload stub: metrics at "); ok {
				a, b, _ := strings.Cut(rest, " and ")
				metricsURL, stubURL = a, b
			}
		case code := <-done:
			done <- code
			t.Fatalf("stub exited %d before printing its metrics address", code)
		case <-timeout:
			t.Fatal("no metrics line")
		}
	}
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr, Timeout: 10 * time.Second}
	const sent = 3
	for range sent {
		resp, err := c.Post(strings.TrimSuffix(stubURL, "/metrics")+"/predict", "", nil)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	get := func(url string) string {
		resp, err := c.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %v %s", url, err, resp.Status)
		}
		return string(b)
	}
	// One collector behind both; at rest the counters agree (gauges of
	// time, like the estimator's window, move between the two reads).
	for _, url := range []string{metricsURL, stubURL} {
		if body := get(url); !strings.Contains(body, "\nstub_requests_received_total 3\n") {
			t.Errorf("%s does not count the %d requests sent:\n%s", url, sent, body)
		}
	}
}
