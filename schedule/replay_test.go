// The replay tests live in package schedule_test: the round trip writes a
// log with the recorder, which sits downstream of schedule.
package schedule_test

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/openload/openload/internal/recorder"
	"github.com/openload/openload/schedule"
)

const (
	ms = time.Millisecond
	us = time.Microsecond
)

var speed1 = schedule.ReplayOptions{Speed: 1}

// offsets drains s and checks the Schedule contract on the way.
func offsets(t *testing.T, s *schedule.ReplaySchedule) []time.Duration {
	t.Helper()
	var out []time.Duration
	for {
		off, ok := s.Next()
		if !ok {
			break
		}
		if n := len(out); n > 0 && off < out[n-1] {
			t.Fatalf("offset %d (%v) before previous %v", n, off, out[n-1])
		}
		out = append(out, off)
	}
	if float64(len(out)) != s.Expected() || !s.Exact() || len(out) != s.Len() {
		t.Fatalf("%d offsets, Expected %v, Len %d, Exact %v", len(out), s.Expected(), s.Len(), s.Exact())
	}
	if _, ok := s.Next(); ok {
		t.Fatal("Next returned an offset after the end")
	}
	return out
}

func TestReplayFormats(t *testing.T) {
	tests := []struct {
		name string // a file in testdata, or a label for text
		text string
		opt  schedule.ReplayOptions
		want []time.Duration
	}{
		{name: "seconds.txt", want: []time.Duration{0, 250 * ms, 1500 * ms, 2 * time.Second}},
		{name: "units.txt", want: []time.Duration{0, 500 * us, 1250 * ms, 1250 * ms, 2 * time.Minute}},
		{name: "rfc3339.txt", want: []time.Duration{0, 250 * us, 125 * ms, 1500 * ms}},
		{name: "unixns.txt", want: []time.Duration{0, 125 * ms, 1500 * ms}},
		{name: "log.csv", want: []time.Duration{0, 6250 * us, 12500 * us, 18750 * us, 25 * ms}},
		{name: "ts.csv", want: []time.Duration{125 * ms, 500 * ms, time.Second}},
		{name: "seconds, offsets not shifted", text: "3\n1.5\n", want: []time.Duration{1500 * ms, 3 * time.Second}},
		{name: "seconds, exact decimals", text: "0.000001\n.5\n7.\n+1\n", want: []time.Duration{us, 500 * ms, time.Second, 7 * time.Second}},
		{name: "CRLF, BOM, blanks, spaces", text: "\uFEFF# c\r\n\r\n  1.5 \r\n\t2\r\n", want: []time.Duration{1500 * ms, 2 * time.Second}},
		{name: "one-column header", text: "ts\n0.5\n0.25\n", want: []time.Duration{250 * ms, 500 * ms}},
		{name: "header names fold case", text: "ID,Offset\n1,2\n", want: []time.Duration{2 * time.Second}},
		{name: "offset_s before time", text: "time,offset_s\n5,1\n", want: []time.Duration{time.Second}},
		{name: "scheduled_ms first", text: "ts,scheduled_ms\n5,1\n", want: []time.Duration{ms}},
		{name: "chosen column, unit from its name", text: "a,arrival_us,b\nx,1500,y\nx,2,y\n",
			opt: schedule.ReplayOptions{Column: "arrival_us", Speed: 1}, want: []time.Duration{2 * us, 1500 * us}},
		{name: "chosen column over a known one", text: "ts,when\n1,2\n",
			opt: schedule.ReplayOptions{Column: "WHEN", Speed: 1}, want: []time.Duration{2 * time.Second}},
		{name: "unit in a ms column", text: "scheduled_ms\n2s\n5\n", want: []time.Duration{5 * ms, 2 * time.Second}},
		{name: "RFC 3339 in a CSV", text: "timestamp,x\n2024-05-01T00:00:01Z,a\n2024-05-01T00:00:00.5Z,b\n",
			want: []time.Duration{0, 500 * ms}},
		{name: "Unix ns, smallest", text: "1000000000000000\n1000000000000001\n", want: []time.Duration{0, 1}},
		{name: "below 1e15 is seconds", text: "000000000000000999\n", want: []time.Duration{999 * time.Second}},
		{name: "equal offsets", text: "1\n1\n0\n", want: []time.Duration{0, time.Second, time.Second}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			opt := tc.opt
			if opt.Speed == 0 {
				opt = speed1
			}
			var s *schedule.ReplaySchedule
			var err error
			if tc.text == "" {
				s, err = schedule.OpenReplay(filepath.Join("testdata", tc.name), opt)
			} else {
				s, err = schedule.LoadReplay(strings.NewReader(tc.text), tc.name, opt)
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := offsets(t, s); !slices.Equal(got, tc.want) {
				t.Fatalf("offsets %v, want %v", got, tc.want)
			}
			if s.Span() != tc.want[len(tc.want)-1] {
				t.Errorf("Span %v, want %v", s.Span(), tc.want[len(tc.want)-1])
			}
		})
	}
}

func TestReplayErrors(t *testing.T) {
	tests := []struct {
		text string
		opt  schedule.ReplayOptions
		want string
	}{
		{"1\n2\n\nabc\n", speed1, `arrivals.csv:4: cannot read "abc" as an offset, RFC 3339 time or Unix ns`},
		{"# only comments\n\n", speed1, "arrivals.csv: no arrivals"},
		{"", speed1, "arrivals.csv: no arrivals"},
		{"seq,scheduled_ms\n", speed1, "arrivals.csv: no arrivals"},
		{"1\n-0.5\n", speed1, `arrivals.csv:2: negative offset "-0.5"`},
		{"1\n-2ms\n", speed1, `arrivals.csv:2: negative offset "-2ms"`},
		{"1\n2024-05-01T00:00:00Z\n", speed1,
			`arrivals.csv:2: "2024-05-01T00:00:00Z" is a time (RFC 3339 or Unix ns), but line 1 holds an offset: a file holds offsets or times, not both`},
		{"# times\n1714564800000000000\n0.5\n", speed1,
			`arrivals.csv:3: "0.5" is an offset, but line 2 holds a time (RFC 3339 or Unix ns): a file holds offsets or times, not both`},
		{"1714564800\n", speed1, `arrivals.csv:1: offset "1714564800" is 1e15 ns or more: a Unix time must be in ns (or RFC 3339)`},
		{"1714564800000\n", speed1, `arrivals.csv:1: offset "1714564800000" is 1e15 ns or more: a Unix time must be in ns (or RFC 3339)`},
		{"99999999999999999999\n", speed1, `arrivals.csv:1: offset "99999999999999999999" is 1e15 ns or more: a Unix time must be in ns (or RFC 3339)`},
		{"1e3\n", speed1, `arrivals.csv:1: cannot read "1e3" as an offset, RFC 3339 time or Unix ns`},
		{"2024-05-01 00:00:00\n", speed1, `arrivals.csv:1: cannot read "2024-05-01 00:00:00" as an offset, RFC 3339 time or Unix ns`},
		{"a,b\n1,2\n", speed1, "arrivals.csv:1: a header row without a column named scheduled_ms, offset, offset_s, time, timestamp, ts; name the column to read"},
		{"ts,b\n1,2\n", schedule.ReplayOptions{Column: "c", Speed: 1}, `arrivals.csv:1: no column "c" in the header "ts,b"`},
		{"1\n2\n", schedule.ReplayOptions{Column: "ts", Speed: 1}, `arrivals.csv:1: no column "ts" in the header "1"`},
		{"x,ts\n1,2\n3\n", speed1, "arrivals.csv:3: 1 fields, column ts is field 2"},
		{"x,ts\n1,\n", speed1, "arrivals.csv:2: empty ts"},
		{"x,ts\n\"1,2\n", speed1, "arrivals.csv:2: unterminated quoted field"},
		{"x,ts\n\"1\"x,2\n", speed1, "arrivals.csv:2: text after a quoted field"},
		{"0001-01-01T00:00:00Z\n9999-01-01T00:00:00Z\n", speed1,
			"arrivals.csv: the times span more than 2562047h47m16.854775807s, from 0001-01-01T00:00:00Z to 9999-01-01T00:00:00Z"},
		{"1h\n", schedule.ReplayOptions{Speed: 1e-15}, "arrivals.csv: the arrival at 1h0m0s is beyond 2562047h47m16.854775807s at Speed 1e-15"},
		{"1\n", schedule.ReplayOptions{}, "Speed must be a finite number > 0, got 0"},
		{"1\n", schedule.ReplayOptions{Speed: -2}, "Speed must be a finite number > 0, got -2"},
		{"1\n", schedule.ReplayOptions{Speed: posInf()}, "Speed must be a finite number > 0, got +Inf"},
		{"1\n" + strings.Repeat("1", 2<<20) + "\n", speed1, "arrivals.csv:2: bufio.Scanner: token too long"},
	}
	for _, tc := range tests {
		_, err := schedule.LoadReplay(strings.NewReader(tc.text), "arrivals.csv", tc.opt)
		if err == nil || err.Error() != tc.want {
			t.Errorf("%.40q:\n got error %v\nwant error %s", tc.text, err, tc.want)
		}
	}
	if _, err := schedule.OpenReplay(filepath.Join("testdata", "missing.txt"), speed1); !os.IsNotExist(err) {
		t.Errorf("missing file: %v", err)
	}
	// The errors about the speed name the field, for the caller to call
	// it its own way.
	for _, speed := range []float64{0, 1e-15} {
		_, err := schedule.LoadReplay(strings.NewReader("1h\n"), "arrivals.csv", schedule.ReplayOptions{Speed: speed})
		var fe *schedule.FieldError
		if !errors.As(err, &fe) || fe.Field != "Speed" || fe.Value != speed {
			t.Errorf("speed %v: %v (%T), want a FieldError of Speed", speed, err, err)
		}
	}
}

func posInf() float64 { return 1 / zero }

var zero float64

// The reader reports each arrival as written, with its line, unsorted.
func TestReplayReader(t *testing.T) {
	text := "# header comes next\nseq,scheduled_ms,x\n\n3,2.5,a\n1,1.25,b\n"
	r := schedule.NewReplayReader(strings.NewReader(text), "log.csv", schedule.ReplayOptions{})
	var got []schedule.Arrival
	for r.Scan() {
		got = append(got, r.Arrival())
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	want := []schedule.Arrival{{Line: 4, Offset: 2500 * us}, {Line: 5, Offset: 1250 * us}}
	if !slices.Equal(got, want) {
		t.Fatalf("arrivals %+v, want %+v", got, want)
	}

	r = schedule.NewReplayReader(strings.NewReader("1714564800000000000\n"), "t", schedule.ReplayOptions{})
	if !r.Scan() {
		t.Fatal(r.Err())
	}
	if a := r.Arrival(); !a.Absolute || a.Line != 1 || !a.Time.Equal(time.Unix(1714564800, 0)) {
		t.Fatalf("arrival %+v", a)
	}
	if r.Scan() || r.Err() != nil {
		t.Fatalf("Scan after the last line: err %v", r.Err())
	}
}

func TestReplaySpeed(t *testing.T) {
	text := "0\n1\n1.5\n3\n0.000000003\n"
	tests := []struct {
		speed float64
		want  []time.Duration
		name  string
	}{
		{1, []time.Duration{0, 3, time.Second, 1500 * ms, 3 * time.Second}, "replay of 5 arrivals from a.txt"},
		{2, []time.Duration{0, 2, 500 * ms, 750 * ms, 1500 * ms}, "replay of 5 arrivals from a.txt (speed 2×)"},
		{0.5, []time.Duration{0, 6, 2 * time.Second, 3 * time.Second, 6 * time.Second}, "replay of 5 arrivals from a.txt (speed 0.5×)"},
		{3, []time.Duration{0, 1, 333333333, 500 * ms, time.Second}, "replay of 5 arrivals from a.txt (speed 3×)"},
	}
	for _, tc := range tests {
		s, err := schedule.LoadReplay(strings.NewReader(text), "a.txt", schedule.ReplayOptions{Speed: tc.speed})
		if err != nil {
			t.Fatal(err)
		}
		if got := offsets(t, s); !slices.Equal(got, tc.want) {
			t.Errorf("speed %v: offsets %v, want %v", tc.speed, got, tc.want)
		}
		if s.Name() != tc.name {
			t.Errorf("speed %v: Name %q, want %q", tc.speed, s.Name(), tc.name)
		}
	}
}

// A log lists requests in completion order; replay sorts them, and the same
// file always gives the same offsets.
func TestReplaySortsAndIsDeterministic(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	want := make([]time.Duration, 2000)
	for i := range want {
		want[i] = time.Duration(rng.Int64N(int64(10*time.Second))) / us * us
	}
	var b strings.Builder
	b.WriteString(recorder.LogHeader + "\n")
	for i, off := range want {
		fmt.Fprintf(&b, "%d,%d.%03d,,%d.000,,,,,unfinished\n", i, off/ms, off%ms/us, off/ms+5)
	}
	slices.Sort(want)
	var first []time.Duration
	for range 3 {
		s, err := schedule.LoadReplay(strings.NewReader(b.String()), "log.csv", speed1)
		if err != nil {
			t.Fatal(err)
		}
		got := offsets(t, s)
		if !slices.Equal(got, want) {
			t.Fatal("replayed offsets are not the log's, sorted")
		}
		if first == nil {
			first = got
		} else if !slices.Equal(got, first) {
			t.Fatal("the same file gave different offsets")
		}
		if o := s.Offsets(); !slices.Equal(o, want) {
			t.Fatal("Offsets after draining differ")
		}
	}
}

// A log written by the recorder from a constant schedule, in a shuffled
// (completion) order, replays to the schedule's offsets at the log's
// microsecond resolution.
func TestReplayRoundTripLog(t *testing.T) {
	c := schedule.NewConstant(300, 7*time.Second) // 3333.3µs steps: not whole µs
	var want []time.Duration
	var recs []recorder.Record
	for i := uint64(0); ; i++ {
		off, ok := c.Next()
		if !ok {
			break
		}
		want = append(want, off.Truncate(us))
		recs = append(recs, recorder.Record{Seq: i, Scheduled: off, Sent: off + 40*us, WasSent: true,
			Done: off + time.Duration(i%97)*ms, Outcome: recorder.Completed, Status: 200})
	}
	rand.New(rand.NewPCG(3, 4)).Shuffle(len(recs), func(i, j int) { recs[i], recs[j] = recs[j], recs[i] })
	var buf bytes.Buffer
	lw := recorder.NewLogWriter(&buf)
	for i := range recs {
		if err := lw.Write(&recs[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := lw.Flush(); err != nil {
		t.Fatal(err)
	}
	s, err := schedule.LoadReplay(&buf, "run.log", speed1)
	if err != nil {
		t.Fatal(err)
	}
	if got := offsets(t, s); !slices.Equal(got, want) {
		t.Fatalf("replayed %d offsets, want the schedule's %d truncated to µs", len(got), len(want))
	}
	if s.Expected() != 2100 {
		t.Fatalf("Expected %v, want 2100", s.Expected())
	}
}

// FuzzReplay checks, for any input that loads: the offsets are
// non-negative, non-decreasing and as many as Expected; and writing them
// back as a scheduled_ms column (µs resolution) and loading that gives the
// same offsets truncated to the µs.
func FuzzReplay(f *testing.F) {
	files, err := filepath.Glob(filepath.Join("testdata", "*"))
	if err != nil {
		f.Fatal(err)
	}
	for _, name := range files {
		if b, err := os.ReadFile(name); err == nil {
			f.Add(string(b), "", 1.0)
		}
	}
	f.Add("1\n0.5\n2s\n", "", 2.0)
	f.Add("a,arrival_ms\nx,3\n", "arrival_ms", 0.25)
	f.Add("2024-05-01T00:00:00.999999999Z\n2024-05-01T00:00:00Z\n", "", 3.0)
	f.Fuzz(func(t *testing.T, text, column string, speed float64) {
		s, err := schedule.LoadReplay(strings.NewReader(text), "fuzz", schedule.ReplayOptions{Column: column, Speed: speed})
		if err != nil {
			if !strings.HasPrefix(err.Error(), "fuzz") && !strings.HasPrefix(err.Error(), "Speed") {
				t.Fatalf("error without the file's name: %v", err)
			}
			return
		}
		offs := offsets(t, s)
		if len(offs) == 0 || offs[0] < 0 {
			t.Fatalf("offsets %v", offs)
		}
		var b strings.Builder
		b.WriteString("scheduled_ms\n")
		for _, off := range offs {
			fmt.Fprintf(&b, "%d.%03d\n", off/ms, off%ms/us)
		}
		again, err := schedule.LoadReplay(strings.NewReader(b.String()), "fuzz", speed1)
		if err != nil {
			// Times may span more than an offset as written may hold.
			if offs[len(offs)-1] >= schedule.MaxReplayOffset {
				return
			}
			t.Fatalf("reloading the offsets: %v", err)
		}
		got := offsets(t, again)
		for i := range offs {
			offs[i] = offs[i].Truncate(us)
		}
		if !slices.Equal(got, offs) {
			t.Fatalf("reloaded %v, want %v", got, offs)
		}
	})
}
