package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/openload/openload/internal/engine"
	"github.com/openload/openload/schedule"
	"github.com/openload/openload/servers/stub"
)

func TestModelConnections(t *testing.T) {
	spec := func(kind string, rate float64, d time.Duration) schedule.Spec {
		return schedule.Spec{Kind: kind, Rate: rate, Duration: d}
	}
	for _, c := range []struct {
		name    string
		s       schedule.Spec
		shard   schedule.Shard
		timeout time.Duration
		files   int
		want    int
		why     string
	}{
		{"one timeout at the rate", spec(schedule.Constant, 20, time.Minute), schedule.Shard{}, 30 * time.Second, 20000, 600,
			"model answers, no -c: the most requests one 30s timeout at 20/s holds"},
		{"a short run: its requests, at least the default", spec(schedule.Constant, 20, 2*time.Second), schedule.Shard{}, 30 * time.Second, 20000, 64,
			"model answers, no -c: the run's 40 requests, at least 64"},
		{"the run's requests", spec(schedule.Constant, 20, 10*time.Second), schedule.Shard{}, 30 * time.Second, 20000, 200,
			"model answers, no -c: the run's 200 requests"},
		{"poisson: 5 spreads above the mean", spec(schedule.Poisson, 20, time.Minute), schedule.Shard{}, 30 * time.Second, 20000, 723,
			"the most requests one 30s timeout at 20/s holds"},
		{"the peak of stages", schedule.Spec{Kind: schedule.Constant, Rate: 1, Stages: "1m:10,1m:40,1m:0"}, schedule.Shard{}, 10 * time.Second, 20000, 400,
			"one 10s timeout at 40/s"},
		{"a shard's share", spec(schedule.Constant, 40, time.Minute), schedule.Shard{Index: 0, Of: 2}, 30 * time.Second, 20000, 600,
			"one 30s timeout at 20/s"},
		{"held to half the open files", spec(schedule.Constant, 1000, time.Minute), schedule.Shard{}, 30 * time.Second, 4096, 2016,
			"would be 30000, held to half the open-file limit of 4096"},
		{"no limit known", spec(schedule.Constant, 10000, time.Hour), schedule.Shard{}, 30 * time.Second, 0, engine.MaxConnections,
			"held to openload's most"},
	} {
		n, why := modelConnections(c.s, c.shard, c.timeout, c.files)
		if n != c.want || !strings.Contains(why, c.why) {
			t.Errorf("%s: %d %q, want %d %q", c.name, n, why, c.want, c.why)
		}
	}
	if n, why := modelConnections(schedule.Spec{}, schedule.Shard{}, time.Second, 0); n != 0 || why != "" {
		t.Errorf("no rate: %d %q, want none chosen", n, why)
	}
}

// The known answer: the stub's ½ s answers at 20/s for 2 s bind -c 8,
// and the check and the verdict name the bind and a limit of about
// 20/s × ½ s = 10; the same run without -c chooses a limit that does not
// bind. (-c 8, not 4: the 40 answers then drain in 2.5 s, not 5.)
func TestStreamConnections(t *testing.T) {
	cfg := stub.DefaultConfig()
	cfg.Policy, cfg.BatchSlots = stub.PolicyNone, 64
	cfg.Prefill, cfg.ITL = 100*time.Millisecond, 10*time.Millisecond // + 40 tokens: ½ s answers
	s, err := stub.NewServer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	dir := t.TempDir()
	args := []string{"-rate", "20", "-d", "2s", "--prompt-tokens", "16", "--output-tokens", "40", "--model", "stub", s.URL + "/v1/chat/completions"}

	bound := filepath.Join(dir, "bound.json")
	stdout, _ := runOK(t, append([]string{"-c", "8", "-o", bound}, args...)...)
	res := readResult(t, bound)
	if res.Limit.Waited == 0 || res.Stream == nil || res.Config.Request.Connections != "" {
		t.Fatalf("-c 8: limit %+v, stream %v, request %+v\n%s", res.Limit, res.Stream != nil, res.Config.Request, stdout)
	}
	// 20/s × the service p90, rounded up: about 10 (½ s answers).
	need := engine.MaxConnections
	for _, c := range res.Checks {
		if c.Name == "connection limit" {
			if !strings.Contains(c.Message, "TTFT from the schedule p90") || !strings.Contains(c.Message, "(service p90) it takes") {
				t.Errorf("check: %s", c.Message)
			}
		}
	}
	t.Log(stdout)
	wantLines(t, stdout, "hint:   the limit of 8 connections bound:", "raise -c to that")
	for _, l := range strings.Split(stdout, "\n") {
		if i := strings.Index(l, "it takes "); i >= 0 && strings.HasPrefix(l, "hint:") {
			if _, err := fmt.Sscan(l[i+len("it takes "):], &need); err != nil {
				t.Fatal(err)
			}
		}
	}
	if want := int(20*res.Service.P90/1000 + 0.999999); need != want || need < 10 || need > 15 {
		t.Errorf("it takes %d, want ⌈20/s × %.0f ms⌉ = %d, about 10", need, res.Service.P90, want)
	}

	free := filepath.Join(dir, "free.json")
	stdout, _ = runOK(t, append([]string{"-o", free}, args...)...)
	res = readResult(t, free)
	if res.Limit.Waited != 0 || res.Limit.Connections != 64 {
		t.Errorf("without -c: limit %+v, want 64 connections that never bound", res.Limit)
	}
	wantLines(t, stdout, "connections ≤ 64 (model answers, no -c: the run's 40 requests, at least 64)")
}
