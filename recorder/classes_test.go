package recorder

import (
	"reflect"
	"testing"
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
	var res Result
	if err := r.Fill(&res); err != nil {
		t.Fatal(err)
	}
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
// always are. Merge keeps the mark.
func TestClassesSeen(t *testing.T) {
	r := New(nil)
	r.TrackClasses([]string{"X-Asked"})
	r.TrackClassesSeen([]string{"X-Stub-Source", "X-Absent"})
	got, auto := classesOf(t, r, [4]string{"", "model"}, [4]string{"", "fallback"}, [4]string{})
	want := map[string]map[string]int64{
		"X-Asked":       {NoClass: 3},
		"X-Stub-Source": {"model": 1, "fallback": 1, NoClass: 1},
	}
	if !reflect.DeepEqual(got, want) || !reflect.DeepEqual(auto, []string{"X-Stub-Source"}) {
		t.Errorf("tables %v, auto %v; want %v, auto [X-Stub-Source]", got, auto, want)
	}

	// A shard's tables, merged into a recorder that tracks none.
	m := New(nil)
	m.Merge(r)
	if got, auto := classesOf(t, m); !reflect.DeepEqual(got, want) || !reflect.DeepEqual(auto, []string{"X-Stub-Source"}) {
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
