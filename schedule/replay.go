package schedule

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/openload/openload/field"
)

// Replay names a replayed schedule (openload's --arrivals FILE) where a
// result records its arrival process. New does not build it, since it needs
// a file: use OpenReplay or LoadReplay.
const Replay = "replay"

// MaxReplayOffset bounds an offset as written in an arrivals file: 1e15 ns,
// about 11.6 days. The same number separates offsets from Unix times in
// nanoseconds, and a larger offset is almost always a timestamp in another
// unit (Unix seconds or milliseconds), so it is refused rather than replayed
// after a wait of decades.
const MaxReplayOffset = time.Duration(1e15)

// ReplayOptions tunes how an arrivals file is read and replayed.
type ReplayOptions struct {
	// Column names the CSV column that holds the arrival times (matched
	// without regard to case). Empty means: scheduled_ms, else the first of
	// offset, offset_s, time, timestamp, ts; a file without a header row
	// holds one value per line.
	Column string
	// Speed scales time: an arrival at offset t is replayed at t/Speed, so
	// 2 replays twice as fast. It must be finite and > 0; the zero value is
	// refused rather than read as 1, so that a speed of 0 cannot pass as
	// full speed.
	Speed float64
}

// FieldError is the error ReplayOptions.Validate returns: the field
// refused (its Go name), its value, and why.
type FieldError = field.Error

// Validate checks the options and returns the first problem as a
// *FieldError.
func (o ReplayOptions) Validate() error {
	if math.IsNaN(o.Speed) || math.IsInf(o.Speed, 0) || o.Speed <= 0 {
		return field.Errorf("Speed", o.Speed, "{Speed} must be a finite number > 0, got %v", o.Speed)
	}
	return nil
}

// Column names tried, in this order, when ReplayOptions.Column is empty.
// scheduled_ms is the column of openload's own per-request log (--log).
var replayColumns = []string{"scheduled_ms", "offset", "offset_s", "time", "timestamp", "ts"}

// Arrival is one arrival as written in an arrivals file, before it is
// turned into an offset.
type Arrival struct {
	Line int // 1-based line number in the file
	// Absolute reports the form: a time (RFC 3339 or Unix ns) in Time, or
	// an offset from the run's start in Offset.
	Absolute bool
	Offset   time.Duration
	Time     time.Time
}

// ReplayReader reads an arrivals file, shaped like bufio.Scanner: call Scan
// until it returns false, then check Err. Errors name the file and the line.
// The accepted forms are those of LoadReplay. The reader checks each line on
// its own and that all arrivals share one form (offset or time); it does not
// sort them.
type ReplayReader struct {
	s      *bufio.Scanner
	name   string
	column string // the option, "" to pick a known name
	line   int
	a      Arrival
	err    error

	started bool   // the first content line has been seen
	csv     bool   // the file has a header row
	field   int    // index of the column in a CSV row
	colName string // the column as named in the header
	unit    string // unit of a plain number: "s", "ms", "us" or "ns"
	first   Arrival
	n       int
}

// NewReplayReader reads arrivals from r; name is used in error messages.
// Only opt.Column matters to the reader.
func NewReplayReader(r io.Reader, name string, opt ReplayOptions) *ReplayReader {
	s := bufio.NewScanner(r)
	s.Buffer(make([]byte, 0, 4096), 1<<20)
	return &ReplayReader{s: s, name: name, column: opt.Column, unit: "s"}
}

// Scan advances to the next arrival. It returns false at the end of the
// input or on the first error. A file that holds no arrival is an error.
func (rr *ReplayReader) Scan() bool {
	if rr.err != nil {
		return false
	}
	for rr.s.Scan() {
		rr.line++
		text := rr.s.Text()
		if rr.line == 1 {
			text = strings.TrimPrefix(text, "\uFEFF") // a UTF-8 byte order mark
		}
		text = strings.TrimSpace(text)
		if text == "" || text[0] == '#' {
			continue
		}
		if !rr.started {
			rr.started = true
			isHeader, err := rr.header(text)
			if err != nil {
				rr.err = fmt.Errorf("%s:%d: %v", rr.name, rr.line, err)
				return false
			}
			if isHeader {
				continue
			}
		}
		a, err := rr.parse(text)
		if err != nil {
			rr.err = fmt.Errorf("%s:%d: %v", rr.name, rr.line, err)
			return false
		}
		rr.a = a
		rr.n++
		return true
	}
	if err := rr.s.Err(); err != nil {
		rr.err = fmt.Errorf("%s:%d: %v", rr.name, rr.line+1, err)
	} else if rr.n == 0 {
		rr.err = fmt.Errorf("%s: no arrivals", rr.name)
	}
	return false
}

// Arrival returns the arrival read by the last successful Scan.
func (rr *ReplayReader) Arrival() Arrival { return rr.a }

// Err returns the first error met, if any.
func (rr *ReplayReader) Err() error { return rr.err }

// header decides whether the first content line is a header row and, if so,
// which column holds the arrivals.
func (rr *ReplayReader) header(text string) (bool, error) {
	known := false
	if rr.column == "" && !strings.Contains(text, ",") {
		// A one-column file may still start with a header of a known name.
		for _, c := range replayColumns {
			known = known || strings.EqualFold(text, c)
		}
		if !known {
			return false, nil
		}
	}
	names, err := splitCSV(text)
	if err != nil {
		return false, fmt.Errorf("header: %v", err)
	}
	field := -1
	if rr.column != "" {
		field = slices.IndexFunc(names, func(n string) bool { return strings.EqualFold(n, rr.column) })
		if field < 0 {
			return false, fmt.Errorf("no column %q in the header %q", rr.column, text)
		}
	} else {
		for _, c := range replayColumns {
			if field = slices.IndexFunc(names, func(n string) bool { return strings.EqualFold(n, c) }); field >= 0 {
				break
			}
		}
		if field < 0 {
			return false, fmt.Errorf("a header row without a column named %s; name the column to read",
				strings.Join(replayColumns, ", "))
		}
	}
	rr.csv, rr.field, rr.colName = true, field, names[field]
	rr.unit = columnUnit(rr.colName)
	return true, nil
}

// columnUnit is the unit of plain numbers in a column, from its name's
// suffix: _ms, _us, _ns or _s; seconds otherwise.
func columnUnit(name string) string {
	name = strings.ToLower(name)
	for _, u := range []string{"ms", "us", "ns", "s"} {
		if strings.HasSuffix(name, "_"+u) {
			return u
		}
	}
	return "s"
}

// parse reads one content line.
func (rr *ReplayReader) parse(text string) (Arrival, error) {
	v := text
	if rr.csv {
		fields, err := splitCSV(text)
		if err != nil {
			return Arrival{}, err
		}
		if rr.field >= len(fields) {
			return Arrival{}, fmt.Errorf("%d fields, column %s is field %d", len(fields), rr.colName, rr.field+1)
		}
		if v = fields[rr.field]; v == "" {
			return Arrival{}, fmt.Errorf("empty %s", rr.colName)
		}
	}
	a, err := parseArrival(v, rr.unit)
	if err != nil {
		return Arrival{}, err
	}
	a.Line = rr.line
	if rr.n == 0 {
		rr.first = a
	} else if a.Absolute != rr.first.Absolute {
		return Arrival{}, fmt.Errorf("%q is %s, but line %d holds %s: a file holds offsets or times, not both",
			v, form(a.Absolute), rr.first.Line, form(rr.first.Absolute))
	}
	return a, nil
}

func form(absolute bool) string {
	if absolute {
		return "a time (RFC 3339 or Unix ns)"
	}
	return "an offset"
}

// unixNanoMin is the smallest plain integer read as a Unix time in ns:
// 1e15 ns is 1970-01-12, far before any real trace, and 1e15 ns read as an
// offset would be 11.6 days into a run.
const unixNanoMin = 1e15

// parseArrival reads one value; unit is the unit of a plain number.
func parseArrival(v, unit string) (Arrival, error) {
	if isDigits(v) && len(v) >= 16 { // 1e15 has 16 digits
		ns, err := strconv.ParseInt(v, 10, 64)
		if err == nil && ns >= unixNanoMin {
			return Arrival{Absolute: true, Time: time.Unix(0, ns).UTC()}, nil
		}
		// Leading zeros below 1e15 fall through to an offset; above
		// MaxInt64 the duration parse fails too.
	}
	if isPlainNumber(v) {
		d, err := time.ParseDuration(v + unit)
		switch {
		case err != nil && v[0] == '-':
			return Arrival{}, fmt.Errorf("negative offset %q", v)
		case err != nil: // the syntax is right, so the value overflowed
			d = MaxReplayOffset
		}
		return offsetArrival(v, d)
	}
	if d, err := time.ParseDuration(v); err == nil {
		return offsetArrival(v, d)
	}
	if t, err := time.Parse(time.RFC3339, v); err == nil {
		return Arrival{Absolute: true, Time: t}, nil
	}
	return Arrival{}, fmt.Errorf("cannot read %q as an offset, RFC 3339 time or Unix ns", v)
}

func offsetArrival(v string, d time.Duration) (Arrival, error) {
	switch {
	case d < 0:
		return Arrival{}, fmt.Errorf("negative offset %q", v)
	case d >= MaxReplayOffset:
		return Arrival{}, fmt.Errorf("offset %q is 1e15 ns or more: a Unix time must be in ns (or RFC 3339)", v)
	}
	return Arrival{Offset: d}, nil
}

func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// isPlainNumber reports whether s is a decimal number without a unit or an
// exponent: [+-]digits[.digits], either side of the point may be empty but
// not both.
func isPlainNumber(s string) bool {
	if s != "" && (s[0] == '+' || s[0] == '-') {
		s = s[1:]
	}
	ip, fp, _ := strings.Cut(s, ".")
	return (ip != "" || fp != "") && (ip == "" || isDigits(ip)) && (fp == "" || isDigits(fp))
}

// splitCSV splits one CSV line into trimmed fields. A field may be quoted
// with "…", with "" for a quote inside; a record spans one line.
func splitCSV(line string) ([]string, error) {
	var fields []string
	for {
		line = strings.TrimLeft(line, " \t")
		var f string
		if strings.HasPrefix(line, `"`) {
			var b strings.Builder
			i := 1
			for ; ; i++ {
				if i >= len(line) {
					return nil, errors.New("unterminated quoted field")
				}
				if line[i] == '"' {
					if i+1 < len(line) && line[i+1] == '"' {
						b.WriteByte('"')
						i++
						continue
					}
					break
				}
				b.WriteByte(line[i])
			}
			f, line = b.String(), strings.TrimLeft(line[i+1:], " \t")
			if line != "" && line[0] != ',' {
				return nil, errors.New("text after a quoted field")
			}
		} else {
			end := strings.IndexByte(line, ',')
			if end < 0 {
				end = len(line)
			}
			f, line = strings.TrimSpace(line[:end]), line[end:]
		}
		fields = append(fields, f)
		if line == "" {
			return fields, nil
		}
		line = line[1:] // the comma
	}
}

// ReplaySchedule replays recorded arrival times. It holds every offset in
// memory (8 bytes an arrival) and emits them in non-decreasing order; its
// count is the file's, so it is exact.
type ReplaySchedule struct {
	offs  []time.Duration
	i     int
	name  string
	speed float64
}

// OpenReplay reads the arrivals file at path; see LoadReplay.
func OpenReplay(path string, opt ReplayOptions) (*ReplaySchedule, error) {
	if err := opt.Validate(); err != nil {
		return nil, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return LoadReplay(f, path, opt)
}

// LoadReplay reads a whole arrivals file from r and returns its schedule;
// name is used in error messages and in the schedule's Name.
//
// # Arrivals files
//
// One arrival per line. Blank lines and lines starting with # are skipped.
// A value is one of
//
//   - an offset from the run's start: a plain number of seconds (1.25), or
//     a number with a unit, as time.ParseDuration reads it (1250ms, 1.25s,
//     500us, 2m);
//   - an RFC 3339 time, with or without fractional seconds
//     (2024-05-01T12:00:00.125Z);
//   - a Unix time in nanoseconds: a plain integer of 1e15 or more
//     (1714564800125000000). A plain number below 1e15 is an offset.
//
// A file holds offsets or times, not both. An offset must be ≥ 0 and below
// MaxReplayOffset (1e15 ns, 11.6 days): a Unix time in seconds or
// milliseconds would otherwise be read as an offset of decades.
//
// A CSV file starts with a header row (a first line holding a comma, or just
// one of the names below) and one record per line; fields may be quoted.
// Arrivals are read from the column opt.Column names, else from
// scheduled_ms, else from the first column named offset, offset_s, time,
// timestamp or ts (names match without regard to case). A plain number in
// a column whose name ends in _ms, _us or _ns is in that unit, so openload's
// own per-request log (--log), whose scheduled_ms holds milliseconds, is an
// arrivals file as it stands.
//
// # Offsets
//
// Offsets are replayed as written, not shifted: a file whose first arrival
// is at 2s starts sending 2s into the run. Times become offsets from the
// earliest time in the file, which is then replayed at 0. Arrivals are
// sorted, since openload's log lists requests in completion order, not
// schedule order: replay always emits offsets in non-decreasing order, and
// equal offsets are indistinguishable, so the order among them does not
// matter. Last, an offset t is replayed at t/opt.Speed, rounded to the
// nanosecond.
func LoadReplay(r io.Reader, name string, opt ReplayOptions) (*ReplaySchedule, error) {
	if err := opt.Validate(); err != nil {
		return nil, err
	}
	rr := NewReplayReader(r, name, opt)
	var offs []time.Duration
	var times []time.Time
	for rr.Scan() {
		if a := rr.Arrival(); a.Absolute {
			times = append(times, a.Time)
		} else {
			offs = append(offs, a.Offset)
		}
	}
	if err := rr.Err(); err != nil {
		return nil, err
	}
	if times != nil {
		slices.SortFunc(times, time.Time.Compare)
		t0 := times[0]
		offs = make([]time.Duration, len(times))
		for i, t := range times {
			// Sub saturates past ±292 years; check that it did not.
			if offs[i] = t.Sub(t0); !t0.Add(offs[i]).Equal(t) {
				return nil, fmt.Errorf("%s: the times span more than %v, from %v to %v",
					name, time.Duration(math.MaxInt64), t0.Format(time.RFC3339Nano), t.Format(time.RFC3339Nano))
			}
		}
	} else {
		slices.Sort(offs)
	}
	if opt.Speed != 1 {
		for i, off := range offs {
			x := math.Round(float64(off) / opt.Speed)
			if x >= math.MaxInt64 {
				return nil, field.Errorf("Speed", opt.Speed, "%s: the arrival at %v is beyond %v at {Speed} %v",
					name, off, time.Duration(math.MaxInt64), opt.Speed)
			}
			offs[i] = time.Duration(x)
		}
	}
	return &ReplaySchedule{offs: offs, name: name, speed: opt.Speed}, nil
}

// Next implements Schedule.
func (s *ReplaySchedule) Next() (time.Duration, bool) {
	if s.i >= len(s.offs) {
		return 0, false
	}
	s.i++
	return s.offs[s.i-1], true
}

// Expected implements Schedule: the number of arrivals in the file.
func (s *ReplaySchedule) Expected() float64 { return float64(len(s.offs)) }

// Exact implements Schedule: a replay's count is the file's.
func (s *ReplaySchedule) Exact() bool { return true }

// Name implements Schedule, e.g. "replay of 1234 arrivals from a.csv (speed 2×)".
func (s *ReplaySchedule) Name() string {
	name := fmt.Sprintf("replay of %d arrivals from %s", len(s.offs), s.name)
	if s.speed != 1 {
		name += fmt.Sprintf(" (speed %s×)", strconv.FormatFloat(s.speed, 'g', -1, 64))
	}
	return name
}

// Len is the number of arrivals.
func (s *ReplaySchedule) Len() int { return len(s.offs) }

// Span is the offset of the last arrival, after speed scaling: a run that
// replays the file lasts at least this long.
func (s *ReplaySchedule) Span() time.Duration { return s.offs[len(s.offs)-1] }

// Offsets returns a copy of all offsets, in order, whatever Next has
// consumed.
func (s *ReplaySchedule) Offsets() []time.Duration { return slices.Clone(s.offs) }
