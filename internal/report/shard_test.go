package report_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/openload/openload/internal/golden"
)

// TestShardRateGolden: a shard's rate line compares what it sent with its
// share of the whole schedule's rate, not with the whole's rate; so does
// a merge that lacks shards. The files come from runs against the stub:
// shard 0/2 of 200/s for 2 s, shard 1/3 of poisson 200/s, and shards 0
// and 2 of 3 of 300/s merged with --partial.
func TestShardRateGolden(t *testing.T) {
	var b strings.Builder
	for _, name := range []string{"shard.json", "shard-poisson.json", "shards-partial.json"} {
		b.WriteString(text(t, name))
	}
	golden.Check(t, "shard-rate.golden", b.String())
	for _, want := range []string{
		"rate     sent 100.0/s (this shard's share of 200/s: 100/s)",
		"rate     sent 65.0/s (this shard's share of 200/s: 66.7/s)",
		"rate     sent 200.0/s (these 2 of 3 shards' share of 300/s: 200/s)",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("lacks %q", want)
		}
	}
	if m := regexp.MustCompile(`rate .*\(scheduled`).FindString(b.String()); m != "" {
		t.Errorf("a shard's rate line compares with the whole: %q", m)
	}
}
