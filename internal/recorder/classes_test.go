package recorder

import (
	"reflect"
	"testing"

	"github.com/openload/openload/result"
)

// classesOf adds records whose class values are vals (one record each,
// values in the tracked headers' order) and returns the result's tables as
// header → value → count, and which tables are marked Auto.
func classesOf(t *testing.T, r *Recorder, vals ...[MaxClassHeaders]string) (map[string]map[string]int64, []string) {
	t.Helper()
	for i, v := range vals {
		rec := Record{Seq: uint64(i), Done: ms(1), Outcome: Completed, Status: 200, Class: v}
		if err := r.Add(&rec); err != nil {
			t.Fatal(err)
		}
	}
	var res result.Result
	if err := r.Fill(&res); err != nil {
		t.Fatal(err)
	}
	return tablesOf(&res)
}

// tablesOf returns res's class tables as header → value → count, and
// which tables are marked Auto.
func tablesOf(res *result.Result) (map[string]map[string]int64, []string) {
	tables := map[string]map[string]int64{}
	var auto []string
	for _, ct := range res.Classes {
		tables[ct.Header] = ct.Counts()
		if ct.Auto {
			auto = append(auto, ct.Header)
		}
	}
	return tables, auto
}

// TestClassesSeen: a table TrackClassesSeen asked for is in the result,
// marked, only when a response carried its header; TrackClasses's tables
// always are. A merge keeps the mark.
func TestClassesSeen(t *testing.T) {
	r := New(nil)
	r.TrackClasses([]string{"X-Asked"})
	r.TrackClassesSeen([]string{"X-Stub-Source", "X-Absent"})
	got, auto := classesOf(t, r, [4]string{"", "model"}, [4]string{"", "fallback"}, [4]string{})
	want := map[string]map[string]int64{
		"X-Asked":       {result.NoClass: 3},
		"X-Stub-Source": {"model": 1, "fallback": 1, result.NoClass: 1},
	}
	if !reflect.DeepEqual(got, want) || !reflect.DeepEqual(auto, []string{"X-Stub-Source"}) {
		t.Errorf("tables %v, auto %v; want %v, auto [X-Stub-Source]", got, auto, want)
	}

	// A shard's tables, merged with a shard that tracks none.
	if got, auto := tablesOf(mergedShards(t, r, New(nil))); !reflect.DeepEqual(got, want) || !reflect.DeepEqual(auto, []string{"X-Stub-Source"}) {
		t.Errorf("merged: tables %v, auto %v; want %v, auto [X-Stub-Source]", got, auto, want)
	}
}

// TestClassesSeenBound: the headers looked for unasked fit in what
// TrackClasses left of MaxClassHeaders.
func TestClassesSeenBound(t *testing.T) {
	r := New(nil)
	r.TrackClasses([]string{"A", "B", "C"})
	r.TrackClassesSeen([]string{"D", "E"})
	if len(r.classes) != MaxClassHeaders || r.classes[3].header != "D" || !r.classes[3].auto {
		t.Errorf("tables %+v", r.classes)
	}
	r.TrackClasses([]string{"A", "B", "C", "D"})
	r.TrackClassesSeen([]string{"E"})
	if len(r.classes) != MaxClassHeaders || r.classes[3].auto {
		t.Errorf("tables %+v", r.classes)
	}
}

// TestClassSeconds: each request counts in the second it ended, by value,
// warm-up requests too; a table holding "none" gives the other values per
// 100 of the rest (answers without the header are not of the rest); a
// merge keeps the seconds.
func TestClassSeconds(t *testing.T) {
	r := New(nil)
	r.TrackClasses([]string{"X-Stub-Shadow"})
	r.SetWarmup(ms(100))
	add := func(sched, done float64, v string) {
		rec := Record{Scheduled: ms(sched), Done: ms(done), Outcome: Completed, Status: 200}
		rec.Class[0] = v
		if err := r.Add(&rec); err != nil {
			t.Fatal(err)
		}
	}
	add(50, 1200, "scored") // warm-up: in the timeline, not the table
	for range 6 {
		add(200, 300, result.NoEvent)
	}
	add(900, 1100, "shed-stale")
	add(900, 1100, "shed-stale")
	add(1500, 2100, "scored")
	add(1500, 2100, "") // no header: NoClass
	var own result.Result
	if err := r.Fill(&own); err != nil {
		t.Fatal(err)
	}
	for _, res := range []*result.Result{&own, mergedShards(t, r)} {
		var got []map[string]int64
		for _, s := range res.Timeline {
			got = append(got, s.Classes["X-Stub-Shadow"])
		}
		want := []map[string]int64{{result.NoEvent: 6}, {"shed-stale": 2, "scored": 1}, {"scored": 1, result.NoClass: 1}}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("per second %v, want %v", got, want)
		}
		per := map[string]float64{}
		for _, v := range res.Classes[0].Values {
			per[v.Value] = v.Per100Rest
		}
		// The rest: 2 shed-stale + 1 scored (the warm-up's is out of the table).
		if want := map[string]float64{result.NoEvent: 0, result.NoClass: 0, "shed-stale": 200.0 / 3, "scored": 100.0 / 3}; !reflect.DeepEqual(per, want) {
			t.Errorf("per 100 of the rest %v, want %v", per, want)
		}
	}
}

// TestPer100RestNeedsNone: without a "none" value, or with nothing else,
// no value gets a share of the rest.
func TestPer100RestNeedsNone(t *testing.T) {
	for _, vals := range [][]result.ClassValue{
		{{Value: "model", Count: 3}, {Value: "fallback", Count: 1}},
		{{Value: result.NoEvent, Count: 3}, {Value: result.NoClass, Count: 1}},
	} {
		ct := result.ClassTable{Values: vals}
		ct.SetPer100Rest()
		for _, v := range ct.Values {
			if v.Per100Rest != 0 {
				t.Errorf("%+v: per 100 of the rest set", ct.Values)
			}
		}
	}
}

// TestClassSecondsNoAlloc: once a second and a value have been seen,
// counting them again allocates nothing.
func TestClassSecondsNoAlloc(t *testing.T) {
	r := New(nil)
	r.TrackClasses([]string{"X-Stub-Shadow", "X-Stub-Source"})
	rec := Record{Scheduled: ms(10), Sent: ms(10), WasSent: true, Done: ms(20), Outcome: Completed, Status: 200, Class: [MaxClassHeaders]string{"shed-stale", "model"}}
	if err := r.Add(&rec); err != nil {
		t.Fatal(err)
	}
	if n := testing.AllocsPerRun(100, func() { _ = r.Add(&rec) }); n != 0 {
		t.Errorf("Add allocates %.1f times per record", n)
	}
}
