package result_test

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/openload/openload/result"
)

// The union of scenarios' results holds what one recorder of all their
// requests holds: counts, statuses, histograms (bytes included) and the
// timeline, with each scenario's own result kept.
func TestUnion(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	recs := randomRecords(rng)
	half := len(recs) / 2
	a, b := shardResult(t, recs[:half], 0, 0), shardResult(t, recs[half:], 0, 0)
	one := shardResult(t, recs, 0, 0)
	u, err := result.Union([]result.Scenario{{Name: "a", Result: a}, {Name: "b", Result: b}})
	if err != nil {
		t.Fatal(err)
	}
	c1, c2 := u.Counts, one.Counts
	c1.Expected, c2.Expected = 0, 0
	if c1 != c2 {
		t.Errorf("counts %+v, one recorder %+v", c1, c2)
	}
	if u.Histograms.Response != one.Histograms.Response || u.Histograms.SendDelay != one.Histograms.SendDelay || u.Response != one.Response {
		t.Error("histograms differ from one recorder's")
	}
	if len(u.Timeline) != len(one.Timeline) {
		t.Fatalf("timeline of %d seconds, one recorder %d", len(u.Timeline), len(one.Timeline))
	}
	for i := range u.Timeline {
		if u.Timeline[i].Sent != one.Timeline[i].Sent || u.Timeline[i].Scheduled != one.Timeline[i].Scheduled {
			t.Errorf("second %d: %+v, one recorder %+v", i, u.Timeline[i], one.Timeline[i])
		}
	}
	if len(u.Scenarios) != 2 || u.Scenarios[0].Result != a || u.Shards != nil || u.Counts.Expected != a.Counts.Expected+b.Counts.Expected {
		t.Errorf("scenarios %d, shards %d, expected %v", len(u.Scenarios), len(u.Shards), u.Counts.Expected)
	}
	if u.Config.Protocol != a.Config.Protocol {
		t.Errorf("one protocol: %q, the scenarios' %q", u.Config.Protocol, a.Config.Protocol)
	}
	// Scenarios on different protocols are each named.
	g := *b
	g.Config.Protocol, g.Config.Client = "h2c", "h2 loop"
	if u, err := result.Union([]result.Scenario{{Name: "a", Result: a}, {Name: "g", Result: &g}}); err != nil {
		t.Fatal(err)
	} else if u.Config.Protocol != result.ProtocolMixed {
		t.Errorf("protocol %q, want %q", u.Config.Protocol, result.ProtocolMixed)
	} else if !strings.Contains(u.Config.Client, "h2 loop") {
		t.Errorf("client %q: not the gRPC scenario's", u.Config.Client)
	}
	for _, bad := range [][]result.Scenario{nil, {{Name: "a", Result: a}, {Name: "a", Result: b}}, {{Name: "a"}}} {
		if _, err := result.Union(bad); err == nil {
			t.Errorf("Union(%v): no error", bad)
		}
	}
}
