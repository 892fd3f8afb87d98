package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/openload/openload/schedule"
)

// scheduledOffsets reads the scheduled_ms column of a --log, sorted.
func scheduledOffsets(t *testing.T, path string) []time.Duration {
	t.Helper()
	es, err := readLog(t, path)
	if err != nil {
		t.Fatal(err)
	}
	var offs []time.Duration
	for _, e := range es {
		offs = append(offs, e.Scheduled)
	}
	slices.Sort(offs)
	return offs
}

// TestReplayArrivalsFile replays a small arrivals file (unsorted, mixed
// units, a comment) at speed 1 and 2: the run schedules exactly the file's
// arrivals, at the file's offsets ÷ speed, and the result says so.
func TestReplayArrivalsFile(t *testing.T) {
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	defer srv.Close()
	dir := t.TempDir()
	arrivals := filepath.Join(dir, "arrivals.txt")
	text := "# recorded arrivals\n0\n0.05\n120ms\n120ms\n0.2\n250000us\n0.1\n300ms\n"
	if err := os.WriteFile(arrivals, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	want := []time.Duration{0, 50, 100, 120, 120, 200, 250, 300}
	for _, speed := range []float64{1, 2} {
		t.Run(fmt.Sprint("speed ", speed), func(t *testing.T) {
			hits.Store(0)
			out, logf := filepath.Join(dir, "r.json"), filepath.Join(dir, "r.csv")
			stdout, stderr := runOK(t, "--arrivals", arrivals, "--speed", fmt.Sprint(speed),
				"-o", out, "--log", logf, "--send-delay-budget", "1s", srv.URL)
			name := fmt.Sprintf("replay of 8 arrivals from %s", arrivals)
			if speed != 1 {
				name += " (speed 2×)"
			}
			if !strings.Contains(stderr, "openload: "+name+" → GET") || !strings.Contains(stdout, "expected 8 · scheduled 8 · sent 8 · completed 8") {
				t.Errorf("report:\n%s\n%s", stderr, stdout)
			}
			res := readResult(t, out)
			span := time.Duration(float64(300*time.Millisecond) / speed)
			if c := res.Counts; c.Expected != 8 || c.Scheduled != 8 || c.Completed != 8 || hits.Load() != 8 {
				t.Errorf("counts %+v, server saw %d", c, hits.Load())
			}
			if cfg := res.Config; cfg.Arrival != schedule.Replay || cfg.Schedule != name || cfg.Duration != span.String() {
				t.Errorf("config: arrival %q, schedule %q, duration %q (want span %v)", cfg.Arrival, cfg.Schedule, cfg.Duration, span)
			}
			if c, _ := res.Check("schedule"); c.Severity != "pass" || c.Message != "scheduled 8 = the arrivals of the replayed file" {
				t.Errorf("schedule check %+v", c)
			}
			got := scheduledOffsets(t, logf)
			for i := range want {
				if w := time.Duration(float64(want[i]*time.Millisecond) / speed); got[i] != w {
					t.Errorf("scheduled offsets %v, want the file's ÷ %v (%v at %d)", got, speed, w, i)
					break
				}
			}
		})
	}
}

// TestReplayOwnLog replays the --log of an earlier run: the replay schedules
// the same offsets, read from the log's scheduled_ms column.
func TestReplayOwnLog(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	dir := t.TempDir()
	first, second := filepath.Join(dir, "first.csv"), filepath.Join(dir, "second.csv")
	out := filepath.Join(dir, "r.json")
	if code, stdout, stderr := runCLI("-rate", "100", "-d", "300ms", "--arrival", "poisson", "--seed", "7", "-q",
		"--log", first, srv.URL); code != exitOK {
		t.Fatalf("recording run: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if code, stdout, stderr := runCLI("--arrivals", first, "-q", "--log", second, "-o", out, srv.URL); code != exitOK {
		t.Fatalf("replay: exit %d\n%s\n%s", code, stdout, stderr)
	}
	recorded, replayed := scheduledOffsets(t, first), scheduledOffsets(t, second)
	if len(recorded) == 0 || !slices.Equal(recorded, replayed) {
		t.Errorf("replayed offsets differ from the recorded ones:\n%v\n%v", recorded, replayed)
	}
	res := readResult(t, out)
	if res.Counts.Scheduled != int64(len(recorded)) || res.Counts.Expected != float64(len(recorded)) {
		t.Errorf("counts %+v, the log holds %d", res.Counts, len(recorded))
	}
}

// TestStampHeaderAndDwellBound: every request carries its own scheduled
// time as Unix ns, within [run start, the moment the server got it], equal
// to start + its scheduled offset; and --dwell-bound counts the answers
// whose Server-Timing dwell exceeds it, from what the server reported.
func TestStampHeaderAndDwellBound(t *testing.T) {
	type hit struct {
		stamp    string
		received int64
	}
	var (
		mu                       sync.Mutex
		hits                     []hit
		n, answers, over, others atomic.Int64
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		received := time.Now().UnixNano()
		vs := r.Header.Values("X-Arrival")
		mu.Lock()
		for _, v := range vs {
			hits = append(hits, hit{v, received})
		}
		mu.Unlock()
		stamp, _ := strconv.ParseInt(r.Header.Get("X-Arrival"), 10, 64)
		dwell := float64(received-stamp) / 1e6
		switch i := n.Add(1); {
		case i%5 == 0: // a late answer, dropped: reports its dwell, is not an answer
			others.Add(1)
			w.Header().Set("Server-Timing", "dwell;dur=20000")
			w.WriteHeader(http.StatusServiceUnavailable)
		case i%7 == 1: // an answer let out late
			answers.Add(1)
			over.Add(1)
			w.Header().Set("Server-Timing", "total;dur=1, dwell;dur=20000.5")
		default:
			answers.Add(1)
			w.Header().Set("Server-Timing", fmt.Sprintf("total;dur=1, dwell;dur=%.3f", dwell))
		}
	}))
	defer srv.Close()
	dir := t.TempDir()
	out, logf := filepath.Join(dir, "r.json"), filepath.Join(dir, "r.csv")
	stdout, _ := runOK(t, "-rate", "100", "-d", "300ms", "--stamp-header", "x-arrival", "--dwell-bound", "10s",
		"-o", out, "--log", logf, "--send-delay-budget", "1s", srv.URL)
	res := readResult(t, out)
	start := res.Started.UnixNano()
	mu.Lock() // the race detector cannot see the handlers end before the responses are read
	defer mu.Unlock()
	if len(hits) != 30 {
		t.Fatalf("%d stamps for 30 requests", len(hits))
	}
	var rel []time.Duration
	seen := map[string]bool{}
	for _, h := range hits {
		ns, err := strconv.ParseInt(h.stamp, 10, 64)
		if err != nil || ns < start || ns > h.received {
			t.Errorf("stamp %q: want Unix ns within [run start %d, received %d] (%v)", h.stamp, start, h.received, err)
		}
		if seen[h.stamp] {
			t.Errorf("stamp %s sent twice: values shared across requests", h.stamp)
		}
		seen[h.stamp] = true
		rel = append(rel, time.Duration(ns-start).Truncate(time.Microsecond))
	}
	slices.Sort(rel)
	if logged := scheduledOffsets(t, logf); !slices.Equal(rel, logged) {
		t.Errorf("stamp − start %v ≠ scheduled offsets %v", rel, logged)
	}
	if res.Config.StampHeader != "x-arrival" || !res.Config.ServerTiming {
		t.Errorf("config: stamp header %q, server timing %v", res.Config.StampHeader, res.Config.ServerTiming)
	}
	d := res.DwellBound
	if d == nil || d.Bound != "10s" || d.Answers != answers.Load() || d.Over != over.Load() || d.Others != others.Load() || d.Unreported != 0 {
		t.Fatalf("dwell bound %+v, want answers %d, over %d, others %d", d, answers.Load(), over.Load(), others.Load())
	}
	c, _ := res.Check("dwell bound")
	if c.Severity != "warn" || !strings.HasPrefix(c.Message, fmt.Sprintf("%d of %d answers reported dwell > 10s", d.Over, d.Answers)) {
		t.Errorf("dwell bound check %+v", c)
	}
	if !strings.Contains(stdout, fmt.Sprintf("dwell ≤ 10s: %d of %d answers over", d.Over, d.Answers)) {
		t.Errorf("report lacks the dwell line:\n%s", stdout)
	}
	raw, _ := os.ReadFile(out)
	var generic map[string]any
	if err := json.Unmarshal(raw, &generic); err != nil || generic["dwell_bound"] == nil {
		t.Errorf("result JSON has no dwell_bound: %v", err)
	}
}

// replayUsageCases are the bad command lines of replay, stamping and the
// dwell bound, for TestUsageErrorsGolden; the files they name are in dir.
func replayUsageCases(t *testing.T, dir string) [][]string {
	t.Helper()
	ok, bad, empty := filepath.Join(dir, "arrivals.txt"), filepath.Join(dir, "bad.txt"), filepath.Join(dir, "empty.txt")
	for name, text := range map[string]string{ok: "0\n0.5\n", bad: "0\nsoon\n", empty: "# nothing\n"} {
		if err := os.WriteFile(name, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	const u = "http://127.0.0.1:1/"
	return [][]string{
		{"--arrivals", filepath.Join(dir, "missing.txt"), u},
		{"--arrivals", bad, u},
		{"--arrivals", empty, u},
		{"--arrivals", ok, "--speed", "0", u},
		{"--arrivals", ok, "--speed", "-1", u},
		{"--arrivals", ok, "-rate", "10", u},
		{"--arrivals", ok, "--arrival", "poisson", u},
		{"--arrivals", ok, "-d", "5s", u},
		{"--arrivals", ok, "--closed", u},
		{"-rate", "10", "--speed", "2", u},
		{"-rate", "10", "--arrivals-column", "ts", u},
		{"-rate", "10", "--stamp-header", "Bad Name", u},
		{"-rate", "10", "--stamp-header", "X-Arrival", "-H", "x-arrival: 1", u},
		{"-rate", "10", "--dwell-bound", "0s", u},
	}
}
