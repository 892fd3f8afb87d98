package result

import (
	"fmt"
	"math"
	"strings"
	"testing"
)

func TestSplitPoint(t *testing.T) {
	for in, want := range map[string]string{
		"sweep.json#3":      "sweep.json 3 true",
		"a#b/sweep.json#12": "a#b/sweep.json 12 true",
		"sweep.json":        "sweep.json 0 false",
		"sweep.json#x":      "sweep.json#x 0 false",
	} {
		if file, n, ok := SplitPoint(in); fmt.Sprint(file, " ", n, " ", ok) != want {
			t.Errorf("SplitPoint(%q) = %q, %d, %v; want %s", in, file, n, ok, want)
		}
	}
}

// TestFigures: a figure past any bound is kept as the largest float and
// read back as the infinity it stood for; others are kept as they are.
func TestFigures(t *testing.T) {
	for _, v := range []float64{math.Inf(1), math.Inf(-1), 0, 51.2, -3} {
		enc := EncodeFigure(v)
		if math.IsInf(enc, 0) {
			t.Errorf("EncodeFigure(%v) = %v: JSON cannot hold it", v, enc)
		}
		if back := DecodeFigure(enc); back != v {
			t.Errorf("DecodeFigure(EncodeFigure(%v)) = %v", v, back)
		}
	}
}

// TestReadFile: a sweep file reads back, a result is not one, another
// version is refused, and a point without a result is named.
func TestReadFile(t *testing.T) {
	var b strings.Builder
	f := File{SweepVersion: FileVersion, Tool: "openload", Kind: KindSweep, KneeFactor: 2,
		Points: []FilePoint{{Rate: 10, Pass: true, Result: &Result{Elapsed: 2, Counts: Counts{Completed: 30}}}}}
	if err := f.Write(&b); err != nil {
		t.Fatal(err)
	}
	back, ok, err := ReadFile(strings.NewReader(b.String()), "s.json")
	if !ok || err != nil || back.KneeFactor != 2 || back.Points[0].Completed() != 15 || back.Whole("s.json") != nil {
		t.Fatalf("read back: %+v %v %v", back, ok, err)
	}
	if _, err := back.Point("s.json", 2); err == nil || !strings.Contains(err.Error(), "s.json#2: the sweep holds points 1 to 1") {
		t.Errorf("point 2 of 1: %v", err)
	}
	if _, ok, err := ReadFile(strings.NewReader(`{"version": 1}`), "r.json"); ok || err != nil {
		t.Errorf("a result: %v %v", ok, err)
	}
	if _, ok, err := ReadFile(strings.NewReader(`{"sweep_version": 9}`), "s.json"); !ok || err == nil {
		t.Errorf("version 9: %v %v", ok, err)
	}
	back.Points = append(back.Points, FilePoint{Rate: 20})
	if err := back.Whole("s.json"); err == nil || !strings.Contains(err.Error(), "s.json#2") {
		t.Errorf("a point without a result: %v", err)
	}
}
