package recorder

import (
	"bytes"
	"maps"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/openload/openload/result"
)

// TestTargetsAddUp: each target's figures are those of its records, and
// the targets add up to the run's headline: counts, statuses, error kinds
// and histogram counts. A warm-up's requests and an index past the names
// are in no target.
func TestTargetsAddUp(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	names := []string{"GET http://a/x", "checkout", "POST http://a/y, with a comma"}
	r := New(nil)
	r.SetWarmup(100 * time.Millisecond)
	r.TrackTargets(names)
	type want struct {
		c      result.PartCounts
		status map[string]int64
		kinds  map[string]int64
	}
	wants := make([]want, len(names))
	for i := range wants {
		wants[i] = want{status: map[string]int64{}, kinds: map[string]int64{}}
	}
	stray := 0
	for seq := range 600 {
		at := time.Duration(seq) * time.Millisecond
		rec := Record{Seq: uint64(seq), Scheduled: at, Sent: at + 100*time.Microsecond, WasSent: true, Done: at + time.Duration(1+rng.IntN(20))*time.Millisecond,
			Target: uint32(rng.IntN(len(names) + 1))} // one index in four past the names
		switch rng.IntN(6) {
		case 0:
			rec.Outcome, rec.Kind = Failed, KindRefused
		case 1:
			rec.Outcome, rec.Kind, rec.WasSent = Unfinished, KindUnfinished, false
		default:
			rec.Outcome, rec.Status = Completed, []int{200, 503, 404}[rng.IntN(3)]
		}
		if err := r.Add(&rec); err != nil {
			t.Fatal(err)
		}
		if rec.Scheduled < 100*time.Millisecond {
			continue
		}
		if int(rec.Target) >= len(names) {
			stray++
			continue
		}
		w := &wants[rec.Target]
		w.c.Scheduled++
		switch rec.Outcome {
		case Completed:
			w.c.Completed++
			w.status[strconv.Itoa(rec.Status)]++
		case Failed:
			w.c.Errors++
			w.kinds["refused"]++
		case Unfinished:
			w.c.Unfinished++
			w.kinds["unfinished"]++
		}
		if rec.WasSent {
			w.c.Sent++
		}
	}
	var res result.Result
	if err := r.Fill(&res); err != nil {
		t.Fatal(err)
	}
	if len(res.Targets) != len(names) {
		t.Fatalf("%d targets, want %d", len(res.Targets), len(names))
	}
	var sum result.PartCounts
	for i, p := range res.Targets {
		w := wants[i]
		if p.Name != names[i] || p.Counts != w.c || !maps.Equal(p.Status, w.status) || !maps.Equal(p.ErrorKinds, w.kinds) {
			t.Errorf("target %d: %q %+v %v %v, want %q %+v %v %v", i, p.Name, p.Counts, p.Status, p.ErrorKinds, names[i], w.c, w.status, w.kinds)
		}
		if !p.Counts.Balanced() || p.Response.Count != p.Counts.Scheduled || p.Service.Count != p.Counts.Sent || p.SendDelay.Count != p.Counts.Sent {
			t.Errorf("target %d: counts %+v, histogram counts %d %d %d", i, p.Counts, p.Response.Count, p.Service.Count, p.SendDelay.Count)
		}
		for _, enc := range []string{p.Histograms.Response, p.Histograms.Service, p.Histograms.SendDelay} {
			if _, err := result.DecodeHistogram(enc); err != nil {
				t.Errorf("target %d: histogram: %v", i, err)
			}
		}
		sum.Scheduled += p.Counts.Scheduled
		sum.Sent += p.Counts.Sent
		sum.Completed += p.Counts.Completed
	}
	h := res.Headline()
	if stray == 0 || sum.Scheduled+int64(stray) != h.Scheduled || sum.Scheduled == 0 {
		t.Errorf("targets hold %d of the %d headline requests, %d stray", sum.Scheduled, h.Scheduled, stray)
	}
}

// TestTargetsBeyondTheBound: past MaxTargetParts, the targets share the
// last part, named (other).
func TestTargetsBeyondTheBound(t *testing.T) {
	names := make([]string, MaxTargetParts+10)
	for i := range names {
		names[i] = "t" + strconv.Itoa(i)
	}
	r := New(nil)
	r.TrackTargets(names)
	for _, i := range []int{0, MaxTargetParts - 1, MaxTargetParts, len(names) - 1, len(names)} {
		rec := Record{Done: time.Millisecond, Outcome: Completed, Status: 200, Target: uint32(i)}
		r.Add(&rec)
	}
	var res result.Result
	if err := r.Fill(&res); err != nil {
		t.Fatal(err)
	}
	last := res.Targets[len(res.Targets)-1]
	if len(res.Targets) != MaxTargetParts || last.Name != result.OtherClass || last.Counts.Scheduled != 3 || res.Targets[0].Counts.Scheduled != 1 {
		t.Errorf("%d targets, last %q with %d requests", len(res.Targets), last.Name, last.Counts.Scheduled)
	}
}

// TestAddWithTargetsDoesNotAllocate: a record of a mix costs no
// allocation once the timeline covers it.
func TestAddWithTargetsDoesNotAllocate(t *testing.T) {
	r := New(nil)
	r.TrackTargets([]string{"a", "b"})
	rec := Record{Scheduled: ms(500), Sent: ms(500.2), Done: ms(550), WasSent: true, Outcome: Completed, Status: 200, Target: 1}
	r.Add(&rec) // grow the timeline once
	if n := testing.AllocsPerRun(100, func() { r.Add(&rec) }); n != 0 {
		t.Errorf("Add allocates %v times per record", n)
	}
}

// TestLogTargetColumn: a mix's log ends with the target index, read back
// as written; a log without the column reads Target -1.
func TestLogTargetColumn(t *testing.T) {
	var buf bytes.Buffer
	r := New(NewLogWriter(&buf))
	r.TrackTargets([]string{"a", "b", "c"})
	recs := sampleRecords()
	for i := range recs {
		recs[i].Target = uint32(i % 3)
		if err := r.Add(&recs[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.FlushLog(); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if lines[0] != LogHeader+",target" || lines[2] != "1,6.250,6.500,1200.000,1193.500,1193.750,0.250,503,,1,1" {
		t.Fatalf("log:\n%s", buf.String())
	}
	lr := NewLogReader(strings.NewReader(buf.String()), "run.csv")
	n := 0
	for lr.Scan() {
		if e := lr.Entry(); e.Target != int(recs[n].Target) || e.Seq != recs[n].Seq || e.Attempts != recs[n].Attempts {
			t.Errorf("entry %d: %+v from %+v", n, e, recs[n])
		}
		n++
	}
	if lr.Err() != nil || n != len(recs) {
		t.Fatalf("read %d of %d: %v", n, len(recs), lr.Err())
	}
	for _, c := range []struct{ in, want string }{
		{LogHeader + ",target\n0,0.000,,1.000,,1.000,,,unfinished,0,x\n", `run.csv:2: bad target "x"`},
		{LogHeader + ",target\n0,0.000,,1.000,,1.000,,,unfinished,0\n", "run.csv:2: 10 fields, want 11, 15 or 17"},
	} {
		lr := NewLogReader(strings.NewReader(c.in), "run.csv")
		for lr.Scan() {
		}
		if lr.Err() == nil || !strings.Contains(lr.Err().Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.in, lr.Err(), c.want)
		}
	}
	lr = NewLogReader(strings.NewReader(LogHeader+"\n0,0.000,,1.000,,1.000,,,unfinished,0\n"), "old.csv")
	if !lr.Scan() || lr.Entry().Target != -1 {
		t.Errorf("a log without the column: %+v, %v", lr.Entry(), lr.Err())
	}
}
