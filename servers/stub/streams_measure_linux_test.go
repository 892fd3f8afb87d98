//go:build linux

package stub

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// measureITL is the time between tokens: 20ms (50 tokens/s a stream)
// unless OPENLOAD_MEASURE_STREAMS_ITL says otherwise (a Go duration; the
// child process inherits it).
func measureITL() time.Duration {
	if d, err := time.ParseDuration(os.Getenv("OPENLOAD_MEASURE_STREAMS_ITL")); err == nil && d > 0 {
		return d
	}
	return 20 * time.Millisecond
}

// The measurement of docs/BENCHMARKS.md, "The stub holds 1,000 streams":
// OPENLOAD_MEASURE_STREAMS=1000 go test -run '^TestMeasureStreams$' -v ./servers/stub/
// starts the stub in a child process (this test binary, running
// TestStreamsChild), opens that many streams at once from this process
// and reports the child's CPU, peak RSS and goroutines, and each stream's
// pace against the token model. It is a measurement, not a test: it only
// runs when asked, and fails only when a stream does not complete.
// OPENLOAD_MEASURE_STREAMS_CPUPROFILE and OPENLOAD_MEASURE_STREAMS_TRACE
// name files for the stub's CPU profile and execution trace.

const (
	measurePrefill = 50 * time.Millisecond
	measureTokens  = 200 // 4 s of tokens a stream at the default 20ms
	// The streams open one after another over measureRamp (an arrival
	// rate, as a load generator sends them), not in one burst of dials;
	// each lasts 4 s, so all are open at once for most of the run.
	measureRamp = 500 * time.Millisecond
)

// childReport is what the child prints when its standard input closes.
type childReport struct {
	MaxGoroutines int        `json:"max_goroutines"`
	UserSec       float64    `json:"user_s"`
	SysSec        float64    `json:"sys_s"`
	MaxRSSKiB     int64      `json:"max_rss_kib"`
	Tokens        TokenStats `json:"tokens"`
	MaxInModel    int        `json:"max_in_model"`
}

// TestStreamsChild is the stub of TestMeasureStreams, in its own process.
func TestStreamsChild(t *testing.T) {
	if os.Getenv("OPENLOAD_STUB_STREAMS_CHILD") != "1" {
		t.Skip("the child process of TestMeasureStreams")
	}
	cfg := DefaultConfig()
	cfg.Policy, cfg.BatchSlots = PolicyNone, 100000
	cfg.MaxQueueWait = time.Minute
	cfg.Prefill, cfg.ITL, cfg.OutputTokens = measurePrefill, measureITL(), measureTokens
	s, err := NewServer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Println(s.URL)
	stop := make(chan struct{})
	peak := make(chan int)
	go func() {
		most := 0
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			most = max(most, runtime.NumGoroutine())
			select {
			case <-tick.C:
			case <-stop:
				peak <- most
				return
			}
		}
	}()
	_, _ = io.Copy(io.Discard, os.Stdin)
	close(stop)
	rep := childReport{MaxGoroutines: <-peak}
	st := s.Stats()
	rep.Tokens, rep.MaxInModel = st.Tokens, st.MaxInModel
	s.Close()
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	rep.UserSec = float64(ru.Utime.Nano()) / 1e9
	rep.SysSec = float64(ru.Stime.Nano()) / 1e9
	rep.MaxRSSKiB = int64(ru.Maxrss) // int32 on 32-bit Linux
	b, _ := json.Marshal(rep)
	fmt.Printf("REPORT %s\n", b)
}

// procCPU is a process's user + system CPU time from /proc/PID/stat.
func procCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, err
	}
	// Fields after the command name (in parentheses): utime and stime are
	// the 14th and 15th fields of the line, in clock ticks (100 a second).
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+2:]))
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * 10 * time.Millisecond, nil
}

type streamPace struct {
	sent, first, last time.Time
	tokens            int
	done              bool
	err               error
}

func TestMeasureStreams(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("OPENLOAD_MEASURE_STREAMS"))
	if n <= 0 {
		t.Skip("a measurement: OPENLOAD_MEASURE_STREAMS=1000 runs it with 1000 streams")
	}
	args := []string{"-test.run=^TestStreamsChild$", "-test.count=1"}
	if prof := os.Getenv("OPENLOAD_MEASURE_STREAMS_CPUPROFILE"); prof != "" {
		args = append(args, "-test.cpuprofile="+prof) // the stub's CPU profile
	}
	if tr := os.Getenv("OPENLOAD_MEASURE_STREAMS_TRACE"); tr != "" {
		args = append(args, "-test.trace="+tr) // the stub's execution trace
	}
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "OPENLOAD_STUB_STREAMS_CHILD=1", "GOMAXPROCS=2")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewScanner(out)
	if !lines.Scan() {
		t.Fatalf("the child printed no URL: %v", lines.Err())
	}
	url := lines.Text() + pathChat

	tr := &http.Transport{MaxIdleConnsPerHost: n, MaxIdleConns: n}
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr}
	body := `{"model":"m","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"hi"}]}`
	paces := make([]streamPace, n)
	var wg sync.WaitGroup
	cpu0, err := procCPU(cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	self0, _ := procCPU(os.Getpid())
	load0, _ := os.ReadFile("/proc/loadavg")
	start := time.Now()
	for i := range paces {
		at := start.Add(measureRamp * time.Duration(i) / time.Duration(n))
		wg.Go(func() {
			time.Sleep(time.Until(at))
			paces[i] = readStream(c, url, body)
		})
	}
	wg.Wait()
	wall := time.Since(start)
	cpu1, _ := procCPU(cmd.Process.Pid)
	self1, _ := procCPU(os.Getpid())
	load1, _ := os.ReadFile("/proc/loadavg")
	stdin.Close()
	var rep childReport
	for lines.Scan() {
		if r, ok := strings.CutPrefix(lines.Text(), "REPORT "); ok {
			if err := json.Unmarshal([]byte(r), &rep); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("child: %v", err)
	}

	var ttft, late []time.Duration
	tokens, failed := 0, 0
	for _, p := range paces {
		if p.err != nil || !p.done || p.tokens != measureTokens {
			failed++
			continue
		}
		tokens += p.tokens
		ttft = append(ttft, p.first.Sub(p.sent))
		late = append(late, p.last.Sub(p.first)-(measureTokens-1)*measureITL())
	}
	if failed > 0 {
		t.Errorf("%d of %d streams did not complete with %d tokens", failed, n, measureTokens)
	}
	slices.Sort(ttft)
	slices.Sort(late)
	q := func(d []time.Duration, p float64) time.Duration {
		if len(d) == 0 {
			return 0
		}
		return d[min(len(d)-1, int(p*float64(len(d))))]
	}
	cpu := cpu1 - cpu0
	t.Logf("machine: %d CPUs; /proc/loadavg before %s, after %s", runtime.NumCPU(), strings.TrimSpace(string(load0)), strings.TrimSpace(string(load1)))
	t.Logf("%d streams of %d tokens at %v a token (prefill %v), opened over %v; stub in a child process with GOMAXPROCS=2", n, measureTokens, measureITL(), measurePrefill, measureRamp)
	t.Logf("completed %d/%d; %d tokens in %.2fs (all streams open to last closed): %.0f tokens/s", n-failed, n, tokens, wall.Seconds(), float64(tokens)/wall.Seconds())
	t.Logf("TTFT from the send: p50 %v p99 %v max %v (model: %v)", q(ttft, .5), q(ttft, .99), q(ttft, 1), measurePrefill)
	t.Logf("client side, last − first token − %d × %v: p50 %v p99 %v max %v", measureTokens-1, measureITL(), q(late, .5), q(late, .99), q(late, 1))
	t.Logf("stub CPU during the streams: %.2fs in %.2fs = %.0f%% of one core; %.1f µs per token", cpu.Seconds(), wall.Seconds(), 100*cpu.Seconds()/wall.Seconds(), float64(cpu.Microseconds())/float64(max(tokens, 1)))
	t.Logf("client (this process) CPU during the streams: %.2fs", (self1 - self0).Seconds())
	t.Logf("stub whole process: user %.2fs sys %.2fs, peak RSS %.1f MiB, peak goroutines %d, max sequences in the model %d",
		rep.UserSec, rep.SysSec, float64(rep.MaxRSSKiB)/1024, rep.MaxGoroutines, rep.MaxInModel)
	l := rep.Tokens.Lateness
	t.Logf("stub side, per stream the largest delay of a token's flush past its due time (%d streams): p50 %.3fms p90 %.3fms p99 %.3fms max %.3fms",
		l.Count, l.P50, l.P90, l.P99, l.Max)
	t.Logf("stub token stats: streams %d, completed %d, output tokens %d, active at the end %d",
		rep.Tokens.Streams, rep.Tokens.StreamsCompleted, rep.Tokens.OutputTokens, rep.Tokens.ActiveSequences)
}

// readStream reads one stream, timing its first and last token events.
func readStream(c *http.Client, url, body string) streamPace {
	p := streamPace{sent: time.Now()}
	req, _ := http.NewRequestWithContext(context.Background(), http.MethodPost, url, strings.NewReader(body))
	resp, err := c.Do(req)
	if err != nil {
		p.err = err
		return p
	}
	defer resp.Body.Close()
	r := bufio.NewReader(resp.Body)
	for {
		line, err := r.ReadSlice('\n')
		if err != nil {
			if err != io.EOF {
				p.err = err
			}
			return p
		}
		switch {
		case bytes.HasPrefix(line, []byte(`data: {"id"`)) && bytes.Contains(line, []byte(`"delta":{"content"`)):
			now := time.Now()
			if p.tokens == 0 {
				p.first = now
			}
			p.last = now
			p.tokens++
		case bytes.HasPrefix(line, []byte("data: [DONE]")):
			p.done = true
		}
	}
}
