package loadtest

import (
	"bytes"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/openload/openload/internal/engine"
	"github.com/openload/openload/internal/recorder"
	"github.com/openload/openload/result"
)

// TestRecorderTracksTheMix: a run with a mix tallies its targets by
// index, under their names (a target without one is "METHOD URL"), and
// its log gets the target column; a run of one URL has neither.
func TestRecorderTracksTheMix(t *testing.T) {
	u, _ := url.Parse("http://127.0.0.1:9/b")
	var log bytes.Buffer
	o := Options{Log: recorder.NewLogWriter(&log)}
	o.Targets = []engine.Target{{Name: "checkout"}, {Method: "POST", URL: u}}
	rec := o.newRecorder()
	for i := range 3 {
		r := recorder.Record{Seq: uint64(i), Done: time.Millisecond, Outcome: recorder.Completed, Status: 200, Target: uint32(i % 2)}
		if err := rec.Add(&r); err != nil {
			t.Fatal(err)
		}
	}
	var res result.Result
	if err := rec.Fill(&res); err != nil {
		t.Fatal(err)
	}
	rec.FlushLog()
	if got := result.PartNames(res.Targets); len(got) != 2 || got[0] != "checkout" || got[1] != "POST http://127.0.0.1:9/b" ||
		res.Targets[0].Counts.Scheduled != 2 || res.Targets[1].Counts.Scheduled != 1 {
		t.Errorf("targets %q: %+v", got, res.Targets)
	}
	if !strings.HasPrefix(log.String(), recorder.LogHeader+",target\n") {
		t.Errorf("log:\n%s", log.String())
	}
	one := Options{}.newRecorder()
	if err := one.Fill(&res); err != nil || res.Targets != nil {
		t.Errorf("a run of one URL: targets %+v, %v", res.Targets, err)
	}
}
