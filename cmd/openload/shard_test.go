package main

import (
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openload/openload/result"
)

// countingTarget answers 200 and notes when each request arrives, on the
// monotonic clock.
type countingTarget struct {
	mu       sync.Mutex
	arrivals []time.Duration
	epoch    time.Time
}

func newCountingTarget(t *testing.T) (*countingTarget, string) {
	c := &countingTarget{epoch: time.Now()}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		now := time.Since(c.epoch)
		c.mu.Lock()
		c.arrivals = append(c.arrivals, now)
		c.mu.Unlock()
	}))
	t.Cleanup(srv.Close)
	return c, srv.URL + "/predict"
}

// take returns the arrivals so far, in order, and forgets them.
func (c *countingTarget) take() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	a := c.arrivals
	c.arrivals = nil
	slices.Sort(a)
	return a
}

// lateness is how far each arrival came after its due time at a constant
// rate, against the start the median arrival implies (the target cannot
// know the generator's): arrival k is due at t0 + k/rate, so its offset
// is t_k − k/rate. It returns, in ms, the p99 of the offset above the
// median (the tail: what a stall or a late start moves), and stretch: how
// much longer than the schedule says the arrivals from the 1st to the
// 99th percentile took (what shards that did not start together move:
// the union then begins with one shard alone and ends with another).
func lateness(arrivals []time.Duration, rate float64) (p99, stretch float64) {
	n := len(arrivals)
	offs := make([]float64, n)
	for k, a := range arrivals {
		offs[k] = a.Seconds() - float64(k)/rate
	}
	lo, hi := n/100, n-1-n/100
	stretch = ((arrivals[hi] - arrivals[lo]).Seconds() - float64(hi-lo)/rate) * 1000
	slices.Sort(offs)
	return (offs[n*99/100] - offs[n/2]) * 1000, stretch
}

// TestShardsArriveAsOne: four shards of one constant schedule, started at
// staggered moments but given one --start-at, reach a counting target as
// one generator's arrivals do: the same count, and arrivals on schedule
// within the tolerance one generator achieves; merging their results
// gives the single schedule's counts.
//
// The shards are launched 400 ms apart, so shards that ran their
// schedules from their own starts instead of the shared one would reach
// the target over 1.2 s more than the schedule's 2 s: the arrivals from
// the 1st to the 99th percentile stretch by about a second. The bound
// allows the shards 250 ms more stretch than one generator: scheduling
// noise on a loaded 2-core machine moves single arrivals (p99 lateness up
// to 109 ms under -race, one generator's up to 62 ms; see
// docs/MEASUREMENTS.md, “Shards on one machine”), not the span of 392.
func TestShardsArriveAsOne(t *testing.T) {
	const rate, n = 200.0, 4
	target, url := newCountingTarget(t)
	dir := t.TempDir()
	common := []string{"-r", fmt.Sprint(rate), "-d", "2s", "-c", "16", "--send-delay-budget", "1s", "-q"}

	runOK(t, append(common, "-o", filepath.Join(dir, "one.json"), url)...)
	one := target.take()
	oneP99, oneStretch := lateness(one, rate)

	at := time.Now().Add(1500 * time.Millisecond).UTC().Format(time.RFC3339Nano)
	var wg sync.WaitGroup
	codes := make([]int, n)
	errs := make([]string, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			args := append(slices.Clone(common), "--shard", fmt.Sprintf("%d/%d", i, n), "--start-at", at,
				"-o", filepath.Join(dir, fmt.Sprintf("shard-%d.json", i)), "--hlog", filepath.Join(dir, fmt.Sprintf("shard-%d.hlog", i)), url)
			codes[i], _, errs[i] = runCLI(args...)
		}()
		time.Sleep(400 * time.Millisecond)
	}
	wg.Wait()
	for i, c := range codes {
		if c != exitOK {
			t.Fatalf("shard %d: exit %d: %s", i, c, errs[i])
		}
	}
	sharded := target.take()
	if len(one) != 400 || len(sharded) != 400 {
		t.Fatalf("the target saw %d arrivals from one generator and %d from the shards, want 400 each", len(one), len(sharded))
	}
	shardP99, shardStretch := lateness(sharded, rate)
	t.Logf("arrivals against the schedule: one generator p99 lateness %.3f ms, stretch %.3f ms; %d shards %.3f ms, %.3f ms",
		oneP99, oneStretch, n, shardP99, shardStretch)
	if shardStretch > oneStretch+250 || math.IsNaN(shardStretch) {
		t.Errorf("the shards' arrivals took %.3f ms longer than the schedule, one generator's %.3f ms: the shards did not start together", shardStretch, oneStretch)
	}

	shards, _ := filepath.Glob(filepath.Join(dir, "shard-*.json"))
	all := filepath.Join(dir, "all.json")
	stdout, _ := runOK(t, append(append([]string{"merge"}, shards...), "-o", all, "--send-delay-budget", "1s")...)
	wantLines(t, stdout, "scheduled 400 = all 4 shards: the whole of the 400 arrivals of constant 200/s for 2s", "shards   all 4 shards of constant 200/s for 2s")
	m, s := readResult(t, all), readResult(t, filepath.Join(dir, "one.json"))
	if m.Counts != s.Counts || m.Response.Count != s.Response.Count || recorderStatus(m.Status) != recorderStatus(s.Status) {
		t.Errorf("merged counts %+v %v, one generator %+v %v", m.Counts, m.Status, s.Counts, s.Status)
	}
	// Each second schedules what it did in one generator's run (its
	// completions may differ: a response can end a second later).
	for i := range max(len(m.Timeline), len(s.Timeline)) {
		var a, b int64
		if i < len(m.Timeline) {
			a = m.Timeline[i].Scheduled
		}
		if i < len(s.Timeline) {
			b = s.Timeline[i].Scheduled
		}
		if a != b {
			t.Errorf("second %d: merged scheduled %d, one generator %d", i, a, b)
		}
	}

	// The shards' interval logs merge into one whose intervals add up to
	// the merged result's histograms.
	logs, _ := filepath.Glob(filepath.Join(dir, "shard-*.hlog"))
	runOK(t, append(append([]string{"merge"}, logs...), "-o", filepath.Join(dir, "all.hlog"))...)
	f, err := os.Open(filepath.Join(dir, "all.hlog"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	il, err := result.ReadIntervalLog(f, "all.hlog")
	if err != nil {
		t.Fatal(err)
	}
	for _, tag := range result.IntervalTags {
		h, err := m.Histogram(tag)
		if err != nil {
			t.Fatal(err)
		}
		if enc, _ := result.EncodeHistogram(il.Total[tag]); enc != func() string { e, _ := result.EncodeHistogram(h); return e }() {
			t.Errorf("merged interval log's %s: %d values, the merged result's %d", tag, il.Total[tag].TotalCount(), h.TotalCount())
		}
	}

	b, err := os.ReadFile(logs[1])
	if err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(dir, "other.hlog")
	b = regexp.MustCompile(`#\[StartTime: [0-9]+`).ReplaceAll(b, []byte("#[StartTime: 1000"))
	if err := os.WriteFile(other, b, 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runCLI("merge", logs[0], other, "-o", filepath.Join(dir, "x.hlog"))
	if code != exitUsage || !strings.Contains(stderr, "other.hlog: starts at 1000, but") {
		t.Errorf("merge of logs with different starts: exit %d: %s", code, stderr)
	}

	// Missing and mismatched shards are refused, one line naming them.
	code, _, stderr = runCLI(append([]string{"merge"}, shards[:3]...)...)
	if code != exitUsage || !strings.Contains(stderr, "shard 3/4 missing") || strings.Count(stderr, "\n") != 1 {
		t.Errorf("merge without shard 3: exit %d: %s", code, stderr)
	}
	code, _, stderr = runCLI("merge", shards[0], filepath.Join(dir, "one.json"))
	if code != exitUsage || !strings.Contains(stderr, "one.json: not a shard's result") {
		t.Errorf("merge with a whole run: exit %d: %s", code, stderr)
	}
}

func recorderStatus(m map[string]int64) string { return fmt.Sprint(m) }

// shardUsageCases are the refused uses of --shard, --shard-from-env,
// --start-at and merge, for the usage-errors golden file.
func shardUsageCases() [][]string {
	u := "http://127.0.0.1:1/"
	return [][]string{
		{"-rate", "10", "--shard", "4/4", u},
		{"-rate", "10", "--shard", "1", u},
		{"-rate", "10", "--shard", "x/4", u},
		{"-rate", "10", "--shard", "0/0", u},
		{"-rate", "10", "--shard", "0/2", "--shard-from-env", "I/2", u},
		{"-rate", "10", "--shard-from-env", "OPENLOAD_TEST_UNSET_INDEX/4", u},
		{"-rate", "10", "--shard-from-env", "/4", u},
		{"--closed", "-rate", "10", "--shard", "0/2", u},
		{"-rate", "10", "--start-at", "tomorrow", u},
		{"-rate", "10", "--start-at", "2999-01-01T00:00:00Z", u},
		{"-rate", "10", "-d", "10s", "--start-at", "2020-01-01T00:00:00Z", u},
		{"merge"},
		{"merge", "--slo", "latency.p99<=1ms", "a.json"},
		{"merge", "--send-delay-budget", "0s", "a.json"},
		{"merge", "--nope"},
	}
}

func TestParseStartAt(t *testing.T) {
	for _, c := range []struct {
		in   string
		want time.Time
	}{
		{"2026-12-01T15:00:00Z", time.Date(2026, 12, 1, 15, 0, 0, 0, time.UTC)},
		{"2026-12-01T16:00:00.5+01:00", time.Date(2026, 12, 1, 15, 0, 0, 5e8, time.UTC)},
		{"1796137445", time.Unix(1796137445, 0)},
		{"1796137445.25", time.Unix(1796137445, 25e7)},
	} {
		got, err := parseStartAt(c.in)
		if err != nil || !got.Equal(c.want) {
			t.Errorf("parseStartAt(%q) = %v, %v; want %v", c.in, got, err, c.want)
		}
	}
	for _, bad := range []string{"", "0", "-5", "soon", "2026-12-01 15:00"} {
		if _, err := parseStartAt(bad); err == nil {
			t.Errorf("parseStartAt(%q) accepted", bad)
		}
	}
}

// TestMergeInterruptedShard: a shard whose own run was interrupted (its
// pod killed) is named and refused, not merged into a run that exits
// 130; with --partial it is left out, said, and the others merge.
func TestMergeInterruptedShard(t *testing.T) {
	_, url := newCountingTarget(t)
	dir := t.TempDir()
	var files []string
	for i := range 2 {
		f := filepath.Join(dir, fmt.Sprintf("shard-%d.json", i))
		runOK(t, "-r", "20", "-d", "1s", "-q", "--shard", fmt.Sprintf("%d/2", i), "-o", f, url)
		files = append(files, f)
	}
	// Shard 1 as a killed pod leaves it: interrupted part way.
	cut := readResult(t, files[1])
	cut.Interrupted, cut.Elapsed = true, 0.4
	f, err := os.Create(files[1])
	if err != nil {
		t.Fatal(err)
	}
	if err := result.Write(f, cut); err != nil {
		t.Fatal(err)
	}
	f.Close()

	code, _, stderr := runCLI(append([]string{"merge"}, files...)...)
	want := "openload: merge: shard 1/2 (" + files[1] + ") was interrupted at 0.4 s of its 1s: not part of the whole (--partial merges the other shards)\n"
	if code != exitUsage || stderr != want {
		t.Errorf("merge: exit %d, stderr %q; want exit 2, %q", code, stderr, want)
	}
	code, stdout, stderr := runCLI(append([]string{"merge", "--partial"}, files...)...)
	if code == exitInterrupted || !strings.Contains(stderr, "shard 1/2 ("+files[1]+") was interrupted at 0.4 s of its 1s: not part of the whole: left out (--partial)") ||
		!strings.Contains(stdout, "shard 0") {
		t.Errorf("merge --partial: exit %d\n%s%s", code, stdout, stderr)
	}
}
