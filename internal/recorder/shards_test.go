package recorder

import (
	"fmt"
	"testing"

	"github.com/openload/openload/result"
)

// mergedShards fills a result from each recorder as shard i of len(rs) of
// one run and merges them as openload merge does (result.Merge), so that
// a test can ask what the recorder's figures become once merged.
func mergedShards(t *testing.T, rs ...*Recorder) *result.Result {
	t.Helper()
	in := make([]result.MergeInput, len(rs))
	for i, r := range rs {
		res := &result.Result{Tool: "openload", Config: result.Config{Target: "http://t/", Method: "GET", Duration: "1s",
			Shard: &result.ShardConfig{Of: len(rs), Indexes: []int{i}, Whole: "w", WholeScheduled: -1}}}
		if err := r.Fill(res); err != nil {
			t.Fatal(err)
		}
		if t := r.retry; t.retried+t.refused+t.exhausted > 0 { // as a run with retries fills it
			c := r.RetryCounts()
			c.Policy = "p"
			res.Retries = &c
		}
		in[i] = result.MergeInput{Name: fmt.Sprintf("shard-%d.json", i), Result: res}
	}
	m, err := result.Merge(in...)
	if err != nil {
		t.Fatal(err)
	}
	return m
}
