package result_test

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/openload/openload/field"
	"github.com/openload/openload/internal/recorder"
	"github.com/openload/openload/result"
)

// intervalLog records recs into a run's interval log, as --hlog writes it,
// started at at; with of > 0, as shard index of of (the records of index
// ≡ index mod of).
func intervalLog(t *testing.T, recs []recorder.Record, index, of int, at time.Time) []byte {
	t.Helper()
	var log bytes.Buffer
	rec := recorder.New(nil)
	rec.SetIntervalLog(&log)
	rec.Begin(at)
	for j := range recs {
		if of > 0 && j%of != index {
			continue
		}
		r := recs[j]
		if err := rec.Add(&r); err != nil {
			t.Fatal(err)
		}
	}
	if err := rec.Fill(&result.Result{}); err != nil {
		t.Fatal(err)
	}
	if err := rec.IntervalLogErr(); err != nil {
		t.Fatal(err)
	}
	return log.Bytes()
}

// TestMergeIntervalLogsShards: the logs of a proper set of shards, in any
// order, merge into a log whose tags hold what one generator's log holds.
func TestMergeIntervalLogsShards(t *testing.T) {
	recs := randomRecords(rand.New(rand.NewPCG(5, 2)))
	one, err := result.ReadIntervalLog(bytes.NewReader(intervalLog(t, recs, 0, 0, start)), "one.hlog")
	if err != nil {
		t.Fatal(err)
	}
	in := []result.IntervalLogInput{
		{Name: "shard-2.hlog", Log: intervalLog(t, recs, 2, 3, start)},
		{Name: "shard-0.hlog", Log: intervalLog(t, recs, 0, 3, start)},
		{Name: "shard-1.hlog", Log: intervalLog(t, recs, 1, 3, start)},
	}
	var merged bytes.Buffer
	if err := result.MergeIntervalLogs(&merged, in...); err != nil {
		t.Fatal(err)
	}
	got, err := result.ReadIntervalLog(&merged, "all.hlog")
	if err != nil {
		t.Fatal(err)
	}
	for _, tag := range result.IntervalTags {
		if !got.Total[tag].Equals(one.Total[tag]) {
			t.Errorf("%s: merged shards hold %d values, one generator %d", tag, got.Total[tag].TotalCount(), one.Total[tag].TotalCount())
		}
		if len(got.Intervals[tag]) != len(one.Intervals[tag]) {
			t.Errorf("%s: %d merged intervals, one generator %d", tag, len(got.Intervals[tag]), len(one.Intervals[tag]))
		}
	}

	// Shards that completed nothing write the same header and no
	// interval: alike, but not the same log twice.
	empty := intervalLog(t, nil, 0, 0, start)
	if err := result.MergeIntervalLogs(new(bytes.Buffer), in[0], result.IntervalLogInput{Name: "idle-1.hlog", Log: empty},
		result.IntervalLogInput{Name: "idle-2.hlog", Log: empty}); err != nil {
		t.Errorf("merge with two idle shards: %v", err)
	}
}

// TestMergeIntervalLogsRefuses: what the JSON merge refuses and a log can
// tell is refused in one line naming the input, in the JSON merge's words
// where the cases correspond: the same log given twice (by name, or by
// its bytes under another name), and logs of another start.
func TestMergeIntervalLogsRefuses(t *testing.T) {
	recs := randomRecords(rand.New(rand.NewPCG(3, 1)))
	a, b := intervalLog(t, recs, 0, 2, start), intervalLog(t, recs, 1, 2, start)
	late := intervalLog(t, recs, 1, 2, start.Add(5*time.Second))
	rebased := regexp.MustCompile(`#\[BaseTime: [0-9]+`).ReplaceAll(bytes.Clone(b), []byte("#[BaseTime: 1000"))
	noStart := regexp.MustCompile(`(?m)^#\[StartTime: .*\n`).ReplaceAll(bytes.Clone(b), nil)
	s0, s5 := start.Unix(), start.Add(5*time.Second).Unix()
	for _, c := range []struct {
		in    []result.IntervalLogInput
		want  string
		field string // the field a *field.Error names, or ""
	}{
		{[]result.IntervalLogInput{{"a.hlog", a}, {"b.hlog", b}, {"a.hlog", a}}, "a.hlog: given twice", ""},
		{[]result.IntervalLogInput{{"a.hlog", a}, {"b.hlog", b}, {"./a.hlog", a}}, "./a.hlog: the same log again (a.hlog has it too)", ""},
		{[]result.IntervalLogInput{{"a.hlog", a}, {"b.hlog", late}},
			"b.hlog: starts at " + strconv.FormatInt(s5, 10) + ", but a.hlog at " + strconv.FormatInt(s0, 10) + ": not shards of one StartAt", "StartAt"},
		{[]result.IntervalLogInput{{"a.hlog", a}, {"b.hlog", rebased}},
			"b.hlog: base time 1000, but a.hlog has " + strconv.FormatInt(s0, 10) + ": not a shard of the same run", ""},
		{[]result.IntervalLogInput{{"a.hlog", a}, {"b.hlog", noStart}}, "b.hlog: no #[StartTime] line: not an interval log openload wrote", ""},
	} {
		err := result.MergeIntervalLogs(new(bytes.Buffer), c.in...)
		if err == nil || err.Error() != c.want {
			t.Errorf("merge: %v, want %s", err, c.want)
			continue
		}
		var fe *field.Error
		if errors.As(err, &fe) != (c.field != "") || fe != nil && fe.Field != c.field {
			t.Errorf("merge: %v: field error %+v, want field %q", err, fe, c.field)
		}
	}

	// The JSON merge says the same of the same cases.
	ja := shardResult(t, recs, 0, 2)
	if _, err := result.Merge(result.MergeInput{Name: "a.json", Result: ja}, result.MergeInput{Name: "a.json", Result: ja}); err == nil || err.Error() != "a.json: given twice (shard 0/2)" {
		t.Errorf("JSON merge of a shard twice: %v", err)
	}
}

// TestMergeFieldErrors: a refusal about a setting the shards differ in or
// lack names it by its field of the run's options, for the CLI to render
// by its flag, and still names the file.
func TestMergeFieldErrors(t *testing.T) {
	recs := randomRecords(rand.New(rand.NewPCG(3, 1)))
	a := shardResult(t, recs, 0, 2)
	shard1 := func(f func(*result.Result)) *result.Result {
		r := shardResult(t, recs, 1, 2)
		f(r)
		return r
	}
	flags := map[string]string{"StartAt": "start-at", "DwellBound": "dwell-bound", "RequestObjectives": "slo-request", "Warmup": "warmup", "Shard.Index": "shard"}
	for _, c := range []struct {
		b           *result.Result
		field, want string // want: as the CLI renders it
	}{
		{shardResult(t, recs, 0, 0), "Shard.Index", "b.json: not a shard's result (run with --shard i/N)"},
		{shard1(func(r *result.Result) { r.Config.StartAt = "2026-12-01T15:00:05Z" }), "StartAt",
			"b.json: --start-at 2026-12-01T15:00:05Z, but a.json has none: not a shard of the same run"},
		{shard1(func(r *result.Result) { r.DwellBound.Bound = "3ms" }), "DwellBound",
			"b.json: --dwell-bound 3ms, but a.json has 2ms: not a shard of the same run"},
		{shard1(func(r *result.Result) { r.Stream.Goodput.Objectives = "ttft<=3ms" }), "RequestObjectives",
			`b.json: --slo-request "ttft<=3ms", but a.json has "ttft<=2ms,tpot<=15ms": not a shard of the same run`},
		{shard1(func(r *result.Result) { r.Warmup = nil }), "Warmup",
			"b.json: --warmup none, but a.json has 300ms: not a shard of the same run"},
		{shard1(func(r *result.Result) { r.Warmup.Until = "400ms" }), "Warmup",
			"b.json: --warmup 400ms, but a.json has 300ms: not a shard of the same run"},
	} {
		_, err := result.Merge(result.MergeInput{Name: "a.json", Result: a}, result.MergeInput{Name: "b.json", Result: c.b})
		var fe *field.Error
		if !errors.As(err, &fe) || fe.Field != c.field {
			t.Errorf("merge: %v, want a field error of %s", err, c.field)
			continue
		}
		if got := fe.Message(func(f string) string { return "--" + flags[f] }); got != c.want {
			t.Errorf("merge: rendered %q, want %q", got, c.want)
		}
		if want := strings.NewReplacer("--"+flags[c.field], c.field).Replace(c.want); err.Error() != want {
			t.Errorf("merge: %q, want %q", err, want)
		}
	}
}
